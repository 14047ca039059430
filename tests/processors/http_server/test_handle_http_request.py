"""Tests for HandleHttpRequest: NiFi's test cases in the harness, real requests on loopback."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import HandleHttpRequest
from processors.http_server import StandardHttpContextMap
from processors.http_server.context_map import Exchange
from tests.processors.http_server._serving import free_port

_MAP = "http-context-map"


@pytest.fixture
def runner() -> Iterator[TestRunner]:
    """NiFi's test set-up: HandleHttpRequest on a free port with a StandardHttpContextMap."""
    harness = TestRunner(HandleHttpRequest())
    harness.add_service(StandardHttpContextMap(_MAP))
    harness.set_property("HTTP Context Map", _MAP)
    harness.set_property("Listening Port", str(free_port()))
    yield harness
    harness.processor.on_stopped(harness.context)  # the server, if a test left it running


def _request(runner: TestRunner, send: Callable[[str], httpx.Response]) -> list[Any]:
    """Start the server (one trigger), send a request in a thread, trigger until it is taken.

    Returns what the client got back (a response or an error), once the runner stopped.
    """
    runner.run(1, stop_on_finish=False)
    processor = runner.processor
    assert isinstance(processor, HandleHttpRequest)
    url = f"http://127.0.0.1:{processor.port}"
    outcome: list[Any] = []

    def client() -> None:
        try:
            outcome.append(send(url))
        except httpx.HTTPError as error:
            outcome.append(error)

    thread = threading.Thread(target=client)
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.flowfiles_for("success") and not outcome and time.monotonic() < deadline:
        time.sleep(0.02)
        runner.run(1, stop_on_finish=False, initialize=False)
    runner.processor.on_stopped(runner.context)  # requests still held: 503 Stopping Server
    thread.join(timeout=10)
    return outcome


def test_nifi_defaults_and_required_properties() -> None:
    """NiFi's testSetRequiredProperties: only the context map is required; defaults as NiFi's."""
    processor = HandleHttpRequest()
    values = processor.effective_values()
    assert values["Listening Port"] == "80"
    assert values["Container Queue Size"] == "50"
    assert values["Allow HEAD"] == values["Allow OPTIONS"] == "false"
    assert values["Allow GET"] == values["Allow DELETE"] == "true"
    assert values["Client Authentication"] == "No Authentication"
    assert values["Multipart Request Max Size"] == "1 MB"
    assert [p.subject for p in processor.validate()] == ["HTTP Context Map"]
    assert HandleHttpRequest(http_context_map=_MAP).validate() == ()


def test_nifi_1x_property_names_are_accepted() -> None:
    """NiFi's testMigrateProperties: the 1.x internal names map to the 2.x properties."""
    processor = HandleHttpRequest(
        **{
            "parameters-to-attributes": "a,b",
            "container-queue-size": "7",
            "multipart-request-max-size": "2 MB",
            "multipart-read-buffer-size": "1 KB",
        }
    )
    assert processor.configured == {
        "Parameters to Attributes": "a,b",
        "Container Queue Size": "7",
        "Multipart Request Max Size": "2 MB",
        "Multipart Read Buffer Size": "1 KB",
    }


def test_run_without_requests_transfers_nothing(runner: TestRunner) -> None:
    """NiFi's testRun: a trigger with no request makes no FlowFile."""
    runner.run()
    runner.assert_transfer_count("success", 0)


