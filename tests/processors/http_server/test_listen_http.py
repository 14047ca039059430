"""Tests for ListenHTTP: real HTTP clients (httpx) against a continuous run on loopback."""

from __future__ import annotations

import gzip
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.engine._bulletins import redacting
from flowcore.nifi.importing import import_nifi
from flowcore.settings import Settings
from flowcore.ssl_context import StandardSSLContextService
from processors import HandleHttpRequest, ListenHTTP
from processors.http_server._inbox import Held, Inbox
from processors.http_server._received import MAX_FLOWFILES_PER_REQUEST
from processors.http_server._server import ListenerConfig, ListenerServer
from processors.record_services.csv import CSVRecordSetWriter
from processors.record_services.json import JsonTreeReader
from repositories.repository_set import RepositorySet
from tests.processors.http_server._listening import listening
from tests.processors.http_server._packages import package_v3, sparse_package_v1
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
        "HTTP Headers for Attributes": "X-.*",
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
    assert event.details == "Remote DN=none, Issuer DN=none"
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
        second = httpx.post(run.url, content=b"second", timeout=10)
        time.sleep(0.3)
    assert (first.status_code, second.status_code) == (200, 503)
    assert second.content == b"Service Unavailable: not committed in time"  # not refused on arrival
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
        head = client.head(run.url)  # NiFi's doHead: what a NiFi sender may send
        assert head.status_code == 200
        assert head.headers["Accept-Encoding"] == "gzip"
        assert head.headers["Accept"].startswith("application/flowfile-v3,")
        assert head.headers["x-nifi-transfer-protocol-version"] == "3"
        assert client.post(run.url + "x", content=b"x").status_code == 404
        chunks = client.post(run.url, content=iter([b"a", b"b"]))
        assert chunks.status_code == 411


def test_a_full_inbox_answers_503_at_once() -> None:
    """Past Maximum Thread Pool Size requests held, the inbox refuses (the handler's 503)."""
    inbox = Inbox(2)
    held = [Held(b"", {}, "u", "none", 0, pieces=[]) for _ in range(3)]
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


def test_a_batch_run_does_not_wait_for_requests(tmp_path: Path) -> None:
    """Outside a continuous run the listener finds nothing waiting and the run ends."""
    flow = Flow("batch")
    listen = flow.add(ListenHTTP(listening_port=str(free_port())), name="listen")
    flow.auto_terminate(listen, "success")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("listen", "success") == 0


def test_a_nifi_export_names_nifis_class_and_imports_back() -> None:
    """ListenHTTP exports as NiFi's standard class with NiFi 2's property names and without
    flowcore's Max Request Body Size, and the export imports back."""
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
    assert exported["properties"]["Authorized Subject DN Pattern"] == "CN=.*"
    assert "Authorized DN Pattern" not in exported["properties"]
    assert "Max Request Body Size" not in exported["properties"]
    back = Flow.from_nifi(document)
    imported = back.resolved_processor(back.component("listen"))
    assert isinstance(imported, ListenHTTP)
    assert imported.configured["Authorized Subject DN Pattern"] == "CN=.*"


#: NiFi 1.x's internal names of the properties NiFi 2's migrateProperties renames.
_NIFI_1_NAMES = {
    "health-check-port": "Listening Port for Health Check Requests",
    "Authorized DN Pattern": "Authorized Subject DN Pattern",
    "authorized-issuer-dn-pattern": "Authorized Issuer DN Pattern",
    "multipart-request-max-size": "Multipart Request Max Size",
    "multipart-read-buffer-size": "Multipart Read Buffer Size",
    "client-authentication": "Client Authentication",
    "max-thread-pool-size": "Maximum Thread Pool Size",
    "record-reader": "Record Reader",
    "record-writer": "Record Writer",
    "HTTP Headers to receive as Attributes (Regex)": "HTTP Headers for Attributes",
}


