"""Tests for InvokeHTTP against real HTTP(S) servers on loopback, started by the tests."""

from __future__ import annotations

import datetime
import gzip
import http.server
import ipaddress
import json
import pickle
import socket
import ssl
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.errors import ConfigurationError
from flowcore.nifi.migrations import known_name
from flowcore.parameters import Parameter
from flowcore.settings import Settings
from flowcore.ssl_context import StandardSSLContextService
from flowcore.testing import TestRunner
from processors import GenerateFlowFile, InvokeHTTP, PutFile

LARGE = 8 * 1024 * 1024  # bytes of the streamed response
HANG = threading.Event()  # set at teardown: releases the handler that never answers


class _Handler(http.server.BaseHTTPRequestHandler):
    """Routes by path: /echo, /status/N, /redirect, /hang, /large, /cookie."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in two writes: no delayed-ACK stalls

    def log_message(self, *args: object) -> None:
        del args

    def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _handle(self) -> None:
        body = self._body()
        path = self.path
        if path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            self._reply(code, f"status {code} body".encode(), {"Content-Type": "text/plain"})
        elif path == "/redirect":
            self._reply(302, b"moved", {"Location": "/echo?from=redirect"})
        elif path == "/redirect307":  # the same method and body again, at the new place
            self._reply(307, b"moved", {"Location": "/echo?from=307"})
        elif path == "/hang":
            HANG.wait(10)
        elif path.startswith("/large"):
            size = int(path.partition("?bytes=")[2] or LARGE)
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            block = bytes(range(256)) * 256  # 64 KiB
            for _ in range(size // len(block)):
                self.wfile.write(block)
        else:
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            echo = {
                "method": self.command,
                "path": path,
                "headers": dict(self.headers.items()),
                "body": body.decode("utf-8", "replace"),
                "chunked": self.headers.get("Transfer-Encoding") == "chunked",
            }
            self._reply(
                200,
                json.dumps(echo).encode(),
                {"Content-Type": "application/json; charset=utf-8", "X-Echo": "yes"},
            )

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _handle


def _serve(context: ssl.SSLContext | None = None) -> tuple[http.server.HTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    scheme = "http"
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"{scheme}://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """A plain HTTP server on loopback for the module."""
    HANG.clear()
    server, url = _serve()
    yield url
    HANG.set()
    server.shutdown()


def _runner(url: str, **properties: str) -> TestRunner:
    runner = TestRunner(InvokeHTTP())
    runner.set_property("HTTP URL", url)
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner


def _echo(runner: TestRunner) -> dict:
    return json.loads(runner.flowfiles_for("Response")[0].content)


# --- methods, URLs, headers ---------------------------------------------------------------


def test_get_routes_original_and_response_with_nifi_attributes(base: str) -> None:
    """A 200 to GET: request to Original, body to Response, NiFi's attributes on both."""
    runner = _runner(f"{base}/echo")
    runner.enqueue(b"ignored", {"filename": "a.txt"})
    runner.run()
    runner.assert_transfer_count("Original", 1)
    runner.assert_transfer_count("Response", 1)
    original = runner.flowfiles_for("Original")[0]
    response = runner.flowfiles_for("Response")[0]
    for flowfile in (original, response):
        flowfile.assert_attribute_equals("invokehttp.status.code", "200")
        flowfile.assert_attribute_equals("invokehttp.status.message", "OK")
        flowfile.assert_attribute_equals("invokehttp.request.url", f"{base}/echo")
        flowfile.assert_attribute_equals("invokehttp.response.url", f"{base}/echo")
        flowfile.assert_attribute_exists("invokehttp.tx.id")
        flowfile.assert_attribute_exists("invokehttp.request.duration")
    response.assert_attribute_equals("X-Echo", "yes")
    response.assert_attribute_equals("mime.type", "application/json; charset=utf-8")
    original.assert_content_equals("ignored")
    echo = _echo(runner)
    assert echo["method"] == "GET"
    assert echo["body"] == ""
    assert "Date" in echo["headers"]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_body_methods_send_the_content(base: str, method: str) -> None:
    """POST, PUT and PATCH send the FlowFile's content with its mime.type as Content-Type."""
    runner = _runner(f"{base}/echo", **{"HTTP Method": method})
    runner.enqueue(b'{"a": 1}', {"mime.type": "application/json"})
    runner.run()
    echo = _echo(runner)
    assert echo["method"] == method
    assert echo["body"] == '{"a": 1}'
    assert echo["headers"]["Content-Type"] == "application/json"
    assert echo["headers"]["Content-Length"] == "8"
    events = [e.event_type.value for e in runner.provenance_events]
    assert "SEND" in events
    assert "FETCH" in events


