"""Issue 32: does Spark pay? flowcore on Spark against its hand-written PySpark job and the
direct runner, on the everyday flow, with every baseline measured in the same run.

The flow: GetFile -> SplitText (1 line) -> UpdateAttribute (``bucket=${fragment.index:mod(8)}``)
-> MergeContent (Correlation Attribute ``bucket``, 10,000 entries) -> UpdateAttribute
(``filename=${uuid}``) -> PutFile, over distinct access-log lines (about 80 bytes each, a
running number in each), generated deterministically, in ONE file and the same lines in TEN.

Contestants, each in a fresh process (its own JVM, its own peak RSS), interleaved round by round:

* ``job``: the hand-written PySpark job a data engineer would write (RDD API): each file read
  with ``sc.textFile`` and numbered with ``zipWithIndex``, bucket = (index + 1) mod 8 (as
  fragment.index counts from 1), ``groupByKey`` on the bucket, each bucket written in files of
  at most 10,000 lines named by a uuid, each fsynced (PutFile syncs its outputs under the
  default settings). Its session is built from ``flowcore.runners.spark.session_conf`` (the
  settings flowcore's sessions get) and warmed up (a job on every core) before the clock.
* ``spark``: ``run_flow`` on a ``SparkRunner`` started (session and warm-up) before the clock,
  with the default ``Settings()``.
* ``direct``: ``run_flow(flow, "direct")``, the default ``Settings()``.
* ``job_1``, ``spark_1``: the same on ``local[1]``, at the largest size (the scaling target:
  the speedup from one core to two, flowcore's against the job's).
* ``cold``: ``python -m flowcore run FLOW.py --runner spark --master local[2]`` of a small flow
  (GenerateFlowFile, 5 FlowFiles -> PutFile) against a minimal PySpark application
  (``python -c``: a session with the same conf, ``sc.parallelize(range(2), 2).count()``,
  stop), both wall times of the whole process.

Every run's output is checked (the input's lines, each once; at most 10,000 lines a file; one
bucket a file) after its clock stops. Memory: the driver's peak RSS (``ru_maxrss``), the
largest peak RSS of one Spark Python worker and the JVM's (``VmHWM`` sampled every 0.2 s).

``--profile`` instead shows where a cold flowcore Spark run's time goes, in one process: the
imports, the session's start, the runner's start (the workers' warm-up), the flow's run split
into each stage's runs (``Controller.run_stage``) and Spark's own job times (from Spark's
status store, by job group), and what is left (compile, repositories, the driver's commits).

``--before DIR`` (a worktree of another commit) also runs that tree's flowcore contestants
(``spark``, ``direct``, ``cold``, the profile) in every round, interleaved with this tree's;
the PySpark baselines run once a round.

The full table, on a quiet machine (about 15 minutes on 2 cores)::

    .venv/bin/python bench/spark_pays.py --repeat 3

A quick check (about a minute): ``--sizes 200000 --shapes one --repeat 1 --no-cold``.
Options: ``--sizes N[,N]``, ``--shapes one,ten``, ``--repeat N``, ``--no-cold``,
``--no-scaling``, ``--profile``, ``--before DIR``; ``BENCH_DIR`` picks the disk. Prints one
JSON line and a table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
#: the tree whose flowcore a child imports (the parent sets it for ``--before``)
TREE = Path(os.environ.get("FLOWCORE_TREE", HERE))
sys.path.insert(0, str(TREE))

BUCKETS = 8  # bucket = fragment.index mod 8
ENTRIES = 10_000  # MergeContent's Maximum Number of Entries
SHAPES = {"one": 1, "ten": 10}
MASTER = "local[2]"
COLD_FLOWFILES = 5
PATHS = ("/", "/index.html", "/api/orders", "/api/users", "/static/app.js", "/login")
STATUSES = (200, 200, 200, 304, 404, 500)


# --- input and checks ---------------------------------------------------------------------------


def line(n: int) -> bytes:
    """Access-log line *n*: distinct (its running number ``id=n``), about 80 bytes."""
    return (
        f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255} - - [28/Nov/2026:{n // 3600 % 24:02d}:"
        f'{n // 60 % 60:02d}:{n % 60:02d} +0000] "GET {PATHS[n % 6]}?id={n} HTTP/1.1" '
        f"{STATUSES[n * 7 % 6]} {100 + n * 7919 % 9000}\n"
    ).encode()


def per_file(count: int, files: int) -> int:
    """Lines in each of *files* files of *count* lines (the last may hold fewer)."""
    return -(-count // files)


def generate(directory: Path, count: int, files: int) -> None:
    """Lines 0 .. *count*-1 in *files* files, in order (file k holds a run of them)."""
    directory.mkdir(parents=True)
    each = per_file(count, files)
    for number in range(files):
        lines = map(line, range(number * each, min((number + 1) * each, count)))
        (directory / f"access-{number:02d}.log").write_bytes(b"".join(lines))


def _number(text: bytes) -> int:
    start = text.index(b"?id=") + 4
    return int(text[start : text.index(b" ", start)])


def verify(out: Path, count: int, files: int) -> dict[str, int]:
    """Check the outputs against the input: every line once, at most ENTRIES lines a file, one
    bucket a file (a line's bucket from its index in its input file). Raises RuntimeError."""
    each = per_file(count, files)
    seen = bytearray(count)
    written = problems = 0
    for path in out.iterdir():
        data = path.read_bytes()
        lines = data.split(b"\n")
        if lines[-1] != b"":
            raise RuntimeError(f"{path.name} does not end with a newline")
        numbers = [_number(text) for text in lines[:-1]]
        buckets = {(n % each + 1) % BUCKETS for n in numbers}
        if len(numbers) > ENTRIES or len(buckets) > 1:
            problems += 1
        for n, text in zip(numbers, lines, strict=False):
            if seen[n] or text + b"\n" != line(n):
                problems += 1
            seen[n] = 1
        written += 1
    if problems or sum(seen) != count:
        msg = f"output check failed: {problems} problem(s), {sum(seen):,} of {count:,} lines"
        raise RuntimeError(msg)
    return {"output_files": written}


# --- memory ---------------------------------------------------------------------------------------


def _descendants(root: int) -> list[int]:
    """The process ids below *root*, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        found.extend(children.get(todo[-1], ()))
        todo.extend(children.get(todo.pop(), ()))
    return found


class PeakMemory:
    """Peak RSS (``VmHWM``) of this process's descendants, sampled every 0.2 s while used as a
    context manager: the JVM's, and the largest of one Spark Python worker's."""

    def __init__(self) -> None:
        self.jvm_mb = self.worker_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def _loop(self) -> None:
        while not self._stop.wait(0.2):
            self.sample()

    def sample(self) -> None:
        for pid in _descendants(os.getpid()):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            peak = next(
                (int(r.split()[1]) / 1024 for r in status.splitlines() if r.startswith("VmHWM")),
                0.0,
            )
            if command.endswith(b"java"):
                self.jvm_mb = max(self.jvm_mb, peak)
            elif b"python" in command:
                self.worker_mb = max(self.worker_mb, peak)


def driver_mb() -> float:
    """This process's peak RSS since it started its program (``VmHWM``).

    Not ``ru_maxrss``: Linux carries that over from the parent at fork, and the harness that
    starts each contestant has held a generated input in memory.
    """
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- the contestants (children) -------------------------------------------------------------------


def build_flow(source: Path, out: Path):  # type: ignore[no-untyped-def]
    """The issue's flow over *source*, writing into *out*."""
    from flowcore import Flow
    from processors import GetFile, MergeContent, PutFile, SplitText, UpdateAttribute

    flow = Flow("spark-pays")
    get = flow.add(GetFile(input_directory=str(source), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    bucket = flow.add(UpdateAttribute(bucket=f"${{fragment.index:mod({BUCKETS})}}"), name="bucket")
    merge = flow.add(
        MergeContent(
            correlation_attribute_name="bucket",
            minimum_number_of_entries=ENTRIES,
            maximum_number_of_entries=ENTRIES,
            maximum_number_of_bins=2 * BUCKETS,  # the 8 buckets never evict each other's bins
            delimiter_strategy="Text",
            demarcator="\n",
            footer="\n",  # the merged file holds exactly its lines' bytes
        ),
        name="merge",
    )
    name = flow.add(UpdateAttribute(filename="${uuid}"), name="name")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(get, split)
    flow.connect(split, bucket, "splits")
    flow.connect(bucket, merge)
    flow.connect(merge, name, "merged")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def job_session(master: str):  # type: ignore[no-untyped-def]
    """A SparkSession with flowcore's session settings, its workers started on every core."""
    from pyspark.sql import SparkSession

    from flowcore.runners.spark import session_conf

    builder = SparkSession.builder.master(master).appName("spark-pays-job")
    for key, value in session_conf(master).items():
        builder = builder.config(key, value)
    sc = builder.getOrCreate().sparkContext
    cores = int(sc.defaultParallelism)
    sc.parallelize(range(cores), cores).count()
    return sc


def _write_buckets(groups, out_dir: str):  # type: ignore[no-untyped-def]
    """The job's writer: each bucket's lines in files of at most ENTRIES, fsynced."""
    for _bucket, grouped in groups:
        lines = list(grouped)
        for start in range(0, len(lines), ENTRIES):
            path = os.path.join(out_dir, str(uuid.uuid4()))
            with open(path, "w", encoding="utf-8") as out:
                out.write("\n".join(lines[start : start + ENTRIES]) + "\n")
                out.flush()
                os.fsync(out.fileno())
            yield 1


def child_job(args: argparse.Namespace) -> dict[str, float]:
    """The hand-written PySpark job."""
    sc = job_session(args.master)
    source, out = Path(args.input), Path(args.workdir) / "out"
    out.mkdir()
    target = str(out)
    with PeakMemory() as memory:
        started = time.perf_counter()
        numbered = [
            sc.textFile(str(path)).zipWithIndex().map(lambda pair: ((pair[1] + 1) % 8, pair[0]))
            for path in sorted(source.iterdir())
        ]
        lines = numbered[0] if len(numbered) == 1 else sc.union(numbered)
        written = (
            lines.groupByKey(sc.defaultParallelism)
            .mapPartitions(lambda groups: _write_buckets(groups, target))
            .sum()
        )
        seconds = time.perf_counter() - started
    return _figures(seconds, memory, out, args, spark_files=written)


def child_flowcore(args: argparse.Namespace) -> dict[str, float]:
    """The flow on Spark (its runner started before the clock) or direct."""
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings

    runner: object = "direct"
    if args.runner == "spark":
        from flowcore.runners.spark import SparkRunner, spark_session

        spark_session(args.master)
        runner = SparkRunner(master=args.master)
    source, out = Path(args.input), Path(args.workdir) / "out"
    flow = build_flow(source, out)
    with PeakMemory() as memory:
        started = time.perf_counter()
        result = run_flow(flow, runner, repository=Path(args.workdir) / "repo", settings=Settings())  # type: ignore[arg-type]
        seconds = time.perf_counter() - started
    figures = _figures(seconds, memory, out, args)
    figures["merged"] = result.count("merge", "merged")
    return figures


def _figures(seconds: float, memory: PeakMemory, out: Path, args: argparse.Namespace, **more):  # type: ignore[no-untyped-def]
    driver = driver_mb()  # before the check, whose own reading of the output is no contestant's
    checked = verify(out, args.count, args.files)
    return {
        "seconds": seconds,
        "driver_mb": driver,
        "worker_mb": memory.worker_mb,
        "jvm_mb": memory.jvm_mb,
        **checked,
        **more,
    }


@contextlib.contextmanager
def _stage_clock():  # type: ignore[no-untyped-def]
    """Seconds and runs of each stage (``Controller.run_stage``: its Spark job and commit)."""
    from flowcore.driver.controller import Controller

    seconds: dict[str, list[float]] = {}
    original = Controller.run_stage

    def timed(self, stage, **kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return original(self, stage, **kwargs)
        finally:
            seconds.setdefault(stage.id, []).append(time.perf_counter() - started)

    Controller.run_stage = timed  # type: ignore[method-assign]
    try:
        yield seconds
    finally:
        Controller.run_stage = original  # type: ignore[method-assign]


def spark_job_times(sc) -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
    """Spark's own job durations (submission to completion) from its status store, per job
    group: flowcore names a stage run's job group ``flowcore-STAGE-...``."""
    jobs = sc._jsc.sc().statusStore().jobsList(None)
    times: dict[str, list[float]] = {}
    for index in range(jobs.size()):
        job = jobs.apply(index)
        submitted, completed = job.submissionTime(), job.completionTime()
        if not (submitted.isDefined() and completed.isDefined()):
            continue
        group = job.jobGroup().get() if job.jobGroup().isDefined() else "(no group)"
        # flowcore-STAGE-PID-N; the stage id has dashes of its own
        stage = group.removeprefix("flowcore-").rsplit("-", 2)[0] if "flowcore-" in group else group
        seconds = (completed.get().getTime() - submitted.get().getTime()) / 1000
        times.setdefault(stage, []).append(seconds)
    return times


def child_profile(args: argparse.Namespace) -> dict[str, object]:
    """Where a cold flowcore Spark run's time goes, phase by phase, in this fresh process."""
    clock = time.perf_counter()
    phases: dict[str, float] = {}

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        phases[name] = now - clock
        clock = now

    from flowcore.driver.controller import run_flow
    from flowcore.runners.spark import SparkRunner, spark_session
    from flowcore.settings import Settings

    lap("import_flowcore_s")
    source, out = Path(args.input), Path(args.workdir) / "out"
    flow = build_flow(source, out) if args.count else cold_flow(out)
    lap("define_flow_s")
    session = spark_session(args.master)
    lap("session_start_s")
    runner = SparkRunner(master=args.master)
    lap("runner_start_s")  # the workers' warm-up (and, before bc22609, the data sources)
    with _stage_clock() as stages:
        result = run_flow(flow, runner, repository=Path(args.workdir) / "repo", settings=Settings())
    lap("run_flow_s")
    # Read after the run: Spark's status store is filled asynchronously, so the warm-up job
    # may be missing right after it. It is the only job without a flowcore job group.
    spark_jobs = spark_job_times(session.sparkContext)
    warm_up = sum(spark_jobs.pop("(no group)", ()))
    stage_total = sum(sum(v) for v in stages.values())
    figures: dict[str, object] = {
        **phases,
        "warm_up_jobs_s": warm_up,
        # the runner's start beyond its warm-up job (before bc22609: the data sources' registration)
        "runner_rest_s": phases["runner_start_s"] - warm_up,
        "stage_runs_s": stage_total,
        "run_rest_s": phases["run_flow_s"] - stage_total,
        "stages": {k: [len(v), sum(v)] for k, v in sorted(stages.items())},
        "spark_jobs_in_run": {k: [len(v), sum(v)] for k, v in sorted(spark_jobs.items())},
        "result_elapsed_s": result.elapsed_seconds,
        "result_start_s": getattr(result, "start_seconds", None),
    }
    if args.count:
        figures.update(verify(out, args.count, args.files))
    return figures


CHILDREN = {"job": child_job, "flowcore": child_flowcore, "profile": child_profile}


# --- the cold start -------------------------------------------------------------------------------

COLD_FLOW = """\
from flowcore import Flow
from processors import GenerateFlowFile, PutFile

flow = Flow("cold")
gen = flow.add(
    GenerateFlowFile(batch_size={count}, file_size="100 B", unique_flowfiles=True), name="gen"
)
put = flow.add(PutFile(directory={out!r}), name="put")
flow.connect(gen, put)
flow.auto_terminate(put, ["success", "failure"])
"""

MINIMAL_APP = """\
from pyspark.sql import SparkSession
builder = SparkSession.builder.master({master!r}).appName("minimal")
for key, value in {conf!r}.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
spark.sparkContext.parallelize(range(2), 2).count()
spark.stop()
"""


def cold_flow(out: Path):  # type: ignore[no-untyped-def]
    """The cold-start flow, defined in this process (for ``--profile``)."""
    scope: dict[str, object] = {}
    exec(COLD_FLOW.format(count=COLD_FLOWFILES, out=str(out)), scope)  # our own text
    return scope["flow"]


def _wall(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds of *command*, which must succeed."""
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command[:4]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds


def cold_flowcore(tree: Path, root: Path) -> float:
    """``flowcore run`` of the cold-start flow, a fresh process and repository: its seconds."""
    work = Path(tempfile.mkdtemp(dir=root, prefix="cold-"))
    try:
        (work / "flow.py").write_text(COLD_FLOW.format(count=COLD_FLOWFILES, out=str(work / "out")))
        command = [sys.executable, "-m", "flowcore", "run", str(work / "flow.py")]
        command += ["--runner", "spark", "--master", MASTER, "--repository", str(work / "repo")]
        seconds = _wall(command, _env(tree))
        if len(list((work / "out").iterdir())) != COLD_FLOWFILES:
            raise SystemExit("cold start: the flow did not write its FlowFiles")
        return seconds
    finally:
        shutil.rmtree(work, ignore_errors=True)


def cold_pyspark(conf: dict[str, str]) -> float:
    """The minimal PySpark application with flowcore's session settings: its seconds."""
    script = MINIMAL_APP.format(master=MASTER, conf=conf)
    return _wall([sys.executable, "-c", script], _env(TREE))


# --- the parent -----------------------------------------------------------------------------------


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "FLOWCORE_TREE": str(tree), "PYTHONPATH": str(tree)}


def run_child(tree: Path, kind: str, workdir: Path, **options: object) -> dict[str, object]:
    """Run child *kind* with *tree*'s flowcore in a fresh process; its JSON figures. The
    working directory is removed after."""
    command = [sys.executable, __file__, "--child", kind, "--workdir", str(workdir)]
    for key, value in options.items():
        command += [f"--{key.replace('_', '-')}", str(value)]
    workdir.mkdir(parents=True)
    try:
        done = subprocess.run(command, env=_env(tree), capture_output=True, text=True, check=False)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(f"{kind} {options} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def contestants(args: argparse.Namespace, trees: dict[str, Path]) -> list[tuple[str, str, dict]]:
    """(name, child kind, options) of every timed run of a round, size by size, shape by shape."""
    runs = []
    for size in args.sizes:
        for shape in args.shapes:
            common = {"count": size, "files": SHAPES[shape], "input": f"{size}-{shape}"}
            masters = [MASTER] + (["local[1]"] if args.scaling and size == max(args.sizes) else [])
            for master in masters:
                suffix = "" if master == MASTER else "_1"
                runs.append((f"{size}_{shape}_job{suffix}", "job", {**common, "master": master}))
                for tree in trees:
                    prefix = "" if tree == "now" else f"{tree}_"
                    spark = {**common, "master": master, "runner": "spark"}
                    runs.append((f"{size}_{shape}_{prefix}spark{suffix}", "flowcore", spark))
                    if master == MASTER:
                        direct = {**common, "master": master, "runner": "direct"}
                        runs.append((f"{size}_{shape}_{prefix}direct", "flowcore", direct))
    return runs


def _tree_of(name: str, trees: dict[str, Path]) -> Path:
    for tree, path in trees.items():
        if tree != "now" and f"_{tree}_" in f"_{name}":
            return path
    return trees["now"]


def measure(args: argparse.Namespace, trees: dict[str, Path], root: Path) -> dict[str, list]:
    """Every contestant *repeat* times, interleaved round by round; every run's figures."""
    from flowcore.runners.spark import session_conf

    conf = session_conf(MASTER)
    got: dict[str, list] = {}
    runs = contestants(args, trees)
    for round_ in range(args.repeat):
        for name, kind, given in runs:
            options = {**given, "input": root / "input" / str(given["input"])}
            workdir = root / f"work-{name}-{round_}"
            result = run_child(_tree_of(name, trees), kind, workdir, **options)
            got.setdefault(name, []).append(result)
            print(f"round {round_ + 1}: {name} {result['seconds']:.3f} s", file=sys.stderr)
        if args.cold:
            got.setdefault("cold_pyspark", []).append({"seconds": cold_pyspark(conf)})
            for tree, path in trees.items():
                prefix = "" if tree == "now" else f"{tree}_"
                got.setdefault(f"cold_{prefix}flowcore", []).append(
                    {"seconds": cold_flowcore(path, root)}
                )
    return got


def summarize(args: argparse.Namespace, trees: dict[str, Path], got: dict[str, list]) -> dict:
    """Best, slowest and peak memory of each contestant, and the ratios the targets name."""
    figures: dict[str, float] = {}
    for name, runs in got.items():
        figures[f"{name}_s"] = min(r["seconds"] for r in runs)
        figures[f"{name}_slowest_s"] = max(r["seconds"] for r in runs)
        for memory in ("driver_mb", "worker_mb", "jvm_mb"):
            if memory in runs[0]:
                figures[f"{name}_{memory}"] = max(r[memory] for r in runs)
    for tree in trees:
        p = "" if tree == "now" else f"{tree}_"
        for size in args.sizes:
            for shape in args.shapes:
                key = f"{size}_{shape}"
                spark, job, direct = (
                    figures.get(f"{key}_{n}_s") for n in (f"{p}spark", "job", f"{p}direct")
                )
                if spark and job:
                    figures[f"{key}_{p}spark_vs_job"] = spark / job
                if spark and direct:
                    figures[f"{key}_{p}spark_vs_direct"] = spark / direct
                one = figures.get(f"{key}_{p}spark_1_s")
                if one and spark:
                    figures[f"{key}_{p}spark_speedup"] = one / spark
                if figures.get(f"{key}_job_1_s") and job:
                    figures[f"{key}_job_speedup"] = figures[f"{key}_job_1_s"] / job
        if f"cold_{p}flowcore_s" in figures:
            extra = figures[f"cold_{p}flowcore_s"] - figures["cold_pyspark_s"]
            figures[f"cold_{p}flowcore_minus_pyspark_s"] = extra
    return figures


def print_table(args: argparse.Namespace, trees: dict[str, Path], figures: dict) -> None:
    """The figures for people: best (slowest) seconds, ratios, memory."""

    def cell(name: str) -> str:
        if f"{name}_s" not in figures:
            return "-"
        return f"{figures[f'{name}_s']:.2f} ({figures[f'{name}_slowest_s']:.2f})"

    print(f"\nbest of {args.repeat} (slowest), seconds; ratios of the bests")
    header = [
        "lines",
        "shape",
        "job",
        "tree",
        "spark local[2]",
        "direct",
        "spark/job",
        "spark/direct",
    ]
    rows = [header]
    for size in args.sizes:
        for shape in args.shapes:
            key = f"{size}_{shape}"
            for tree in trees:
                p = "" if tree == "now" else f"{tree}_"
                ratios = [figures.get(f"{key}_{p}spark_vs_{b}") for b in ("job", "direct")]
                rows.append(
                    [f"{size:,}", shape, cell(f"{key}_job"), tree, cell(f"{key}_{p}spark"),
                     cell(f"{key}_{p}direct"), *(f"{r:.2f}x" if r else "-" for r in ratios)]
                )  # fmt: skip
    for size in args.sizes:
        for shape in args.shapes:
            key = f"{size}_{shape}"
            if f"{key}_job_speedup" in figures:
                for tree in trees:
                    p = "" if tree == "now" else f"{tree}_"
                    rows.append(
                        [f"{size:,}", shape, f"local[1] {cell(f'{key}_job_1')}", tree,
                         f"local[1] {cell(f'{key}_{p}spark_1')}", "speedup:",
                         f"job {figures[f'{key}_job_speedup']:.2f}x",
                         f"spark {figures.get(f'{key}_{p}spark_speedup', 0):.2f}x"]
                    )  # fmt: skip
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))
    if "cold_pyspark_s" in figures:
        print(f"\ncold start: minimal PySpark app {cell('cold_pyspark')}")
        for tree in trees:
            p = "" if tree == "now" else f"{tree}_"
            extra = figures[f"cold_{p}flowcore_minus_pyspark_s"]
            print(f"  {tree}: flowcore run {cell(f'cold_{p}flowcore')}, {extra:+.2f} s")
    print("\npeak memory, MB (driver / largest Python worker / JVM)")
    for name in sorted(k.removesuffix("_driver_mb") for k in figures if k.endswith("_driver_mb")):
        mem = [figures.get(f"{name}_{m}", 0.0) for m in ("driver_mb", "worker_mb", "jvm_mb")]
        print(f"  {name:<24} {mem[0]:>6.0f} {mem[1]:>6.0f} {mem[2]:>6.0f}")


def profile(args: argparse.Namespace, trees: dict[str, Path], root: Path) -> dict[str, object]:
    """``--profile``: the profile child for each tree, interleaved, at the first size and shape
    and for the cold-start flow; the run with the fastest ``run_flow`` of each."""
    size, shape = args.sizes[0], args.shapes[0]
    got: dict[str, list] = {}
    for round_ in range(args.repeat):
        for tree, path in trees.items():
            for label, count in ((f"{size}_{shape}", size), ("cold_flow", 0)):
                options = {"count": count, "files": SHAPES[shape], "master": MASTER}
                options["input"] = root / "input" / f"{size}-{shape}"
                workdir = root / f"profile-{tree}-{label}-{round_}"
                got.setdefault(f"{tree}_{label}", []).append(
                    run_child(path, "profile", workdir, **options)
                )
    return {name: min(runs, key=lambda r: r["run_flow_s"]) for name, runs in got.items()}


def print_profile(args: argparse.Namespace, best: dict[str, dict]) -> None:
    """The profile for people: each phase's seconds, each stage's runs and Spark jobs."""
    for name, figures in best.items():
        print(f"\n{name} (the run with the fastest run_flow of {args.repeat})")
        for key, value in figures.items():
            shown = f"{value:.3f}" if isinstance(value, float) else json.dumps(value)
            print(f"  {key:<24} {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200000,1000000")
    parser.add_argument("--shapes", default="one,ten")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-cold", dest="cold", action="store_false")
    parser.add_argument("--no-scaling", dest="scaling", action="store_false")
    parser.add_argument("--profile", action="store_true", help="where a Spark run's time goes")
    parser.add_argument("--before", type=Path, help="a tree to measure beside this one")
    for hidden in ("child", "workdir", "input", "master", "runner"):
        parser.add_argument(f"--{hidden}", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--files", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](args)))
        return
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.shapes = args.shapes.split(",")
    if unknown := set(args.shapes) - set(SHAPES):
        parser.error(f"unknown shape(s) {sorted(unknown)}: use one, ten or one,ten")
    trees = {"now": TREE} | ({"before": args.before.resolve()} if args.before else {})
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR"), prefix="spark-pays-") as tmp:
        root = Path(tmp)
        for size in args.sizes:
            for shape in args.shapes:
                generate(root / "input" / f"{size}-{shape}", size, SHAPES[shape])
        os.sync()
        if args.profile:
            best = profile(args, trees, root)
            print(json.dumps(best))
            print_profile(args, best)
            return
        got = measure(args, trees, root)
    figures = summarize(args, trees, got)
    print(json.dumps({k: round(v, 3) for k, v in figures.items()}))
    print_table(args, trees, figures)


if __name__ == "__main__":
    main()
