"""What Calcite's types cost QueryRecord: the AVG rewrite and the CHOICE round trip.

Two measures, each beside its baseline in the same run, interleaved, best of ``--repeat``;
QueryRecord through the TestRunner, JSON in, JSON out, ``--rows`` distinct records (default
100,000) as one FlowFile and as 100 FlowFiles (where a query's fixed cost shows):

- **avg**: ``AVG(age)`` per group, which flowcore rewrites on DuckDB's parse tree into
  Calcite's ``CAST(SUM(age) / COUNT(age) AS <type>)``, against that expression written by hand
  (the same work in DuckDB, no rewrite): the difference is the rewrite.
- **choice**: ``SELECT *`` over records whose ``v`` is a CHOICE (an INT in half the records, a
  string in the others: DuckDB JSON in the SQL, written back as the CHOICE) against the same
  records with ``v`` a string in all (no CHOICE), and against ConvertRecord over the CHOICE
  records (reading and writing them without SQL: what the CHOICE costs the record services).

    .venv/bin/python bench/query_record_calcite_types.py [--rows N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

from flowcore.testing import TestRunner
from processors import ConvertRecord, QueryRecord
from processors.record_services import JsonRecordSetWriter, JsonTreeReader

AVG = "SELECT city, AVG(age) AS a FROM FLOWFILE GROUP BY city"
BY_HAND = "SELECT city, CAST(SUM(age) / COUNT(age) AS INTEGER) AS a FROM FLOWFILE GROUP BY city"
ALL = "SELECT * FROM FLOWFILE"


def _contents(rows: int, files: int, *, choice: bool) -> list[bytes]:
    """*rows* distinct records as *files* JSON arrays; ``v`` a CHOICE or always a string."""
    records = [
        {
            "id": i,
            "age": i % 90,
            "city": f"c{i % 313}",
            "v": i if choice and i % 2 else f"s{i}",
        }
        for i in range(rows)
    ]
    size = rows // files
    return [json.dumps(records[i : i + size]).encode() for i in range(0, rows, size)]


def _seconds(contents: list[bytes], sql: str | None) -> tuple[float, bytes]:
    """Seconds QueryRecord (ConvertRecord: *sql* None) takes over *contents*, and the first
    result's content."""
    if sql is None:
        processor = ConvertRecord(record_reader="reader", record_writer="writer")
    else:
        processor = QueryRecord(record_reader="reader", record_writer="writer", q=sql)
    runner = TestRunner(processor)
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer", output_grouping="output-oneline"))
    for content in contents:
        runner.enqueue(content)
    start = time.perf_counter()
    runner.run(len(contents))
    seconds = time.perf_counter() - start
    out = "success" if sql is None else "q"
    runner.assert_transfer_count(out, len(contents))
    return seconds, runner.flowfiles_for(out)[0].content


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cases: dict[str, tuple[list[bytes], str | None]] = {}
    for files in (1, 100):
        shape = f"{files} file{'s' if files > 1 else ''}"
        plain = _contents(args.rows, files, choice=False)
        mixed = _contents(args.rows, files, choice=True)
        cases[f"avg, {shape}"] = (plain, AVG)
        cases[f"by hand, {shape}"] = (plain, BY_HAND)
        cases[f"choice, {shape}"] = (mixed, ALL)
        cases[f"string, {shape}"] = (plain, ALL)
        cases[f"convert choice, {shape}"] = (mixed, None)
    times: dict[str, list[float]] = {k: [] for k in cases}
    for round_ in range(args.repeat):
        for key, (contents, sql) in cases.items():
            seconds, first = _seconds(contents, sql)
            times[key].append(seconds)
            if key.startswith("avg"):
                same = _seconds(contents, BY_HAND)[1]
                if sorted(first.splitlines()) != sorted(same.splitlines()):
                    msg = "AVG and its expression by hand gave different results"
                    raise SystemExit(msg)
        print(f"# round {round_ + 1} done", file=sys.stderr, flush=True)
    best = {k: min(v) for k, v in times.items()}
    figures: dict[str, object] = {"rows": args.rows, "repeat": args.repeat}
    for key, values in times.items():
        tag = key.replace(", ", "_").replace(" ", "_")
        figures[tag] = round(min(values), 4)
        figures[f"{tag}_slowest"] = round(max(values), 4)
    for shape in ("1 file", "100 files"):
        tag = shape.replace(" ", "_")
        avg, hand = best[f"avg, {shape}"], best[f"by hand, {shape}"]
        choice, string = best[f"choice, {shape}"], best[f"string, {shape}"]
        files = 1 if shape == "1 file" else 100
        figures[f"avg_rewrite_ms_per_query_{tag}"] = round((avg - hand) / files * 1000, 2)
        figures[f"choice_vs_string_{tag}"] = round(choice / string, 2)
        figures[f"choice_vs_convert_{tag}"] = round(choice / best[f"convert choice, {shape}"], 2)
    print(json.dumps(figures))
    print(f"{'':<26}{'best':>9}{'slowest':>9}")
    for key, values in times.items():
        print(f"{key:<26}{min(values):>8.3f}s{max(values):>8.3f}s")
    for shape in ("1 file", "100 files"):
        tag = shape.replace(" ", "_")
        print(
            f"{shape}: AVG rewrite {figures[f'avg_rewrite_ms_per_query_{tag}']} ms a query; "
            f"CHOICE column {figures[f'choice_vs_string_{tag}']}x a string column, "
            f"{figures[f'choice_vs_convert_{tag}']}x ConvertRecord of it"
        )


if __name__ == "__main__":
    main()
