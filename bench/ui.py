"""The web UI's two targets (issue 37), measured in Debian's chromium through Playwright.

- The canvas of a 100-processor flow loads in under 1 s on loopback: from ``page.goto`` to the
  page's ready mark (flow, status and bulletins fetched, every box drawn and fitted).
- A queue of 1,000,000 FlowFiles lists its first page in under 0.5 s: from the click on
  "List queue" to the table's rows in the dialog (and the API call alone).

The flow is GetFile -> 98 UpdateAttributes in a chain -> a disabled PutFile; a direct run over
one small file leaves one FlowFile queued before PutFile, then 100 segments of 10,000 FlowFiles
are committed to that queue in the run's FlowFile log, as a run would leave them. One
``flowcore ui`` process serves it; each figure is the best of ``--repeat`` tries, with the range.

    .venv/bin/python bench/ui.py [--flowfiles N] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def _serve(flow: Path, repository: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "COLUMNS": "300"}
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


def _report(name: str, times: list[float], target: float) -> None:
    best = min(times)
    verdict = "met" if best < target else "NOT met"
    print(
        f"{name:<42} best {best * 1000:7.1f} ms  range {min(times) * 1000:.0f}-"
        f"{max(times) * 1000:.0f} ms  target < {target * 1000:.0f} ms: {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flowfiles", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--verbose", action="store_true", help="the last page load's requests")
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="flowcore-ui-bench-") as scratch:
        flow, repository, queue = _prepare(Path(scratch), options.flowfiles)
        process, url = _serve(flow, repository)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 860})
                page.goto(url)  # warm: the server's first requests, the browser's cache
                page.wait_for_selector("body[data-ready='1']")
                canvas, listing, api = [], [], []
                for _ in range(options.repeat):
                    started = time.perf_counter()
                    page.goto(url)
                    page.wait_for_selector("body[data-ready='1']")
                    canvas.append(time.perf_counter() - started)
                    assert page.locator("g.processor").count() == PROCESSORS
                    label = f"g.connection[data-id='{queue}'] .connection-label"
                    page.dispatch_event(label, "click")
                    started = time.perf_counter()
                    page.click("#list-queue")
                    page.locator("#queue-table tbody tr").nth(99).wait_for()
                    listing.append(time.perf_counter() - started)
                    summary = page.locator(".queue-listing .summary").inner_text()
                    assert f"of {options.flowfiles + 1:,}" in summary, summary
                    started = time.perf_counter()
                    page.evaluate(
                        "q => fetch(`/api/connections/${encodeURIComponent(q)}/flowfiles`)"
                        ".then(r => r.json())",
                        queue,
                    )
                    api.append(time.perf_counter() - started)
                entries = page.evaluate(
                    "performance.getEntriesByType('resource').map(e => "
                    "[e.name.replace(location.origin, ''), Math.round(e.startTime), "
                    "Math.round(e.duration), e.transferSize])"
                )
                marks = page.evaluate(
                    "performance.getEntriesByType('mark')"
                    ".map(m => [m.name, Math.round(m.startTime)])"
                )
                if options.verbose:
                    for name, start in marks:
                        print(f"  mark {name:<55} at {start:5d} ms")
                    for name, start, took, size in entries:
                        print(f"  {name:<60} at {start:5d} ms took {took:5d} ms {size:>8} B")
                browser.close()
        finally:
            process.terminate()
            process.wait(timeout=10)
    _report(f"canvas of {PROCESSORS} processors (browser)", canvas, 1.0)
    _report(f"List queue of {options.flowfiles:,}: first page (browser)", listing, 0.5)
    _report(f"List queue of {options.flowfiles:,}: first page (API)", api, 0.5)


if __name__ == "__main__":
    main()
