"""LookupRecord writing text answers into a non-string field (widened to CHOICE[X, STRING]).

``--records`` distinct JSON records (default 200,000: a key among 50, an int, a boolean, a
name), as one FlowFile and as ``--flowfiles`` FlowFiles (default 100), go through LookupRecord
with a SimpleKeyValueLookupService answering text (numbers, words, booleans) and a
JsonRecordSetWriter. The answer lands in the INT field ``/v`` or the BOOLEAN field ``/b``
(NiFi's mergeDataTypes widens it to CHOICE[INT, STRING] / CHOICE[BOOLEAN, STRING]: the field's
values are converted to their JSON text, one Arrow cast, and the answers once per distinct
value), or in the STRING field ``/s``, no widening: the baseline. Each runs ``--repeat``
times, interleaved, in one process; the best and the slowest time of each. JSON rows, then a
short table.

    .venv/bin/python bench/lookup_record_widen.py [--records N] [--flowfiles N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

from flowcore.testing import TestRunner
from processors import LookupRecord
from processors.lookup_services import SimpleKeyValueLookupService
from processors.record_services import JsonRecordSetWriter, JsonTreeReader

#: The service's answers: numbers, words and booleans as text, 40 keys of the 50 (the rest
#: unmatched, keeping their values).
ANSWERS = {f"k{i}": ("yes", "true", str(i * 7), f"w{i}")[i % 4] for i in range(40)}


def contents(records: int, flowfiles: int) -> list[bytes]:
    """*records* distinct JSON records, split into *flowfiles* JSON arrays."""
    rows = [
        {"k": f"k{i % 50}", "v": i * 3 - 7, "b": i % 3 == 0, "s": f"name {i}"}
        for i in range(records)
    ]
    size = -(-records // flowfiles)
    return [json.dumps(rows[i : i + size]).encode() for i in range(0, records, size)]


def run(data: list[bytes], field: str) -> float:
    """Seconds LookupRecord took to write the answers into *field* of every record."""
    runner = TestRunner(
        LookupRecord(
            record_reader="reader",
            record_writer="writer",
            lookup_service="lookup",
            key="/k",
            result_recordpath=f"/{field}",
            routing_strategy="route-to-success",
        )
    )
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.add_service(SimpleKeyValueLookupService("lookup", **ANSWERS))
    for content in data:
        runner.enqueue(content)
    start = time.perf_counter()
    runner.run(len(data))
    took = time.perf_counter() - start
    runner.assert_all_flowfiles_transferred("success", len(data))
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--flowfiles", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    shapes = {
        "1": contents(args.records, 1),
        str(args.flowfiles): contents(args.records, args.flowfiles),
    }
    fields = {"s": "STRING (baseline)", "v": "INT -> CHOICE", "b": "BOOLEAN -> CHOICE"}
    times: dict[tuple[str, str], list[float]] = {(n, f): [] for n in shapes for f in fields}
    for _ in range(args.repeat):
        for (shape, field), taken in times.items():  # interleaved: the noise hits all alike
            taken.append(run(shapes[shape], field))
    rows = []
    for (shape, field), taken in times.items():
        row = {
            "flowfiles": int(shape),
            "records": args.records,
            "field": fields[field],
            "best_s": round(min(taken), 3),
            "slowest_s": round(max(taken), 3),
            "vs_baseline": round(min(taken) / min(times[shape, "s"]), 2),
        }
        rows.append(row)
        print(json.dumps(row))
    print(f"\n{'flowfiles':>9}  {'field':<20}{'best s':>9}{'slowest s':>11}{'x baseline':>12}")
    for row in rows:
        print(
            f"{row['flowfiles']:>9}  {row['field']:<20}{row['best_s']:>9}{row['slowest_s']:>11}"
            f"{row['vs_baseline']:>12}"
        )


if __name__ == "__main__":
    main()
