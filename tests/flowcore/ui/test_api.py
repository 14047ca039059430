"""The UI's JSON API over a repository a real run produced (Starlette's TestClient)."""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from flowcore.cli.ui import prepare
from tests.flowcore.ui.conftest import FILES, SECRET, args_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette suggests httpx2; httpx is what is installed
    from starlette.testclient import TestClient

QUEUE = "tag:success->put"


@pytest.fixture(scope="module")
def client(ran) -> Iterator[TestClient]:
    app, token = prepare(ran)
    assert token is None  # loopback
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def _queue_url(connection: str) -> str:
    return f"/api/connections/{quote(connection, safe='')}/flowfiles"


def test_flow_lists_components_connections_stages_and_positions(client) -> None:
    """/api/flow has every processor with type, state, scheduling, relationships and position."""
    flow = client.get("/api/flow").json()
    by_name = {c["name"]: c for c in flow["components"]}
    assert set(by_name) == {"get", "split", "tag", "put", "unpack"}
    assert by_name["split"]["type"] == "SplitText"
    assert by_name["put"]["state"] == "DISABLED"
    assert by_name["get"]["source"] is True
    assert by_name["get"]["scheduling"]["concurrent_tasks"] == 1
    assert {r["name"] for r in by_name["split"]["relationships"]} >= {"splits", "original"}
    assert all(c["size"]["width"] == 352.0 for c in flow["components"])
    positions = {(c["position"]["x"], c["position"]["y"]) for c in flow["components"]}
    assert len(positions) == len(flow["components"])  # laid out: no two boxes on one spot
    durable = {c["id"]: c["durable"] for c in flow["connections"]}
    assert durable[QUEUE] is True
    assert durable["get:success->split"] is False
    assert flow["stages"]
    assert all(c["stage"] for c in flow["components"])


def test_sensitive_values_never_reach_the_browser(client) -> None:
    """A sensitive property shows NiFi's 'Sensitive value set'; no response holds the secret."""
    flow = client.get("/api/flow").json()
    unpack = next(c for c in flow["components"] if c["name"] == "unpack")
    password = next(p for p in unpack["properties"] if p["name"] == "Password")
    assert password == {**password, "value": "Sensitive value set", "sensitive": True}
    bodies = [
        client.get(path).text
        for path in ("/api/flow", "/api/status", "/api/provenance?limit=1000", "/api/bulletins")
    ]
    assert not any(SECRET in body or "#{zip password}" in body for body in bodies)


def test_status_counts_per_processor_and_queue_with_back_pressure_fill(client) -> None:
    """/api/status has the run's in/out per processor, queued counts and the fill NiFi draws."""
    status = client.get("/api/status").json()
    assert status["flow"] == "ui-test"
    assert status["live"] is False
    split = status["processors"]["split"]
    assert (split["in_count"], split["out_count"]) == (4, 10)  # 4 files; 6 splits + 4 originals
    queue = status["connections"][QUEUE]
    assert (queue["queued_count"], queue["queued_bytes"]) == (6, 47)
    assert queue["back_pressure_fill"] == 6.0  # 6 of the 100 FlowFiles threshold
    assert status["processors"]["put"]["state"] == "DISABLED"


def test_status_has_each_processors_task_time_as_nifi_shows_it(client) -> None:
    """Tasks/Time: the nanoseconds each processor's tasks ran and NiFi's HH:MM:SS.mmm, for
    the run and its last five minutes (the run ended within them: the same); none for a
    disabled processor."""
    status = client.get("/api/status").json()
    split = status["processors"]["split"]
    assert split["tasks_duration_nanos"] > 0
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d\d\d", split["tasks_duration"])
    assert split["window"]["tasks_duration_nanos"] == split["tasks_duration_nanos"]
    assert split["window"]["tasks_duration"] == split["tasks_duration"]
    put = status["processors"]["put"]
    assert (put["tasks_duration_nanos"], put["tasks_duration"]) == (0, "00:00:00.000")


def test_queue_listing_pages_in_queue_order(client) -> None:
    """A queue lists position, uuid, filename, size, durations and penalized, page by page."""
    first = client.get(_queue_url(QUEUE), params={"limit": 4}).json()
    assert (first["total_flowfiles"], first["total_bytes"]) == (6, 47)
    assert [f["position"] for f in first["flowfiles"]] == [1, 2, 3, 4]
    assert set(first["flowfiles"][0]) == {
        "position", "uuid", "filename", "size", "queued_duration_ms", "lineage_duration_ms",
        "penalized",
    }  # fmt: skip
    rest = client.get(_queue_url(QUEUE), params={"offset": 4, "limit": 4}).json()
    assert [f["position"] for f in rest["flowfiles"]] == [5, 6]
    uuids = [f["uuid"] for f in first["flowfiles"] + rest["flowfiles"]]
    assert len(set(uuids)) == 6
    assert {f["filename"] for f in first["flowfiles"] + rest["flowfiles"]} == set(FILES)


