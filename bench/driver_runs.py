"""Issue 32: is a small stage run faster in the driver's process than as a Spark job?

A stage fed by a durable queue, given N queued FlowFiles, runs once; the same run is timed in
the driver's process (``driver_run_max_flowfiles`` huge, so every run of it goes there, as a
run of at most 20,000 FlowFiles / 16 MB does with the default settings) and as a Spark job on
``local[2]`` (``driver_run_max_flowfiles=0``), interleaved, best of ``--repeat`` with the
slowest beside it. What it says: the N where Spark starts to pay, against the default 20,000.

The flow: GetFile (one file of N distinct access-log lines, about 80 bytes each, as in
``spark_pays.py``) -> SplitText (1 line) -> a durable queue (a back-pressure setting, as every
imported NiFi connection with queue settings has) -> the timed stage, one of two shapes:

* ``update``: UpdateAttribute (``bucket=${fragment.index:mod(8)}``), its ``success``
  auto-terminated: a narrow per-FlowFile stage, where the fixed cost of a Spark job weighs most.
* ``merge``: MergeContent (Correlation Attribute ``bucket``, bins of exactly N/8 entries, so
  every bin is ready in that one run) -> UpdateAttribute (``filename=${uuid}``) -> PutFile:
  the everyday flow's second stage, a binning
  stage (a shuffle on Spark, in memory in the driver) writing 8 files.

The first stage (GetFile -> SplitText -> UpdateAttribute for the bucket) has source work, so it
runs on Spark in both modes and is not timed; the clock is the queue-fed stage's
``Controller.run_stage`` (its job and its commit, as ``spark_pays.py --profile`` times stages).
One ``SparkRunner`` session on ``local[2]`` is started and warmed up before any clock (a new
runner per run reuses it); ``batch_max_flowfiles`` is raised to 1,000,000 so the queue-fed stage
takes all N in one run; ``sync=False`` (the commit's fsync is the same in both modes and only
adds noise). Each run's output is checked (N FlowFiles through the stage; N lines in 8 files).
The load average (``os.getloadavg``) is recorded before and after: the machine is shared.

    .venv/bin/python bench/driver_runs.py [--sizes 1000,5000,20000,30000,40000,50000,100000,200000]
        [--shapes update,merge] [--repeat 3] [--master local[2]]

Prints one JSON line and a table. ``BENCH_DIR`` picks the disk.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

from flowcore import Flow
from flowcore.driver.controller import Controller, run_flow
from flowcore.settings import Settings
from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

BUCKETS = 8
SIZES = (1_000, 5_000, 20_000, 30_000, 40_000, 50_000, 100_000, 200_000)
SHAPES = ("update", "merge")
MODES = {"driver": 10**12, "spark": 0}  # driver_run_max_flowfiles forcing each place
TIMED = "stage-2"  # the stage fed by the durable queue
PATHS = ("/", "/index.html", "/api/orders", "/api/users", "/static/app.js", "/login")


def line(n: int) -> str:
    """Access-log line *n*: distinct, about 80 bytes (``spark_pays.py``'s)."""
    return (
        f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255} - - [28/Nov/2026:{n // 3600 % 24:02d}:"
        f'{n // 60 % 60:02d}:{n % 60:02d} +0000] "GET {PATHS[n % 6]}?id={n} HTTP/1.1" 200 '
        f"{100 + n * 7919 % 9000}\n"
    )


def build_flow(source: Path, out: Path, shape: str, count: int) -> Flow:
    """The flow over *source*: a split stage, a durable queue, then the timed stage."""
    flow = Flow(f"driver-runs-{shape}")
    get = flow.add(GetFile(input_directory=str(source), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    bucket = flow.add(UpdateAttribute(bucket=f"${{fragment.index:mod({BUCKETS})}}"), name="bucket")
    flow.connect(get, split)
    flow.connect(split, bucket, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    queue = {"back_pressure_object_threshold": 10 * count}  # durable, never full
    if shape == "update":
        tag = flow.add(UpdateAttribute(tagged="${bucket:append('-tagged')}"), name="tag")
        flow.connect(bucket, tag, **queue)
        flow.auto_terminate(tag, "success")
        return flow
    entries = count // BUCKETS
    merge = flow.add(
        MergeContent(
            correlation_attribute_name="bucket",
            minimum_number_of_entries=entries,
            maximum_number_of_entries=entries,
            maximum_number_of_bins=2 * BUCKETS,
            delimiter_strategy="Text",
            demarcator="\n",
            footer="\n",  # the merged file holds exactly its lines' bytes
        ),
        name="merge",
    )
    name = flow.add(UpdateAttribute(filename="${uuid}"), name="name")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(bucket, merge, **queue)
    flow.connect(merge, name, "merged")
    flow.connect(name, put)
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


@contextlib.contextmanager
def stage_clock():  # type: ignore[no-untyped-def]
    """Per stage, each call of ``Controller.run_stage`` (its job and commit): seconds, and
    whether it took anything (a call finding no input returns at once)."""
    seconds: dict[str, list[tuple[float, bool]]] = {}
    original = Controller.run_stage

    def timed(self, stage, **kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        took = 0
        try:
            took = original(self, stage, **kwargs)
            return took
        finally:
            elapsed = time.perf_counter() - started
            seconds.setdefault(stage.id, []).append((elapsed, bool(took)))

    Controller.run_stage = timed  # type: ignore[method-assign]
    try:
        yield seconds
    finally:
        Controller.run_stage = original  # type: ignore[method-assign]


def one_run(root: Path, shape: str, count: int, mode: str, master: str) -> dict[str, object]:
    """One run of *shape* over *count* lines with the timed stage forced to *mode*."""
    from flowcore.runners.spark import SparkRunner

    work = Path(tempfile.mkdtemp(prefix=f"{shape}-{mode}-", dir=root))
    out = work / "out"
    flow = build_flow(root / f"in-{count}", out, shape, count)
    settings = Settings(
        sync=False,
        batch_max_flowfiles=1_000_000,
        driver_run_max_flowfiles=MODES[mode],
        driver_run_max_size="1000 GB" if mode == "driver" else "16 MB",
    )
    runner = SparkRunner(master=master)  # the session is running: reused, started before
    with stage_clock() as stages:
        result = run_flow(flow, runner, repository=work / "repo", settings=settings)
    calls = stages.get(TIMED, [])
    took = result.received.get("tag" if shape == "update" else "merge", 0)
    if took != count:
        msg = f"{shape} {mode} N={count}: the stage took {took:,} FlowFiles"
        raise RuntimeError(msg)
    if shape == "merge":
        files = list(out.iterdir())
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        if len(files) != BUCKETS or lines != count:
            msg = f"merge {mode} N={count}: {len(files)} files, {lines:,} lines"
            raise RuntimeError(msg)
    plan = result.plan.splitlines()
    start = next(n for n, text in enumerate(plan) if text.startswith(f"{TIMED}:"))
    ran_as = next((t.strip() for t in plan[start:] if t.strip().startswith("ran as")), "")
    runs = sum(1 for _, took in calls if took)
    return {"seconds": sum(s for s, _ in calls), "runs": runs, "ran_as": ran_as}


def main() -> None:
    """Start Spark, then interleave the modes round by round; print JSON and a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    from flowcore.runners.spark import SparkRunner, spark_session

    load_before = os.getloadavg()
    spark_session(args.master)
    SparkRunner(master=args.master)  # the workers import flowcore before any clock
    times: dict[tuple[str, int, str], list[float]] = {}
    described: dict[tuple[str, int, str], str] = {}
    runs: dict[tuple[str, int, str], int] = {}
    with tempfile.TemporaryDirectory(
        prefix="flowcore-driver-runs-", dir=os.environ.get("BENCH_DIR")
    ) as tmp:
        root = Path(tmp)
        for count in sizes:
            (root / f"in-{count}").mkdir()
            text = "".join(line(n) for n in range(count))
            (root / f"in-{count}" / "access.log").write_text(text)
        for shape in shapes:  # one untimed run each way: the first job of a shape pays more
            for mode in MODES:
                one_run(root, shape, min(sizes), mode, args.master)
        loads = []
        for _ in range(args.repeat):
            for shape in shapes:
                for count in sizes:
                    for mode in MODES:
                        figures = one_run(root, shape, count, mode, args.master)
                        times.setdefault((shape, count, mode), []).append(figures["seconds"])
                        described[(shape, count, mode)] = str(figures["ran_as"])
                        runs[(shape, count, mode)] = int(figures["runs"])  # type: ignore[call-overload]
            loads.append(os.getloadavg()[0])
    args.sizes, args.shapes = sizes, shapes
    report(times, described, runs, loads=(load_before, loads), args=args)


def report(times, described, runs, *, loads, args) -> None:  # type: ignore[no-untyped-def]
    """One JSON line, then a table: best (slowest) of each mode, and Spark / driver."""
    sizes, shapes = args.sizes, args.shapes
    load_before, loads = loads
    rows = []
    for shape in shapes:
        for count in sizes:
            driver, spark = times[(shape, count, "driver")], times[(shape, count, "spark")]
            rows.append(
                {
                    "shape": shape,
                    "flowfiles": count,
                    "driver_best_s": round(min(driver), 4),
                    "driver_slowest_s": round(max(driver), 4),
                    "spark_best_s": round(min(spark), 4),
                    "spark_slowest_s": round(max(spark), 4),
                    "spark_over_driver": round(min(spark) / min(driver), 2),
                    "stage_runs": runs[(shape, count, "spark")],
                    "driver_ran_as": described[(shape, count, "driver")],
                    "spark_ran_as": described[(shape, count, "spark")],
                }
            )
    print(
        json.dumps(
            {
                "master": args.master,
                "repeat": args.repeat,
                "load_before": [round(x, 2) for x in load_before],
                "load_after_rounds": [round(x, 2) for x in loads],
                "rows": rows,
            }
        )
    )
    after = ", ".join(f"{x:.2f}" for x in loads)
    print(f"load average (1 min): before {load_before[0]:.2f}, after each round {after}")
    print(
        f"{'shape':7} {'FlowFiles':>9} {'driver s (slowest)':>20} {'Spark s (slowest)':>20} "
        f"{'Spark/driver':>12}"
    )
    for row in rows:
        driver = f"{row['driver_best_s']:.3f} ({row['driver_slowest_s']:.3f})"
        spark = f"{row['spark_best_s']:.3f} ({row['spark_slowest_s']:.3f})"
        print(
            f"{row['shape']:7} {row['flowfiles']:>9,} {driver:>20} {spark:>20} "
            f"{row['spark_over_driver']:>11.2f}x"
        )


if __name__ == "__main__":
    main()
