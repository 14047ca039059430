"""Tests for ListenHTTP: real HTTP clients (httpx) against a continuous run on loopback."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.errors import FlowValidationError
from flowcore.settings import Settings
from processors import ListenHTTP
from processors.http_server._inbox import Held, Inbox, Throttle
from repositories.repository_set import RepositorySet
from tests.processors.http_server._listening import listening
from tests.processors.http_server._serving import free_port


def test_a_post_becomes_a_flowfile_answered_200_after_its_commit(tmp_path: Path) -> None:
    """Each POST is answered 200 once its FlowFile is committed; PutFile writes its content."""
    with listening(tmp_path) as run:
        with httpx.Client(timeout=10) as client:
            codes = [
                client.post(run.url, content=f"body {i}".encode()).status_code for i in range(3)
            ]
        assert codes == [200, 200, 200]
        deadline = time.monotonic() + 10
        while len(run.written()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert sorted(run.written().values()) == [b"body 0", b"body 1", b"body 2"]
    assert run.result is not None
    assert run.result.count("listen", "success") == 3


def test_headers_matching_the_regex_become_attributes(tmp_path: Path) -> None:
    """Headers the regex keeps are attributes beside NiFi's restlistener.* ones."""
    properties = {
        "HTTP Headers to receive as Attributes (Regex)": "X-.*",
        "Return Code": "201",
    }
    with listening(tmp_path, **properties) as run:
        response = httpx.post(
            run.url, content=b"x", headers={"X-Id": "42", "Other": "no"}, timeout=10
        )
        assert response.status_code == 201
    assert run.result is not None
    repo = _last_attributes(tmp_path / "repo")
    assert repo["X-Id"] == "42"
    assert "Other" not in repo
    assert repo["restlistener.remote.source.host"] == "127.0.0.1"
    assert repo["restlistener.request.uri"] == "/contentListener"
    assert repo["restlistener.remote.user.dn"] == "none"


def _last_attributes(repository: Path) -> dict[str, str]:
    """The attributes of the RECEIVE event's FlowFile, from the provenance repository."""
    repos = RepositorySet.open(repository)
    try:
        events = repos.provenance.search(event_type="RECEIVE")
    finally:
        repos.close()
    assert events, "no RECEIVE event"
    event = events[-1]
    assert event.transit_uri.endswith("/contentListener")
    assert event.details == "Remote DN=none"
    return dict(event.attributes)


def test_an_oversize_body_is_refused_with_413_and_not_ingested(tmp_path: Path) -> None:
    """A body over Max Request Body Size gets 413 before it is read; a small one still lands."""
    with listening(tmp_path, **{"Max Request Body Size": "10 B"}) as run:
        big = httpx.post(run.url, content=b"x" * 11, timeout=10)
        small = httpx.post(run.url, content=b"y" * 10, timeout=10)
    assert (big.status_code, small.status_code) == (413, 200)
    assert run.result is not None
    assert run.result.count("listen", "success") == 1


def test_a_request_not_committed_in_time_gets_503_and_never_lands(tmp_path: Path) -> None:
    """Held back by back pressure, a request waits Max Unconfirmed Flowfile Time, gets 503, and
    is dropped: the client's retry is the only copy."""
    with listening(tmp_path, threshold=1, **{"Max Unconfirmed Flowfile Time": "500 millis"}) as run:
        first = httpx.post(run.url, content=b"first", timeout=10)
        time.sleep(0.3)  # the first commit fills the queue: the stage is held back
        started = time.monotonic()
        second = httpx.post(run.url, content=b"second", timeout=10)
        waited = time.monotonic() - started
        time.sleep(0.3)
    assert (first.status_code, second.status_code) == (200, 503)
    assert 0.4 < waited < 5
    assert run.result is not None
    assert run.result.count("listen", "success") == 1


def test_only_post_and_head_on_the_base_path_and_get_on_the_health_check(
    tmp_path: Path,
) -> None:
    """GET on the base path is 405, the health check answers OK, another path is 404, a
    chunked body (no length) is 411."""
    with listening(tmp_path) as run, httpx.Client(timeout=10) as client:
        assert client.get(run.url).status_code == 405
        assert client.put(run.url, content=b"x").status_code == 405
        health = client.get(run.url + "/healthcheck")
        assert (health.status_code, health.text) == (200, "OK")
        assert client.head(run.url).status_code == 200
        assert client.post(run.url + "x", content=b"x").status_code == 404
        chunks = client.post(run.url, content=iter([b"a", b"b"]))
        assert chunks.status_code == 411


