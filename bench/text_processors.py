r"""ExtractText, RouteOnContent and ReplaceText on small distinct FlowFiles: batch form, one by one.

A flow on the direct runner: GetFile (one file of ``--count`` distinct lines) -> SplitText (one
line each) -> the processor, its relationships auto-terminated. Each processor runs twice in
the same run: with its batch form, and with the batch form declined (a subclass whose
``transform_batch`` returns None), so every FlowFile goes through ``on_trigger``; the one-by-one
run takes ``--count // --one-by-one-fraction`` lines to stay short. "split only" auto-terminates
the splits instead; it is no floor: the engine drops an auto-terminated relationship's splits one
FlowFile at a time (1M lines: 4,600/s against 33,000/s through ExtractText's batch form).

Measured on the 2-core VM (1M lines, one-by-one runs 50,000): ExtractText 33,480 FlowFiles/s
(one by one 2,588), RouteOnContent 111,741/s (one by one 2,705), whole flow from GetFile.

ReplaceText (Regex Replace line by line, ``code=(\d+)`` -> ``status $1``) writes every
FlowFile's new content: its batch form through ``BatchContext.write_contents``.

Run: ``.venv/bin/python bench/text_processors.py`` (``--quick`` for 100,000 lines; ``--only
ReplaceText`` for some flows; ``--repeat 3`` for the best of three and the range). Prints one
JSON line and a table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # ahead of bench/, where this file would shadow processors

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.processor import Processor
from flowcore.settings import Settings
from processors import ExtractText, GetFile, ReplaceText, RouteOnContent, SplitText


class OneByOneExtractText(ExtractText):
    """ExtractText with its batch form declined."""

    def transform_batch(self, context, batch):
        return None


class OneByOneRouteOnContent(RouteOnContent):
    """RouteOnContent with its batch form declined."""

    def transform_batch(self, context, batch):
        return None


class OneByOneReplaceText(ReplaceText):
    """ReplaceText with its batch form declined."""

    def transform_batch(self, context, batch):
        return None


def _processor(name: str) -> Processor | None:
    extract = {"user": r"user=(\w+)", "code": r"code=(\d+)"}
    route = {"match_requirement": "content must contain match", "errors": r"code=5\d\d"}
    replace = {"search_value": r"code=(\d+)", "replacement_value": "status $1"}
    return {
        "split only": None,
        "ExtractText": ExtractText(**extract),
        "ExtractText one by one": OneByOneExtractText(**extract),
        "RouteOnContent": RouteOnContent(**route),
        "RouteOnContent one by one": OneByOneRouteOnContent(**route),
        "ReplaceText": ReplaceText(**replace),
        "ReplaceText one by one": OneByOneReplaceText(**replace),
    }[name]


FLOWS = (
    "split only",
    "ExtractText",
    "RouteOnContent",
    "ReplaceText",
    "ExtractText one by one",
    "RouteOnContent one by one",
    "ReplaceText one by one",
)


def run(name: str, lines: int, workdir: Path) -> float:
    """Time one flow over *lines* distinct lines; its seconds."""
    source = workdir / f"in-{name.replace(' ', '-')}"
    source.mkdir()
    with (source / "log.txt").open("w") as out:
        for i in range(lines):
            out.write(f"ts={i} user=u{i % 977} code={200 + (i * 7) % 400} path=/p/{i}\n")
    flow = Flow("bench")
    get = flow.add(GetFile(input_directory=str(source)), name="get")
    split = flow.add(SplitText(line_split_count=1, remove_trailing_newlines=False), name="split")
    flow.connect(get, split)
    flow.auto_terminate(split, ["original", "failure"])
    processor = _processor(name)
    if processor is None:
        flow.auto_terminate(split, "splits")
    else:
        step = flow.add(processor, name="step")
        flow.connect(split, step, "splits")
        flow.auto_terminate(step, list(processor.relationship_names()))
    settings = Settings(sync=False, parallelism=1)
    started = time.perf_counter()
    run_flow(
        flow, "direct", repository=workdir / f"repo-{name.replace(' ', '-')}", settings=settings
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--one-by-one-fraction", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="100,000 lines")
    parser.add_argument("--only", nargs="*", help="processors to run (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, interleaved")
    args = parser.parse_args()
    count = 100_000 if args.quick else args.count
    names = [n for n in FLOWS if not args.only or n.removesuffix(" one by one") in args.only]
    seconds: dict[str, list[float]] = {n: [] for n in names}
    sizes = {n: count // args.one_by_one_fraction if "one by one" in n else count for n in names}
    for attempt in range(args.repeat):  # interleaved: the machine's noise hits each alike
        for name in names:
            with tempfile.TemporaryDirectory() as tmp:
                seconds[name].append(run(name, sizes[name], Path(tmp)))
        del attempt
    results = {
        name: {
            "flowfiles": sizes[name],
            "best_s": round(min(times), 2),
            "worst_s": round(max(times), 2),
            "per_second": round(sizes[name] / min(times)),
            "per_second_worst": round(sizes[name] / max(times)),
        }
        for name, times in seconds.items()
    }
    print(json.dumps(results))
    print(f"{'flow':<28} {'FlowFiles':>10} {'best s':>8} {'worst s':>8} {'FlowFiles/s':>12}")
    for name, row in results.items():
        print(
            f"{name:<28} {row['flowfiles']:>10} {row['best_s']:>8} {row['worst_s']:>8}"
            f" {row['per_second']:>12}"
        )


if __name__ == "__main__":
    main()
