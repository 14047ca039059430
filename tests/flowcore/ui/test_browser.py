"""The UI in a real browser: Debian's chromium, headless, driven by Playwright.

One ``flowcore ui`` process (the real command, on a free port) serves the repository a real
direct run left, for the whole module. It binds to 0.0.0.0 with a token, so every test goes
through the token's cookie as a remote user would; the browser reaches it on 127.0.0.1 only.
Playwright drives ``/usr/bin/chromium`` through its ``executable_path`` (no browser
download); ``make chromium`` installs it. Every test fails on a console error or an uncaught
exception in the page. With ``FLOWCORE_UI_SCREENSHOTS=DIR`` the tests save the screenshots
docs/ui.md shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.flowcore.cli.conftest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = os.environ.get("FLOWCORE_UI_SCREENSHOTS")

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="the browser tests need playwright (pip install -e '.[dev]')"
)
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="no /usr/bin/chromium: `make chromium` installs it (as root)"
)


def _serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``flowcore ui ARGS --port 0``; return the process and the URL it printed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "COLUMNS": "300"}
    process = subprocess.Popen(
        [sys.executable, "-m", "flowcore", "ui", *args, "--port", "0"],
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
        pytest.fail(f"flowcore ui did not start: {line}{process.stdout.read()}")
    return process, found.group(1)


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


TOKEN = "t0ken-for-the-browser-tests"


@pytest.fixture(scope="module")
def server(ran) -> Iterator[str]:
    """The base URL (on 127.0.0.1, no token) of one `flowcore ui` over the run's repository."""
    process, url = _serve(
        ran.flow, "--repository", ran.repository, "--host", "0.0.0.0", "--token", TOKEN
    )
    assert url.endswith(f"?token={TOKEN}")
    yield url.split("?")[0].replace("0.0.0.0", "127.0.0.1")
    _stop(process)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def shared_page(browser, server) -> Iterator[tuple[Any, list[str]]]:
    """One page for the module's tests (a page load costs more than the tests), and the
    console errors and page exceptions it reports."""
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(f"{server}?token={TOKEN}")  # once: a cookie carries it from then on
    page.wait_for_selector("body[data-ready='1']")
    yield page, problems
    context.close()


@pytest.fixture
def page(shared_page) -> Iterator[Any]:
    """The page back on the canvas, dialogs and panel closed; the test fails on any console
    error or page exception."""
    page, problems = shared_page
    page.evaluate(
        "document.querySelectorAll('dialog').forEach((d) => d.close());"
        "document.getElementById('panel').hidden = true; location.hash = '#canvas';"
    )
    yield page
    assert problems == []


def _shot(page: Any, name: str) -> None:
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / f"ui-{name}.png"))


def test_the_canvas_shows_every_processor_with_its_counts(page) -> None:
    """Five boxes with names and types; this run's split In 4 and Out 10 and its Tasks/Time,
    the put queue holds 6; the 5-minute window beside them in the panel."""
    page.select_option("#window", "run")
    names = page.locator("g.processor text.name").all_text_contents()
    assert sorted(names) == ["get", "put", "split", "tag", "unpack"]
    split = page.locator("g.processor[data-id='split']")
    assert split.locator(".stat-in").text_content() == "4 (53 bytes)"
    assert split.locator(".stat-out").text_content() == "10 (100 bytes)"
    put = page.locator("g.processor[data-id='put']")
    assert "state-disabled" in put.get_attribute("class")
    assert put.locator(".stat-in").text_content() == "6 (47 bytes)"  # its share of tag's clones
    tasks = split.locator(".stat-taskstime").text_content()  # NiFi's Tasks/Time
    assert re.fullmatch(r"1 / \d\d:\d\d:\d\d\.\d{3}", tasks), tasks
    queued = page.locator("g.connection[data-id='tag:success->put'] .queued").text_content()
    assert queued == "Queued 6 (47 bytes)"
    page.check("#stages")
    assert page.locator("#stage-layer g.stage").count() >= 2
    _shot(page, "canvas")
    page.click("g.processor[data-id='unpack']")
    page.click("#panel .tab:has-text('Properties')")
    assert "Sensitive value set" in page.locator("#panel").inner_text()
    _shot(page, "processor")
    page.click("g.processor[data-id='split']")
    page.click("#panel .tab:has-text('Status')")
    stats = page.locator("#processor-stats").inner_text()
    assert "Last 5 min" in stats or "Last since" in stats
    assert "4 (53 bytes)" in stats  # this run's In
    assert re.search(r"Time\s+\d\d:\d\d:\d\d\.\d{3}\s+\d\d:\d\d:\d\d\.\d{3}", stats), stats
    page.select_option("#window", "five")
    assert split.locator(".stat-window").text_content() == "5 min"


