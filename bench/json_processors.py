"""EvaluateJsonPath, AttributesToJSON, CryptographicHashContent and DuplicateFlowFile on small
distinct FlowFiles: the batch form against one by one, beside SplitText alone.

GetFile -> SplitText (1 line) -> the processor, on the direct runner: ``--lines`` distinct JSON
lines (default 1,000,000) become as many one-line FlowFiles. Each processor runs with its batch
form on ``--lines`` FlowFiles and with its batch form declining (every FlowFile through
``on_trigger``) on ``--single-lines`` (default 100,000; one by one is slow). The split followed
by LogAttribute logging nothing (its logger at WARNING: a batch passes through untouched) is the
baseline: beside each flow's rate (FlowFiles / its time), the processor's own (FlowFiles /
the time the flow took beyond the split alone). "(content)" rows write the result as the
FlowFile's new content (Destination flowfile-content). ``--repeat N`` runs every flow N times,
interleaved (the machine's noise hits each alike), and reports the best time and the slowest.

    .venv/bin/python bench/json_processors.py [--lines N] [--single-lines N] [--processor NAME]
        [--repeat N]
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
    "EvaluateJsonPath (content)": lambda: EvaluateJsonPath(user="$.user"),
    "AttributesToJSON (content)": lambda: AttributesToJSON(destination="flowfile-content"),
}


def _write_input(source: Path, lines: int) -> None:
    source.mkdir(parents=True)
    body = "".join(f'{{"id": {i}, "user": "u{i % 997}", "ok": true}}\n' for i in range(lines))
    (source / "events.json").write_text(body)


def _once(root: Path, source: Path, processor: Processor, lines: int) -> float:
    shutil.rmtree(root / "repo", ignore_errors=True)
    flow = Flow("bench-json")
    get = flow.add(GetFile(input_directory=str(source), keep_source_file=True), name="get")
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


def _timed(root: Path, source: Path, name: str | None, lines: int, *, single: bool) -> float:
    """Seconds of one flow: *name* (None: the LogAttribute baseline), its batch form declined
    when *single*."""
    if name is None:
        return _once(root, source, LogAttribute(), lines)
    cls = type(PROCESSORS[name]())
    original = cls.transform_batch
    if single:
        cls.transform_batch = lambda *_: None  # type: ignore[method-assign]
    try:
        return _once(root, source, PROCESSORS[name](), lines)
    finally:
        cls.transform_batch = original  # type: ignore[method-assign]


def _figures(times: list[float], lines: int, base: float, mode: str) -> dict[str, float]:
    best = min(times)
    return {
        f"{mode}_seconds": best,
        f"{mode}_slowest_seconds": max(times),
        f"{mode}_per_second": lines / best,
        f"{mode}_beyond_split_per_second": lines / max(best - base, 1e-3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--single-lines", type=int, default=100_000)
    parser.add_argument("--processor", action="append", choices=sorted(PROCESSORS))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each flow, interleaved")
    args = parser.parse_args()
    logging.getLogger("flowcore.processors.LogAttribute").setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix="bench-json-"))
    modes = {"batch": args.lines, "one_by_one": args.single_lines}
    names: list[str | None] = [None, *(args.processor or PROCESSORS)]
    times: dict[tuple[str, str | None], list[float]] = {}
    try:
        for mode, lines in modes.items():
            _write_input(root / mode, lines)
            _timed(root, root / mode, None, lines, single=False)  # warms up
        for _ in range(args.repeat):
            for mode, lines in modes.items():
                for name in names:
                    elapsed = _timed(root, root / mode, name, lines, single=mode == "one_by_one")
                    times.setdefault((mode, name), []).append(elapsed)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results: dict[str, dict[str, float]] = {}
    for (mode, name), seconds in times.items():
        base = min(times[(mode, None)])
        label = name or "baseline (LogAttribute)"
        results.setdefault(label, {}).update(_figures(seconds, modes[mode], base, mode))
    print(json.dumps({"lines": args.lines, "single_lines": args.single_lines, **results}))
    header = ("batch s", "slowest", "flow /s", "own /s", "1-by-1 s", "slowest", "flow /s", "own /s")
    print(f"{'processor':<28}" + "".join(f"{h:>13}" for h in header))
    for name, f in results.items():
        cells = [
            f"{f.get(f'{mode}_{key}', 0):>13,.{2 if 'seconds' in key else 0}f}"
            for mode in modes
            for key in ("seconds", "slowest_seconds", "per_second", "beyond_split_per_second")
        ]
        print(f"{name:<28}" + "".join(cells))


if __name__ == "__main__":
    main()
