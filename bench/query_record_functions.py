"""What Calcite's functions cost QueryRecord: the connection set-up and RPATH against DuckDB's own.

Two measures, each beside its baseline in the same run, interleaved, best of ``--repeat``:

- **connection**: opening the DuckDB connection QueryRecord (once a thread) and JoinEnrichment
  (once a join) use, set up for Calcite's SQL (two settings, the ``CARDINALITY`` macro, the
  seven RPATH functions and their macros), against a bare connection with the two settings
  (what the connection was before).
- **query**: QueryRecord (TestRunner, JSON in, JSON out) filtering and projecting people by a
  nested record's fields, with NiFi's ``RPATH_INT``/``RPATH_STRING`` against DuckDB's own
  ``person.age``/``person.name``: ``--rows`` distinct records (default 100,000) as one FlowFile
  and as 100 FlowFiles.

    .venv/bin/python bench/query_record_functions.py [--rows N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

import duckdb

from flowcore.testing import TestRunner
from processors import QueryRecord
from processors._calcite_duckdb import calcite_connection
from processors.record_services import JsonRecordSetWriter, JsonTreeReader

CONNECTIONS = 20  # a round
QUERIES = {
    "native": "SELECT person.name AS name, person.age AS age FROM FLOWFILE "
    "WHERE person.age > 45 AND person.name LIKE 'P1%'",
    "rpath": "SELECT RPATH_STRING(person, '/name') AS name, RPATH_INT(person, '/age') AS age "
    "FROM FLOWFILE WHERE RPATH_INT(person, '/age') > 45 AND RPATH_STRING(person, '/name') "
    "LIKE 'P1%'",
}


def _bare() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute("SET threads TO 1")
    connection.execute("SET old_implicit_casting = true")
    return connection


def _connection_ms(open_: object) -> float:
    """Milliseconds to open and close one connection, over a round."""
    start = time.perf_counter()
    for _ in range(CONNECTIONS):
        open_().close()  # type: ignore[operator]
    return (time.perf_counter() - start) / CONNECTIONS * 1000


def _contents(rows: int, files: int) -> list[bytes]:
    """*rows* distinct people as *files* JSON arrays."""
    people = [
        {"id": i, "person": {"name": f"P{i}", "age": i % 90, "city": f"c{i % 313}"}}
        for i in range(rows)
    ]
    size = rows // files
    return [json.dumps(people[i : i + size]).encode() for i in range(0, rows, size)]


def _query_seconds(contents: list[bytes], sql: str) -> tuple[float, int]:
    """Seconds QueryRecord takes over *contents*, and the records it selected."""
    runner = TestRunner(QueryRecord(record_reader="reader", record_writer="writer", q=sql))
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer", output_grouping="output-oneline"))
    for content in contents:
        runner.enqueue(content)
    start = time.perf_counter()
    runner.run(len(contents))
    seconds = time.perf_counter() - start
    runner.assert_transfer_count("q", len(contents))
    selected = sum(int(f.attributes["record.count"]) for f in runner.flowfiles_for("q"))
    return seconds, selected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    shapes = {"1 file": _contents(args.rows, 1), "100 files": _contents(args.rows, 100)}
    times: dict[str, list[float]] = {"bare connection": [], "calcite connection": []}
    selected: dict[str, int] = {}
    for round_ in range(args.repeat):
        times["bare connection"].append(_connection_ms(_bare))
        times["calcite connection"].append(_connection_ms(calcite_connection))
        for shape, contents in shapes.items():
            for name, sql in QUERIES.items():
                seconds, count = _query_seconds(contents, sql)
                times.setdefault(f"{name}, {shape}", []).append(seconds)
                selected[f"{name}, {shape}"] = count
        print(f"# round {round_ + 1} done", file=sys.stderr, flush=True)
    if len(set(selected.values())) != 1:
        msg = f"the queries selected different records: {selected}"
        raise SystemExit(msg)
    best = {k: min(v) for k, v in times.items()}
    figures = {
        "rows": args.rows,
        "repeat": args.repeat,
        "selected": next(iter(selected.values())),
        **{k.replace(" ", "_").replace(",", ""): round(best[k], 4) for k in times},
        **{
            f"{k.replace(' ', '_').replace(',', '')}_slowest": round(max(v), 4)
            for k, v in times.items()
        },
    }
    for shape in shapes:
        rpath, native = best[f"rpath, {shape}"], best[f"native, {shape}"]
        tag = shape.replace(" ", "_")
        figures[f"rpath_vs_native_{tag}"] = round(rpath / native, 2)
        figures[f"rpath_extra_us_per_row_{tag}"] = round((rpath - native) / args.rows * 1e6, 1)
    print(json.dumps(figures))
    print(f"{'':<28}{'best':>10}{'slowest':>10}")
    for key, values in times.items():
        unit = "ms" if "connection" in key else "s"
        print(f"{key:<28}{min(values):>8.2f}{unit:>2}{max(values):>8.2f}{unit:>2}")
    for shape in shapes:
        tag = shape.replace(" ", "_")
        ratio, extra = figures[f"rpath_vs_native_{tag}"], figures[f"rpath_extra_us_per_row_{tag}"]
        print(f"RPATH, {shape}: {ratio}x DuckDB's own, {extra} us more a row")


if __name__ == "__main__":
    main()
