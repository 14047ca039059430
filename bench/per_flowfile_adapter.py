"""What an adapter turning per-FlowFile sessions' output into batches would cost (issue 34).

Issue 34 proposed that a processor written per FlowFile run through one adapter that turns its
session's results into FlowFile batches, so that batches are the engine's only internal form.
A session's commit hands on FlowFiles one at a time (a trigger takes one FlowFile), and a
``FlowFileBatch`` holds FlowFiles sharing a uuid prefix, dates and one resource claim, so the
adapter would make a batch of one FlowFile per output and the next per-FlowFile member would
make it a FlowFile again. This times those two steps per FlowFile, beside the baseline of the
work they would wrap: one ``on_trigger`` of UpdateAttribute through a real session (the test
harness's, over in-memory repositories). Best of N interleaved rounds, with the range.

    .venv/bin/python bench/per_flowfile_adapter.py [--count N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

from flowcore.testing import TestRunner
from flowcore.testing._as_batches import batches_of
from processors import UpdateAttribute


def _queued(count: int) -> TestRunner:
    runner = TestRunner(UpdateAttribute(), name="bench")
    runner.set_property("stamp", "${filename}")
    for index in range(count):
        runner.enqueue(f"line {index} of distinct content", {"n": str(index)})
    return runner


def _adapter(count: int) -> tuple[float, float]:
    """Microseconds per FlowFile: a batch of one made, and made a FlowFile again."""
    runner = _queued(count)
    flowfiles = runner._host.take_ready()
    start = time.perf_counter()
    made = [batches_of([f], runner.content)[0][0] for f in flowfiles]
    batched = time.perf_counter() - start
    start = time.perf_counter()
    for batch in made:
        batch.flowfiles()
    unbatched = time.perf_counter() - start
    return batched / count * 1e6, unbatched / count * 1e6


def _trigger(count: int) -> float:
    """Microseconds per FlowFile of one on_trigger through a session (the baseline)."""
    runner = _queued(count)
    start = time.perf_counter()
    runner.run(count)
    return (time.perf_counter() - start) / count * 1e6


def main() -> None:
    """Time the adapter's two steps and the trigger they would wrap, interleaved."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rounds: dict[str, list[float]] = {
        "batch_of_one_us": [],
        "back_to_flowfile_us": [],
        "trigger_us": [],
    }
    for _ in range(args.repeat):
        made, back = _adapter(args.count)
        rounds["batch_of_one_us"].append(made)
        rounds["back_to_flowfile_us"].append(back)
        rounds["trigger_us"].append(_trigger(args.count))
    result = {
        name: {"best": round(min(v), 1), "range": [round(min(v), 1), round(max(v), 1)]}
        for name, v in rounds.items()
    }
    result["count"] = args.count
    print(json.dumps(result))
    for name, label in (
        ("batch_of_one_us", "adapter: batch of one FlowFile"),
        ("back_to_flowfile_us", "adapter: back to a FlowFile"),
        ("trigger_us", "baseline: one on_trigger in a session"),
    ):
        low, high = result[name]["range"]
        print(f"{label:<40} {low:8.1f} us  ({low:.1f}-{high:.1f})")


if __name__ == "__main__":
    main()
