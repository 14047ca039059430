"""JoltTransformJSON FlowFiles/s on small distinct JSON documents, beside a plain Python loop.

GetFile -> SplitText (1 line) -> JoltTransformJSON (a Chain: shift with ``*``/``&``/``@``
wildcards, then default) on the direct runner: ``--count`` distinct one-line JSON documents
(default 100,000) become as many FlowFiles. The same flow with LogAttribute (logging nothing)
in place of JoltTransformJSON is the baseline, so beside the flow's rate stands the
processor's own: FlowFiles / (the flow's time - the baseline's). The plain loop applies the same
jolt-py transform to the same documents with ``json.loads`` and ``json.dumps``, in the same run:
the floor any Python Jolt processor pays. ``--repeat N`` runs each N times, interleaved; the
best time and the range are reported.

    .venv/bin/python bench/jolt_transform.py [--count N] [--repeat N]
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

from pyjolt import Chainr

from flowcore import Flow, Processor
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import GetFile, JoltTransformJSON, LogAttribute, SplitText

SPEC = [
    {
        "operation": "shift",
        "spec": {
            "id": "order.id",
            "user": "order.customer.&",
            "items": {"*": {"sku": "order.lines[&1].sku", "qty": "order.lines[&1].quantity"}},
            "tags": {"*": {"@": "order.tags[]"}},
        },
    },
    {"operation": "default", "spec": {"order": {"status": "new", "customer": {"tier": "basic"}}}},
]


def _documents(count: int) -> list[str]:
    return [
        json.dumps(
            {
                "id": i,
                "user": f"u{i % 997}",
                "items": [{"sku": f"s{i % 31}", "qty": i % 5}, {"sku": f"t{i % 17}", "qty": 1}],
                "tags": ["a", f"t{i % 7}"],
            }
        )
        for i in range(count)
    ]


def _flow_seconds(root: Path, source: Path, processor: Processor, count: int) -> float:
    shutil.rmtree(root / "repo", ignore_errors=True)
    flow = Flow("bench-jolt")
    get = flow.add(GetFile(input_directory=str(source), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    node = flow.add(processor, name="p")
    flow.connect(get, split)
    flow.connect(split, node, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(node, list(processor.relationship_names()))
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=root / "repo", settings=Settings(sync=False))
    elapsed = time.perf_counter() - started
    assert result.count("split", "splits") == count, result.transfers
    if isinstance(processor, JoltTransformJSON):
        assert result.count("p", "success") == count, result.transfers
    return elapsed


def _loop_seconds(documents: list[str]) -> float:
    transform = Chainr.from_spec(SPEC)
    started = time.perf_counter()
    out = [json.dumps(transform.apply(json.loads(d)), separators=(",", ":")) for d in documents]
    elapsed = time.perf_counter() - started
    assert len(out) == len(documents)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, interleaved")
    args = parser.parse_args()
    logging.getLogger("flowcore.processors.LogAttribute").setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix="bench-jolt-"))
    documents = _documents(args.count)
    source = root / "in"
    source.mkdir()
    (source / "docs.json").write_text("\n".join(documents) + "\n")
    spec = json.dumps(SPEC)
    times: dict[str, list[float]] = {"baseline": [], "jolt": [], "loop": []}
    try:
        _flow_seconds(root, source, LogAttribute(), args.count)  # warms up
        for round_ in range(args.repeat):
            times["baseline"].append(_flow_seconds(root, source, LogAttribute(), args.count))
            jolt = JoltTransformJSON(jolt_specification=spec)
            times["jolt"].append(_flow_seconds(root, source, jolt, args.count))
            times["loop"].append(_loop_seconds(documents))
            done = {k: round(v[-1], 3) for k, v in times.items()}
            print(f"# round {round_ + 1}: seconds {done}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base = min(times["baseline"])
    best = {k: min(v) for k, v in times.items()}
    figures = {
        "count": args.count,
        "repeat": args.repeat,
        **{f"{k}_seconds": round(best[k], 3) for k in times},
        **{f"{k}_slowest_seconds": round(max(v), 3) for k, v in times.items()},
        "jolt_flow_per_second": round(args.count / best["jolt"]),
        "jolt_own_per_second": round(args.count / max(best["jolt"] - base, 1e-3)),
        "loop_per_second": round(args.count / best["loop"]),
    }
    figures["own_vs_loop"] = round(figures["jolt_own_per_second"] / figures["loop_per_second"], 2)
    print(json.dumps(figures))
    print(f"{'':<34}{'best s':>10}{'slowest s':>11}{'per second':>13}")
    rows = (
        ("GetFile->SplitText->LogAttribute", "baseline", args.count / best["baseline"]),
        ("... ->JoltTransformJSON (flow)", "jolt", figures["jolt_flow_per_second"]),
        ("JoltTransformJSON's own share", None, figures["jolt_own_per_second"]),
        ("plain loop (json + jolt-py)", "loop", figures["loop_per_second"]),
    )
    for label, key, rate in rows:
        seconds = f"{best[key]:>10.2f}{max(times[key]):>11.2f}" if key else " " * 21
        print(f"{label:<34}{seconds}{rate:>13,.0f}")


if __name__ == "__main__":
    main()
