"""ConvertRecord and QueryRecord on a million records, beside pyarrow / fastavro / DuckDB alone.

Issue 35's targets: ConvertRecord CSV -> JSON, JSON -> Avro and CSV -> Parquet on 1M records at
least 0.5x the speed of pyarrow / fastavro doing the same conversion in one plain Python process;
QueryRecord (a filter and a projection) on 1M records in 100 FlowFiles at least 0.5x DuckDB alone
over the same data.

The records are distinct and realistic: an id, a name, an e-mail address, a timestamp, a decimal
amount, a score (a tenth null) and a city (a twentieth null). Each conversion runs:

- ``flow``: GetFile -> ConvertRecord -> PutFile on the direct runner, the records in ONE FlowFile
  and in 100 (``flow x100``); the time counts the whole run (session start, repositories);
- ``codec``: flowcore's reader and writer called directly on the file (the processor's path
  without the engine), to tell the codecs' cost from the engine's;
- ``baseline``: the same conversion with pyarrow (CSV and JSON reading, Parquet), orjson (JSON
  lines from Arrow's rows) and fastavro (Avro from Arrow's rows) in this process.

QueryRecord runs GetFile -> QueryRecord (two queries: ``amount > 500`` and a three-column
projection; CSV in, CSV out) -> PutFile over 100 CSV files; DuckDB alone runs the same two
``COPY (SELECT ...) TO`` statements over each file. Every scenario runs ``--repeat`` rounds,
interleaved (the machine's noise hits each alike); the table gives the best time and the range.

    .venv/bin/python bench/records.py [--rows N] [--repeat N] [--only NAME] [--no-codec]
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

import duckdb
import fastavro
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.records.avro_codec import write_avro
from flowcore.records.csv_reader import CsvReaderOptions, read_csv
from flowcore.records.csv_writer import write_csv
from flowcore.records.json_reader import JsonReaderOptions, read_json
from flowcore.records.json_writer import JsonWriterOptions, write_json
from flowcore.records.parquet_codec import write_parquet
from flowcore.settings import Settings
from processors import ConvertRecord, GetFile, PutFile, QueryRecord
from processors.record_services import (
    AvroRecordSetWriter,
    CSVReader,
    CSVRecordSetWriter,
    JsonRecordSetWriter,
    JsonTreeReader,
    ParquetRecordSetWriter,
)

STAMP = "yyyy-MM-dd HH:mm:ss"
FILTER = "SELECT * FROM FLOWFILE WHERE amount > 500"
PROJECTION = "SELECT id, name, amount FROM FLOWFILE"
CITIES = ["Berlin", "Lisbon", "Osaka", "Lagos", "Lima", "Quebec", "Pune", "Oslo", "Perth"]
FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"]


def _table(rows: int) -> pa.Table:
    """*rows* distinct records (vectorised: a million take about a second)."""
    random = np.random.default_rng(35)
    ids = np.arange(1, rows + 1, dtype=np.int64)
    first = np.array(FIRST)[random.integers(0, len(FIRST), rows)]
    last = np.array(LAST)[random.integers(0, len(LAST), rows)]
    numbers = ids.astype(str)
    names = np.char.add(np.char.add(np.char.add(first, " "), last), np.char.add("-", numbers))
    emails = np.char.add(np.char.add(np.char.lower(first), numbers), "@example.com")
    seconds = 1_700_000_000 + random.integers(0, 40_000_000, rows)
    stamps = pa.array(seconds, pa.timestamp("s"))
    stamp_text = pa.compute.strftime(stamps, "%Y-%m-%d %H:%M:%S")
    cents = random.integers(0, 100_000, rows)
    amount = pa.compute.cast(pa.array(cents / 100), pa.string())
    score = random.random(rows).round(3)
    cities = np.array(CITIES)[random.integers(0, len(CITIES), rows)]
    return pa.table(
        {
            "id": ids,
            "name": names,
            "email": emails,
            "created": stamp_text,
            "amount": pa.compute.cast(amount, pa.float64()),
            "score": pa.array(score, mask=random.random(rows) < 0.1),
            "city": pa.array(cities, mask=random.random(rows) < 0.05),
        }
    )


def _write_inputs(root: Path, rows: int) -> None:
    table = _table(rows)
    options = pacsv.WriteOptions(quoting_style="needed")
    for kind, parts in (("one", 1), ("x100", 100)):
        for fmt in ("csv", "json"):
            (root / f"{fmt}-{kind}").mkdir(parents=True)
        step = -(-rows // parts)
        for index in range(parts):
            piece = table.slice(index * step, step)
            pacsv.write_csv(piece, root / f"csv-{kind}" / f"part-{index:03d}.csv", options)
            with open(root / f"json-{kind}" / f"part-{index:03d}.json", "wb") as out:
                for batch in piece.to_batches(65536):
                    out.write(
                        b"".join(orjson.dumps(r) + b"\n" for r in batch.to_pylist())  # type: ignore[union-attr]
                    )


# ---------------------------------------------------------------------------------------------
# flowcore through a flow


def _services(scenario: str) -> tuple[object, object]:
    source, target = scenario.split("->")
    reader = (
        CSVReader("reader", treat_first_line_as_header="true", timestamp_format=STAMP)
        if source == "csv"
        else JsonTreeReader("reader", timestamp_format=STAMP)
    )
    writers = {
        "json": lambda: JsonRecordSetWriter("writer", output_grouping="output-oneline"),
        "avro": lambda: AvroRecordSetWriter("writer"),
        "parquet": lambda: ParquetRecordSetWriter("writer"),
        "csv": lambda: CSVRecordSetWriter("writer"),
    }
    return reader, writers[target]()


def _flow(root: Path, scenario: str, kind: str, rows: int) -> float:
    """Seconds of GetFile -> ConvertRecord (or QueryRecord) -> PutFile over the inputs."""
    work = root / "run"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    source = scenario.split("->", maxsplit=1)[0] if scenario != "query" else "csv"
    reader, writer = _services(scenario if scenario != "query" else "csv->csv")
    flow = Flow("bench-records")
    flow.add_service(reader)
    flow.add_service(writer)
    get = flow.add(
        GetFile(input_directory=str(root / f"{source}-{kind}"), keep_source_file=True), name="get"
    )
    if scenario == "query":
        node = flow.add(
            QueryRecord(
                record_reader="reader", record_writer="writer", big=FILTER, slim=PROJECTION
            ),
            name="p",
        )
        outputs = ["big", "slim"]
        flow.auto_terminate(node, ["original", "failure"])
    else:
        node = flow.add(ConvertRecord(record_reader="reader", record_writer="writer"), name="p")
        outputs = ["success"]
        flow.auto_terminate(node, "failure")
    put = flow.add(
        PutFile(directory=str(work / "out"), conflict_resolution_strategy="replace"), name="put"
    )
    flow.connect(get, node)
    for name in outputs:
        flow.connect(node, put, name)
    flow.auto_terminate(put, ["success", "failure"])
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=work / "repo", settings=Settings(sync=False))
    elapsed = time.perf_counter() - started
    assert result.count("p", "failure") == 0, result.transfers
    assert sum(result.count("p", name) for name in outputs) == len(outputs) * (
        100 if kind == "x100" else 1
    ), result.transfers
    return elapsed


# ---------------------------------------------------------------------------------------------
# flowcore's codecs called directly


def _codec(root: Path, scenario: str, _kind: str, _rows: int) -> float:
    source, target = scenario.split("->")
    started = time.perf_counter()
    for path in sorted((root / f"{source}-one").iterdir()):
        with open(path, "rb") as raw, open(root / "codec.out", "wb") as out:
            if source == "csv":
                batches = read_csv(
                    raw, CsvReaderOptions(first_line_is_header=True, timestamp_format=STAMP)
                )
            else:
                batches = read_json(raw, JsonReaderOptions(timestamp_format=STAMP))
            if target == "json":
                write_json(batches, out, JsonWriterOptions(output_grouping="output-oneline"))
            elif target == "avro":
                write_avro(batches, out)
            elif target == "parquet":
                write_parquet(batches, out)
            else:
                write_csv(batches, out)
    return time.perf_counter() - started


# ---------------------------------------------------------------------------------------------
# the baselines: pyarrow, orjson, fastavro, DuckDB alone


def _csv_batches(path: Path) -> pacsv.CSVStreamingReader:
    return pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=1 << 22))


def _avro_type(arrow: pa.DataType) -> object:
    if pa.types.is_integer(arrow):
        return "long"
    if pa.types.is_floating(arrow):
        return "double"
    if pa.types.is_timestamp(arrow):
        return {"type": "long", "logicalType": "timestamp-millis"}
    return "string"


def _baseline(root: Path, scenario: str, kind: str, _rows: int) -> float:
    source, target = scenario.split("->")
    started = time.perf_counter()
    for path in sorted((root / f"{source}-{kind}").iterdir()):
        with open(root / "baseline.out", "wb") as out:
            if source == "csv":
                reader = _csv_batches(path)
                schema = reader.schema
                batches = iter(reader)
            else:
                table = pajson.read_json(path)
                schema = table.schema
                batches = iter(table.to_batches())
            if target == "json":
                for batch in batches:
                    out.write(b"".join(orjson.dumps(r) + b"\n" for r in batch.to_pylist()))
            elif target == "avro":
                fields = [{"name": f.name, "type": ["null", _avro_type(f.type)]} for f in schema]
                avro = fastavro.parse_schema({"type": "record", "name": "r", "fields": fields})
                rows = (row for batch in batches for row in batch.to_pylist())
                fastavro.writer(out, avro, rows)
            else:
                with pq.ParquetWriter(out, schema) as parquet:
                    for batch in batches:
                        parquet.write_batch(batch)
    return time.perf_counter() - started


def _duckdb(root: Path, _scenario: str, _kind: str, _rows: int) -> float:
    started = time.perf_counter()
    connection = duckdb.connect()
    connection.execute("SET threads TO 1")  # QueryRecord's DuckDB runs on one thread
    try:
        for path in sorted((root / "csv-x100").iterdir()):
            for sql in (FILTER, PROJECTION):
                query = sql.replace("FLOWFILE", f"read_csv('{path}', header=true)")
                connection.execute(f"COPY ({query}) TO '{root / 'duck.csv'}' (HEADER)")
    finally:
        connection.close()
    return time.perf_counter() - started


# ---------------------------------------------------------------------------------------------

Runner = Callable[[Path, str, str, int], float]

#: (scenario, label) -> (runner, kind)
RUNS: dict[tuple[str, str], tuple[Runner, str]] = {}
for _scenario in ("csv->json", "json->avro", "csv->parquet"):
    RUNS[(_scenario, "baseline")] = (_baseline, "one")
    RUNS[(_scenario, "codec")] = (_codec, "one")
    RUNS[(_scenario, "flow")] = (_flow, "one")
    RUNS[(_scenario, "baseline x100")] = (_baseline, "x100")
    RUNS[(_scenario, "flow x100")] = (_flow, "x100")
RUNS[("query", "baseline (DuckDB)")] = (_duckdb, "x100")
RUNS[("query", "flow x100")] = (_flow, "x100")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="rounds, interleaved")
    parser.add_argument("--only", action="append", help="a scenario: csv->json, query, ...")
    parser.add_argument("--no-codec", action="store_true", help="skip the codec-only rows")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-records-"))
    times: dict[tuple[str, str], list[float]] = {}
    try:
        _write_inputs(root, args.rows)
        chosen = [
            key
            for key in RUNS
            if (not args.only or key[0] in args.only) and not (args.no_codec and key[1] == "codec")
        ]
        for _ in range(args.repeat):
            for scenario, label in chosen:
                runner, kind = RUNS[(scenario, label)]
                gc.collect()
                times.setdefault((scenario, label), []).append(
                    runner(root, scenario, kind, args.rows)
                )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results: dict[str, dict[str, float]] = {}
    for (scenario, label), seconds in times.items():
        suffix = " x100" if label.endswith("x100") and scenario != "query" else ""
        base = min(
            next(
                t
                for (s, lab), t in times.items()
                if s == scenario
                and lab.startswith("baseline")
                and lab.endswith(suffix)
                and (suffix or not lab.endswith("x100"))
            )
        )
        best = min(seconds)
        results[f"{scenario} {label}"] = {
            "seconds": best,
            "slowest_seconds": max(seconds),
            "records_per_second": args.rows / best,
            "speed_vs_baseline": base / best,
        }
    print(json.dumps({"rows": args.rows, "repeat": args.repeat, **results}))
    print(f"{'scenario':<32}{'best s':>10}{'slowest':>10}{'records/s':>14}{'x baseline':>12}")
    for name, f in results.items():
        print(
            f"{name:<32}{f['seconds']:>10.2f}{f['slowest_seconds']:>10.2f}"
            f"{f['records_per_second']:>14,.0f}{f['speed_vs_baseline']:>12.2f}"
        )


if __name__ == "__main__":
    main()