def test_queue_listing_of_an_unknown_connection_is_404(client) -> None:
    """A connection the flow does not have answers 404 with one message."""
    response = client.get(_queue_url("nope"))
    assert response.status_code == 404
    assert "nope" in response.json()["error"]


def test_flowfile_attributes_and_content(client) -> None:
    """A listed FlowFile's attributes and its content bytes, inline or as a download."""
    listed = client.get(_queue_url(QUEUE)).json()["flowfiles"]
    row = next(f for f in listed if f["filename"] == "doc.json")
    details = client.get(f"/api/flowfiles/{row['uuid']}").json()
    assert details["attributes"]["kind"] == "line"
    assert details["queue"] == QUEUE
    content = client.get(f"/api/flowfiles/{row['uuid']}/content")
    assert content.content == FILES["doc.json"].rstrip(b"\n")
    assert content.headers["content-disposition"].startswith("inline")
    download = client.get(f"/api/flowfiles/{row['uuid']}/content", params={"download": 1})
    assert download.headers["content-disposition"] == 'attachment; filename="doc.json"'
    assert client.get("/api/flowfiles/not-a-uuid").status_code == 404


def test_provenance_search_event_content_and_lineage(client) -> None:
    """Search by filename and type, an event's details and content, a FlowFile's lineage."""
    found = client.get("/api/provenance", params={"filename": "page.xml"}).json()["events"]
    types = {e["event_type"] for e in found}
    assert {"RECEIVE", "FORK"} <= types
    by_component = client.get("/api/provenance", params={"component": "tag"}).json()["events"]
    assert by_component
    assert {e["component_name"] for e in by_component} == {"tag"}
    cloned = client.get(
        "/api/provenance", params={"type": "clone", "attribute": "kind=line"}
    ).json()["events"]  # tag's fan-out to two connections clones (NiFi's CLONE)
    assert len(cloned) == 6
    assert all(e["event_type"] == "CLONE" for e in cloned)
    event = client.get(f"/api/provenance/{cloned[0]['event_id']}").json()
    assert event["attributes"]["kind"] == "line"
    assert "previous_attributes" in event
    assert event["content_available"] == {"input": True, "output": True}
    output = client.get(f"/api/content/{event['event_id']}/output").content
    assert output + b"\n" in FILES.values()
    lineage = client.get(f"/api/lineage/{event['flowfile_uuid']}").json()
    events = {n["event_type"] for n in lineage["nodes"] if n["kind"] == "event"}
    assert {"FORK", "CLONE"} <= events
    parent = next(n for n in lineage["nodes"] if n["kind"] == "flowfile" and n["more"])
    grown = client.get(
        f"/api/lineage/{event['flowfile_uuid']}", params={"expand": parent["id"]}
    ).json()
    assert len(grown["nodes"]) > len(lineage["nodes"])  # the parent's RECEIVE, DROP appear


def test_provenance_mistakes_are_400_or_404(client) -> None:
    """A bad type or attribute is 400; an unknown event or FlowFile is 404."""
    assert client.get("/api/provenance", params={"type": "NOPE"}).status_code == 400
    assert client.get("/api/provenance", params={"attribute": "x"}).status_code == 400
    assert client.get("/api/provenance", params={"start": "yesterday"}).status_code == 400
    assert client.get("/api/provenance/999999").status_code == 404
    assert client.get("/api/lineage/no-such-uuid").status_code == 404


def test_a_lineage_dot_cannot_lay_out_in_time_answers_one_line(client, monkeypatch) -> None:
    """Past the dot time limit the lineage answers 503 with the reason, not a hung request."""
    from flowcore.ui import lineage

    event = client.get("/api/provenance", params={"type": "FORK"}).json()["events"][0]
    monkeypatch.setattr(lineage, "DOT_TIMEOUT", 1e-6)
    answer = client.get(f"/api/lineage/{event['flowfile_uuid']}")
    assert answer.status_code == 503
    assert "too large to lay out" in answer.json()["error"]
    assert client.get("/api/content/1/sideways").status_code == 404


def test_events_stream_sends_the_status(client) -> None:
    """/api/events is a server-sent event stream whose first event is the status."""
    response = client.get("/api/events", params={"once": 1})
    assert response.headers["content-type"].startswith("text/event-stream")
    kind, data = response.text.strip().split("\n", 1)
    assert kind == "event: status"
    assert json.loads(data.removeprefix("data: "))["connections"][QUEUE]["queued_count"] == 6


def test_pages_are_served(client) -> None:
    """The index page and its ES modules are served from the package."""
    assert "app.js" in client.get("/").text
    script = client.get("/static/app.js")
    assert script.status_code == 200
    assert "javascript" in script.headers["content-type"]