def test_delete_sends_no_body_and_no_send_event(base: str) -> None:
    """DELETE goes without a body and without a SEND event (NiFi sends none without a body)."""
    runner = _runner(f"{base}/echo", **{"HTTP Method": "DELETE"})
    runner.enqueue(b"content")
    runner.run()
    echo = _echo(runner)
    assert echo["method"] == "DELETE"
    assert echo["body"] == ""
    assert "SEND" not in [e.event_type.value for e in runner.provenance_events]


def test_url_and_method_take_expression_language(base: str) -> None:
    """HTTP URL and HTTP Method are evaluated against each FlowFile's attributes."""
    runner = _runner(f"{base}/echo/${{id}}?q=${{q:urlEncode()}}", **{"HTTP Method": "${m}"})
    runner.enqueue(b"x", {"id": "42", "q": "a b", "m": "put"})
    runner.run()
    echo = _echo(runner)
    assert echo["path"] == "/echo/42?q=a+b"
    assert echo["method"] == "PUT"


def test_dynamic_properties_and_attributes_to_send_become_headers(base: str) -> None:
    """Dynamic properties (EL) and attributes matching the pattern are request headers."""
    runner = _runner(
        f"{base}/echo",
        **{
            "Request Header Attributes Pattern": "x-.*",
            "X-Custom": "${who}",
            "Request User-Agent": "flowcore-test",
            "Request Date Header Enabled": "False",
        },
    )
    runner.enqueue(b"", {"who": "me", "x-trace": "t1", "other": "no", "x-skipped": "y"})
    runner.run()
    headers = _echo(runner)["headers"]
    assert headers["X-Custom"] == "me"
    assert headers["x-trace"] == "t1"
    assert "other" not in headers
    assert headers["User-Agent"] == "flowcore-test"
    assert "Date" not in headers


def test_authorization_header_is_sensitive(base: str) -> None:
    """An Authorization dynamic property is sent, masked in repr, and never in attributes."""
    processor = InvokeHTTP(http_url=f"{base}/echo", **{"Authorization": "Bearer s3cret"})
    assert "s3cret" not in repr(processor)
    runner = TestRunner(processor)
    runner.enqueue(b"")
    runner.run()
    echo = _echo(runner)
    assert echo["headers"]["Authorization"] == "Bearer s3cret"
    out = runner.flowfiles_for("Original")[0]
    assert all("s3cret" not in v for v in out.attributes.values())
    assert all("s3cret" not in str(e) for e in runner.provenance_events)


def test_basic_authentication_and_url_password_are_not_shown(base: str) -> None:
    """Request Username/Password send Basic auth; a URL's password is masked in attributes."""
    runner = _runner(
        f"http://u:pw@127.0.0.1:{base.rsplit(':', 1)[1]}/echo",
        **{"Request Username": "user", "Request Password": "pass"},
    )
    runner.enqueue(b"")
    runner.run()
    assert _echo(runner)["headers"]["Authorization"] == "Basic dXNlcjpwYXNz"
    url = runner.flowfiles_for("Original")[0].attributes["invokehttp.request.url"]
    assert "pw" not in url


def test_gzip_and_chunked_request_bodies(base: str) -> None:
    """Request Content-Encoding GZIP compresses; chunked transfer sends no Content-Length."""
    runner = _runner(
        f"{base}/echo",
        **{
            "HTTP Method": "POST",
            "Request Content-Encoding": "GZIP",
            "Request Chunked Transfer-Encoding Enabled": "true",
        },
    )
    runner.enqueue(b"abc" * 1000)
    runner.run()
    echo = _echo(runner)
    assert echo["body"] == "abc" * 1000
    assert echo["chunked"]
    assert echo["headers"]["Content-Encoding"] == "gzip"


def test_proxy_properties_send_through_the_proxy(base: str) -> None:
    """NiFi 1.x's Proxy Host and Port send the request, absolute URI and all, to the proxy."""
    port = base.rsplit(":", 1)[1]
    runner = _runner(
        "http://upstream.invalid/echo", **{"Proxy Host": "127.0.0.1", "Proxy Port": port}
    )
    runner.enqueue(b"")
    runner.run()
    assert _echo(runner)["path"] == "http://upstream.invalid/echo"


