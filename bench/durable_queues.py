"""Batches across a durable queue: a per-FlowFile processor after a queue against after a pipe.

GetFile (one file of ``--lines`` distinct lines) -> SplitText (one line each) -> UpdateAttribute
(``${fragment.index:mod(8)}``), direct runner. The connection into UpdateAttribute is durable in
one flow (it has a back-pressure setting, as every imported NiFi connection with non-default
queue settings does) and pipelined in the other, the same-run baseline: the durable queue should
cost a segment write and read, not the batch form.

    .venv/bin/python bench/durable_queues.py [--lines N] [--repeat N]

Prints one JSON line and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GetFile, SplitText, UpdateAttribute


def _run(root: Path, lines: int, *, durable: bool) -> float:
    """Seconds for one run of the flow over *root*/in."""
    flow = Flow("durable" if durable else "pipelined")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(UpdateAttribute(group="${fragment.index:mod(8)}"), name="tag")
    flow.connect(get, split)
    settings = {"back_pressure_object_threshold": 10 * lines} if durable else {}
    flow.connect(split, tag, "splits", **settings)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(tag, "success")
    repository = root / f"repo-{time.monotonic_ns()}"
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=repository, settings=Settings(sync=False))
    seconds = time.perf_counter() - started
    assert result.count("tag", "success") == lines, result.transfers
    return seconds


def main() -> None:
    """Interleave the two flows; print the best and slowest of each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flowcore-durable-") as tmp:
        root = Path(tmp)
        write_lines(root, args.lines)
        times: dict[str, list[float]] = {"pipelined": [], "durable": []}
        for _ in range(args.repeat):
            for name, taken in times.items():
                taken.append(_run(root, args.lines, durable=name == "durable"))
    report_times(times, args.lines, "connection into UpdateAttribute", "FlowFiles/s")


def write_lines(root: Path, lines: int) -> None:
    """*lines* distinct lines in ``root/in/lines.txt``, the input of a split."""
    (root / "in").mkdir()
    text = "".join(f"line {i} of the input\n" for i in range(lines))
    (root / "in" / "lines.txt").write_text(text)


def run_in_tree(script: str, tree: Path, root: Path, lines: int) -> float:
    """Seconds *script* ``--once root --lines N`` printed last, run in a fresh process that
    imports *tree*'s code (how a bench compares another checkout with this one)."""
    env = {**os.environ, "FLOWCORE_TREE": str(tree), "PYTHONPATH": str(tree)}
    command = [sys.executable, script, "--once", str(root), "--lines", str(lines)]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def report_times(times: dict[str, list[float]], count: int, label: str, unit: str) -> None:
    """Print each variant's best and slowest time over *count* items: JSON, then a table."""
    report = {
        name: {
            "best_seconds": round(min(t), 3),
            "slowest_seconds": round(max(t), 3),
            "per_second": int(count / min(t)),
        }
        for name, t in times.items()
    }
    print(json.dumps({"lines": count, **report}))
    width = max(8, len(label))
    print(f"{label:{width}} {'best s':>8} {'slowest s':>10} {unit:>12}")
    for name, row in report.items():
        print(
            f"{name:{width}} {row['best_seconds']:8.3f} {row['slowest_seconds']:10.3f} "
            f"{row['per_second']:12,}"
        )


if __name__ == "__main__":
    main()