def test_nifi_2_names_defaults_and_order() -> None:
    """The descriptors are NiFi 2's: its names, order, defaults and Client Authentication values,
    without Max Data to Receive per Second, with Request Header Maximum Size (8 KB)."""
    names = [d.name for d in ListenHTTP.property_descriptors]
    assert names == [
        "Base Path",
        "Listening Port",
        "Listening Port for Health Check Requests",
        "SSL Context Service",
        "HTTP Protocols",
        "Client Authentication",
        "Authorized Subject DN Pattern",
        "Authorized Issuer DN Pattern",
        "Max Unconfirmed Flowfile Time",
        "HTTP Headers for Attributes",
        "Request Header Maximum Size",
        "Return Code",
        "Multipart Request Max Size",
        "Multipart Read Buffer Size",
        "Maximum Thread Pool Size",
        "Record Reader",
        "Record Writer",
        "Max Request Body Size",
    ]
    assert all(d.display_name == d.name for d in ListenHTTP.property_descriptors)
    defaults = ListenHTTP(listening_port="1").effective_values()
    assert defaults["Request Header Maximum Size"] == "8 KB"
    assert defaults["Multipart Request Max Size"] == "1 MB"
    assert defaults["Multipart Read Buffer Size"] == "512 KB"
    assert defaults["Maximum Thread Pool Size"] == "200"
    auth = ListenHTTP.CLIENT_AUTHENTICATION
    assert [v.value for v in auth.allowable_values] == ["AUTO", "WANT", "REQUIRED", "NONE"]
    assert auth.default == "AUTO"
    assert ListenHTTP.MULTIPART_READ_BUFFER_SIZE is HandleHttpRequest.MULTIPART_READ_BUFFER_SIZE
    assert ListenHTTP.MULTIPART_REQUEST_MAX_SIZE is HandleHttpRequest.MULTIPART_REQUEST_MAX_SIZE
    assert ListenHTTP.REQUEST_HEADER_MAX_SIZE is HandleHttpRequest.REQUEST_HEADER_MAX_SIZE


def test_nifi_1_names_are_aliases_of_nifi_2_ones() -> None:
    """Each property NiFi 2 renamed is still set by its NiFi 1.x name, under the 2.x name."""
    for old, new in _NIFI_1_NAMES.items():
        value = "2" if "size" in old or "port" in old else "x"
        assert ListenHTTP.resolve_descriptor(ListenHTTP(), old) is not None, old
        configured = ListenHTTP(**{old: value}).configured
        assert dict(configured) == {new: value}, old


def test_a_nifi_1_flow_imports_renamed_names_and_leaves_the_rate_limit_out() -> None:
    """A NiFi 1.x ListenHTTP (1.x names, Max Data to Receive per Second) imports: the renamed
    properties take their 2.x names, the dropped one is left out with a note."""
    flow = Flow("old")
    listen = flow.add(ListenHTTP(listening_port="8011"), name="listen")
    flow.auto_terminate(listen, "success")
    document = flow.to_nifi()
    (exported,) = document["flowContents"]["processors"]
    exported["properties"].update(
        {
            "Authorized DN Pattern": "CN=.*",
            "HTTP Headers to receive as Attributes (Regex)": "X-.*",
            "max-thread-pool-size": "50",
            "multipart-request-max-size": "2 MB",
            "Max Data to Receive per Second": "1 MB",
        }
    )
    imported = import_nifi(document)
    processor = imported.flow.resolved_processor(imported.flow.component("listen"))
    assert isinstance(processor, ListenHTTP)
    assert processor.configured["Authorized Subject DN Pattern"] == "CN=.*"
    assert processor.configured["HTTP Headers for Attributes"] == "X-.*"
    assert processor.configured["Maximum Thread Pool Size"] == "50"
    assert processor.configured["Multipart Request Max Size"] == "2 MB"
    assert "Max Data to Receive per Second" not in processor.configured
    notes = [str(note) for note in imported.notes]
    assert any("Max Data to Receive per Second" in n and "gone in NiFi 2" in n for n in notes)