def test_form_data_is_reported_as_not_supported(base: str) -> None:
    """post:form: properties make the processor invalid with a message saying why."""
    runner = _runner(f"{base}/echo", **{"HTTP Method": "POST", "post:form:field": "x"})
    runner.assert_not_valid()
    assert any("multipart" in str(p) for p in runner.validation_problems())


# --- status classes, redirects, timeouts ------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "relationship", "penalized"),
    [
        (500, "Retry", True),
        (503, "Retry", True),
        (404, "No Retry", False),
        (400, "No Retry", False),
    ],
)
def test_status_classes_route_as_nifi(
    base: str, code: int, relationship: str, penalized: bool
) -> None:
    """5xx goes to Retry penalized, 4xx to No Retry, each with the body in an attribute."""
    runner = _runner(f"{base}/status/{code}")
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred(relationship, 1)
    out = runner.flowfiles_for(relationship)[0]
    out.assert_attribute_equals("invokehttp.status.code", str(code))
    out.assert_attribute_equals("invokehttp.response.body", f"status {code} body")
    assert out.is_penalized(runner.now()) == penalized


def test_no_retry_penalized_when_asked(base: str) -> None:
    """Request Failure Penalization Enabled penalizes No Retry FlowFiles."""
    runner = _runner(f"{base}/status/404", **{"Request Failure Penalization Enabled": "true"})
    runner.enqueue(b"")
    runner.run()
    assert runner.flowfiles_for("No Retry")[0].is_penalized(runner.now())


def test_redirects_followed_or_not(base: str) -> None:
    """Redirects are followed by default (response URL after them); off, a 302 is No Retry."""
    runner = _runner(f"{base}/redirect")
    runner.enqueue(b"")
    runner.run()
    response = runner.flowfiles_for("Response")[0]
    response.assert_attribute_equals("invokehttp.response.url", f"{base}/echo?from=redirect")
    off = _runner(f"{base}/redirect", **{"Response Redirects Enabled": "False"})
    off.enqueue(b"")
    off.run()
    off.assert_all_flowfiles_transferred("No Retry", 1)
    off.flowfiles_for("No Retry")[0].assert_attribute_equals("invokehttp.status.code", "302")


def test_a_body_is_sent_again_after_a_307_redirect(base: str) -> None:
    """A 307 repeats the POST with its body (httpx resends it: the body can be walked again)."""
    runner = _runner(f"{base}/redirect307", **{"HTTP Method": "POST"})
    runner.enqueue(b"hello again")
    runner.run()
    runner.assert_transfer_count("Response", 1)
    echo = _echo(runner)
    assert (echo["method"], echo["path"], echo["body"]) == ("POST", "/echo?from=307", "hello again")


def test_server_that_never_answers_fails_within_the_timeout(base: str) -> None:
    """A read that never completes goes to Failure, penalized, once Socket Read Timeout ends."""
    runner = _runner(f"{base}/hang", **{"Socket Read Timeout": "300 ms"})
    runner.enqueue(b"")
    started = time.monotonic()
    runner.run()
    assert time.monotonic() - started < 3
    runner.assert_all_flowfiles_transferred("Failure", 1)
    out = runner.flowfiles_for("Failure")[0]
    out.assert_attribute_equals("invokehttp.java.exception.class", "httpx.ReadTimeout")
    out.assert_attribute_exists("invokehttp.java.exception.message")
    assert out.is_penalized(runner.now())


def test_refused_connection_goes_to_failure() -> None:
    """Nothing listening: Failure with the connection error's class."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    runner = _runner(f"http://127.0.0.1:{port}/", **{"Connection Timeout": "1 sec"})
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("Failure", 1)
    cls = runner.flowfiles_for("Failure")[0].attributes["invokehttp.java.exception.class"]
    assert cls == "httpx.ConnectError"


# --- response bodies ----------------------------------------------------------------------


def test_large_response_streams_into_content(base: str) -> None:
    """An 8 MiB body lands whole in the Response FlowFile, streamed (FETCH event)."""
    runner = _runner(f"{base}/large")
    runner.enqueue(b"")
    runner.run()
    response = runner.flowfiles_for("Response")[0]
    content = response.content
    assert len(content) == LARGE
    assert content[:512] == bytes(range(256)) * 2
    fetch = [e for e in runner.provenance_events if e.event_type.value == "FETCH"]
    assert fetch[0].transit_uri == f"{base}/large"


def test_put_response_body_in_attribute(base: str) -> None:
    """Response Body Attribute Name puts the body (truncated) in the request's attribute only."""
    runner = _runner(
        f"{base}/status/200",
        **{"Response Body Attribute Name": "body", "Response Body Attribute Size": "6"},
    )
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("Original", 1)
    runner.flowfiles_for("Original")[0].assert_attribute_equals("body", "status")
    assert "ATTRIBUTES_MODIFIED" in [e.event_type.value for e in runner.provenance_events]


