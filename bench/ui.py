"""The web UI's two targets (issue 37), measured in Debian's chromium through Playwright.

- The canvas of a 100-processor flow loads in under 1 s on loopback: from ``page.goto`` to the
  page's ready mark (flow, status and bulletins fetched, every box drawn and fitted).
- A queue of 1,000,000 FlowFiles lists its first page in under 0.5 s: from the click on
  "List queue" to the table's rows in the dialog (and the API call alone).

The flow is GetFile -> 98 UpdateAttributes in a chain -> a disabled PutFile; a direct run over
one small file leaves one FlowFile queued before PutFile, then 100 segments of 10,000 FlowFiles
are committed to that queue in the run's FlowFile log, as a run would leave them. One
``flowcore ui`` process serves it; each figure is the best of ``--repeat`` tries, with the range.
With ``--baseline CHECKOUT`` a second ``flowcore ui`` runs that checkout's code (e.g. the main
branch) over the same repository, measured in the same rounds, interleaved, so a change is
judged against its baseline on the same (loaded) machine. Prints JSON, then a short table.

    .venv/bin/python bench/ui.py [--flowfiles N] [--repeat N] [--baseline /path/to/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # before bench/'s repositories.py

from flowcore.flowfile import FlowFile
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.records import Transaction
from repositories.segments import MAX_SEGMENT_RECORDS

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PROCESSORS = 100
FLOW = """
from flowcore import Flow
from processors import GetFile, PutFile, UpdateAttribute

flow = Flow("ui-bench")
previous = flow.add(GetFile(input_directory={data!r}, keep_source_file=True), name="get")
for n in range({middle}):
    step = flow.add(UpdateAttribute(**{{"step": str(n)}}), name=f"step-{{n:02d}}")
    flow.connect(previous, step)
    previous = step
