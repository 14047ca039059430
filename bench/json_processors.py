"""EvaluateJsonPath, AttributesToJSON, CryptographicHashContent and DuplicateFlowFile on small
distinct FlowFiles: the batch form against one by one, beside SplitText alone.

GetFile -> SplitText (1 line) -> the processor, on the direct runner: ``--lines`` distinct JSON
lines (default 1,000,000) become as many one-line FlowFiles. Each processor runs with its batch
form on ``--lines`` FlowFiles and with its batch form declining (every FlowFile through
``on_trigger``) on ``--single-lines`` (default 100,000; one by one is slow). The split followed
by LogAttribute logging nothing (its logger at WARNING: a batch passes through untouched) is the
baseline: beside each flow's rate (FlowFiles / its time), the processor's own (FlowFiles /
the time the flow took beyond the split alone).

    .venv/bin/python bench/json_processors.py [--lines N] [--single-lines N] [--processor NAME]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

from flowcore import Flow, Processor
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import (
    AttributesToJSON,
    CryptographicHashContent,
    DuplicateFlowFile,
    EvaluateJsonPath,
    GetFile,
    LogAttribute,
    SplitText,
)

PROCESSORS: dict[str, Callable[[], Processor]] = {
    "CryptographicHashContent": CryptographicHashContent,
    "AttributesToJSON": AttributesToJSON,
    "EvaluateJsonPath": lambda: EvaluateJsonPath(
        destination="flowfile-attribute", user="$.user", id="$.id"
    ),
    "DuplicateFlowFile": lambda: DuplicateFlowFile(number_of_copies="1"),
}


def _write_input(root: Path, lines: int) -> None:
    shutil.rmtree(root / "in", ignore_errors=True)
    (root / "in").mkdir(parents=True)
    body = "".join(f'{{"id": {i}, "user": "u{i % 997}", "ok": true}}\n' for i in range(lines))
    (root / "in" / "events.json").write_text(body)


def _once(root: Path, processor: Processor, lines: int) -> float:
    shutil.rmtree(root / "repo", ignore_errors=True)
    flow = Flow("bench-json")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    flow.connect(get, split)
    flow.auto_terminate(split, ["original", "failure"])
    node = flow.add(processor, name="p")
    flow.connect(split, node, "splits")
    flow.auto_terminate(node, list(processor.relationship_names()))
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=root / "repo", settings=Settings(sync=False))
    elapsed = time.perf_counter() - started
    assert result.count("split", "splits") == lines, result.transfers
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--single-lines", type=int, default=100_000)
    parser.add_argument("--processor", action="append", choices=sorted(PROCESSORS))
    args = parser.parse_args()
    logging.getLogger("flowcore.processors.LogAttribute").setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix="bench-json-"))
    results: dict[str, dict[str, float]] = {}
    try:
        for mode, lines in (("batch", args.lines), ("one_by_one", args.single_lines)):
            _write_input(root, lines)
            # the first run warms up
            base = min(_once(root, LogAttribute(), lines) for _ in range(2))
            results.setdefault("baseline (LogAttribute)", {})[f"{mode}_seconds"] = base
            for name in args.processor or PROCESSORS:
                cls = type(PROCESSORS[name]())
                original = cls.transform_batch
                if mode == "one_by_one":
                    cls.transform_batch = lambda *_: None  # type: ignore[method-assign]
                try:
                    elapsed = _once(root, PROCESSORS[name](), lines)
                finally:
                    cls.transform_batch = original  # type: ignore[method-assign]
                figures = results.setdefault(name, {})
                figures[f"{mode}_seconds"] = elapsed
                figures[f"{mode}_per_second"] = lines / elapsed
                figures[f"{mode}_beyond_split_per_second"] = lines / max(elapsed - base, 1e-3)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"lines": args.lines, "single_lines": args.single_lines, **results}))
    header = ("batch s", "flow /s", "own /s", "1-by-1 s", "flow /s", "own /s")
    print(f"{'processor':<26}" + "".join(f"{h:>11}" for h in header))
    for name, f in results.items():
        cells = [
            f"{f.get(f'{mode}_{key}', 0):>11,.{1 if key == 'seconds' else 0}f}"
            for mode in ("batch", "one_by_one")
            for key in ("seconds", "per_second", "beyond_split_per_second")
        ]
        print(f"{name:<26}" + "".join(cells))


if __name__ == "__main__":
    main()
