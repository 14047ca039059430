"""What bounds issue 18's "0.2x the hand-written PySpark job" target: Spark's fixed costs, and
the bytes a NiFi flow must move durably.

The distinct scenario's PySpark job (``engine.py``: ten files' lines keyed, grouped by key,
written in 10,000-line files) is timed on the real input and on empty files of the same names,
interleaved, in one Spark session. On empty files the job does no work per line, so its time
is what Spark costs to schedule a job of that shape (two Spark stages, ten map tasks, a shuffle
into two partitions): a flowcore run on Spark schedules at least that much, so 0.2x the real
job is out of reach where that floor is above it.

The direct runner has no Spark to schedule, but a NiFi flow moves its bytes durably twice: GetFile
copies each input file into the content repository, and PutFile writes the merged outputs, each
synced. The byte floor does only that, in plain Python, with no line split, grouping, queue or
provenance: each input copied into a repository directory and fsynced, then read back and
written as 104 fsynced output files (the scenario's count). Timed in the same rounds as the job,
and again as one Spark stage of a task per core, each doing its share of the files: the bytes
moved durably in parallel, what a run on Spark cannot do in less (since sessions use a Unix
socket, Spark's fixed cost for the job's shape is below the target; this floor is not).

Run: ``.venv/bin/python bench/spark_floor.py [--count 1000000] [--repeat 5]``; prints one JSON
line and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine  # the scenario's input and job live there


def _job(sc, source: Path, out: Path) -> float:  # type: ignore[no-untyped-def]
    """The distinct scenario's PySpark job over *source*, writing into *out*; its seconds."""
    out.mkdir()
    target, cores = str(out), int(sc.defaultParallelism)
    started = time.perf_counter()
    paths = sorted(str(p) for p in source.iterdir())
    (
        sc.parallelize(paths, len(paths))
        .flatMap(engine._keyed_lines)
        .groupByKey(cores, partitionFunc=lambda key: key[0])
        .mapPartitionsWithIndex(lambda part, groups: [engine._write_groups(part, groups, target)])
        .collect()
    )
    return time.perf_counter() - started


def _byte_floor(source: Path, root: Path) -> float:
    """The input copied durably into a repository directory, then written out as 104 fsynced
    files: the byte work GetFile and PutFile cannot avoid, in one process. Its seconds."""
    (root / "repository").mkdir()
    (root / "out").mkdir()
    started = time.perf_counter()
    _byte_share((0, 1, str(source), str(root)))
    return time.perf_counter() - started


def _byte_share(share: tuple[int, int, str, str]) -> int:
    """One core's share of the byte floor (all of it with one core): every *cores*-th input
    file copied durably, then its bytes written out as its share of the 104 fsynced files.
    Returns the bytes written."""
    index, cores, source, root = share
    repository, out = Path(root) / "repository", Path(root) / "out"
    paths = sorted(Path(source).iterdir())[index::cores]
    for path in paths:
        with path.open("rb") as read, (repository / path.name).open("wb") as copy:
            copy.write(read.read())
            copy.flush()
            os.fsync(copy.fileno())
    data = b"".join((repository / p.name).read_bytes() for p in paths)
    files = 104 // cores
    step = len(data) // files + 1
    for number in range(files):
        with (out / f"{index}-{number}.txt").open("wb") as written:
            written.write(data[number * step : (number + 1) * step])
            written.flush()
            os.fsync(written.fileno())
    return len(data)


def _spark_byte_floor(sc, source: Path, root: Path) -> float:  # type: ignore[no-untyped-def]
    """The byte floor as one Spark stage of a task per core, each doing its share: what a run
    on Spark cannot do in less, its bytes moved durably in parallel. Its seconds."""
    (root / "repository").mkdir()
    (root / "out").mkdir()
    cores = int(sc.defaultParallelism)
    shares = [(index, cores, str(source), str(root)) for index in range(cores)]
    started = time.perf_counter()
    sc.parallelize(shares, cores).map(_byte_share).collect()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    from pyspark import cloudpickle

    from flowcore.runners.spark import spark_session

    cloudpickle.register_pickle_by_value(engine)  # Spark's workers do not see bench/
    sc = spark_session(args.master).sparkContext
    engine.warm_up(sc)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as root:
        real, empty = Path(root) / "real", Path(root) / "empty"
        engine.generate_distinct(real, args.count)
        empty.mkdir()
        for path in real.iterdir():
            (empty / path.name).write_bytes(b"")
        times: dict[str, list[float]] = {"real": [], "empty": [], "bytes": [], "spark": []}
        for round_ in range(args.repeat):
            for name, source in (("real", real), ("empty", empty)):
                times[name].append(_job(sc, source, Path(root) / f"out-{name}-{round_}"))
            floor = Path(root) / f"bytes-{round_}"
            floor.mkdir()
            times["bytes"].append(_byte_floor(real, floor))
            shared = Path(root) / f"spark-bytes-{round_}"
            shared.mkdir()
            times["spark"].append(_spark_byte_floor(sc, real, shared))
    figures = {
        "job_s": min(times["real"]),
        "job_slowest_s": max(times["real"]),
        "empty_job_s": min(times["empty"]),
        "empty_job_slowest_s": max(times["empty"]),
        "byte_floor_s": min(times["bytes"]),
        "byte_floor_slowest_s": max(times["bytes"]),
        "spark_byte_floor_s": min(times["spark"]),
        "spark_byte_floor_slowest_s": max(times["spark"]),
        "target_0_2x_s": 0.2 * min(times["real"]),
    }
    figures["floor_vs_target"] = figures["empty_job_s"] / figures["target_0_2x_s"]
    figures["byte_floor_vs_target"] = figures["byte_floor_s"] / figures["target_0_2x_s"]
    figures["spark_byte_floor_vs_target"] = figures["spark_byte_floor_s"] / figures["target_0_2x_s"]
    print(json.dumps({k: round(v, 3) for k, v in figures.items()}))
    print(f"{'figure':<24}{'seconds':>10}")
    for name, value in figures.items():
        print(f"{name:<24}{value:>10.3f}")


if __name__ == "__main__":
    main()