def test_a_download_names_any_filename_and_sends_only_a_media_type() -> None:
    """HTTP headers are Latin-1: a filename with other characters (a euro sign, a quote, a line
    break) gets an ASCII fallback and its UTF-8 name in ``filename*``; a ``mime.type`` that is
    not a media type (a line break, non-ASCII) is never sent as one."""
    from flowcore.ui.api import _MEDIA_TYPE, content_disposition

    header = content_disposition("attachment", 'prix "€"\n.txt')
    header.encode("latin-1")  # what Starlette does with it
    assert header == (
        "attachment; filename=\"prix ____.txt\"; filename*=UTF-8''prix%20%22%E2%82%AC%22%0A.txt"
    )
    assert content_disposition("inline", "").startswith('inline; filename="content"')
    assert content_disposition("inline", "a.json") == 'inline; filename="a.json"'
    assert _MEDIA_TYPE.fullmatch("application/json; charset=UTF-8")
    for bad in ("text/plain\r\nX-Evil: 1", "tëxt/plain", "plain"):
        assert not _MEDIA_TYPE.fullmatch(bad), bad


BIG_FLOW = """
from flowcore import Flow
from processors import GetFile, UpdateAttribute

flow = Flow("ui-big")
get = flow.add(GetFile(input_directory=%r, keep_source_file=True), name="get")
hold = flow.add(UpdateAttribute(), name="hold", disabled=True)
flow.connect(get, hold, durable=True)
"""
BIG = random.Random(7).randbytes(300_000)  # past four 64 KiB checksum blocks, distinct bytes


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> argparse.Namespace:
    """A direct run that left one 300 KB FlowFile queued (its content spans five blocks)."""
    from flowcore.cli import main

    root = tmp_path_factory.mktemp("ui-big")
    (root / "in").mkdir()
    (root / "in" / "big.bin").write_bytes(BIG)
    (root / "flow.py").write_text(BIG_FLOW % str(root / "in"))
    repository = root / "repository"
    flow = str(root / "flow.py")
    assert main(["run", flow, "--runner", "direct", "--repository", str(repository)]) == 0
    ui = {"host": "127.0.0.1", "port": 0, "token": None}
    return argparse.Namespace(flow=str(root / "flow.py"), repository=str(repository), **ui)


def _damaged(big_run: argparse.Namespace, tmp_path: Path, at: int) -> tuple[TestClient, str, str]:
    """A client over a copy of big_run's repository whose claim has 8 bytes changed at *at*."""
    from flowcore.ui.reading import RepositoryView

    copy = tmp_path / "repository"
    shutil.copytree(big_run.repository, copy)
    view = RepositoryView(copy)
    row = view.list_queue("get:success->hold").flowfiles[0]
    claim = view.flowfile(row.uuid)[1].content
    view.close()
    path = next(p for p in (copy / "content").rglob("*") if p.name == claim.resource_claim.id)
    with path.open("r+b") as file:
        file.seek(claim.offset + at)
        file.write(bytes(b ^ 0xFF for b in BIG[at : at + 8]))
    app, _ = prepare(args_for(big_run, repository=str(copy)))
    return TestClient(app, base_url="http://127.0.0.1"), row.uuid, str(claim)


def test_content_failing_its_first_checksum_answers_an_error_naming_the_claim(
    big_run, tmp_path: Path
) -> None:
    """Damage in the first block: 500 and one line naming the claim, never an empty 200."""
    client, uuid, claim = _damaged(big_run, tmp_path, 100)
    with client:
        for query in ({}, {"download": 1}):
            response = client.get(f"/api/flowfiles/{uuid}/content", params=query)
            assert response.status_code == 500
            error = response.json()["error"]
            assert error.startswith(f"the content {claim} cannot be read: content claim ")
            assert "is damaged: " in error
            assert "\n" not in error


def test_the_viewer_verifies_what_it_shows_and_a_download_streams(
    big_run, tmp_path: Path, monkeypatch
) -> None:
    """Damage past the first block: the viewer's range is verified whole before its status;
    a download streams from its first verified block and breaks off at the damage."""
    from flowcore.errors import ContentCorruptionError
    from flowcore.ui import api

    client, uuid, claim = _damaged(big_run, tmp_path, 200_000)
    with client:
        viewed = client.get(f"/api/flowfiles/{uuid}/content")
        assert viewed.status_code == 500
        assert viewed.json()["error"].startswith(f"the content {claim} cannot be read: ")
        monkeypatch.setattr(api, "MAX_VIEW", 128 * 1024)  # the damage lies past what is shown
        shown = client.get(f"/api/flowfiles/{uuid}/content")
        assert (shown.status_code, shown.content) == (200, BIG[: 128 * 1024])
        with pytest.raises(ContentCorruptionError):  # the body breaks off: never a clean end
            client.get(f"/api/flowfiles/{uuid}/content", params={"download": 1})
    intact, _ = prepare(big_run)
    with TestClient(intact, base_url="http://127.0.0.1") as whole:
        download = whole.get(f"/api/flowfiles/{uuid}/content", params={"download": 1})
        assert (download.status_code, download.content) == (200, BIG)