def test_always_output_response_for_errors(base: str) -> None:
    """Response Generation Required sends a Response FlowFile for a 404 as well."""
    runner = _runner(f"{base}/status/404", **{"Response Generation Required": "true"})
    runner.enqueue(b"")
    runner.run()
    runner.assert_transfer_count("No Retry", 1)
    runner.assert_transfer_count("Response", 1)
    runner.flowfiles_for("Response")[0].assert_content_equals("status 404 body")
    runner.flowfiles_for("No Retry")[0].assert_attribute_equals(
        "invokehttp.response.body", "status 404 body"
    )


def test_response_headers_on_request_with_prefix(base: str) -> None:
    """Response Header Request Attributes Enabled copies headers onto the request FlowFile."""
    runner = _runner(
        f"{base}/echo",
        **{
            "Response Header Request Attributes Enabled": "true",
            "Response Header Request Attributes Prefix": "resp.",
        },
    )
    runner.enqueue(b"")
    runner.run()
    runner.flowfiles_for("Original")[0].assert_attribute_equals("resp.X-Echo", "yes")


def test_many_flowfiles_run_concurrently_in_order(base: str) -> None:
    """Twenty FlowFiles in one trigger, eight at a time, routed in the order taken."""
    runner = _runner(f"{base}/echo/${{n}}", **{"Concurrent Requests": "8"})
    for n in range(20):
        runner.enqueue(b"", {"n": str(n)})
    runner.run()
    runner.assert_transfer_count("Original", 20)
    paths = [json.loads(f.content)["path"] for f in runner.flowfiles_for("Response")]
    assert paths == [f"/echo/{n}" for n in range(20)]


def test_processor_pickles_after_running(base: str) -> None:
    """The task's client stays out of pickles: Spark can ship a running processor."""
    processor = InvokeHTTP(http_url=f"{base}/echo")
    runner = TestRunner(processor)
    runner.enqueue(b"")
    runner.run(stop_on_finish=False)
    clone = pickle.loads(pickle.dumps(processor))
    assert clone.same_configuration(processor)
    runner.stop()


def test_nifi_1x_names_migrate() -> None:
    """NiFi 1.x's names (Remote URL, Follow Redirects, ...) find the 2.x properties."""
    declares = {d.name for d in InvokeHTTP().descriptors()}.__contains__
    assert known_name("InvokeHTTP", "Remote URL", declares) == "HTTP URL"
    assert known_name("InvokeHTTP", "Follow Redirects", declares) == "Response Redirects Enabled"
    assert (
        known_name("InvokeHTTP", "Put Response Body In Attribute", declares)
        == "Response Body Attribute Name"
    )
    assert known_name("InvokeHTTP", "send-message-body", declares) == "Request Body Enabled"
    assert known_name("InvokeHTTP", "Attributes to Send", declares) == (
        "Request Header Attributes Pattern"
    )


# --- TLS ------------------------------------------------------------------------------------


def _certificate(
    directory: Path,
) -> tuple[Path, Path, ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "flowcore-test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = directory / "server.pem"
    key_path = directory / "server.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path, key, certificate


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """An HTTPS server with a self-signed certificate; its URL, cert and a PKCS12 truststore."""
    directory = tmp_path_factory.mktemp("tls")
    cert_path, key_path, key, certificate = _certificate(directory)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    p12 = directory / "trust.p12"
    p12.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"trust",
            key,
            certificate,
            None,
            serialization.BestAvailableEncryption(b"changeit"),
        )
    )
    server, url = _serve(context)
    yield url, cert_path, p12
    server.shutdown()


def test_tls_with_pem_truststore(tls: tuple[str, Path, Path]) -> None:
    """A PEM truststore holding the server's self-signed certificate lets the call through."""
    url, cert, _ = tls
    runner = _runner(f"{url}/echo", **{"SSL Context Service": "tls"})
    runner.add_service(StandardSSLContextService("tls", truststore_filename=str(cert)))
    runner.enqueue(b"")
    runner.run()
    runner.assert_transfer_count("Original", 1)
    response = runner.flowfiles_for("Response")[0]
    response.assert_attribute_equals("invokehttp.remote.dn", "CN=flowcore-test")


