"""What measuring each processor's task time (NiFi's Tasks/Time) costs a run.

A task times each member around its batch calls (:mod:`flowcore.engine._timing`): two clock
reads when a member starts running and two when it stops, never per FlowFile. This measures:

* ``entry``: one member entry as a task makes it (``running(member)``, its bulletins' context)
  with and without the clock around it, in nanoseconds, best and slowest of interleaved rounds;
* ``run``: GetFile -> SplitText (one line each) -> UpdateAttribute over LINES distinct lines,
  fused in one stage, on the direct runner: the clock's entries in the run, the run's seconds,
  and so the share of the run the clock can take at most (entries x the entry's cost);
* with ``--before DIR`` (a tree of the commit before the change), the same run with each tree's
  code in fresh processes, interleaved: the before/after figure, best and slowest.

    .venv/bin/python bench/task_time.py [--lines N] [--repeat N] [--before DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
import tempfile
import time
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
#: the tree whose code a single run imports (``--once``): this one unless told otherwise
TREE = Path(os.environ.get("FLOWCORE_TREE", HERE))
sys.path.insert(0, str(TREE))  # before bench/'s repositories.py

from durable_queues import report_times, run_in_tree, write_lines


def _entry(rounds: int) -> dict[str, dict[str, float]]:
    """Nanoseconds of one member entry without and with the clock, interleaved rounds."""
    from flowcore.engine._bulletins import running
    from flowcore.engine._timing import MemberClock

    class Member:
        def bulletin(self, message: str, level: str = "ERROR") -> None:
            pass

    member, clock, number = Member(), MemberClock(), 20_000

    def bare() -> None:
        with running(member):
            pass

    def timed() -> None:
        with running(member), clock.timing("member"):
            pass

    found: dict[str, list[float]] = {"without_clock": [], "with_clock": []}
    for _ in range(rounds):
        for name, call in (("without_clock", bare), ("with_clock", timed)):
            best = min(timeit.repeat(call, number=number, repeat=3))
            found[name].append(best / number * 1e9)
    return {n: {"best_ns": round(min(v)), "slowest_ns": round(max(v))} for n, v in found.items()}


def _run(root: Path, lines: int, count_entries: bool = False) -> tuple[float, int]:
    """Seconds of one run of the flow over *root*/in, and the clock's entries (if counted)."""
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import GetFile, SplitText, UpdateAttribute

    entries = itertools.count()
    if count_entries:
        from flowcore.engine import _timing

        timing = _timing.MemberClock.timing.__wrapped__  # type: ignore[attr-defined]

        @contextlib.contextmanager
        def counted(self, component_id):  # type: ignore[no-untyped-def]
            next(entries)
            with contextlib.contextmanager(timing)(self, component_id):
                yield

        _timing.MemberClock.timing = counted  # type: ignore[method-assign]
    flow = Flow("timed")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(UpdateAttribute(source="bench"), name="tag")
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(tag, "success")
    repository = root / f"repo-{time.monotonic_ns()}"
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=repository, settings=Settings(sync=False))
    seconds = time.perf_counter() - started
    assert result.count("tag", "success") == lines, result.transfers
    return seconds, next(entries)


def main() -> None:
    """The entry's cost, the clock's entries in a run, and the trees' runs interleaved."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a tree to measure before this one")
    parser.add_argument("--once", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.once is not None:
        print(_run(args.once, args.lines)[0])
        return
    entry = _entry(rounds=5 * args.repeat)
    cost = entry["with_clock"]["best_ns"] - entry["without_clock"]["best_ns"]
    with tempfile.TemporaryDirectory(prefix="flowcore-task-time-") as tmp:
        root = Path(tmp)
        write_lines(root, args.lines)
        seconds, entries = _run(root, args.lines, count_entries=True)
        report = {
            "lines": args.lines,
            "entry": entry,
            "clock_ns_per_entry": cost,
            "entries_in_run": entries,
            "run_seconds": round(seconds, 3),
            "clock_share_of_run_at_most": entries * max(cost, 0) / (seconds * 1e9),
        }
        print(json.dumps(report))
        print(f"{'member entry':16} {'best ns':>8} {'slowest ns':>11}")
        for name, row in entry.items():
            print(f"{name:16} {row['best_ns']:8,} {row['slowest_ns']:11,}")
        print(
            f"{entries} clock entries in a run of {seconds:.2f} s: at most "
            f"{report['clock_share_of_run_at_most']:.2e} of it"
        )
        if args.before is not None:
            trees = {"before": args.before, "now": HERE}
            times: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.repeat):
                for name, tree in trees.items():
                    times[name].append(run_in_tree(__file__, tree, root, args.lines))
            report_times(times, args.lines, "code", "lines/s")


if __name__ == "__main__":
    main()