def test_a_queue_listing_opens_a_flowfiles_content(page) -> None:
    """List queue shows NiFi's table; a FlowFile's content shows JSON pretty-printed."""
    page.click("g.connection[data-id='tag:success->put'] .connection-label")
    page.click("#list-queue")
    rows = page.locator("#queue-table tbody tr")
    rows.first.wait_for()
    assert rows.count() == 6
    _shot(page, "queue")
    page.locator("#queue-table tbody tr", has_text="doc.json").locator("button.info").click()
    page.click("#dialog2 .tab:has-text('Content')")
    content = page.locator("#dialog2 .viewer-body pre")
    content.wait_for()
    assert content.text_content() == '{\n  "k": [\n    1,\n    2\n  ]\n}'
    assert "formatted (JSON)" in page.locator("#dialog2 select.view-as").inner_text()
    _shot(page, "flowfile")
    page.select_option("#dialog2 select.view-as", "hex")
    assert page.locator("#dialog2 pre.hex").text_content().startswith("00000000  7b 22 6b 22")


def test_a_provenance_search_finds_a_flowfile_and_its_lineage_expands(page) -> None:
    """Search by filename; the lineage of its split shows FORK, and expanding adds RECEIVE."""
    page.click("nav a[data-view='provenance']")
    page.fill("#prov-form input[name=filename]", "table.csv")
    page.click("#prov-search")
    page.locator("#prov-results tbody tr").first.wait_for()
    types = page.locator("#prov-results tbody tr td:nth-child(3)").all_text_contents()
    assert {"RECEIVE", "FORK", "CLONE"} <= set(types)
    _shot(page, "provenance")
    page.locator("#prov-results tbody tr", has_text="CLONE").first.locator("button.info").click()
    page.click("#dialog .tab:has-text('Attributes')")
    assert "kind" in page.locator("#dialog table.attributes").inner_text()
    page.click("#dialog .close")
    page.locator("#prov-results tbody tr", has_text="CLONE").first.locator("button.lineage").click()
    page.wait_for_selector("#lineage .lineage-event")
    shown = "#lineage .lineage-event text:first-of-type"
    for _ in range(6):  # expand FlowFiles (siblings first, perhaps) until the parent's RECEIVE
        if "RECEIVE" in page.locator(shown).all_text_contents():
            break
        before = page.locator("#lineage .lineage-event").count()
        page.locator("#lineage .lineage-flowfile.more").first.click()
        page.wait_for_function(
            f"document.querySelectorAll('#lineage .lineage-event').length > {before}"
        )
    assert "RECEIVE" in page.locator(shown).all_text_contents()
    _shot(page, "lineage")


def test_off_loopback_the_page_needs_its_token(browser, server, page) -> None:
    """Without the token (a fresh browser) the page and the API answer 401."""
    context = browser.new_context()
    try:
        stranger = context.new_page()
        assert stranger.goto(server).status == 401
        assert stranger.goto(f"{server}api/flow").status == 401
        assert stranger.goto(f"{server}?token=wrong").status == 401
    finally:
        context.close()
    assert page.locator("g.processor").count() == 5  # the page with the token's cookie works


def _drag(page: Any, start: tuple[float, float], end: tuple[float, float]) -> None:
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, steps=4)
    page.mouse.move(*end, steps=4)
    page.mouse.up()


