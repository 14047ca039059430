"""Tests for HandleHttpResponse: NiFi's test cases in the harness, and real round trips."""

from __future__ import annotations

import pickle
import time
import tracemalloc
from pathlib import Path
from typing import ClassVar

import httpx
import pytest

from flowcore.controller_service import ServiceContext
from flowcore.errors import ProcessException
from flowcore.testing import TestRunner
from processors import HandleHttpResponse
from processors.http_server import StandardHttpContextMap
from processors.http_server.context_map import Answer, ContentBody, Exchange, HttpContextMap
from repositories.repository_set import RepositorySet
from tests.processors.http_server._handling import handling

HTTP_REQUEST_ID = "HTTP-Request-Identifier"
CONTEXT_MAP_ID = "MockHttpContextMap"
FLOW_FILE_CONTENT = "TESTING"
REQUEST_ATTRIBUTES = {
    "http.context.identifier": HTTP_REQUEST_ID,
    "http.request.uri": "/test",
    "http.local.name": "server",
    "http.server.port": "8443",
    "http.remote.host": "client",
    "http.subject.dn": "sslDN",
}


class MockHttpContextMap(HttpContextMap):
    """NiFi's test map: one request, counting completions, optionally failing to complete."""

    complete_error: ClassVar[Exception | None] = None

    def on_enabled(self, context: ServiceContext) -> None:
        """One held request."""
        del context
        self.exchange = Exchange()
        self.completed = 0

    def register(self, identifier: str, exchange: Exchange) -> bool:
        """Always room."""
        del identifier, exchange
        return True

    def get_response(self, identifier: str) -> Exchange | None:
        """The one request, which must be the one asked for."""
        assert identifier == HTTP_REQUEST_ID
        return self.exchange

    def complete(self, identifier: str) -> Exchange:
        """Count the completion (or fail as the test says)."""
        assert identifier == HTTP_REQUEST_ID
        if self.complete_error is not None:
            raise self.complete_error
        self.completed += 1
        return self.exchange

    def request_timeout_s(self) -> float:
        """30 seconds, as NiFi's mock."""
        return 30.0

    def holds_requests(self) -> bool:
        """The test's process holds the request."""
        return True


class FailingContextMap(MockHttpContextMap):
    """NiFi's testResponseProcessExceptionThenIllegalStateException's map."""

    complete_error: ClassVar[Exception | None] = ProcessException("not registered")


class ExecutorContextMap(MockHttpContextMap):
    """A map as a task on a Spark executor sees it: the requests are held elsewhere."""

    def holds_requests(self) -> bool:
        """Not here."""
        return False


def _runner(service: HttpContextMap | None = None, **properties: str) -> TestRunner:
    runner = TestRunner(HandleHttpResponse())
    runner.add_service(service or MockHttpContextMap(CONTEXT_MAP_ID))
    runner.set_property("HTTP Context Map", CONTEXT_MAP_ID)
    runner.set_property("HTTP Status Code", "${status.code}")
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner


def _map(runner: TestRunner) -> MockHttpContextMap:
    found = runner.controller_service(CONTEXT_MAP_ID)
    assert isinstance(found, MockHttpContextMap)
    return found


def test_nifi_properties() -> None:
    """NiFi 2's names; the 1.x name of the attributes regex is accepted."""
    processor = HandleHttpResponse(
        **{"Attributes to add to the HTTP Response (Regex)": "x.*", "HTTP Context Map": "m"}
    )
    assert processor.configured["Attributes for HTTP Response"] == "x.*"
    assert [r.name for r in processor.get_relationships()] == ["success", "failure"]
    assert [p.subject for p in HandleHttpResponse().validate()] == [
        "HTTP Status Code",
        "HTTP Context Map",
    ]


def test_ensure_completed() -> None:
    """NiFi's testEnsureCompleted: status and headers from Expression Language, the content as
    the body, one SEND event with NiFi's transit URI, the request completed once; a header
    whose value is blank is not sent."""
    runner = _runner(**{"my-attr": "${my-attr}", "no-valid-attr": "${no-valid-attr}"})
    context_map = _map(runner)
    attributes = {**REQUEST_ATTRIBUTES, "my-attr": "hello", "status.code": "201"}
    runner.enqueue(FLOW_FILE_CONTENT, attributes)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    (event,) = runner.provenance_events
    assert event.event_type.name == "SEND"
    assert event.transit_uri == "https://client@server:8443/test"
    assert context_map.exchange.wait(0) == Answer(201, (("my-attr", "hello"),), b"TESTING")
    assert context_map.completed == 1