put = flow.add(PutFile(directory={out!r}), name="put", disabled=True)
flow.connect(previous, put, back_pressure_object_threshold=2_000_000)
flow.auto_terminate(put, ["success", "failure"])
"""


def _prepare(root: Path, flowfiles: int) -> tuple[Path, Path, str]:
    (root / "in").mkdir()
    (root / "in" / "one.txt").write_text("hello\n")
    flow = root / "flow.py"
    flow.write_text(
        FLOW.format(data=str(root / "in"), out=str(root / "out"), middle=PROCESSORS - 2)
    )
    repository = root / "repository"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "flowcore", "run", str(flow), "--runner", "direct"]
    subprocess.run(
        [*command, "--repository", str(repository)], check=True, env=env, capture_output=True
    )
    queue = f"step-{PROCESSORS - 3:02d}:success->put"
    started = time.perf_counter()
    log = WriteAheadFlowFileRepository(repository / "flowfile", sync=False)
    now = int(time.time() * 1000)
    ids = iter(log.next_flowfile_ids(flowfiles))
    summaries = []
    for start in range(0, flowfiles, MAX_SEGMENT_RECORDS):
        batch = [
            FlowFile.create(next(ids), now, {"filename": f"file-{n}.txt"})
            for n in range(start, min(start + MAX_SEGMENT_RECORDS, flowfiles))
        ]
        summaries.append(log.write_segment(queue, batch))
    log.commit(Transaction(enqueued=summaries))
    log.close()
    print(
        f"queued {flowfiles:,} FlowFiles in {len(summaries)} segments "
        f"({time.perf_counter() - started:.1f} s)"
    )
    return flow, repository, queue


def _serve(flow: Path, repository: Path, code: Path = ROOT) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(code), "PYTHONUNBUFFERED": "1", "COLUMNS": "300"}
    command = [sys.executable, "-m", "flowcore", "ui", str(flow), "--repository", str(repository)]
    process = subprocess.Popen(
        [*command, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"(http://\S+)", line)
    if found is None:
        process.kill()
        raise SystemExit(f"flowcore ui did not start: {line}")
    return process, found.group(1)


def _summary(times: list[float], target: float) -> dict[str, object]:
    return {
        "best_ms": round(min(times) * 1000, 1),
        "range_ms": [round(min(times) * 1000), round(max(times) * 1000)],
        "target_ms": round(target * 1000),
        "met": min(times) < target,
    }


def _measure(page: Any, url: str, queue: str, flowfiles: int, times: dict[str, list]) -> None:
    """One round: the canvas load, List queue's first page, the API call alone."""
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    times["canvas"].append(time.perf_counter() - started)
    marks = dict(
        page.evaluate("performance.getEntriesByType('mark').map(m => [m.name, m.startTime])")
    )
    times["data"].append(marks["flowcore:data"] / 1000)  # navigation to the API's answers in
    times["drawing"].append((marks["flowcore:status"] - marks["flowcore:data"]) / 1000)
    assert page.locator("g.processor").count() == PROCESSORS
    label = f"g.connection[data-id='{queue}'] .connection-label"
    page.dispatch_event(label, "click")
    started = time.perf_counter()
    page.click("#list-queue")
    page.locator("#queue-table tbody tr").nth(99).wait_for()
    times["listing"].append(time.perf_counter() - started)
    summary = page.locator(".queue-listing .summary").inner_text()
    assert f"of {flowfiles + 1:,}" in summary, summary
    started = time.perf_counter()
    page.evaluate(
        "q => fetch(`/api/connections/${encodeURIComponent(q)}/flowfiles`).then(r => r.json())",
        queue,
    )
    times["api"].append(time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flowfiles", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="a checkout whose UI to measure alongside")
    parser.add_argument("--verbose", action="store_true", help="the last page load's requests")
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    codes = {"this checkout": ROOT}
    if options.baseline is not None:
        codes["baseline"] = options.baseline.resolve()
    results: dict[str, dict[str, list[float]]] = {
        name: {"canvas": [], "data": [], "drawing": [], "listing": [], "api": []} for name in codes
    }
    with tempfile.TemporaryDirectory(prefix="flowcore-ui-bench-") as scratch:
        flow, repository, queue = _prepare(Path(scratch), options.flowfiles)
        servers = {name: _serve(flow, repository, code) for name, code in codes.items()}
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                pages = {}
                for name, (_, url) in servers.items():
                    pages[name] = browser.new_page(viewport={"width": 1400, "height": 860})
                    pages[name].goto(url)  # warm: the server's first requests, the cache
                    pages[name].wait_for_selector("body[data-ready='1']")
                for round_ in range(options.repeat):
                    order = list(servers) if round_ % 2 == 0 else list(reversed(servers))
                    for name in order:  # interleaved, alternating who goes first
                        _measure(
                            pages[name], servers[name][1], queue, options.flowfiles, results[name]
                        )
                if options.verbose:
                    _verbose(pages["this checkout"])
                browser.close()
        finally:
            for process, _ in servers.values():
                process.terminate()
                process.wait(timeout=10)
    targets = {"canvas": 1.0, "data": 1.0, "drawing": 1.0, "listing": 0.5, "api": 0.5}
    report = {
        "processors": PROCESSORS,
        "flowfiles": options.flowfiles,
        "repeat": options.repeat,
        "load_average": os.getloadavg()[0],
        **{
            name: {what: _summary(times, targets[what]) for what, times in measured.items()}
            for name, measured in results.items()
        },
    }
    print(json.dumps(report))
    labels = {
        "canvas": f"canvas of {PROCESSORS} processors (browser)",
        "data": "  of which: page and API answers in",
        "drawing": "  of which: boxes drawn, counts written",
        "listing": f"List queue of {options.flowfiles:,}: first page (browser)",
        "api": f"List queue of {options.flowfiles:,}: first page (API)",
    }
    for name in results:
        print(f"-- {name}")
        for what, label in labels.items():
            found = report[name][what]
            low, high = found["range_ms"]
            verdict = "met" if found["met"] else "NOT met"
            print(
                f"{label:<46} best {found['best_ms']:7.1f} ms  range {low}-{high} ms  "
                f"target < {found['target_ms']} ms: {verdict}"
            )


def _verbose(page: Any) -> None:
    """Where the last page load's time went: the page's marks and its requests."""
    entries = page.evaluate(
        "performance.getEntriesByType('resource').map(e => "
        "[e.name.replace(location.origin, ''), Math.round(e.startTime), "
        "Math.round(e.duration), e.transferSize])"
    )
    marks = page.evaluate(
        "performance.getEntriesByType('mark').map(m => [m.name, Math.round(m.startTime)])"
    )
    for name, start in marks:
        print(f"  mark {name:<55} at {start:5d} ms")
    for name, start, took, size in entries:
        print(f"  {name:<60} at {start:5d} ms took {took:5d} ms {size:>8} B")


if __name__ == "__main__":
    main()