def test_max_data_to_receive_per_second_is_no_property_any_more() -> None:
    """Set in Python, the dropped rate limit makes the processor invalid (NiFi 2 has none)."""
    listen = ListenHTTP(listening_port="1", **{"Max Data to Receive per Second": "1 MB"})
    (problem,) = listen.validate()
    assert problem.subject == "Max Data to Receive per Second"
    assert "is not a supported property of ListenHTTP" in problem.explanation


def _raw_head(port: int, header: bytes) -> tuple[int, bytes]:
    """The status of a HEAD on the base path sent with *header* as one X-Big header."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        request = b"HEAD /contentListener HTTP/1.1\r\nHost: x\r\nX-Big: " + header + b"\r\n\r\n"
        connection.sendall(request)
        reply = b""
        while b"\r\n\r\n" not in reply:
            part = connection.recv(4096)
            if not part:
                break
            reply += part
    status_line, _, rest = reply.partition(b"\r\n")
    return int(status_line.split()[1]), rest


@pytest.mark.parametrize("limit", [1024, 8192])
def test_request_header_maximum_size_bounds_the_header_block(limit: int) -> None:
    """Request Header Maximum Size: a header block past it is refused 431 and the connection
    closed (Jetty's answer in NiFi); one within it is served."""
    inbox = Inbox(8)
    config = ListenerConfig(base_path="contentListener", max_body=10, wait_s=1, max_header=limit)
    server = ListenerServer("127.0.0.1", 0, config, inbox)
    try:
        within = _raw_head(server.port, b"x" * (limit - 100))
        past = _raw_head(server.port, b"x" * (limit + 1))
    finally:
        inbox.close()
        server.close()
    assert (within[0], past[0]) == (200, 431)
    assert b"Connection: close" in past[1]


def test_a_request_line_past_the_header_limit_is_414() -> None:
    """A request line longer than Request Header Maximum Size is 414 URI Too Long, as Jetty."""
    inbox = Inbox(8)
    config = ListenerConfig(base_path="contentListener", max_body=10, wait_s=1, max_header=256)
    server = ListenerServer("127.0.0.1", 0, config, inbox)
    try:
        with httpx.Client(timeout=10) as client:
            long = client.head(f"http://127.0.0.1:{server.port}/contentListener?q={'a' * 300}")
            short = client.head(f"http://127.0.0.1:{server.port}/contentListener")
    finally:
        inbox.close()
        server.close()
    assert (long.status_code, short.status_code) == (414, 200)


def test_request_header_maximum_size_reaches_the_listener(tmp_path: Path) -> None:
    """Set on ListenHTTP in a run, the limit refuses a 2 KB header with 431 and serves 1 KB."""
    with listening(tmp_path, **{"Request Header Maximum Size": "1.5 KB"}) as run:
        port = int(run.url.split(":")[2].split("/")[0])
        assert _raw_head(port, b"x" * 1024)[0] == 200
        assert _raw_head(port, b"x" * 2048)[0] == 431


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


def _form(size: int) -> tuple[bytes, str]:
    """A multipart/form-data body of one *size*-byte file part, and its Content-Type."""
    boundary = "flowcore-boundary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="f"; filename="a.bin"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    body += b"z" * (size - len(body) - len(boundary) - 8) + f"\r\n--{boundary}--\r\n".encode()
    assert len(body) == size
    return body, f"multipart/form-data; boundary={boundary}"


def test_a_multipart_body_past_its_max_size_is_refused_before_it_is_read() -> None:
    """Multipart Request Max Size: a multipart/form-data request declaring more gets 413 with
    NiFi's (Jetty's) message as soon as its headers are read, not one byte of its body taken;
    other bodies stay bounded by Max Request Body Size alone."""
    inbox = Inbox(8)
    config = ListenerConfig(
        base_path="contentListener", max_body=1 << 20, wait_s=1, max_multipart=1024
    )
    server = ListenerServer("127.0.0.1", 0, config, inbox)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
            connection.sendall(  # 10 MB declared, none sent: the answer comes anyway
                b"POST /contentListener HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data;"
                b" boundary=b\r\nContent-Length: 10000000\r\n\r\n"
            )
            reply = b""
            while not reply.endswith(b"(1024)"):
                part = connection.recv(4096)
                if not part:
                    break
                reply += part
    finally:
        inbox.close()
        server.close()
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ")
    assert b"Connection: close" in head
    assert body == b"Request exceeds maxRequestSize (1024)"
    assert inbox.waiting() == 0


def test_multipart_request_max_size_reaches_the_listener(tmp_path: Path) -> None:
    """Set on ListenHTTP in a run: a 2 KB form is refused 413, a 1 KB one and a 2 KB plain body
    land."""
    big, form_type = _form(2048)
    small, _ = _form(1000)
    limit = {"Multipart Request Max Size": "1 KB"}
    with listening(tmp_path, **limit) as run, httpx.Client(timeout=10) as client:
        refused = client.post(run.url, content=big, headers={"Content-Type": form_type})
        taken = client.post(run.url, content=small, headers={"Content-Type": form_type})
        plain = client.post(run.url, content=b"p" * 2048)
    assert (refused.status_code, taken.status_code, plain.status_code) == (413, 200, 200)
    assert refused.text == "Request exceeds maxRequestSize (1024)"
    assert run.result is not None
    assert run.result.count("listen", "success") == 2


def test_max_thread_pool_size_bounds() -> None:
    """NiFi's testMaxThreadPoolSizeTooLow/TooHigh/OkLowerBound/OkUpperBound: 8 to 1000."""
    from flowcore.testing import TestRunner
    from processors import ListenHTTP

    verdicts = {}
    for size in ("7", "8", "1000", "1001"):
        runner = TestRunner(ListenHTTP(**{"Listening Port": "8080", "Base Path": "basePath"}))
        runner.set_property("Maximum Thread Pool Size", size)
        verdicts[size] = runner.is_valid()
    assert verdicts == {"7": False, "8": True, "1000": True, "1001": False}


def test_gzip_body_accepted_options_and_trace_not_allowed(tmp_path: Path) -> None:
    """NiFi's testPostContentEncodingGzipAccepted (the FlowFile holds the inflated body),
    testOptionsNotAllowed and testTraceNotAllowed(OnNonBasePath): 405; a body that is no gzip
    is 400 naming it."""
    with listening(tmp_path, **{"Base Path": "basePath", "Return Code": "204"}) as run:
        with httpx.Client(timeout=10) as client:
            gzipped = client.post(
                run.url,
                content=gzip.compress(b"String"),
                headers={"Content-Encoding": "gzip"},
            )
            broken = client.post(run.url, content=b"not gzip", headers={"Content-Encoding": "gzip"})
            options = client.request("OPTIONS", run.url)
            trace = client.request("TRACE", run.url)
            trace_elsewhere = client.request("TRACE", run.url.rsplit("/", 1)[0] + "/randomPath")
        deadline = time.monotonic() + 10
        while not run.written() and time.monotonic() < deadline:
            time.sleep(0.05)
    assert gzipped.status_code == 204
    assert broken.status_code == 400
    assert "gzip" in broken.text
    assert (options.status_code, trace.status_code, trace_elsewhere.status_code) == (405,) * 3
    assert list(run.written().values()) == [b"String"]


def _gzip_answers(
    bodies: list[bytes], max_body: int = 100, content_type: str = "application/octet-stream"
) -> tuple[list[int], list[bytes]]:
    """The status of each gzip-encoded POST (of *content_type*) to an in-process listener,
    and the bodies it held (answered 200 by a thread standing for the processor's commit)."""
    inbox = Inbox(8)
    config = ListenerConfig(base_path="contentListener", max_body=max_body, wait_s=10)
    server = ListenerServer("127.0.0.1", 0, config, inbox)
    held: list[bytes] = []
    stop = threading.Event()

    def commit() -> None:
        while not stop.is_set():
            taken = inbox.take(8)
            held.extend(item.body for item in taken)
            inbox.answer([item.key for item in taken], 200)
            time.sleep(0.01)

    committer = threading.Thread(target=commit, daemon=True)
    committer.start()
    try:
        with httpx.Client(timeout=10) as client:
            url = f"http://127.0.0.1:{server.port}/contentListener"
            headers = {"Content-Encoding": "gzip", "Content-Type": content_type}
            codes = [client.post(url, content=b, headers=headers).status_code for b in bodies]
    finally:
        stop.set()
        committer.join()
        inbox.close()
        server.close()
    return codes, held


def test_a_gzip_body_of_several_members_inflates_to_all_of_them() -> None:
    """Concatenated gzip members (cat a.gz b.gz) inflate to every member, as Java's
    GZIPInputStream reads them; bytes after the last member that open none are ignored."""
    two = gzip.compress(b"first ") + gzip.compress(b"second")
    codes, held = _gzip_answers([two, two + b"\x00trailing"])
    assert codes == [200, 200]
    assert held == [b"first second", b"first second"]


def test_a_truncated_gzip_body_is_400_not_partial_content() -> None:
    """A gzip stream cut short (no end of member) is refused 400, not taken as partial content;
    so is a second member cut short."""
    whole = gzip.compress(b"some content " * 20)
    codes, held = _gzip_answers([whole[:-10], whole + whole[:-10], b""], max_body=1000)
    assert codes == [400, 400, 400]
    assert held == []


def test_gzip_members_together_past_the_limit_are_413() -> None:
    """Max Request Body Size bounds the inflated members together, not each one."""
    member = gzip.compress(b"x" * 60)
    codes, held = _gzip_answers([member, member + member], max_body=100)
    assert codes == [200, 413]
    assert held == [b"x" * 60]


def test_packages_past_flowcores_bounds_are_refused_and_the_server_goes_on() -> None:
    """Review findings: a gzipped 10 KB Tar v1 package whose content entry is sparse
    (declaring 64 MiB) is 500, unread; a v3 package of one FlowFile more than
    MAX_FLOWFILES_PER_REQUEST is 413; the listener then takes the next package."""
    sparse = gzip.compress(sparse_package_v1(64 << 20))
    codes, held = _gzip_answers([sparse], max_body=16 << 20, content_type="application/flowfile")
    assert (codes, held) == ([500], [])
    entry = package_v3(({"filename": "f"}, b""))
    many = gzip.compress(entry * (MAX_FLOWFILES_PER_REQUEST + 1))
    codes, held = _gzip_answers(
        [many, gzip.compress(entry)], max_body=1 << 20, content_type="application/flowfile-v3"
    )
    assert codes == [413, 200]
    assert held == [entry]


def test_a_flowfile_v3_package_lands_as_its_flowfiles_answered_once(tmp_path: Path) -> None:
    """A NiFi sender's application/flowfile-v3 body: each packaged FlowFile lands with its
    attributes (PutFile names it by its filename), RECEIVEd with ``urn:nifi:<uuid>``."""
    body = package_v3(
        ({"uuid": "id-1", "filename": "a.txt", "origin": "nifi"}, b"alpha"),
        ({"uuid": "id-2", "filename": "b.txt"}, b"beta"),
    )
    with listening(tmp_path) as run:
        response = httpx.post(
            run.url,
            content=gzip.compress(body),
            headers={  # NiFi's testFlowFilePackageRestoresFilenames: the packaged names win
                "Content-Type": "application/flowfile-v3",
                "flowfile-gzipped": "true",
                "filename": "data.flowfilev3",
            },
            timeout=10,
        )
        assert response.status_code == 200
    assert run.written() == {"a.txt": b"alpha", "b.txt": b"beta"}
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        events = repos.provenance.search(event_type="RECEIVE")
    finally:
        repos.close()
    assert sorted(e.source_system_flowfile_identifier for e in events) == [
        "urn:nifi:id-1",
        "urn:nifi:id-2",
    ]
    first = next(e for e in events if e.attributes.get("filename") == "a.txt")
    assert first.attributes["origin"] == "nifi"
    assert first.attributes["restlistener.request.uri"] == "/contentListener"


def test_post_requests_received_with_record_reader(tmp_path: Path) -> None:
    """NiFi's testPOSTRequestsReceivedWithRecordReader and
    testReturn400WhenInvalidPOSTRequestSentWithRecordReader: records rewritten by the Record
    Writer; a body that does not parse gets 400 and lands nothing."""
    services = [JsonTreeReader("reader"), CSVRecordSetWriter("writer")]
    properties = {"Record Reader": "reader", "Record Writer": "writer"}
    with listening(tmp_path, services=services, **properties) as run:
        with httpx.Client(timeout=10) as client:
            bad = client.post(run.url, content=b'[{"id": 1}, {"id": ')
            good = client.post(run.url, content=b'[{"id":1,"name":"rec1"},{"id":2,"name":"rec2"}]')
        assert (bad.status_code, good.status_code) == (400, 200)
        assert b"Could not process record" in bad.content
    assert list(run.written().values()) == [b"id,name\n1,rec1\n2,rec2\n"]


def test_multipart_form_data_request(tmp_path: Path) -> None:
    """NiFi's testMultipartFormDataRequest: one FlowFile per part, with http.multipart.*."""
    files = {"file1": ("my-file-text.txt", b"Hello World", "text/plain")}
    with listening(tmp_path, **{"Multipart Read Buffer Size": "10 b"}) as run:
        response = httpx.post(run.url, data={"p1": "v1", "p2": "v2"}, files=files, timeout=10)
        assert response.status_code == 200
    assert sorted(run.written().values()) == [b"Hello World", b"v1", b"v2"]
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        events = repos.provenance.search(event_type="RECEIVE")
    finally:
        repos.close()
    by_name = {e.attributes["http.multipart.name"]: e.attributes for e in events}
    assert sorted(by_name) == ["file1", "p1", "p2"]
    assert by_name["file1"]["http.multipart.filename"] == "my-file-text.txt"
    assert {a["http.multipart.fragments.total.number"] for a in by_name.values()} == {"3"}


def test_the_filename_header_names_the_flowfile(tmp_path: Path) -> None:
    """NiFi's servlet: a ``filename`` request header is the FlowFile's filename."""
    with listening(tmp_path) as run:
        response = httpx.post(run.url, content=b"named", headers={"filename": "n.txt"}, timeout=10)
        assert response.status_code == 200
    assert run.written() == {"n.txt": b"named"}


def test_an_https_record_listener_exports_and_imports_back_with_its_services() -> None:
    """ListenHTTP naming an SSL context service and record services: the NiFi export refers
    to NiFi's service classes by id, and the import names the same services again."""
    flow = Flow("secure-records")
    flow.add_service(StandardSSLContextService("tls", keystore_filename="/no/server.pem"))
    flow.add_service(JsonTreeReader("reader"))
    flow.add_service(CSVRecordSetWriter("writer"))
    names = {"SSL Context Service": "tls", "Record Reader": "reader", "Record Writer": "writer"}
    listen = flow.add(ListenHTTP(listening_port="8011", **names), name="listen")
    flow.auto_terminate(listen, "success")
    document = flow.to_nifi()
    types = {s["type"] for s in document["flowContents"]["controllerServices"]}
    assert "org.apache.nifi.ssl.StandardSSLContextService" in types
    back = Flow.from_nifi(document)
    imported = back.resolved_processor(back.component("listen"))
    assert {k: imported.configured[k] for k in names} == names


def test_a_connection_thread_masks_the_secrets_of_the_processor_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What a request's thread logs loses the secrets of the processor that started the server
    (a thread starts with an empty context: the server carries the processor's)."""
    secret = "pw-listen-7c1e0"

    class Logging(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            logging.getLogger("tests.listen.secrets").warning("connecting with %s", secret)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    config = ListenerConfig(base_path="contentListener", max_body=1024, wait_s=1.0)
    with redacting(lambda: [secret]):
        server = ListenerServer("127.0.0.1", 0, config, Inbox(1), handler_class=Logging)
    try:
        with caplog.at_level(logging.WARNING, logger="tests.listen.secrets"):
            assert httpx.get(f"http://127.0.0.1:{server.port}/").status_code == 204
    finally:
        server.close()
    assert "connecting with ********" in caplog.text
    assert secret not in caplog.text
