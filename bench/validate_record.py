"""ValidateRecord over one big JSON FlowFile: strict type checking's raw JSON values, and not.

One FlowFile of ``--records`` distinct JSON lines (default 300,000; ids, names, amounts, a
nested record, a map; with ``--invalid-every N`` every Nth record's ``id`` a string, invalid
when strict, which then also writes the invalid output: one more read of the content) is
validated by a JsonTreeReader that reads with the schema (it coerces) and a JsonRecordSetWriter.
``Strict Type Checking`` true judges each record's JSON values as parsed beside the coerced
batches (one parse, :class:`processors.validate_record._JsonValues`); false judges the coerced
batches alone, the path strict checking took before: the baseline. Both run ``--repeat`` times,
interleaved, in one process; the best and the slowest time of each and the records a second.
JSON rows, then a short table.

    .venv/bin/python bench/validate_record.py [--records N] [--repeat N] [--invalid-every N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

from flowcore.testing import TestRunner
from processors import ValidateRecord
from processors.record_services import JsonRecordSetWriter, JsonTreeReader

SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "order",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "name", "type": "string"},
            {"name": "amount", "type": ["null", "double"]},
            {
                "name": "address",
                "type": {
                    "type": "record",
                    "name": "address",
                    "fields": [{"name": "zip", "type": "int"}, {"name": "city", "type": "string"}],
                },
            },
            {"name": "tags", "type": {"type": "map", "values": "int"}},
        ],
    }
)


def content(records: int, invalid_every: int) -> bytes:
    """*records* distinct JSON lines, every *invalid_every*-th with a string id (0: none)."""
    lines = []
    for i in range(records):
        ident = f'"{i}"' if invalid_every and i % invalid_every == invalid_every - 1 else str(i)
        lines.append(
            f'{{"id": {ident}, "name": "user {i % 7919}", "amount": {i * 1.25 + 0.5},'
            f' "address": {{"zip": {10000 + i % 89999}, "city": "c{i % 101}"}},'
            f' "tags": {{"a": {i % 13}, "b": {i % 17}}}}}'
        )
    return ("\n".join(lines) + "\n").encode()


def run(data: bytes, strict: str) -> tuple[float, dict[str, str]]:
    """Seconds ValidateRecord took on *data*, and the record counts it routed."""
    access = {"schema_access_strategy": "schema-text-property", "schema_text": SCHEMA}
    runner = TestRunner(
        ValidateRecord(
            record_reader="reader", record_writer="writer", strict_type_checking=strict, **access
        )
    )
    runner.add_service(JsonTreeReader("reader", **access))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.enqueue(data)
    start = time.perf_counter()
    runner.run()
    took = time.perf_counter() - start
    counts = {
        rel: runner.flowfiles_for(rel)[0].attributes["record.count"]
        for rel in ("valid", "invalid")
        if runner.flowfiles_for(rel)
    }
    return took, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--invalid-every", type=int, default=0)
    args = parser.parse_args()
    data = content(args.records, args.invalid_every)
    times: dict[str, list[float]] = {"false": [], "true": []}
    counts: dict[str, dict[str, str]] = {}
    for _ in range(args.repeat):
        for strict, taken in times.items():  # interleaved: the noise hits both alike
            took, counts[strict] = run(data, strict)
            taken.append(took)
    rows = []
    for strict, taken in times.items():
        row = {
            "strict_type_checking": strict,
            "records": args.records,
            "mb": round(len(data) / 1e6, 1),
            "best_s": round(min(taken), 3),
            "slowest_s": round(max(taken), 3),
            "records_per_s": round(args.records / min(taken)),
            "routed": counts[strict],
        }
        rows.append(row)
        print(json.dumps(row))
    print(f"\n{'strict':<8}{'best s':>9}{'slowest s':>11}{'records/s':>12}  routed")
    for row in rows:
        print(
            f"{row['strict_type_checking']:<8}{row['best_s']:>9}{row['slowest_s']:>11}"
            f"{row['records_per_s']:>12}  {row['routed']}"
        )


if __name__ == "__main__":
    main()
