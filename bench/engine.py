"""The engine end to end, each figure beside a baseline measured in the same run.

Scenarios (each in a child process, so every Spark run starts a fresh JVM):

* ``reference``: a generated access log of SIZE (16 files) through GetFile -> SplitText (10,000
  lines) -> UpdateAttribute -> MergeContent (128 MB bins) -> PutFile on Spark ``local[2]``.
  Baselines: a hand-written PySpark job doing the same byte work (each file copied to a staging
  area, cut into 10,000-line ranges, the ranges packed into 128 MB outputs written through a
  staging file and fsynced, as PutFile makes its output durable), and ``cat`` of the input into
  one file (fsynced). Then the zero-copy variant: FileSplitter instead of GetFile and
  MergeContent with Zero Copy, so the flow writes only PutFile's output, beside a PySpark job
  doing that byte work (ranges cut in place, packed straight into the fsynced outputs).
* ``small``: COUNT FlowFiles of 100 B (GenerateFlowFile, 10,000 per trigger) through
  UpdateAttribute -> MergeContent (10,000 per bin), on the direct runner and on Spark (with
  the default limits, where these batched FlowFiles fill micro-batches of up to 1,000,000, and
  with them held to 100,000): FlowFiles per second and the driver's peak RSS.
* ``queued``: COUNT FlowFiles left queued (only the source stage runs) on Spark: the driver's
  peak RSS, which holds segment summaries only.
* ``scaling``: the reference flow on ``local[1]`` and on ``local[2]``: the speedup, beside the
  hand-written PySpark job's own and that of four pure-Python tasks (the ceiling the cores give
  when they share nothing); the six runs interleaved, round after round.

Run: ``.venv/bin/python bench/engine.py`` (``--quick`` for 128 MB, 100,000 FlowFiles, one run each;
``--repeat N`` for the best of N runs per figure, 3 by default; ``BENCH_DIR`` picks the disk).
Prints one JSON line and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MB = 1_000_000
FILES = 16
BIN_BYTES = 128 * MB
MIN_BIN_BYTES = 100 * MB  # bins of whole splits never reach exactly 128 MB
LINES_PER_SPLIT = 10_000
CPU_BURN = 10_000_000  # iterations of one pure-Python task in the scaling scenario's ceiling


def peak_rss_mb() -> float:
    """This process's peak resident set size."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def warm_up(context) -> None:  # type: ignore[no-untyped-def]
    """Start the JVM and every core's Python worker before timing (flow and baseline alike)."""
    cores = int(context.defaultParallelism)
    context.parallelize(range(cores), cores).count()


