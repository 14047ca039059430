"""Foundation benchmarks: Expression Language and ProcessSession throughput against baselines.

Each figure is measured beside a baseline in the same run:

* EL: evaluating a compiled expression vs a hand-written Python function doing the same string
  work (the cost of NiFi compatibility);
* session: UpdateAttribute through the real ProcessSession (harness, in-memory repositories) vs a
  plain loop that builds the same attribute dicts;
* content: writing 1 MiB payloads through ``session.write`` vs appending them to a bytearray.

Prints JSON (for tools) and a table (for people). Run: ``.venv/bin/python bench/foundation.py``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Scripts run from bench/, where bench/processors.py would shadow the processors package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from flowcore.expression import compile_expression
from flowcore.session.process_session import ProcessSession
from flowcore.testing import TestRunner
from processors import UpdateAttribute


def rate(count: int, run: Callable[[], object]) -> float:
    """Operations per second for *count* operations done by *run*."""
    start = time.perf_counter()
    run()
    return count / (time.perf_counter() - start)


def bench_expression(n: int = 100_000) -> dict[str, float]:
    expression = compile_expression("${filename:substringBefore('.'):toUpper()}-${size:plus(1)}")
    attributes = {"filename": "access.log.gz", "size": "41"}

    def el() -> None:
        for _ in range(n):
            expression.evaluate(attributes)

    def python() -> None:
        for _ in range(n):
            name = attributes["filename"]
            index = name.find(".")
            head = name if index < 0 else name[:index]
            f"{head.upper()}-{int(attributes['size']) + 1}"

    return {"el_evals_per_s": rate(n, el), "python_evals_per_s": rate(n, python)}


def bench_session(n: int = 20_000) -> dict[str, float]:
    runner = TestRunner(
        UpdateAttribute(**{"tag": "web", "stem": "${filename:substringBefore('.')}"})
    )
    for i in range(n):
        runner.enqueue(b"", {"filename": f"f{i}.log"})

    def harness() -> None:
        runner.run(n)

    def plain() -> None:
        out = []
        for i in range(n):
            attrs = {"filename": f"f{i}.log", "path": "target"}
            out.append({**attrs, "tag": "web", "stem": attrs["filename"].split(".")[0]})

    flowfiles = rate(n, harness)
    assert len(runner.flowfiles_for("success")) == n
    return {"session_flowfiles_per_s": flowfiles, "dict_updates_per_s": rate(n, plain)}


def bench_content(payloads: int = 256, size: int = 1 << 20) -> dict[str, float]:
    runner = TestRunner(UpdateAttribute())
    data = b"x" * size
    session = ProcessSession(runner)

    def through_session() -> None:
        for _ in range(payloads):
            session.write(session.create(), data)

    def raw() -> None:
        sink = bytearray()
        for _ in range(payloads):
            sink += data

    megabytes = payloads * size / (1 << 20)
    session_rate = rate(payloads, through_session) * size / (1 << 20)
    session.rollback()
    return {
        "session_write_mb_per_s": session_rate,
        "raw_append_mb_per_s": rate(payloads, raw) * size / (1 << 20),
        "megabytes": megabytes,
    }


def main() -> None:
    results = {**bench_expression(), **bench_session(), **bench_content()}
    print(json.dumps({k: round(v, 1) for k, v in results.items()}))
    table = Table(title="flowcore foundation benchmarks (same-run baselines)")
    for column in ("measure", "flowcore", "baseline", "ratio"):
        table.add_column(column, justify="left" if column == "measure" else "right")
    rows = (
        ("EL evaluations/s", "el_evals_per_s", "python_evals_per_s"),
        ("UpdateAttribute FlowFiles/s (harness)", "session_flowfiles_per_s", "dict_updates_per_s"),
        ("content write MB/s (memory)", "session_write_mb_per_s", "raw_append_mb_per_s"),
    )
    for label, ours, base in rows:
        ratio = results[ours] / results[base]
        table.add_row(label, f"{results[ours]:,.0f}", f"{results[base]:,.0f}", f"{ratio:.2f}x")
    Console().print(table)


if __name__ == "__main__":
    main()
