"""EvaluateXPath on small distinct XML documents, beside a plain lxml loop over the same ones.

GetFile -> SplitText (1 line) -> EvaluateXPath, on the direct runner: ``--docs`` distinct
one-line XML documents (default 100,000) become as many FlowFiles, and EvaluateXPath puts two
XPath results (a string and a number) into attributes. The split followed by LogAttribute
logging nothing is the baseline: beside the flow's rate (FlowFiles / its time), EvaluateXPath's
own (FlowFiles / the time the flow took beyond the split alone). "(content)" writes the node
found as the new content (Destination flowfile-content, Return Type nodeset). The plain loop
parses each document with the same hardened lxml parser and evaluates the same compiled
XPaths, in one Python loop, no FlowFiles: what the XML work alone costs. ``--repeat N`` runs
everything N times, interleaved (the machine's noise hits each alike), and reports the best
time and the slowest.

    .venv/bin/python bench/evaluate_xpath.py [--docs N] [--repeat N] [--batch-off]
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
from processors import EvaluateXPath, GetFile, LogAttribute, SplitText
from processors._xml import compile_xpath, parse_xml

XPATHS = {"title": "/book/title", "pages": "count(/book/chapter)"}
FLOWS: dict[str, Callable[[], Processor]] = {
    "baseline (LogAttribute)": LogAttribute,
    "EvaluateXPath": lambda: EvaluateXPath(destination="flowfile-attribute", **XPATHS),
    "EvaluateXPath (content)": lambda: EvaluateXPath(chapter="/book/chapter[1]"),
}


def _document(index: int) -> str:
    chapters = "".join(f"<chapter n='{c}'>c{index}.{c}</chapter>" for c in range(index % 3 + 1))
    return f"<book id='{index}'><title>Title {index}</title>{chapters}</book>"


def _write_input(source: Path, docs: int) -> list[bytes]:
    source.mkdir(parents=True)
    lines = [_document(i) for i in range(docs)]
    (source / "books.xml").write_text("".join(f"{line}\n" for line in lines))
    return [line.encode() for line in lines]


def _flow_seconds(root: Path, source: Path, processor: Processor, docs: int) -> float:
    shutil.rmtree(root / "repo", ignore_errors=True)
    flow = Flow("bench-xpath")
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
    assert result.count("split", "splits") == docs, result.transfers
    if isinstance(processor, EvaluateXPath):
        assert result.count("p", "matched") == docs, result.transfers
    return elapsed


def _plain_seconds(documents: list[bytes]) -> float:
    """The same parsing and XPaths in one plain loop."""
    queries = [(name, compile_xpath(text, as_string=True)) for name, text in XPATHS.items()]
    started = time.perf_counter()
    results = []
    for data in documents:
        root = parse_xml(data, allow_dtd=False).getroot()  # as EvaluateXPath evaluates
        results.append({name: str(query(root)) for name, query in queries})
    elapsed = time.perf_counter() - started
    assert results[-1]["title"] == f"Title {len(documents) - 1}"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, interleaved")
    parser.add_argument(
        "--batch-off", action="store_true", help="decline EvaluateXPath's batch form"
    )
    args = parser.parse_args()
    logging.getLogger("flowcore.processors.LogAttribute").setLevel(logging.WARNING)
    logging.getLogger("flowcore.processors.EvaluateXPath").setLevel(logging.WARNING)
    if args.batch_off:
        EvaluateXPath.transform_batch = lambda *_: None  # type: ignore[method-assign,assignment]
    root = Path(tempfile.mkdtemp(prefix="bench-xpath-"))
    times: dict[str, list[float]] = {}
    try:
        documents = _write_input(root / "in", args.docs)
        _flow_seconds(root, root / "in", LogAttribute(), args.docs)  # warms up
        for _ in range(args.repeat):
            times.setdefault("plain lxml loop", []).append(_plain_seconds(documents))
            for name, make in FLOWS.items():
                elapsed = _flow_seconds(root, root / "in", make(), args.docs)
                times.setdefault(name, []).append(elapsed)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base = min(times["baseline (LogAttribute)"])
    results = {}
    for name, seconds in times.items():
        best = min(seconds)
        results[name] = {
            "seconds": best,
            "slowest_seconds": max(seconds),
            "per_second": args.docs / best,
        }
        if name.startswith("EvaluateXPath"):  # beyond the split alone
            results[name]["own_per_second"] = args.docs / max(best - base, 1e-3)
    print(json.dumps({"docs": args.docs, "repeat": args.repeat, **results}))
    header = ("best s", "slowest s", "flow /s", "own /s")
    print(f"{'':<28}" + "".join(f"{h:>13}" for h in header))
    for name, f in results.items():
        cells = [f"{f['seconds']:>13.2f}", f"{f['slowest_seconds']:>13.2f}"]
        own = f"{f['own_per_second']:>13,.0f}" if "own_per_second" in f else f"{'-':>13}"
        cells += [f"{f['per_second']:>13,.0f}", own]
        print(f"{name:<28}" + "".join(cells))


if __name__ == "__main__":
    main()