def test_tls_with_pkcs12_truststore(tls: tuple[str, Path, Path]) -> None:
    """A PKCS12 truststore (password-protected) works the same."""
    url, _, p12 = tls
    service = StandardSSLContextService(
        "tls", truststore_filename=str(p12), truststore_password="changeit"
    )
    runner = _runner(f"{url}/echo", **{"SSL Context Service": "tls"})
    runner.add_service(service)
    runner.enqueue(b"")
    runner.run()
    runner.assert_transfer_count("Original", 1)


def test_tls_without_trust_fails(tls: tuple[str, Path, Path]) -> None:
    """Without the service the self-signed certificate is refused: Failure, not a crash."""
    url, _, _ = tls
    runner = _runner(f"{url}/echo")
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("Failure", 1)


def test_jks_keystore_is_refused_in_one_line(tmp_path: Path) -> None:
    """A JKS store is refused with one line naming keytool's conversion to PKCS12."""
    jks = tmp_path / "keystore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\x00" * 60)
    with pytest.raises(ConfigurationError) as caught:
        StandardSSLContextService(
            "tls", keystore_filename=str(jks), keystore_password="x", keystore_type="JKS"
        )
    message = str(caught.value)
    assert "\n" not in message
    assert "keytool -importkeystore" in message
    assert "-deststoretype PKCS12" in message


# --- flows ------------------------------------------------------------------------------------


def test_flow_run_with_the_direct_runner(base: str, tmp_path: Path) -> None:
    """GenerateFlowFile -> InvokeHTTP (POST) -> PutFile on the direct runner."""
    flow = Flow("http")
    gen = flow.add(GenerateFlowFile(custom_text="hello", batch_size=3), name="gen")
    call = flow.add(
        InvokeHTTP(http_url=f"{base}/echo", http_method="POST", request_content_type="text/plain"),
        name="call",
    )
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"), name="put"
    )
    flow.connect(gen, call)
    flow.connect(call, put, "Response")
    flow.auto_terminate(call, ["Original", "Retry", "No Retry", "Failure"])
    flow.auto_terminate(put, ["success", "failure"])
    settings = Settings(sync=False, parallelism=1, unbounded_source_batches=1)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("call", "Response") == 3
    written = list((tmp_path / "out").iterdir())
    assert written
    assert json.loads(written[0].read_text())["body"] == "hello"


def _nifi_flow(url: str, truststore: Path) -> dict:
    """A NiFi 1.x download: GenerateFlowFile -> InvokeHTTP (1.x names, an SSL service) -> funnel."""
    bundle = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar", "version": "1.23.2"}

    def processor(identifier: str, kind: str, properties: dict, terminated: list) -> dict:
        return {
            "identifier": identifier,
            "name": identifier,
            "type": f"org.apache.nifi.processors.standard.{kind}",
            "bundle": bundle,
            "properties": properties,
            "propertyDescriptors": {},
            "schedulingPeriod": "0 sec",
            "schedulingStrategy": "TIMER_DRIVEN",
            "concurrentlySchedulableTaskCount": 1,
            "autoTerminatedRelationships": terminated,
            "scheduledState": "ENABLED",
            "componentType": "PROCESSOR",
            "groupIdentifier": "top",
        }

    def link(identifier: str, source: str, target: tuple[str, str], relationships: list) -> dict:
        return {
            "identifier": identifier,
            "name": "",
            "source": {"id": source, "type": "PROCESSOR", "groupId": "top"},
            "destination": {"id": target[0], "type": target[1], "groupId": "top"},
            "selectedRelationships": relationships,
            "backPressureObjectThreshold": 10000,
            "backPressureDataSizeThreshold": "1 GB",
            "flowFileExpiration": "0 sec",
            "prioritizers": [],
            "groupIdentifier": "top",
            "componentType": "CONNECTION",
        }

    gen = processor("gen", "GenerateFlowFile", {"Custom Text": "ping", "Batch Size": "2"}, [])
    call = processor(
        "call",
        "InvokeHTTP",
        {
            "HTTP Method": "POST",
            "Remote URL": f"{url}/echo",
            "Follow Redirects": "True",
            "Content-Type": "text/plain",
            "SSL Context Service": "ssl-1",
            "X-Flow": "nifi",
        },
        ["Original", "Retry", "No Retry", "Failure"],
    )
    ssl_service = {
        "identifier": "ssl-1",
        "name": "TLS",
        "type": "org.apache.nifi.ssl.StandardSSLContextService",
        "bundle": {**bundle, "artifact": "nifi-ssl-context-service-nar"},
        "properties": {
            "Truststore Filename": str(truststore),
            "Truststore Type": "PKCS12",
            "Truststore Password": "#{trust_pass}",
            "SSL Protocol": "TLS",
        },
        "propertyDescriptors": {},
        "componentType": "CONTROLLER_SERVICE",
        "groupIdentifier": "top",
    }
    root = {
        "identifier": "top",
        "name": "Top",
        "componentType": "PROCESS_GROUP",
        "processors": [gen, call],
        "funnels": [{"identifier": "out", "componentType": "FUNNEL", "groupIdentifier": "top"}],
        "connections": [
            link("c1", "gen", ("call", "PROCESSOR"), ["success"]),
            link("c2", "call", ("out", "FUNNEL"), ["Response"]),
        ],
        "controllerServices": [ssl_service],
    }
    return {"flowContents": root, "externalControllerServices": {}, "parameterContexts": {},
            "flowEncodingVersion": "1.0"}  # fmt: skip