def test_a_full_inbox_answers_503_at_once() -> None:
    """Past Maximum Thread Pool Size requests held, the inbox refuses (the handler's 503)."""
    inbox = Inbox(2)
    held = [Held(b"", {}, "u", "none", 0) for _ in range(3)]
    assert [inbox.offer(h) for h in held] == [True, True, False]
    taken = inbox.take(10)
    assert taken == held[:2]
    inbox.put_back([taken[1].key])
    assert inbox.waiting() == 1
    inbox.answer([taken[0].key], 200)
    assert taken[0].done.is_set()
    assert taken[0].status == 200
    assert inbox.give_up(taken[1]) is True  # never listed again: dropped, no duplicate
    inbox.close()
    assert not inbox.offer(held[2])


def test_the_throttle_bounds_the_receive_rate() -> None:
    """Max Data to Receive per Second: 2,000 bytes at 10,000 B/s take about 0.2 s."""
    throttle = Throttle(10_000)
    started = time.monotonic()
    for _ in range(20):
        throttle.take(100)
    assert 0.15 < time.monotonic() - started < 1.0


def test_a_batch_run_does_not_wait_for_requests(tmp_path: Path) -> None:
    """Outside a continuous run the listener finds nothing waiting and the run ends."""
    flow = Flow("batch")
    listen = flow.add(ListenHTTP(listening_port=str(free_port())), name="listen")
    flow.auto_terminate(listen, "success")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("listen", "success") == 0


def test_a_nifi_export_names_nifis_class_and_imports_back() -> None:
    """ListenHTTP exports as NiFi's standard class with NiFi's internal property names and
    without flowcore's Max Request Body Size, and the export imports back."""
    flow = Flow("export")
    listen = flow.add(
        ListenHTTP(
            listening_port="8011",
            **{"Authorized Subject DN Pattern": "CN=.*", "Max Request Body Size": "1 MB"},
        ),
        name="listen",
    )
    flow.auto_terminate(listen, "success")
    document = flow.to_nifi()
    (exported,) = document["flowContents"]["processors"]
    assert exported["type"] == "org.apache.nifi.processors.standard.ListenHTTP"
    assert exported["properties"]["Listening Port"] == "8011"
    assert exported["properties"]["Authorized DN Pattern"] == "CN=.*"
    assert "Max Request Body Size" not in exported["properties"]
    back = Flow.from_nifi(document)
    imported = back.resolved_processor(back.component("listen"))
    assert isinstance(imported, ListenHTTP)
    assert imported.configured["Authorized DN Pattern"] == "CN=.*"


def _post_messages(tmp_path: Path, code: int, **properties: str) -> None:
    """NiFi's testPOSTRequestsReceived: four bodies POSTed, each answered *code*, each a
    FlowFile with its content, in order."""
    messages = [b"test 1", b"test 2", b"test 3", b"test 4"]
    with listening(tmp_path, **properties) as run, httpx.Client(timeout=10) as client:
        assert run.url.endswith("/basePath")
        assert [client.post(run.url, content=m).status_code for m in messages] == [code] * 4
        deadline = time.monotonic() + 10
        while len(run.written()) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert sorted(run.written().values()) == messages


def test_post_requests_received_return_code_without_el(tmp_path: Path) -> None:
    """NiFi's testPOSTRequestsReceivedReturnCodeWithoutEL: Return Code 204 on basePath."""
    _post_messages(tmp_path, 204, **{"Base Path": "basePath", "Return Code": "204"})


def test_post_requests_received_with_el(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NiFi's testPOSTRequestsReceivedWithEL: port and base path from environment variables."""
    monkeypatch.setenv("HTTP_BASEPATH", "basePath")
    monkeypatch.setenv("HTTP_PORT", "0")  # the helper sets the free port it chose
    _post_messages(
        tmp_path, 200, **{"Listening Port": "${HTTP_PORT}", "Base Path": "${HTTP_BASEPATH}"}
    )


def test_https_is_refused_before_the_run_with_the_fix_named(tmp_path: Path) -> None:
    """An SSL Context Service makes the flow invalid: the message names the property and the
    way out, and nothing runs."""
    flow = Flow("tls")
    listen = flow.add(
        ListenHTTP(listening_port=str(free_port()), ssl_context_service="tls"), name="listen"
    )
    flow.auto_terminate(listen, "success")
    with pytest.raises(FlowValidationError, match="does not serve HTTPS yet"):
        run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
