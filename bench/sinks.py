"""Sinks on batches: GetFile -> SplitText -> a sink, its batch form against one by one.

Each round runs the flow twice on the direct runner, in the same process: once as is (the sink's
batch form takes the splits as batches) and once with the sink's batch form declining, so every
split is a FlowFile through ``on_trigger`` (``write`` for PutDataset), as before issue 18's sink
work. The best of the rounds is reported.

    .venv/bin/python bench/sinks.py [--lines 200000] [--rounds 3] [--sink PutDataset ...]

PutFile writes one file per split: ``--files`` sets how many (the splits then hold
``lines / files`` lines each). LogAttribute runs with its logger at WARNING, so nothing is
rendered: what is left is the cost of a FlowFile passing through.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # before bench/'s repositories.py

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GetFile, LogAttribute, PutDataset, PutFile, SplitText, UpdateAttribute

SINKS = ("PutDataset", "LogAttribute", "PutFile")


def _flow(root: Path, sink: str, lines_per_split: int) -> Flow:
    flow = Flow("bench-sinks")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=lines_per_split), name="split")
    flow.connect(get, split)
    flow.auto_terminate(split, ["original", "failure"])
    last, relationship = split, "splits"
    if sink == "PutFile":  # one name per split
        name = flow.add(UpdateAttribute(filename="s${fragment.index}"), name="name")
        flow.connect(split, name, relationship)
        last, relationship = name, "success"
        processor: object = PutFile(directory=str(root / "out"))
    elif sink == "PutDataset":
        processor = PutDataset(directory=str(root / "out"), demarcator="\n")
    else:
        processor = LogAttribute()
    node = flow.add(processor, name="sink")  # type: ignore[arg-type]
    flow.connect(last, node, relationship)
    flow.auto_terminate(node, list(processor.relationship_names()))  # type: ignore[attr-defined]
    return flow


def _off(sink: str) -> None:
    """Turn the sink's batch form off: it declines every batch."""
    if sink == "PutDataset":
        PutDataset.write_batches = lambda *_: None  # type: ignore[method-assign]
    elif sink == "PutFile":
        PutFile.transform_batch = lambda *_: None  # type: ignore[method-assign]
    else:
        LogAttribute.transform_batch = lambda *_: None  # type: ignore[method-assign]


def _once(root: Path, sink: str, lines: int, files: int) -> float:
    for name in ("out", "repo"):
        shutil.rmtree(root / name, ignore_errors=True)
    flow = _flow(root, sink, max(1, lines // files) if sink == "PutFile" else 1)
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=root / "repo", settings=Settings(sync=False))
    elapsed = time.perf_counter() - started
    expected = files if sink == "PutFile" else lines
    assert result.count("sink", "success") == expected, result.transfers
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=2_000, help="PutFile: files written")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sink", action="append", choices=SINKS)
    args = parser.parse_args()
    logging.getLogger("flowcore.processors.LogAttribute").setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix="bench-sinks-"))
    (root / "in").mkdir()
    body = "".join(
        f"10.0.0.{i % 251} GET /page/{i} 200 {i * 7 % 10_000}\n" for i in range(args.lines)
    )
    (root / "in" / "access.log").write_text(body)
    results = {}
    originals = {
        "PutDataset": PutDataset.write_batches,
        "PutFile": PutFile.transform_batch,
        "LogAttribute": LogAttribute.transform_batch,
    }
    try:
        for sink in args.sink or SINKS:
            times: dict[str, list[float]] = {"batches": [], "one_by_one": []}
            for _ in range(args.rounds):
                times["batches"].append(_once(root, sink, args.lines, args.files))
                _off(sink)
                try:
                    times["one_by_one"].append(_once(root, sink, args.lines, args.files))
                finally:
                    setattr(
                        {"PutDataset": PutDataset, "PutFile": PutFile}.get(sink, LogAttribute),
                        "write_batches" if sink == "PutDataset" else "transform_batch",
                        originals[sink],
                    )
            results[sink] = {k: min(v) for k, v in times.items()} | {"all": times}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(results))
    print(f"{'sink':<14}{'batch form':>12}{'one by one':>12}{'speedup':>9}")
    for sink, figures in results.items():
        best, single = figures["batches"], figures["one_by_one"]
        print(f"{sink:<14}{best:>11.2f}s{single:>11.2f}s{single / best:>8.1f}x")


if __name__ == "__main__":
    main()