def test_regex_headers() -> None:
    """NiFi's testRegexHeaders: attributes the regex matches are headers, blank ones not."""
    runner = _runner(**{"Attributes for HTTP Response": "^(my.*)$"})
    attributes = {
        **REQUEST_ATTRIBUTES,
        "my-attr": "hello",
        "my-blank-attr": "",
        "status.code": "201",
    }
    context_map = _map(runner)
    runner.enqueue(FLOW_FILE_CONTENT, attributes)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    answer = context_map.exchange.wait(0)
    assert answer == Answer(201, (("my-attr", "hello"),), b"TESTING")


def test_headers_that_would_split_the_response_are_not_sent() -> None:
    """A header value with a line break, or a name that is no HTTP token, is left out."""
    runner = _runner(**{"Attributes for HTTP Response": "x.*", "X-Ok": "fine"})
    context_map = _map(runner)
    attributes = {
        "http.context.identifier": HTTP_REQUEST_ID,
        "status.code": "200",
        "x-evil": "a\r\nSet-Cookie: owned=1",
        "x bad": "space in the name",
    }
    runner.enqueue(FLOW_FILE_CONTENT, attributes)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    answer = context_map.exchange.wait(0)
    assert answer is not None
    assert answer.headers == (("X-Ok", "fine"),)


def test_status_code_empty() -> None:
    """NiFi's testStatusCodeEmpty: a status code that is not a number sends to failure and
    answers nothing."""
    runner = _runner()
    context_map = _map(runner)
    runner.enqueue(FLOW_FILE_CONTENT, {"http.context.identifier": HTTP_REQUEST_ID})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert context_map.completed == 0
    assert not context_map.exchange.answered