def test_request_added_to_service(runner: TestRunner) -> None:
    """NiFi's testRequestAddedToService: a GET becomes a FlowFile held in the context map, with
    its query parameters and headers as attributes."""
    outcome = _request(
        runner,
        lambda url: httpx.get(
            url + "/my/path?query=true&value1=value1&value2=&value3&value4=apple=orange",
            headers={"header1": "value1", "header2": "", "header3": "apple=orange"},
            timeout=10,
        ),
    )
    runner.assert_all_flowfiles_transferred("success", 1)
    flowfile = runner.flowfiles_for("success")[0]
    flowfile.assert_attribute_equals("http.query.param.query", "true")
    flowfile.assert_attribute_equals("http.query.param.value1", "value1")
    flowfile.assert_attribute_equals("http.query.param.value2", "")
    flowfile.assert_attribute_equals("http.query.param.value3", "")
    flowfile.assert_attribute_equals("http.query.param.value4", "apple=orange")
    flowfile.assert_attribute_equals("http.headers.header1", "value1")
    flowfile.assert_attribute_equals("http.headers.header3", "apple=orange")
    flowfile.assert_attribute_equals("http.method", "GET")
    flowfile.assert_attribute_equals("http.request.uri", "/my/path")
    flowfile.assert_attribute_equals("http.servlet.path", "/my/path")
    flowfile.assert_attribute_equals("http.context.path", "")
    flowfile.assert_attribute_equals(
        "http.query.string", "query=true&value1=value1&value2=&value3&value4=apple=orange"
    )
    flowfile.assert_attribute_equals("http.remote.host", "127.0.0.1")
    flowfile.assert_attribute_equals("http.remote.addr", "127.0.0.1")
    flowfile.assert_attribute_equals("http.local.name", "127.0.0.1")
    flowfile.assert_attribute_equals("http.protocol", "HTTP/1.1")
    port = runner.flowfiles_for("success")[0].attributes["http.server.port"]
    flowfile.assert_attribute_equals("http.request.url", f"http://127.0.0.1:{port}/my/path")
    flowfile.assert_attribute_exists("http.context.identifier")
    flowfile.assert_attribute_not_exists("mime.type")
    (event,) = runner.provenance_events
    assert event.event_type.name == "RECEIVE"
    assert event.transit_uri == f"http://127.0.0.1@127.0.0.1:{port}/my/path"
    assert event.details == "Received from 127.0.0.1"
    (answer,) = outcome  # nobody answered: the runner's stop did, 503
    assert isinstance(answer, httpx.Response)
    assert answer.status_code == 503


def test_a_post_body_becomes_the_content_with_its_type(runner: TestRunner) -> None:
    """A POSTed body is the FlowFile's content; its Content-Type is mime.type and its charset
    http.character.encoding; a urlencoded form feeds Parameters to Attributes."""
    runner.set_property("Parameters to Attributes", "p1, q")
    _request(
        runner,
        lambda url: httpx.post(
            url + "/form?q=%C3%A9",
            content=b"p1=v+1&p2=v2",
            headers={"Content-Type": "application/x-www-form-urlencoded; charset=UTF-8"},
            timeout=10,
        ),
    )
    flowfile = runner.flowfiles_for("success")[0]
    flowfile.assert_content_equals(b"p1=v+1&p2=v2")
    flowfile.assert_attribute_equals(
        "mime.type", "application/x-www-form-urlencoded; charset=UTF-8"
    )
    flowfile.assert_attribute_equals("http.character.encoding", "UTF-8")
    flowfile.assert_attribute_equals("http.param.p1", "v 1")
    flowfile.assert_attribute_equals("http.param.q", "é")
    flowfile.assert_attribute_equals("http.query.param.q", "é")
    flowfile.assert_attribute_not_exists("http.param.p2")


def test_multipart_form_data_request(runner: TestRunner) -> None:
    """NiFi's testMultipartFormDataRequest and ...CaptureFormAttributes: one FlowFile per part,
    all with the request's context identifier, NiFi's http.multipart.* attributes, and the
    form fields named by Parameters to Attributes on each."""
    runner.set_property("Parameters to Attributes", "p1,p2")
    binary = bytes(range(256)) * 4
    _request(
        runner,
        lambda url: httpx.post(
            url + "/my/path",
            data={"p1": "v1", "p2": "v2"},
            files={
                "file1": ("my-file-text.txt", b"Hello\nWorld", "text/plain"),
                "file2": ("my-file-data.json", b'{ "name":"John", "age":30 }', "application/json"),
                "file3": ("my-file-binary.bin", binary, "application/octet-stream"),
            },
            timeout=10,
        ),
    )
    runner.assert_all_flowfiles_transferred("success", 5)
    by_name = {f.attributes["http.multipart.name"]: f for f in runner.flowfiles_for("success")}
    assert set(by_name) == {"p1", "p2", "file1", "file2", "file3"}
    assert len({f.attributes["http.context.identifier"] for f in by_name.values()}) == 1
    for flowfile in by_name.values():
        flowfile.assert_attribute_equals("http.multipart.fragments.total.number", "5")
        flowfile.assert_attribute_exists("http.multipart.size")
        flowfile.assert_attribute_exists("http.headers.multipart.content-disposition")
        flowfile.assert_attribute_equals("http.param.p1", "v1")
        flowfile.assert_attribute_equals("http.param.p2", "v2")
    by_name["p1"].assert_content_equals(b"v1")
    by_name["p1"].assert_attribute_equals("http.multipart.fragments.sequence.number", "1")
    by_name["file1"].assert_attribute_equals("http.multipart.filename", "my-file-text.txt")
    by_name["file1"].assert_attribute_equals("http.headers.multipart.content-type", "text/plain")
    by_name["file1"].assert_content_equals(b"Hello\nWorld")
    by_name["file2"].assert_attribute_equals("http.multipart.content.type", "application/json")
    by_name["file3"].assert_content_equals(binary)
    by_name["file3"].assert_attribute_equals("http.multipart.size", str(len(binary)))