def test_nifi_flow_with_invoke_http_and_ssl_service_imports_and_runs(
    tls: tuple[str, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A NiFi 1.x flow (Remote URL, an SSL context service over PKCS12 whose password is a
    sensitive parameter) loads and calls HTTPS; the password never travels in a pickle."""
    url, _, p12 = tls
    monkeypatch.setenv("FLOWCORE_TEST_TRUST_PASS", "changeit")
    secret = Parameter("trust_pass", sensitive=True, value_from_env="FLOWCORE_TEST_TRUST_PASS")
    flow = Flow.from_nifi(_nifi_flow(url, p12), parameters={"trust_pass": secret})
    (service,) = flow.services.values()
    assert isinstance(service, StandardSSLContextService)
    assert "changeit" not in repr(service)
    assert b"changeit" not in pickle.dumps(service)
    settings = Settings(sync=False, parallelism=1, unbounded_source_batches=1)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("call", "Response") == 2
    assert result.count("call", "Original") == 2
    exported = json.dumps(flow.to_nifi())
    assert "changeit" not in exported
    assert "StandardSSLContextService" in exported
    assert "org.apache.nifi.processors.standard.InvokeHTTP" in exported


def test_ssl_service_does_not_make_the_stage_serial(tmp_path: Path) -> None:
    """An SSL context service holds no shared state: InvokeHTTP's stage keeps parallel tasks."""
    cert = tmp_path / "ca.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    flow = Flow("tls")
    flow.add_service(StandardSSLContextService("tls", truststore_filename=str(cert)))
    gen = flow.add(GenerateFlowFile(), name="gen")
    call = flow.add(
        InvokeHTTP(http_url="https://127.0.0.1:1/", ssl_context_service="tls"), name="call"
    )
    flow.connect(gen, call)
    flow.auto_terminate(call, ["Original", "Response", "Retry", "No Retry", "Failure"])
    assert "serial" not in flow.explain()


def test_large_response_memory_stays_bounded_in_a_flow(base: str, tmp_path: Path) -> None:
    """A 48 MiB response goes to the content repository with Python's peak memory under 8 MiB."""
    size = 48 * 1024 * 1024
    flow = Flow("large")
    gen = flow.add(GenerateFlowFile(), name="gen")
    call = flow.add(InvokeHTTP(http_url=f"{base}/large?bytes={size}"), name="call")
    flow.connect(gen, call)
    flow.auto_terminate(call, ["Original", "Response", "Retry", "No Retry", "Failure"])
    settings = Settings(sync=False, parallelism=1, unbounded_source_batches=1)
    tracemalloc.start()
    try:
        result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.count("call", "Response") == 1
    assert result.transfers["call"]["Response"][1] == size
    assert peak < 8 * 1024 * 1024


def test_an_error_message_naming_a_url_shows_no_password() -> None:
    """What an exception says (httpx names the URL) reaches attributes and logs without the
    password of any URL in it."""
    from processors.invoke_http import redact_text

    said = "Invalid URL 'http://bob:s3cr3t@host:80/x' (also https://a:b@c/d, http://plain/x)"
    assert redact_text(said) == (
        "Invalid URL 'http://bob:***@host:80/x' (also https://a:***@c/d, http://plain/x)"
    )