def test_no_context_identifier_goes_to_failure() -> None:
    """A FlowFile without http.context.identifier goes to failure (NiFi's warning)."""
    runner = _runner()
    runner.enqueue(FLOW_FILE_CONTENT, {"status.code": "200"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert all(e.event_type.name != "SEND" for e in runner.provenance_events)


def test_a_request_the_map_no_longer_holds_goes_to_failure() -> None:
    """With the real map: an identifier it does not hold (expired, or from a run that
    ended) sends the FlowFile to failure; one it holds is answered and let go."""
    runner = _runner(StandardHttpContextMap(CONTEXT_MAP_ID))
    context_map = runner.controller_service(CONTEXT_MAP_ID)
    assert isinstance(context_map, StandardHttpContextMap)
    context_map.serve_here()
    held = Exchange()
    context_map.register("held", held)
    runner.enqueue("gone", {"http.context.identifier": "gone", "status.code": "200"})
    runner.enqueue("held", {"http.context.identifier": "held", "status.code": "202"})
    runner.run(2)
    runner.assert_transfer_count("failure", 1)
    runner.assert_transfer_count("success", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals("gone")
    assert held.wait(0) == Answer(202, (), b"held")
    assert context_map.get_response("held") is None


def test_response_process_exception_then_illegal_state_exception() -> None:
    """NiFi's testResponseProcessExceptionThenIllegalStateException: complete() fails, so the
    FlowFile goes to failure and no completion is counted."""
    runner = _runner(FailingContextMap(CONTEXT_MAP_ID))
    context_map = _map(runner)
    attributes = {**REQUEST_ATTRIBUTES, "my-attr": "hello", "status.code": "201"}
    runner.set_property("my-attr", "${my-attr}")
    runner.set_property("no-valid-attr", "${no-valid-attr}")
    runner.enqueue(FLOW_FILE_CONTENT, attributes)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert context_map.completed == 0


def test_complete_failing_routes_to_failure_as_nifi() -> None:
    """The reviewer's case: complete() fails, so the FlowFile goes to failure."""
    runner = _runner(FailingContextMap(CONTEXT_MAP_ID))
    _map(runner)
    runner.enqueue(
        FLOW_FILE_CONTENT, {"http.context.identifier": HTTP_REQUEST_ID, "status.code": "201"}
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_a_multipart_request_is_answered_by_its_first_flowfile() -> None:
    """Several FlowFiles of one request (multipart parts): the first answers it, the others
    go to failure (the request is claimed), and it is completed once."""
    runner = _runner()
    context_map = _map(runner)
    for part in ("first", "second", "third"):
        runner.enqueue(part, {"http.context.identifier": HTTP_REQUEST_ID, "status.code": "200"})
    runner.run()
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("failure", 2)
    runner.flowfiles_for("success")[0].assert_content_equals("first")
    assert context_map.exchange.wait(0) == Answer(200, (), b"first")
    assert context_map.completed == 1


def test_a_large_response_is_not_held_whole_in_memory() -> None:
    """A 64 MB FlowFile answered: memory stays well under its size (NiFi streams it)."""
    runner = _runner()
    context_map = _map(runner)
    size = 64 << 20
    runner.enqueue(b"x" * size, {"http.context.identifier": HTTP_REQUEST_ID, "status.code": "200"})
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        runner.run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert peak < size // 2, f"peak {peak / 2**20:.0f} MiB for a {size >> 20} MiB response"
    answer = context_map.exchange.wait(0)
    assert answer is not None
    assert answer.length == size
    assert sum(len(c) for c in answer.chunks()) == size
    answer.close()


def test_a_task_away_from_the_requests_ships_bodies_up_to_a_bound() -> None:
    """Where the map holds no requests (a Spark executor), the task ships the body in its
    commit message: up to 16 MiB; a larger FlowFile goes to failure with a message that says
    why, and its request is left to the expiry."""
    runner = _runner(ExecutorContextMap(CONTEXT_MAP_ID))
    runner.run(0, stop_on_finish=False)
    attributes = {"http.context.identifier": HTTP_REQUEST_ID, "status.code": "200"}
    runner.enqueue(FLOW_FILE_CONTENT, attributes)
    runner.enqueue(b"y" * ((16 << 20) + 1), attributes)
    session = runner.create_session()
    processor = runner.processor
    assert isinstance(processor, HandleHttpResponse)
    message = processor.write(runner.context, session, session.get(10))
    session.commit()
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("failure", 1)
    (staged,) = pickle.loads(message)
    assert staged.answer.body == b"TESTING"
    assert not staged.prepared


def test_a_large_body_is_streamed_from_its_claim_held_until_sent() -> None:
    """Where the task runs in the driver's process, a body over 1 MiB is neither read by the
    task nor copied: the staged response names the FlowFile's content, publish holds its claim
    (one claimant more, whatever the commit does with the FlowFile), the request's handler
    streams it from the content repository, and closing the sent answer lets the claim go."""
    runner = _runner()
    runner.run(0, stop_on_finish=False)
    body = bytes(i % 253 for i in range((1 << 20) + 1))
    runner.enqueue(body, {"http.context.identifier": HTTP_REQUEST_ID, "status.code": "200"})
    session = runner.create_session()
    processor = runner.processor
    assert isinstance(processor, HandleHttpResponse)
    (flowfile,) = session.get(10)
    message = processor.write(runner.context, session, [flowfile])
    session.commit()
    runner.assert_all_flowfiles_transferred("success", 1)
    (staged,) = pickle.loads(message)
    assert (staged.content, staged.prepared, staged.answer.body) == (flowfile.content, False, b"")
    assert _map(runner).exchange.body is None  # nothing read for it in the task
    claim = flowfile.content.resource_claim
    claimants = runner.content.claimant_count(claim)
    runner.context.service_lookup = runner.controller_service
    processor.commit_at_once(runner.context, message, {})
    assert runner.content.claimant_count(claim) == claimants + 1  # held by the answer
    answer = _map(runner).exchange.wait(0)
    assert answer is not None
    assert isinstance(answer.body, ContentBody)
    assert answer.body.content == flowfile.content
    assert (answer.status, answer.length) == (200, len(body))
    assert b"".join(answer.chunks()) == body
    answer.close()
    answer.close()  # the handler's finally after a refused answer: released once
    assert runner.content.claimant_count(claim) == claimants


# --- real round trips -----------------------------------------------------------------------


def test_request_flow_response_round_trip(tmp_path: Path) -> None:
    """POST and GET through a continuous run: the body comes back with the status and headers
    the response sets from attributes and query parameters; the FlowFile is in success
    (PutFile wrote it) before the answer; RECEIVE and SEND carry NiFi's transit URIs."""
    response = {
        "HTTP Status Code": "${http.query.param.status:replaceEmpty('200')}",
        "X-Method": "${http.method}",
        "Attributes for HTTP Response": r"http\.query\.param\..*",
        "Content-Type": "${mime.type}",
    }
    with handling(tmp_path, response=response) as run, httpx.Client(timeout=10) as client:
        post = client.post(
            run.url + "/orders?status=201",
            content=b'{"id": 1}',
            headers={"Content-Type": "application/json"},
        )
        get = client.get(run.url + "/orders/7?a=1&b=x%20y")
        deadline = time.monotonic() + 10
        while len(run.written()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)  # the PutFile rename follows the commit the answers followed
        written = run.written()
    assert (post.status_code, post.content) == (201, b'{"id": 1}')
    assert post.headers["X-Method"] == "POST"
    assert post.headers["Content-Type"] == "application/json"
    assert post.headers["http.query.param.status"] == "201"
    assert (get.status_code, get.content) == (200, b"")
    assert get.headers["X-Method"] == "GET"
    assert (get.headers["http.query.param.a"], get.headers["http.query.param.b"]) == ("1", "x y")
    assert sorted(written.values()) == [b"", b'{"id": 1}']
    assert run.result is not None
    assert run.result.count("response", "success") == 2
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        received = repos.provenance.search(event_type="RECEIVE")
        sent = repos.provenance.search(event_type="SEND")
    finally:
        repos.close()
    port = run.url.rsplit(":", 1)[1]
    uris = {
        f"http://127.0.0.1@127.0.0.1:{port}/orders",
        f"http://127.0.0.1@127.0.0.1:{port}/orders/7",
    }
    assert {e.transit_uri for e in received} == uris
    assert {e.transit_uri for e in sent if e.transit_uri.startswith("http")} == uris


def test_disallowed_path_and_method_answer_404_and_405(tmp_path: Path) -> None:
    """Allowed Paths refuses other paths with 404, a method not allowed gets 405, and neither
    makes a FlowFile; allowed ones go round (a 204 without content)."""
    request = {"Allowed Paths": "/api/.*", "Allow PUT": "false"}
    response = {"HTTP Status Code": "${http.query.param.status:replaceEmpty('200')}"}
    with (
        handling(tmp_path, request=request, response=response) as run,
        httpx.Client(timeout=10) as client,
    ):
        assert client.get(run.url + "/other").status_code == 404
        assert client.put(run.url + "/api/x", content=b"x").status_code == 405
        assert client.head(run.url + "/api/x").status_code == 405  # Allow HEAD: false
        assert client.delete(run.url + "/api/x").status_code == 200
        empty = client.post(run.url + "/api/x?status=204", content=b"ignored")
        assert (empty.status_code, empty.content) == (204, b"")
        assert "content-length" not in empty.headers
        assert client.get(run.url + "/api/again").status_code == 200  # the connection goes on
    assert run.result is not None
    assert run.result.count("request", "success") == 3


def test_an_unanswered_request_expires_503_and_its_flowfile_fails_later(tmp_path: Path) -> None:
    """A request nobody answers gets 503 'Timeout occurred' at Request Expiration; its
    FlowFile, queued for HandleHttpResponse, goes to failure in the next run (its request is
    gone): the client was answered once."""
    options = {"context_map": {"Request Expiration": "500 millis"}}
    with handling(tmp_path, responding=False, **options) as run:
        late = httpx.post(run.url + "/slow", content=b"late", timeout=10)
    # "Timeout occurred" is the expiry sweep's answer (a refusal says "Service Unavailable"),
    # and the FlowFile failing below shows the request was held, not refused on arrival.
    assert (late.status_code, late.reason_phrase) == (503, "Timeout occurred")
    assert run.result is not None
    assert run.result.count("request", "success") == 1
    with handling(tmp_path, **options) as again:
        time.sleep(0.3)  # the queued FlowFile's micro-batch
    assert again.result is not None
    assert again.result.count("response", "failure") == 1
    assert again.written() == {}


@pytest.mark.parametrize("size", [0, 70_000])
def test_chunked_bodies_are_read(tmp_path: Path, size: int) -> None:
    """A chunked request body (no Content-Length) is taken whole."""
    body = bytes(i % 251 for i in range(size))
    with handling(tmp_path) as run:
        answer = httpx.post(
            run.url + "/c", content=iter([body[: size // 2], body[size // 2 :]]), timeout=10
        )
    assert (answer.status_code, answer.content) == (200, body)


def test_a_large_body_is_streamed_back(tmp_path: Path) -> None:
    """A 3 MiB body round trip through a continuous run: the response is streamed from the
    FlowFile's claim in the content repository, whole and byte for byte."""
    body = bytes(i % 253 for i in range(3 << 20))
    with handling(tmp_path) as run:
        answer = httpx.post(run.url + "/big", content=body, timeout=20)
    assert (answer.status_code, answer.headers["Content-Length"]) == (200, str(len(body)))
    assert answer.content == body