def test_a_full_context_map_answers_503(runner: TestRunner) -> None:
    """NiFi's testFailToRegister: a request the map cannot hold is answered 503 and makes no
    FlowFile."""
    runner.add_service(StandardHttpContextMap(_MAP, maximum_outstanding_requests="1"))
    held = runner.controller_service(_MAP)
    assert isinstance(held, StandardHttpContextMap)
    held.register("taken", Exchange())  # the map is full
    (answer,) = _request(runner, lambda url: httpx.post(url, content=b"x", timeout=10))
    runner.assert_transfer_count("success", 0)
    assert isinstance(answer, httpx.Response)
    assert (answer.status_code, answer.reason_phrase) == (503, "Request Registration Failed")


def test_method_not_allowed_and_path_not_found(runner: TestRunner) -> None:
    """NiFi's testRunMethodNotAllowed: a method not allowed gets 405; a path Allowed Paths
    does not match gets 404; neither makes a FlowFile. Additional HTTP Methods are allowed."""
    runner.set_property("Allow GET", "false")
    runner.set_property("Allowed Paths", "/api/.*")
    runner.set_property("Additional HTTP Methods", "purge, PATCH")
    runner.run(1, stop_on_finish=False)
    processor = runner.processor
    assert isinstance(processor, HandleHttpRequest)
    url = f"http://127.0.0.1:{processor.port}"
    with httpx.Client(timeout=10) as client:
        assert client.get(url + "/api/x").status_code == 405
        assert client.head(url + "/api/x").status_code == 405
        assert client.options(url + "/api/x").status_code == 405
        assert client.post(url + "/other", content=b"x").status_code == 404
        unknown = client.request("PURGE", url + "/nope")
        assert (unknown.status_code, unknown.reason_phrase) == (404, "Path Not Found")
    runner.run(1, stop_on_finish=True, initialize=False)
    runner.assert_transfer_count("success", 0)


def test_a_batch_run_does_not_wait_for_requests(tmp_path: Path) -> None:
    """Outside a continuous run the server finds nothing waiting and the run ends."""
    flow = Flow("batch")
    flow.add_service(StandardHttpContextMap(_MAP))
    request = flow.add(
        HandleHttpRequest(http_context_map=_MAP, listening_port=str(free_port())), name="request"
    )
    flow.auto_terminate(request, "success")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("request", "success") == 0


def test_a_nifi_export_names_nifis_classes_and_imports_back() -> None:
    """HandleHttpRequest and its map export as NiFi's types and import back."""
    flow = Flow("export")
    flow.add_service(StandardHttpContextMap(_MAP, request_expiration="2 min"))
    request = flow.add(
        HandleHttpRequest(http_context_map=_MAP, listening_port="8011", allowed_paths="/a.*"),
        name="request",
    )
    flow.auto_terminate(request, "success")
    document = flow.to_nifi()
    (exported,) = document["flowContents"]["processors"]
    assert exported["type"] == "org.apache.nifi.processors.standard.HandleHttpRequest"
    assert exported["properties"]["Allowed Paths"] == "/a.*"
    assert "Max Request Body Size" not in exported["properties"]
    (service,) = document["flowContents"]["controllerServices"]
    assert service["type"] == "org.apache.nifi.http.StandardHttpContextMap"
    back = Flow.from_nifi(document)
    imported = back.resolved_processor(back.component("request"))
    assert isinstance(imported, HandleHttpRequest)
    assert imported.configured["Allowed Paths"] == "/a.*"