def _centre(page: Any, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _connector(page: Any, selector: str) -> tuple[float, float]:
    box = page.locator(f"{selector} > .connector circle").bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _edit_on_the_canvas(page: Any) -> None:
    """Move a box, drag a connection into the nested group, delete it, enter the group,
    configure the controller service: NiFi's canvas gestures."""
    put = "g.processor:has(text.name:text-is('put'))"
    fetch = "g.processor:has(text.name:text-is('fetch'))"
    group = "g.process-group[data-id='group-archive']"
    assert page.locator(group).is_visible()
    assert page.locator("g.processor text.name:text-is('unpack')").count() == 0  # inside
    before = page.locator(put).get_attribute("transform")
    x, y = _centre(page, put)
    _drag(page, (x, y), (x + 80, y + 60))
    page.wait_for_function("document.getElementById('dirty').textContent !== ''")
    assert page.locator(put).get_attribute("transform") != before
    connections = page.locator("g.connection").count()
    _drag(page, _connector(page, fetch), _centre(page, group))
    page.wait_for_selector("#dialog form.create-connection")
    assert "to unpack" in page.locator("#dialog select[name='to-port']").inner_text()
    page.check("#dialog input.relationship[name='failure']")
    _shot(page, "connect")
    page.click("#add-connection")
    page.wait_for_function(f"document.querySelectorAll('g.connection').length > {connections}")
    label = page.locator("g.connection .connection-label", has_text="failure")
    label.click()
    assert page.locator("#delete-connection-panel").is_visible()
    page.keyboard.press("Delete")  # as on NiFi's canvas, the selected connection goes
    page.wait_for_function(f"document.querySelectorAll('g.connection').length === {connections}")
    page.dblclick(f"{group} text.name")
    page.wait_for_selector("#breadcrumb a[data-group='group-archive']")
    assert page.locator("g.processor text.name").all_text_contents() == ["unpack"]
    assert page.locator("g.port text.name").all_text_contents() == ["to unpack"]
    assert page.locator("g.connection").count() == 1
    _shot(page, "group")
    page.click("#breadcrumb a[data-group='']")
    page.wait_for_selector("g.process-group")
    page.click("#services")
    row = page.locator("#services-table tr.service-row", has_text="aws")
    assert "fetch" in row.inner_text()
    _shot(page, "services")
    row.locator("button.configure-service").click()
    page.click("#dialog .tab:has-text('Properties')")
    secret = page.locator("#dialog input[name='Secret Access Key']")
    assert secret.get_attribute("type") == "password"
    assert secret.input_value() == ""
    assert secret.get_attribute("placeholder") == "Sensitive value set"
    page.fill("#dialog input[name='Assume Role STS Region']", "eu-west-1")
    page.click("#apply-service")
    page.wait_for_selector("#services-table")
    page.click("#dialog .close")


def test_a_property_edit_is_saved_and_the_saved_file_runs(browser, nested_flow, tmp_path) -> None:
    """Canvas gestures (move, connect into a group, delete, enter the group, a service), then
    Configure PutFile's Directory, Apply, Save: the saved file imports and runs into the new
    directory; Replay in an event's details puts a FlowFile back."""
    from flowcore.cli import main

    flow = Path(nested_flow.flow)
    process, url = _serve(nested_flow.flow, "--repository", nested_flow.repository)
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    problems: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#save-flow").is_visible()
        _edit_on_the_canvas(page)
        page.locator("g.processor", has=page.locator("text.name", has_text="put")).click()
        page.click("#configure")
        page.click("#dialog .tab:has-text('Properties')")
        page.fill("#dialog input[name='Directory']", str(tmp_path / "edited"))
        page.click("#apply")
        page.wait_for_function("document.getElementById('dirty').textContent !== ''")
        _shot(page, "configure")
        page.click("#save-flow")
        page.wait_for_function("document.getElementById('dirty').textContent === ''")
        saved = json.loads(flow.read_text())["flowContents"]
        put = next(p for p in saved["processors"] if p["name"] == "put")
        assert put["properties"]["Directory"] == str(tmp_path / "edited")
        service = saved["controllerServices"][0]["properties"]
        assert service["Assume Role STS Region"] == "eu-west-1"
        page.click("nav a[data-view='provenance']")
        page.select_option("#prov-form select[name=type]", "SEND")
        page.click("#prov-search")
        page.locator("#prov-results tbody tr").first.locator("button.info").click()
        page.click("#replay")
        page.wait_for_function(
            "document.querySelector('.replay-result').textContent.includes('replayed event')"
        )
    finally:
        context.close()
        _stop(process)
    assert problems == []
    repository = str(tmp_path / "repository")
    assert main(["run", str(flow), "--runner", "direct", "--repository", repository]) == 0
    assert (tmp_path / "edited" / "a.txt").read_bytes() == b"one\n"