def generate_logs(directory: Path, total: int) -> None:
    """FILES access-log files adding up to about *total* bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(3)
    paths = ["/", "/index.html", "/api/orders", "/api/users/42", "/static/app.js", "/login"]
    lines = [
        f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)} - - [22/Nov/2026:10:{i % 60:02d}:00 "
        f'+0000] "GET {rng.choice(paths)} HTTP/1.1" {rng.choice((200, 304, 404, 500))} '
        f"{rng.randint(100, 9000)}\n"
        for i in range(4096)
    ]
    block = "".join(lines).encode()
    per_file = total // FILES
    for number in range(FILES):
        with open(directory / f"access-{number:02d}.log", "wb") as out:
            written = 0
            while written < per_file:
                piece = block[: per_file - written]
                out.write(piece)
                written += len(piece)


def reference_flow(data: Path, *, zero_copy: bool = False):  # type: ignore[no-untyped-def]
    """The reference flow; *zero_copy* reads with FileSplitter and merges into ropes."""
    from flowcore import Flow
    from processors import FileSplitter, GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

    flow = Flow("reference")
    if zero_copy:  # one 64 MB block per file here: the same tasks as GetFile's
        get = flow.add(FileSplitter(input_directory=str(data / "in")), name="get")
        flow.auto_terminate(get, ["files", "failure"])
    else:
        get = flow.add(
            GetFile(input_directory=str(data / "in"), keep_source_file=True, batch_size=FILES),
            name="get",
        )
    split = flow.add(SplitText(line_split_count=LINES_PER_SPLIT), name="split")
    tag = flow.add(UpdateAttribute(source="web"), name="tag")
    merge = flow.add(
        MergeContent(
            minimum_group_size=f"{MIN_BIN_BYTES} B",
            maximum_group_size=f"{BIN_BYTES} B",
            maximum_number_of_entries=1_000_000,
            delimiter_strategy="Text",
            demarcator="\n",
            zero_copy=zero_copy,
        ),
        name="merge",
    )
    name = flow.add(UpdateAttribute(filename="merged-${merge.count}-${uuid}.log"), name="name")
    put = flow.add(PutFile(directory=str(data / "out")), name="put")
    flow.connect(get, split, "blocks" if zero_copy else "success")
    flow.connect(split, tag, "splits")
    flow.connect(tag, merge)
    flow.connect(merge, name, "merged")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


# --- children ---------------------------------------------------------------------------------


def child_reference(args: argparse.Namespace) -> dict[str, float]:
    from flowcore.driver.controller import run_flow
    from flowcore.runners.spark import SparkRunner
    from flowcore.settings import Settings

    data = Path(args.workdir)
    runner = SparkRunner(master=args.master)
    warm_up(runner.context)
    cores = int(args.master.removeprefix("local[").removesuffix("]") or "1")
    settings = Settings(parallelism=cores, sync=False)
    started = time.perf_counter()
    flow = reference_flow(data, zero_copy=args.zero_copy)
    result = run_flow(flow, runner, repository=data / "repo", settings=settings)
    elapsed = time.perf_counter() - started
    written = sum(p.stat().st_size for p in (data / "out").iterdir())
    return {
        "seconds": elapsed,
        "output_bytes": written,
        "merged": result.count("merge", "merged"),
        "driver_rss_mb": peak_rss_mb(),
    }


def _copy_and_cut(path: str, staging: str) -> list[tuple[str, int, int]]:
    """Baseline task: copy a file into staging and cut it into 10,000-line ranges."""
    target = os.path.join(staging, os.path.basename(path))
    with open(path, "rb") as source, open(target, "wb") as out:
        data = source.read()
        out.write(data)
    return _ranges(target, data)


def _ranges(target: str, data: bytes) -> list[tuple[str, int, int]]:
    ranges, start, lines = [], 0, 0
    position = 0
    while True:
        newline = data.find(b"\n", position)
        if newline < 0:
            break
        lines += 1
        position = newline + 1
        if lines == LINES_PER_SPLIT:
            ranges.append((target, start, position - start))
            start, lines = position, 0
    if start < len(data):
        ranges.append((target, start, len(data) - start))
    return ranges


def _cut(path: str) -> list[tuple[str, int, int]]:
    """Zero-copy baseline task: cut a file in place into 10,000-line ranges."""
    with open(path, "rb") as source:
        data = source.read()
    return _ranges(path, data)


def _pack(
    index_and_ranges: tuple[int, list[tuple[str, int, int]]], out_dir: str, staged: bool = True
) -> int:
    """Baseline task: write one output from ranges (through a staging file, then copied out,
    when *staged*, as a copying merge and PutFile do), fsynced."""
    index, ranges = index_and_ranges
    final = os.path.join(out_dir, f"merged-{index}.log")
    staging = os.path.join(out_dir, f".bin-{index}.staging") if staged else final
    with open(staging, "wb") as out:
        for path, offset, length in ranges:
            with open(path, "rb") as source:
                source.seek(offset)
                out.write(source.read(length))
                out.write(b"\n")
    if staged:
        shutil.copyfile(staging, final)
        os.unlink(staging)
    with open(final, "rb") as written:
        os.fsync(written.fileno())  # durable output, as PutFile makes it
    return os.path.getsize(final)


def child_pyspark(args: argparse.Namespace) -> dict[str, float]:
    from flowcore.runners.spark import spark_session

    data = Path(args.workdir)
    sc = spark_session(args.master).sparkContext
    warm_up(sc)
    staging, out = data / "baseline-staging", data / "baseline-out"
    staging.mkdir()
    out.mkdir()
    started = time.perf_counter()
    paths = sorted(str(p) for p in (data / "in").iterdir())
    zero_copy = args.zero_copy
    ranges = (
        sc.parallelize(paths, len(paths))
        .flatMap(lambda p: _cut(p) if zero_copy else _copy_and_cut(p, str(staging)))
        .collect()
    )
    bins: list[list[tuple[str, int, int]]] = [[]]
    filled = 0
    for item in ranges:
        if filled + item[2] > BIN_BYTES and bins[-1]:
            bins.append([])
            filled = 0
        bins[-1].append(item)
        filled += item[2]
    sizes = (
        sc.parallelize(list(enumerate(bins)), len(bins))
        .map(lambda b: _pack(b, str(out), staged=not zero_copy))
        .collect()
    )
    return {"seconds": time.perf_counter() - started, "output_bytes": sum(sizes)}


def child_small(args: argparse.Namespace) -> dict[str, float]:
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import GenerateFlowFile, MergeContent, UpdateAttribute

    batches = args.count // 10_000
    flow = Flow("small")
    gen = flow.add(GenerateFlowFile(batch_size=10_000, file_size="100 B"), name="gen")
    tag = flow.add(UpdateAttribute(source="bench"), name="tag")
    merge = flow.add(
        MergeContent(minimum_number_of_entries=10_000, maximum_number_of_entries=10_000),
        name="merge",
    )
    flow.connect(gen, tag)
    flow.connect(tag, merge, back_pressure_object_threshold=0)
    flow.auto_terminate(merge, ["merged", "original", "failure"])
    settings = Settings(
        parallelism=2,
        sync=False,
        unbounded_source_batches=batches,
        batch_max_batched_flowfiles=args.batch_max,
    )
    runner: object = "direct"
    if args.runner == "spark":
        from flowcore.runners.spark import SparkRunner

        runner = SparkRunner(master=args.master)
        warm_up(runner.context)  # type: ignore[attr-defined]
    started = time.perf_counter()
    result = run_flow(flow, runner, repository=Path(args.workdir) / "repo", settings=settings)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "flowfiles_per_s": result.count("tag", "success") / elapsed,
        "merged": result.count("merge", "merged"),
        "driver_rss_mb": peak_rss_mb(),
    }


def child_queued(args: argparse.Namespace) -> dict[str, float]:
    from flowcore import Flow
    from flowcore.driver.controller import Controller
    from flowcore.runners.spark import SparkRunner
    from flowcore.settings import Settings
    from processors import GenerateFlowFile, UpdateAttribute
    from repositories.repository_set import RepositorySet

    flow = Flow("queued")
    gen = flow.add(GenerateFlowFile(batch_size=10_000, file_size="100 B"), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, tag, back_pressure_object_threshold=0)
    flow.auto_terminate(tag, "success")
    settings = Settings(parallelism=2, sync=False, unbounded_source_batches=args.count // 10_000)
    runner = SparkRunner(master=args.master)
    repos = RepositorySet.open(Path(args.workdir) / "repo", settings)
    controller = Controller(flow, runner, repos, settings)
    before = peak_rss_mb()
    stage = controller.compiled.stages[0]
    while controller.run_stage(stage):
        pass
    queued = controller.queued_total()
    controller.close()
    repos.close()
    return {"queued": queued, "driver_rss_mb": peak_rss_mb(), "rss_before_mb": before}


def _burn(_: int) -> int:
    """A fixed amount of pure-Python work: no I/O, next to no memory traffic."""
    total = 0
    for i in range(CPU_BURN):
        total += i * i % 7
    return total


def child_cpu(args: argparse.Namespace) -> dict[str, float]:
    """Four tasks of pure-Python work on Spark: what the cores give when nothing is shared."""
    from flowcore.runners.spark import spark_session

    sc = spark_session(args.master).sparkContext
    warm_up(sc)
    started = time.perf_counter()
    sc.parallelize(range(4), 4).map(_burn).collect()
    return {"seconds": time.perf_counter() - started}


CHILDREN = {
    "reference": child_reference,
    "pyspark": child_pyspark,
    "cpu": child_cpu,
    "small": child_small,
    "queued": child_queued,
}


def child(scenario: str, workdir: Path, **options: object) -> dict[str, float]:
    """Run *scenario* in a child process, then free its working directory (``BENCH_DIR`` may
    be a tmpfs: scenarios must not pile up there)."""
    try:
        return run_child(__file__, scenario, workdir, **options)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_child(script: str, scenario: str, workdir: Path, **options: object) -> dict[str, float]:
    """Run *script*'s *scenario* in a child process (a fresh JVM and a peak RSS of its own);
    keyword options become flags (``True``: the flag alone). Returns its JSON figures."""
    command = [sys.executable, script, "--child", scenario, "--workdir", str(workdir)]
    for key, value in options.items():
        flag = f"--{key.replace('_', '-')}"
        command += [flag] if value is True else [flag, str(value)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{scenario} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def best(
    scenario: str, root: Path, name: str, size: int | None, repeat: int, **options: object
) -> dict[str, float]:
    """The fastest of *repeat* runs of *scenario*, each in a fresh directory (best of N, as
    ``timeit`` reports: on a shared machine the slower runs measure the neighbours)."""
    runs = [child(scenario, fresh(root, name, size), **options) for _ in range(repeat)]
    return min(runs, key=lambda r: r["seconds"])


def fresh(root: Path, name: str, size: int | None = None) -> Path:
    """An empty working directory, with a copy of the input when *size* is given.

    The copy is flushed to disk before the run: otherwise its gigabyte of dirty pages is
    written back during the timed run, and the first fsync there (PutFile's, the baseline's)
    waits for it (1-2.6 s measured, against 0.2-0.4 s for the others).
    """
    workdir = root / name
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    if size:
        shutil.copytree(root / "input", workdir / "in")
        os.sync()
    return workdir


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="128 MB, 100,000 FlowFiles, 1 run")
    parser.add_argument("--size-mb", type=int, default=1000)
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument(
        "--scenario", action="append", choices=("reference", "small", "queued", "scaling")
    )
    parser.add_argument("--child", choices=tuple(CHILDREN))
    parser.add_argument("--workdir")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--runner", default="direct")
    parser.add_argument("--zero-copy", action="store_true", help="reference: zero-copy variant")
    parser.add_argument(
        "--batch-max",
        type=int,
        default=1_000_000,
        help="small: Settings.batch_max_batched_flowfiles",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](args)))
        return
    if args.quick:
        args.size_mb, args.count, args.repeat = 128, 100_000, 1
    scenarios = args.scenario or ["reference", "small", "queued", "scaling"]
    size = args.size_mb * MB
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(
        prefix="flowcore-bench-", dir=os.environ.get("BENCH_DIR")
    ) as tmp:
        root = Path(tmp)
        if {"reference", "scaling"} & set(scenarios):
            generate_logs(root / "input", size)
        if "reference" in scenarios:
            flow = best("reference", root, "flow", size, args.repeat, master="local[2]")
            base = best("pyspark", root, "pyspark", size, args.repeat, master="local[2]")
            started = time.perf_counter()
            with open(root / "cat.out", "wb") as out:
                subprocess.run(
                    ["cat", *sorted(map(str, (root / "input").iterdir()))], stdout=out, check=True
                )
                os.fsync(out.fileno())
            cat = time.perf_counter() - started
            results.update(
                reference_s=flow["seconds"],
                reference_mb_s=size / MB / flow["seconds"],
                pyspark_s=base["seconds"],
                cat_s=cat,
                reference_vs_pyspark=flow["seconds"] / base["seconds"],
                reference_vs_cat=flow["seconds"] / cat,
                reference_driver_rss_mb=flow["driver_rss_mb"],
            )
            assert flow["output_bytes"] >= size, "the flow lost bytes"
            zero = best(
                "reference", root, "zflow", size, args.repeat, master="local[2]", zero_copy=True
            )
            zbase = best(
                "pyspark", root, "zpyspark", size, args.repeat, master="local[2]", zero_copy=True
            )
            assert zero["output_bytes"] == flow["output_bytes"], "zero-copy changed the output"
            results.update(
                zero_copy_s=zero["seconds"],
                zero_copy_pyspark_s=zbase["seconds"],
                zero_copy_vs_pyspark=zero["seconds"] / zbase["seconds"],
                zero_copy_vs_cat=zero["seconds"] / cat,
            )
        if "small" in scenarios:
            # Spark twice: with the default limits (batched FlowFiles fill micro-batches of up
            # to 1,000,000), and with batched FlowFiles held to 100,000 a micro-batch, the plain
            # limit, as before they had a limit of their own: ten micro-batches of two jobs.
            for name, runner, batch_max in (
                ("direct", "direct", 1_000_000),
                ("spark", "spark", 1_000_000),
                ("spark_100k", "spark", 100_000),
            ):
                got = best(
                    "small",
                    root,
                    f"small-{name}",
                    None,
                    args.repeat,
                    count=args.count,
                    runner=runner,
                    batch_max=batch_max,
                )
                results[f"small_{name}_flowfiles_per_s"] = got["flowfiles_per_s"]
                results[f"small_{name}_per_core"] = got["flowfiles_per_s"] / (
                    2 if runner == "spark" else 1
                )
                results[f"small_{name}_driver_rss_mb"] = got["driver_rss_mb"]
        if "queued" in scenarios:
            got = child("queued", fresh(root, "queued"), count=args.count)
            results.update(queued=got["queued"], queued_driver_rss_mb=got["driver_rss_mb"])
        if "scaling" in scenarios:
            # Interleaved rounds, so a slow spell of this shared VM hits both core counts.
            rounds: dict[str, list[dict[str, float]]] = {}
            for _ in range(args.repeat):
                for name, scenario, master in (
                    ("one", "reference", "local[1]"),
                    ("two", "reference", "local[2]"),
                    ("pyspark-one", "pyspark", "local[1]"),
                    ("pyspark-two", "pyspark", "local[2]"),
                    ("cpu-one", "cpu", "local[1]"),
                    ("cpu-two", "cpu", "local[2]"),
                ):
                    workdir = fresh(root, name, None if scenario == "cpu" else size)
                    got = child(scenario, workdir, master=master)
                    rounds.setdefault(name, []).append(got)
            one, two, base_one, base_two, cpu_one, cpu_two = (
                min(rounds[name], key=lambda r: r["seconds"])
                for name in ("one", "two", "pyspark-one", "pyspark-two", "cpu-one", "cpu-two")
            )
            results.update(
                local1_s=one["seconds"],
                local2_s=two["seconds"],
                speedup=one["seconds"] / two["seconds"],
                pyspark_local1_s=base_one["seconds"],
                pyspark_local2_s=base_two["seconds"],
                pyspark_speedup=base_one["seconds"] / base_two["seconds"],
                cpu_speedup=cpu_one["seconds"] / cpu_two["seconds"],
            )
    print_figures(f"engine ({args.size_mb} MB log, {args.count:,} small FlowFiles)", results)


def print_figures(title: str, results: dict[str, float]) -> None:
    """One JSON line of the figures, then the same as a table."""
    print(json.dumps({k: round(v, 3) for k, v in results.items()}))
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in results.items():
        table.add_row(key, f"{value:,.3f}")
    Console().print(table)


if __name__ == "__main__":
    main()