def test_a_full_container_queue_answers_503(runner: TestRunner) -> None:
    """Past Container Queue Size requests waiting to be taken, a request gets 503 'Request
    Queue Full' at once; the waiting one is answered 503 'Stopping Server' when the
    processor stops."""
    runner.set_property("Container Queue Size", "1")
    runner.run(1, stop_on_finish=False)
    processor = runner.processor
    assert isinstance(processor, HandleHttpRequest)
    url = f"http://127.0.0.1:{processor.port}/q"
    first: list[httpx.Response] = []
    waiting = threading.Thread(
        target=lambda: first.append(httpx.post(url, content=b"1", timeout=10))
    )
    waiting.start()
    queue = processor.__dict__["_containers"]
    deadline = time.monotonic() + 10
    while not len(queue) and time.monotonic() < deadline:  # the first request is read
        time.sleep(0.02)
    refused = httpx.post(url, content=b"2", timeout=10)
    assert (refused.status_code, refused.reason_phrase) == (503, "Request Queue Full")
    processor.on_stopped(runner.context)
    waiting.join(timeout=10)
    assert [(r.status_code, r.reason_phrase) for r in first] == [(503, "Stopping Server")]
    runner.assert_transfer_count("success", 0)


def _raw_status(port: int, request: bytes) -> tuple[int, bytes]:
    """The status and the rest of the head of the answer to *request*, sent raw."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        reply = b""
        while b"\r\n\r\n" not in reply:
            part = connection.recv(4096)
            if not part:
                break
            reply += part
    status_line, _, rest = reply.partition(b"\r\n")
    return int(status_line.split()[1]), rest


def test_request_header_maximum_size_is_enforced_before_the_request_is_parsed(
    runner: TestRunner,
) -> None:
    """As Jetty in NiFi (and ListenHTTP): the request line and headers past Request Header
    Maximum Size get 431 (414 for the line alone) before the method or path are looked at,
    the connection closed; a request within it is taken."""
    runner.set_property("Request Header Maximum Size", "1 KB")
    runner.set_property("Allow GET", "false")
    runner.run(1, stop_on_finish=False)
    processor = runner.processor
    assert isinstance(processor, HandleHttpRequest)
    port = processor.port
    big = b"x" * 1100
    try:
        headers = _raw_status(port, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + big + b"\r\n\r\n")
        line = _raw_status(port, b"GET /" + big + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        many = b"".join(b"X-%d: y\r\n" % n for n in range(150))  # 1,500 bytes in short lines
        counted = _raw_status(port, b"GET / HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
        within = _raw_status(
            port, b"GET / HTTP/1.1\r\nHost: x\r\nX-Small: " + b"x" * 800 + b"\r\n\r\n"
        )
    finally:
        processor.on_stopped(runner.context)
    assert (headers[0], line[0], counted[0], within[0]) == (431, 414, 431, 405)
    assert b"Connection: close" in headers[1]
    runner.assert_transfer_count("success", 0)


def test_cookies_locale_and_server_attributes(runner: TestRunner) -> None:
    """NiFi's HandleHttpRequest attributes beyond testRequestAddedToService: request cookies
    as http.cookie.<name>.*, JSESSIONID as http.requested.session.id, Accept-Language as
    http.locale (Java's fr_CA), http.server.name and http.dispatcher.type."""
    _request(
        runner,
        lambda url: httpx.get(
            url + "/c",
            headers={"Cookie": "a=1; JSESSIONID=xyz", "Accept-Language": "fr-CA,fr;q=0.9"},
            timeout=10,
        ),
    )
    flowfile = runner.flowfiles_for("success")[0]
    flowfile.assert_attribute_equals("http.cookie.a.value", "1")
    flowfile.assert_attribute_equals("http.cookie.a.max.age", "-1")
    flowfile.assert_attribute_equals("http.cookie.a.secure", "false")
    flowfile.assert_attribute_equals("http.requested.session.id", "xyz")
    flowfile.assert_attribute_equals("http.locale", "fr_CA")
    flowfile.assert_attribute_equals("http.server.name", "127.0.0.1")
    flowfile.assert_attribute_equals("http.dispatcher.type", "REQUEST")
    flowfile.assert_attribute_not_exists("http.query.string")
