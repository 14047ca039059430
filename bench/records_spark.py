"""ConvertRecord on Spark ``local[2]`` over 1 GB, beside a hand-written PySpark job (issue 35).

Issue 35's Spark target: "the same conversions (ConvertRecord CSV -> JSON, JSON -> Avro, CSV ->
Parquet) on Spark local[2] over 1 GB: at most the time of a hand-written PySpark job
(spark.read.csv -> write.json)". The input is like a user's: distinct records (an id, a name, an
e-mail address, a timestamp, a decimal amount, a score with a tenth null, a city with a twentieth
null: bench/records.py's columns), as ONE big CSV file of ``--size`` bytes, and as the same
records in 100 CSV files (``many``), each with the header.

Each scenario runs as a fresh Python process, timed whole from the parent (interpreter start,
imports, the Spark session's start, the work, the session's stop), as a user waits for it:

- ``flow``: FileSplitter (Header Line Count 1, 64 MB blocks, zero-copy) -> ConvertRecord
  (CSVReader -> JsonRecordSetWriter one JSON object a line, or ParquetRecordSetWriter) ->
  UpdateAttribute (the part file's name) -> PutFile, ``flow.run(runner="spark",
  master="local[2]")``: one part file per block, as Spark writes one per partition;
- ``pyspark``: ``spark.read.csv(header=True, inferSchema=True)`` -> ``write.json`` (or
  ``write.parquet``) on a ``local[2]`` session with Spark's defaults (no web UI).

JSON -> Avro (the same records as NDJSON, one big file; the flow splits it by lines with no
header, JsonTreeReader -> AvroRecordSetWriter): Spark writes Avro only with the external
``spark-avro`` package, which pyspark's wheel does not ship (and cannot be fetched here), so the
job is what a Spark user writes without it: ``spark.read.json(path)`` (the schema inferred, a
pass of its own, as Spark's default), then one Avro data file per partition written by fastavro
in the Python workers. ``--variant arrow`` (the default, the fastest measured) hands each
partition over with ``df.mapInArrow`` as Arrow batches (PySpark refuses it without pandas,
though the function sees Arrow only: install pandas, or put it on ``PYTHONPATH``); ``--variant
rdd`` with ``df.rdd.mapPartitionsWithIndex`` as pickled ``Row`` objects.

``--jit`` adds two runs beside each pair: ``pyspark-c1``, the job with the JVM option flowcore
gives a local session (``-XX:TieredStopAtLevel=1``: C1 only), and ``flow-c2``, the flow with
the JVM's optimizing compiler back on (``-XX:TieredStopAtLevel=4`` in ``conf``, which comes last
and wins): what the option costs a job whose work is the JVM's, and what it gains the flow.

What bounds the flow is measured in the same rounds: ``codec / 2`` is flowcore's own reader
and writer called directly over the big file in one process, halved (the conversion's work
spread perfectly on two cores, with no engine and no Spark), and ``session`` is the time the
``pyspark`` child spent starting and stopping its session (Spark's fixed cost, paid by both).
Rounds are interleaved; the table gives the best time and the range. Every run's output is
checked: it holds every record once (counted, not timed).

    .venv/bin/python bench/records_spark.py [--size 1GB] [--repeat 2] [--only json->avro]
        [--no-codec] [--jit] [--variant arrow|rdd]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from flowcore.units import parse_data_size

STAMP = "yyyy-MM-dd HH:mm:ss"
CITIES = ["Berlin", "Lisbon", "Osaka", "Lagos", "Lima", "Quebec", "Pune", "Oslo", "Perth"]
FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"]
MANY = 100
CHUNK_ROWS = 500_000
MASTER = "local[2]"
#: The baseline's session: Spark's defaults, without the web UI and the console progress bar
#: (a little less for it to start). Not flowcore's session settings: those keep the JVM on its
#: quick (C1) compiler, as flowcore's Python workers do the work, and would slow a job whose
#: work is the JVM's (CSV and JSON parsing, JSON writing): up to 1.6x its time (``--jit``).
BASELINE_CONF = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}


# ---------------------------------------------------------------------------------------------
# the input


def _chunk(first_id: int, rows: int, seed: int) -> pa.Table:
    """*rows* distinct records with ids from *first_id* (bench/records.py's columns)."""
    random = np.random.default_rng(seed)
    ids = np.arange(first_id, first_id + rows, dtype=np.int64)
    first = np.array(FIRST)[random.integers(0, len(FIRST), rows)]
    last = np.array(LAST)[random.integers(0, len(LAST), rows)]
    numbers = ids.astype(str)
    names = np.char.add(np.char.add(np.char.add(first, " "), last), np.char.add("-", numbers))
    emails = np.char.add(np.char.add(np.char.lower(first), numbers), "@example.com")
    seconds = 1_700_000_000 + random.integers(0, 40_000_000, rows)
    stamps = pc.strftime(pa.array(seconds, pa.timestamp("s")), "%Y-%m-%d %H:%M:%S")
    cents = random.integers(0, 100_000, rows)
    return pa.table(
        {
            "id": ids,
            "name": names,
            "email": emails,
            "created": stamps,
            "amount": pa.array(cents / 100),
            "score": pa.array(random.random(rows).round(3), mask=random.random(rows) < 0.1),
            "city": pa.array(
                np.array(CITIES)[random.integers(0, len(CITIES), rows)],
                mask=random.random(rows) < 0.05,
            ),
        }
    )


def _write_inputs(root: Path, size: int) -> int:
    """The big CSV file of about *size* bytes, and the same lines in 100 files; the rows."""
    (root / "csv-one").mkdir()
    (root / "csv-many").mkdir()
    big = root / "csv-one" / "records.csv"
    rows = 0
    with big.open("wb") as out:
        while out.tell() < size:
            table = _chunk(rows + 1, CHUNK_ROWS, seed=35 + rows)
            options = pacsv.WriteOptions(include_header=rows == 0, quoting_style="needed")
            sink = pa.BufferOutputStream()
            pacsv.write_csv(table, sink, options)
            data = sink.getvalue().to_pybytes()
            if out.tell() + len(data) > size:  # the last chunk: only the lines that fit
                data = data[: data.rfind(b"\n", 0, max(1, size - out.tell())) + 1]
            rows += data.count(b"\n") - (1 if rows == 0 else 0)
            out.write(data)
            if not data:
                break
    _cut(big, root / "csv-many", MANY)
    return rows


def _cut(big: Path, directory: Path, parts: int) -> None:
    """*big*'s lines in *parts* files of about equal size, each beginning with its header."""
    data = memoryview(big.read_bytes())
    raw = data.obj
    at = raw.index(b"\n") + 1  # type: ignore[union-attr]
    header = data[:at]
    step = (len(data) - at) // parts + 1
    for index in range(parts):
        end = raw.find(b"\n", min(at + step, len(data))) + 1  # type: ignore[union-attr]
        if index == parts - 1 or end == 0:
            end = len(data)
        (directory / f"part-{index:03d}.csv").write_bytes(bytes(header) + data[at:end])
        at = end


def _ndjson(root: Path) -> None:
    """The big file's records as NDJSON (one object a line), for JSON -> Avro."""
    (root / "json-one").mkdir()
    reader = pacsv.open_csv(root / "csv-one" / "records.csv")
    import orjson

    with (root / "json-one" / "records.json").open("wb") as out:
        for batch in reader:
            out.write(b"".join(orjson.dumps(r) + b"\n" for r in batch.to_pylist()))


# ---------------------------------------------------------------------------------------------
# the children: one fresh process per run


def _child_flow(
    scenario: str, source: Path, out: Path, repository: Path, *, c2: bool = False
) -> dict[str, object]:
    """The flowcore flow on Spark local[2] (*c2*: with the JVM's optimizing compiler back on)."""
    from flowcore import Flow
    from processors import ConvertRecord, FileSplitter, PutFile, UpdateAttribute
    from processors.record_services import (
        AvroRecordSetWriter,
        CSVReader,
        JsonRecordSetWriter,
        JsonTreeReader,
        ParquetRecordSetWriter,
    )

    fmt, target = scenario.split("->")
    flow = Flow("records-spark")
    if fmt == "csv":
        flow.add_service(
            CSVReader("reader", treat_first_line_as_header="true", timestamp_format=STAMP)
        )
    else:
        flow.add_service(JsonTreeReader("reader", timestamp_format=STAMP))
    writers = {
        "json": lambda: JsonRecordSetWriter("writer", output_grouping="output-oneline"),
        "parquet": lambda: ParquetRecordSetWriter("writer"),
        "avro": lambda: AvroRecordSetWriter("writer"),
    }
    flow.add_service(writers[target]())
    split = flow.add(
        FileSplitter(
            input_directory=str(source),
            header_line_count=1 if fmt == "csv" else 0,
            blocks_threshold=MANY,
        ),
        name="split",
    )
    convert = flow.add(
        ConvertRecord(record_reader="reader", record_writer="writer"), name="convert"
    )
    name = flow.add(
        UpdateAttribute(filename=f"part-${{fragment.index}}-${{filename}}.{target}"), name="name"
    )
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(split, convert, "blocks")
    flow.connect(convert, name, "success")
    flow.connect(name, put)
    flow.auto_terminate(split, ["files", "failure"])
    flow.auto_terminate(convert, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    conf = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=4"} if c2 else None
    result = flow.run("spark", repository=repository, master=MASTER, conf=conf)
    return {
        "blocks": result.count("split", "blocks"),
        "failures": result.count("convert", "failure") + result.count("put", "failure"),
    }


def _child_pyspark(
    scenario: str, source: Path, out: Path, *, variant: str = "arrow", c1: bool = False
) -> dict[str, object]:
    """The hand-written PySpark job, on Spark's default session (no UI).

    *c1* adds flowcore's local-master JVM option (``-XX:TieredStopAtLevel=1``) to that
    session, to measure what it costs a job whose work is the JVM's.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers import fastavro
    from pyspark.sql import SparkSession

    started = time.perf_counter()
    builder = SparkSession.builder.master(MASTER).appName("records-spark-baseline")
    conf = dict(BASELINE_CONF)
    if c1:
        conf["spark.driver.extraJavaOptions"] = "-XX:TieredStopAtLevel=1"
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    session = time.perf_counter() - started
    started = time.perf_counter()
    if scenario == "json->avro":
        frame = spark.read.json(str(source))  # the schema inferred: a pass of its own
        _write_avro(frame, out, variant)
    else:
        frame = spark.read.csv(str(source), header=True, inferSchema=True)
        if scenario == "csv->json":
            frame.write.json(str(out))
        else:
            frame.write.parquet(str(out))
    job = time.perf_counter() - started
    started = time.perf_counter()
    spark.stop()
    session += time.perf_counter() - started
    return {"session_seconds": session, "job_seconds": job}


#: Spark SQL's simple types -> Avro's (the types ``spark.read.json`` infers for these records).
_AVRO_TYPES = {"long": "long", "double": "double", "string": "string", "boolean": "boolean"}


def _avro_schema(frame: Any) -> dict[str, Any]:
    """The Avro record schema of a flat DataFrame, every field nullable (as Spark's are)."""
    fields = []
    for field in frame.schema.fields:
        kind = _AVRO_TYPES[field.dataType.typeName()]
        fields.append({"name": field.name, "type": ["null", kind], "default": None})
    return {"type": "record", "name": "record", "fields": fields}


def _write_avro(frame: Any, out: Path, variant: str) -> None:
    """One Avro data file per partition, written by fastavro in the Python workers.

    What a Spark user without ``spark-avro`` writes. ``arrow`` (the default, the fastest):
    ``mapInArrow`` hands each partition's rows over as Arrow batches, made into dicts by
    ``to_pylist``. ``rdd``: ``df.rdd.mapPartitionsWithIndex``, the rows pickled as ``Row``
    objects and made into dicts by ``asDict``.
    """
    schema = _avro_schema(frame)
    out.mkdir(parents=True)
    where = str(out)
    if variant == "rdd":

        def write_rdd(index: int, rows: Iterator[Any]) -> Iterator[int]:
            import fastavro

            count = 0

            def records() -> Iterator[dict[str, Any]]:
                nonlocal count
                for row in rows:
                    count += 1
                    yield row.asDict()

            with open(f"{where}/part-{index:05d}.avro", "wb") as sink:
                fastavro.writer(sink, fastavro.parse_schema(schema), records())
            yield count

        frame.rdd.mapPartitionsWithIndex(write_rdd).sum()
        return

    def write_arrow(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import fastavro
        from pyspark import TaskContext

        count = 0

        def records() -> Iterator[dict[str, Any]]:
            nonlocal count
            for batch in batches:
                count += batch.num_rows
                yield from batch.to_pylist()

        index = TaskContext.get().partitionId()
        with open(f"{where}/part-{index:05d}.avro", "wb") as sink:
            fastavro.writer(sink, fastavro.parse_schema(schema), records())
        yield pa.record_batch({"records": pa.array([count], pa.int64())})

    frame.mapInArrow(write_arrow, "records long").groupBy().sum().collect()


def _child_codec(scenario: str, source: Path, out: Path) -> dict[str, object]:
    """flowcore's reader and writer over every input file in this one process."""
    from flowcore.records.avro_codec import write_avro
    from flowcore.records.csv_reader import CsvReaderOptions, read_csv
    from flowcore.records.json_reader import JsonReaderOptions, read_json
    from flowcore.records.json_writer import JsonWriterOptions, write_json
    from flowcore.records.parquet_codec import write_parquet

    out.mkdir()
    started = time.perf_counter()
    for index, path in enumerate(sorted(source.iterdir())):
        with path.open("rb") as raw, (out / f"part-{index}").open("wb") as sink:
            if scenario == "json->avro":
                write_avro(read_json(raw, JsonReaderOptions(timestamp_format=STAMP)), sink)
                continue
            batches = read_csv(
                raw, CsvReaderOptions(first_line_is_header=True, timestamp_format=STAMP)
            )
            if scenario == "csv->json":
                write_json(batches, sink, JsonWriterOptions(output_grouping="output-oneline"))
            else:
                write_parquet(batches, sink)
    return {"work_seconds": time.perf_counter() - started}


def _child(args: argparse.Namespace) -> None:
    source, out = Path(args.input), Path(args.out)
    if args.child in ("flow", "flow-c2"):
        found = _child_flow(
            args.scenario, source, out, Path(args.repository), c2=args.child == "flow-c2"
        )
    elif args.child in ("pyspark", "pyspark-c1"):
        found = _child_pyspark(
            args.scenario, source, out, variant=args.variant, c1=args.child == "pyspark-c1"
        )
    else:
        found = _child_codec(args.scenario, source, out)
    print(json.dumps(found))


# ---------------------------------------------------------------------------------------------
# the parent: rounds, checks, the table


def _records_in(out: Path, scenario: str) -> int:
    """How many records a run wrote (JSON lines, Parquet rows or Avro records)."""
    files = [p for p in out.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))]
    if scenario.endswith("parquet"):
        return sum(pq.ParquetFile(p).metadata.num_rows for p in files if p.stat().st_size)
    if scenario.endswith("avro"):
        import fastavro

        total = 0
        for path in files:
            with path.open("rb") as data:
                total += sum(block.num_records for block in fastavro.block_reader(data))
        return total
    total = 0
    for path in files:
        last = b"\n"
        with path.open("rb") as data:
            while chunk := data.read(1 << 24):
                total += chunk.count(b"\n")
                last = chunk[-1:]
        total += last != b"\n"  # one JSON object a line, the last one without a newline
    return total


def _run(
    root: Path, kind: str, scenario: str, label: str, rows: int, *, variant: str
) -> dict[str, float]:
    """One fresh process: its wall time, and what it reported."""
    work = root / "run"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    fmt = scenario.split("->", maxsplit=1)[0]
    child = label
    command = [
        sys.executable,
        __file__,
        "--child",
        child,
        "--scenario",
        scenario,
        "--input",
        str(root / f"{fmt}-{kind}"),
        "--out",
        str(work / "out"),
        "--repository",
        str(work / "repo"),
        "--variant",
        variant,
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        msg = f"{label} {scenario} {kind} failed ({done.returncode}):\n{done.stderr[-4000:]}"
        raise RuntimeError(msg)
    reported = json.loads(done.stdout.strip().splitlines()[-1])
    if reported.get("failures"):
        msg = f"{label} {scenario} {kind}: {reported['failures']} FlowFiles failed"
        raise RuntimeError(msg)
    found = _records_in(work / "out", scenario)
    if found != rows:
        msg = f"{label} {scenario} {kind} wrote {found} records, not {rows}"
        raise RuntimeError(msg)
    return {"seconds": seconds, **{k: float(v) for k, v in reported.items()}}


SCENARIOS = ("csv->json", "csv->parquet", "json->avro")


def _plan(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(scenario, kind, label) of every run of a round."""
    plan = []
    for scenario in args.only or SCENARIOS:
        # NDJSON is made as one big file only (the CSV cases show what 100 files change)
        for kind in ("one",) if scenario == "json->avro" else ("one", "many"):
            plan.append((scenario, kind, "pyspark"))
            plan.append((scenario, kind, "flow"))
            if args.jit:
                plan.append((scenario, kind, "pyspark-c1"))
                plan.append((scenario, kind, "flow-c2"))
        if not args.no_codec:
            plan.append((scenario, "one", "codec"))
    return plan


def _needs_pandas(args: argparse.Namespace) -> bool:
    """Whether the run asks for ``mapInArrow`` (PySpark refuses it without pandas) and has none."""
    wanted = "json->avro" in (args.only or SCENARIOS) and args.variant == "arrow"
    return wanted and importlib.util.find_spec("pandas") is None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1 GB", help="the input's size, e.g. 100MB or 1GB")
    parser.add_argument("--repeat", type=int, default=2, help="rounds, interleaved")
    parser.add_argument("--only", action="append", choices=SCENARIOS, help="one scenario")
    parser.add_argument("--no-codec", action="store_true", help="skip the codec / 2 bound")
    parser.add_argument(
        "--jit",
        action="store_true",
        help="also the job with flowcore's -XX:TieredStopAtLevel=1 and the flow without it",
    )
    parser.add_argument(
        "--variant",
        choices=("arrow", "rdd"),
        default="arrow",
        help="the JSON -> Avro job's hand-over to fastavro: mapInArrow or rdd.mapPartitions",
    )
    labels = ("flow", "flow-c2", "pyspark", "pyspark-c1", "codec")
    parser.add_argument("--child", choices=labels, help=argparse.SUPPRESS)
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--repository", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    if _needs_pandas(args):
        parser.exit(
            2,
            "records_spark.py: the JSON -> Avro job's df.mapInArrow needs pandas (PySpark's "
            "'sql' extra), which is not installed: pip install pandas (or put a directory "
            "holding it on PYTHONPATH), or time the other hand-over with --variant rdd\n",
        )
    size = int(parse_data_size(args.size, "B"))
    root = Path(tempfile.mkdtemp(prefix="bench-records-spark-", dir=os.environ.get("BENCH_TMP")))
    times: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    try:
        started = time.perf_counter()
        rows = _write_inputs(root, size)
        if "json->avro" in (args.only or SCENARIOS):
            _ndjson(root)
            ndjson = (root / "json-one" / "records.json").stat().st_size
            print(f"NDJSON: {ndjson / 1e6:,.0f} MB", flush=True)
        made = time.perf_counter() - started
        print(f"input: {rows:,} records, {size / 1e6:,.0f} MB, made in {made:.0f} s", flush=True)
        plan = _plan(args)
        for round_ in range(args.repeat):
            for scenario, kind, label in plan:
                gc.collect()
                run = _run(root, kind, scenario, label, rows, variant=args.variant)
                times.setdefault((scenario, kind, label), []).append(run)
                print(f"round {round_ + 1}: {scenario} {kind} {label}: {run}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    _report(times, rows, size, args.repeat)


def _report(
    times: dict[tuple[str, str, str], list[dict[str, float]]], rows: int, size: int, repeat: int
) -> None:
    results: dict[str, dict[str, float]] = {}
    for (scenario, kind, label), runs in times.items():
        seconds = [r["seconds"] for r in runs]
        entry: dict[str, float] = {"seconds": min(seconds), "slowest_seconds": max(seconds)}
        if label == "codec":
            work = [r["work_seconds"] / 2 for r in runs]
            entry = {"seconds": min(work), "slowest_seconds": max(work)}
        baseline = times.get((scenario, kind, "pyspark"))
        if baseline:
            entry["vs_pyspark"] = min(r["seconds"] for r in baseline) / entry["seconds"]
        if label.startswith("pyspark"):
            entry["job_seconds"] = min(r["job_seconds"] for r in runs)
            session = [r["session_seconds"] for r in runs]
            results[f"{scenario} {kind} session{label[7:]}"] = {
                "seconds": min(session),
                "slowest_seconds": max(session),
            }
        shown = "codec / 2" if label == "codec" else label
        results[f"{scenario} {kind} {shown}"] = entry
    print(json.dumps({"rows": rows, "bytes": size, "repeat": repeat, "master": MASTER, **results}))
    print(f"{'run':<34}{'best s':>9}{'slowest':>9}{'MB/s':>8}{'pyspark/this':>14}")
    for name, entry in results.items():
        ratio = f"{entry['vs_pyspark']:>14.2f}" if "vs_pyspark" in entry else f"{'':>14}"
        print(
            f"{name:<34}{entry['seconds']:>9.1f}{entry['slowest_seconds']:>9.1f}"
            f"{size / 1e6 / entry['seconds']:>8.1f}{ratio}"
        )


if __name__ == "__main__":
    main()
