"""Splits dropped whole: SplitText's splits to an auto-terminated relationship, as batches.

GetFile (one file of ``--lines`` distinct lines) -> SplitText (one line each), its ``splits``
and ``original`` auto-terminated, direct runner: every split is made and dropped, with its DROP
event. With ``--before DIR`` (a worktree of another commit, e.g. the base of a change) each
round runs that tree's code and then this one's, interleaved, each in a fresh process.

    .venv/bin/python bench/dropped_splits.py [--lines N] [--repeat N] [--before DIR]

Prints one JSON line and a table.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
#: the tree whose code a single run imports (``--once``): this one unless told otherwise
TREE = Path(os.environ.get("FLOWCORE_TREE", HERE))
sys.path.insert(0, str(TREE))  # before bench/'s repositories.py

from durable_queues import report_times, run_in_tree, write_lines


def _run(root: Path, lines: int) -> float:
    """Seconds for one run of the flow over *root*/in, with this process's code."""
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import GetFile, SplitText

    flow = Flow("dropped")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    flow.connect(get, split)
    flow.auto_terminate(split, ["splits", "original", "failure"])
    repository = root / f"repo-{time.monotonic_ns()}"
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=repository, settings=Settings(sync=False))
    seconds = time.perf_counter() - started
    assert result.count("split", "splits") == lines, result.transfers
    return seconds


def main() -> None:
    """Interleave the trees' runs; print the best and slowest of each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a tree to measure before this one")
    parser.add_argument("--once", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.once is not None:
        print(_run(args.once, args.lines))
        return
    # Not above: durable_queues imports this checkout's flowcore, and --once runs another's.
    trees = {"before": args.before, "now": HERE} if args.before else {"now": HERE}
    with tempfile.TemporaryDirectory(prefix="flowcore-dropped-") as tmp:
        root = Path(tmp)
        write_lines(root, args.lines)
        times: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(args.repeat):
            for name, tree in trees.items():
                times[name].append(run_in_tree(__file__, tree, root, args.lines))
    report_times(times, args.lines, "code", "splits/s")


if __name__ == "__main__":
    main()
