"""Tests for HTTPS on ListenHTTP and HandleHttpRequest: real TLS on loopback, certificates
made by the test (a CA, the server's, a client's and a stranger's)."""

from __future__ import annotations

import contextlib
import re
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509

from flowcore.ssl_context import StandardSSLContextService
from flowcore.testing import TestRunner
from processors import HandleHttpRequest, ListenHTTP
from processors.http_server import StandardHttpContextMap
from processors.http_server._inbox import Held, Inbox
from processors.http_server._request_server import ContainerQueue, RequestConfig, RequestServer
from processors.http_server._server import BoundedHeadersHandler, ListenerConfig, ListenerServer
from processors.http_server._tls import principal, server_context
from repositories.repository_set import RepositorySet
from tests.processors.http_server._certificates import Pki, make_pki
from tests.processors.http_server._listening import listening
from tests.processors.http_server._serving import free_port

CLIENT_DN = "CN=client, O=Flowcore, C=US"
CA_DN = "CN=Test CA, O=Flowcore, C=US"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """The certificates every test here uses, made once."""
    return make_pki(tmp_path_factory.mktemp("pki"))


def _service(pki: Pki, *, trust: bool) -> StandardSSLContextService:
    """The listener's SSL context service: its certificate, and the CA when *trust*."""
    return StandardSSLContextService(
        "tls",
        keystore_filename=str(pki.server),
        keystore_type="PEM",
        truststore_filename=str(pki.ca) if trust else None,
        truststore_type="PEM" if trust else None,
    )


def _client(pki: Pki, certificate: tuple[Path, Path] | None) -> httpx.Client:
    """A client trusting the CA, showing *certificate* (and its key) when given."""
    context = ssl.create_default_context(cafile=str(pki.ca))
    if certificate is not None:
        context.load_cert_chain(str(certificate[0]), str(certificate[1]))
    return httpx.Client(verify=context, timeout=10)


def _ready(pki: Pki) -> Any:
    """A readiness probe of an HTTPS listener (with the client certificate)."""

    def probe(url: str) -> bool:
        try:
            with _client(pki, pki.client) as client:
                return client.get(url).status_code == 200
        except httpx.TransportError:
            return False

    return probe


@contextlib.contextmanager
def _direct(pki: Pki, policy: str, **config: Any) -> Iterator[tuple[str, list[Held]]]:
    """ListenHTTP's HTTPS server alone (no flow): every request taken is answered 200 at once.

    Yields its URL and the requests taken, in order.
    """
    context = server_context(_service(pki, trust=True), policy, "ListenHTTP", "SSL")
    inbox = Inbox(8)
    server = ListenerServer(
        "127.0.0.1",
        0,
        ListenerConfig(base_path="contentListener", max_body=1 << 20, wait_s=10, **config),
        inbox,
        tls=context,
    )
    held: list[Held] = []
    stop = threading.Event()

    def commit() -> None:
        while not stop.is_set():
            taken = inbox.take(8)
            held.extend(taken)
            inbox.answer([h.key for h in taken], 200)
            time.sleep(0.01)

    committer = threading.Thread(target=commit, daemon=True)
    committer.start()
    try:
        yield f"https://127.0.0.1:{server.port}/contentListener", held
    finally:
        stop.set()
        committer.join()
        inbox.close()
        server.close()


def _received(repository: Path) -> list[Any]:
    """The RECEIVE events of the run's provenance repository."""
    repos = RepositorySet.open(repository)
    try:
        return list(repos.provenance.search(event_type="RECEIVE"))
    finally:
        repos.close()


def test_principal_is_written_as_nifis_formatter_writes_it() -> None:
    """RFC 1779 as Java prints it: most specific first, ", " between, UID and DC named."""
    name = x509.Name(
        [
            x509.NameAttribute(x509.NameOID.DOMAIN_COMPONENT, "NiFi"),
            x509.NameAttribute(x509.NameOID.DOMAIN_COMPONENT, "Apache"),
            x509.NameAttribute(x509.NameOID.USER_ID, "Subject"),
        ]
    )
    assert principal(name) == "UID=Subject, DC=Apache, DC=NiFi"
    quoted = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "a, b")])
    assert principal(quoted) == 'CN="a, b"'


@pytest.mark.parametrize(
    ("with_el", "code"),
    [
        (False, "200"),  # testSecureTwoWaySslPOSTRequestsReceivedWithoutEL
        (False, "204"),  # ...ReturnCodeReceivedWithoutEL
        (True, "200"),  # ...ReceivedWithEL
    ],
)
def test_secure_two_way_ssl_post_requests_received(
    tmp_path: Path, pki: Pki, monkeypatch: pytest.MonkeyPatch, with_el: bool, code: str
) -> None:
    """NiFi's two-way SSL POST tests: with a truststore AUTO is REQUIRED; NiFi's four messages
    land; the client's DNs are attributes and the RECEIVE events' details, over https."""
    properties = {"SSL Context Service": "tls", "Return Code": code}
    if with_el:  # port and base path from environment variables (the helper sets the port)
        monkeypatch.setenv("HTTP_PORT", "0")
        monkeypatch.setenv("HTTP_BASEPATH", "basePath")
        properties |= {"Listening Port": "${HTTP_PORT}", "Base Path": "${HTTP_BASEPATH}"}
    with listening(
        tmp_path,
        services=[_service(pki, trust=True)],
        scheme="https",
        ready=_ready(pki),
        **properties,
    ) as run:
        with _client(pki, pki.client) as client:
            messages = (b"payload 1", b"", None, b"payload 2")
            codes = {client.post(run.url, content=m).status_code for m in messages}
        assert codes == {int(code)}
    events = _received(tmp_path / "repo")
    assert sorted(run.written().values()) == [b"", b"", b"payload 1", b"payload 2"]
    assert len(events) == 4
    for event in events:
        assert event.transit_uri.startswith("https://127.0.0.1:")
        assert event.details == f"Remote DN={CLIENT_DN}, Issuer DN={CA_DN}"
        assert event.attributes["restlistener.remote.user.dn"] == CLIENT_DN
        assert event.attributes["restlistener.remote.issuer.dn"] == CA_DN


def test_secure_server_trust_store_configured_client_authentication_required(pki: Pki) -> None:
    """NiFi's testSecureServerTrustStoreConfiguredClientAuthenticationRequired: a client
    without a certificate, or with one from another CA, fails the handshake; nothing lands."""
    with _direct(pki, "REQUIRED") as (url, held):
        for certificate in (None, pki.stranger):
            with _client(pki, certificate) as client, pytest.raises(httpx.TransportError):
                client.post(url, content=b"refused")
        with _client(pki, pki.client) as client:
            assert client.post(url, content=b"taken").status_code == 200
    assert [h.body for h in held] == [b"taken"]


def test_want_client_authentication_takes_clients_with_or_without_a_certificate(
    pki: Pki,
) -> None:
    """WANT: a client without a certificate is taken (DNs "none"), one with a trusted
    certificate is taken with its DNs, one from an untrusted CA fails the handshake."""
    with _direct(pki, "WANT") as (url, held):
        with _client(pki, None) as client:
            assert client.post(url, content=b"anonymous").status_code == 200
        with _client(pki, pki.client) as client:
            assert client.post(url, content=b"known").status_code == 200
        with _client(pki, pki.stranger) as client, pytest.raises(httpx.TransportError):
            client.post(url, content=b"stranger")
    assert [(h.body, h.subject, h.issuer) for h in held] == [
        (b"anonymous", "none", "none"),
        (b"known", CLIENT_DN, CA_DN),
    ]


@pytest.mark.parametrize(
    ("protocols", "with_el"),
    [
        ("H2_HTTP_1_1", False),  # testSecurePOSTRequestsReceivedWithoutELHttp2AndHttp1
        ("HTTP_1_1", True),  # testSecurePOSTRequestsReturnCodeReceivedWithEL
    ],
)
def test_secure_server_trust_store_not_configured_client_authentication_not_required(
    tmp_path: Path, pki: Pki, monkeypatch: pytest.MonkeyPatch, protocols: str, with_el: bool
) -> None:
    """NiFi's testSecureServerTrustStoreNotConfiguredClientAuthenticationNotRequired and the
    one-way secure POST tests: without a truststore AUTO is NONE, a client without a
    certificate is taken, DNs "none"; and testSecureServerSupportsCurrentTlsProtocolVersion:
    TLS 1.3 is negotiated, ALPN gives http/1.1."""
    properties = {"SSL Context Service": "tls", "Return Code": "204", "HTTP Protocols": protocols}
    if with_el:
        monkeypatch.setenv("HTTP_PORT", "0")
        monkeypatch.setenv("HTTP_BASEPATH", "basePath")
        properties |= {"Listening Port": "${HTTP_PORT}", "Base Path": "${HTTP_BASEPATH}"}
    with listening(
        tmp_path,
        services=[_service(pki, trust=False)],
        scheme="https",
        ready=_ready(pki),
        **properties,
    ) as run:
        with _client(pki, None) as client:
            assert client.post(run.url, content=b"one way").status_code == 204
        context = ssl.create_default_context(cafile=str(pki.ca))
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        context.set_alpn_protocols(["h2", "http/1.1"])
        port = int(run.url.split(":")[2].split("/")[0])
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            assert tls.version() == "TLSv1.3"
            assert tls.selected_alpn_protocol() == "http/1.1"
    event = _received(tmp_path / "repo")[-1]
    assert event.details == "Remote DN=none, Issuer DN=none"
    assert event.attributes["restlistener.remote.user.dn"] == "none"


@pytest.mark.parametrize(
    ("subjects", "issuers", "status"),
    [
        ("CN=other", ".*", 403),  # testSecureTwoWaySslPOSTRequestsReceivedWithUnauthorizedSubjectDn
        (CLIENT_DN, CA_DN, 200),  # ...WithAuthorizedIssuerDn
        (CLIENT_DN, "CN=other", 403),  # ...WithUnauthorizedIssuerDn
    ],
)
def test_authorized_subject_and_issuer_dn_patterns(
    pki: Pki, subjects: str, issuers: str, status: int
) -> None:
    """NiFi's DN pattern tests: a subject or issuer the pattern does not match gets 403 and
    is not taken; matching both is taken."""
    patterns = {"subjects": re.compile(subjects), "issuers": re.compile(issuers)}
    with _direct(pki, "REQUIRED", **patterns) as (url, held), _client(pki, pki.client) as client:
        response = client.post(url, content=b"payload")
    assert response.status_code == status
    if status == 403:
        assert b"not allowed based on" in response.content
        assert held == []
    else:
        assert [(h.subject, h.issuer) for h in held] == [(CLIENT_DN, CA_DN)]


def test_health_check_port_answers_without_a_client_certificate(tmp_path: Path, pki: Pki) -> None:
    """Listening Port for Health Check Requests: one-way TLS there (no client certificate),
    GET on the health check answers OK, content is not taken there (405)."""
    health = free_port()
    with listening(
        tmp_path,
        services=[_service(pki, trust=True)],
        scheme="https",
        ready=_ready(pki),
        **{"SSL Context Service": "tls", "Listening Port for Health Check Requests": str(health)},
    ) as run:
        base = f"https://127.0.0.1:{health}/contentListener"
        with _client(pki, None) as client:
            check = client.get(base + "/healthcheck")
            post = client.post(base, content=b"not here")
        assert (check.status_code, check.text) == (200, "OK")
        assert post.status_code == 405
        with _client(pki, None) as client:
            assert client.head(base + "/healthcheck").status_code == 200
            assert client.head(base).status_code == 405
        assert run.written() == {}


def test_health_check_port_equal_to_the_listening_port_is_invalid() -> None:
    """NiFi's validatePortsAreNotEqual: the same port twice is refused before the run."""
    listen = ListenHTTP(
        **{"Listening Port": "8011", "Listening Port for Health Check Requests": "8011"}
    )
    problems = listen.validate()
    assert [p.subject for p in problems] == ["Listening Port for Health Check Requests"]
    assert "cannot have the same value" in problems[0].explanation


def test_handle_http_request_serves_https_with_certificate_attributes(pki: Pki) -> None:
    """HandleHttpRequest with Need Authentication: NiFi's http.subject.dn, http.issuer.dn and
    http.certificate.sans.N.* attributes, an https request URL; no certificate, no request."""
    runner = TestRunner(HandleHttpRequest())
    runner.add_service(StandardHttpContextMap("map"))
    runner.add_service(_service(pki, trust=True))
    for name, value in {
        "HTTP Context Map": "map",
        "Listening Port": str(free_port()),
        "SSL Context Service": "tls",
        "Client Authentication": "Need Authentication",
    }.items():
        runner.set_property(name, value)
    runner.run(1, stop_on_finish=False)
    processor = runner.processor
    assert isinstance(processor, HandleHttpRequest)
    url = f"https://127.0.0.1:{processor.port}/data"
    try:
        with _client(pki, None) as client, pytest.raises(httpx.TransportError):
            client.get(url)
        outcome: list[Any] = []

        def send() -> None:
            with _client(pki, pki.client) as client:
                outcome.append(client.get(url))

        thread = threading.Thread(target=send)
        thread.start()
        deadline = time.monotonic() + 10
        while not runner.flowfiles_for("success") and time.monotonic() < deadline:
            time.sleep(0.02)
            runner.run(1, stop_on_finish=False, initialize=False)
    finally:
        processor.on_stopped(runner.context)
    thread.join(timeout=10)
    (flowfile,) = runner.flowfiles_for("success")
    attributes = flowfile.attributes
    assert attributes["http.subject.dn"] == CLIENT_DN
    assert attributes["http.issuer.dn"] == CA_DN
    assert attributes["http.certificate.sans.0.nameType"] == "rfc822Name"
    assert attributes["http.certificate.sans.0.name"] == "client@example.com"
    assert attributes["http.certificate.sans.1.nameType"] == "dNSName"
    assert attributes["http.certificate.sans.1.name"] == "client.example.com"
    assert attributes["http.request.url"].startswith("https://127.0.0.1:")
    assert outcome[0].status_code == 503  # stopped before a response: NiFi's Stopping Server


def test_a_trickling_tls_handshake_is_cut_at_its_deadline(
    pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review finding: a client sending its TLS hello a byte at a time holds HandleHttpRequest's
    one thread (Maximum Threads 1) until the whole handshake's deadline (here 0.5 s), not a
    socket timeout renewed by each byte; the next client is then served."""
    monkeypatch.setattr(BoundedHeadersHandler, "handshake_deadline_s", 0.5)
    context = server_context(_service(pki, trust=True), "WANT", "HandleHttpRequest", "SSL")
    config = RequestConfig(frozenset({"GET"}), None, 1 << 20, 1 << 20, 8 * 1024, 5.0)
    server = RequestServer("127.0.0.1", 0, config, ContainerQueue(8), threads=1, tls=context)
    try:
        slow = socket.create_connection(("127.0.0.1", server.port))
        hello = b"\x16\x03\x01\x02\x00" + b"\x01" * 200  # a record of 512 bytes, 200 sent
        sent, cut = 0, False
        with slow:
            for byte in hello:  # a byte each 25 ms: 5 s in all, far less than 30 s a byte
                try:
                    slow.sendall(bytes([byte]))
                except OSError:
                    cut = True
                    break
                sent += 1
                if select.select([slow], [], [], 0.025)[0]:
                    cut = True  # closed by the server (EOF, or an alert then EOF)
                    break
        assert cut
        assert sent < len(hello)
        with _client(pki, pki.client) as client:  # the one thread is free again
            assert client.request("OPTIONS", f"https://127.0.0.1:{server.port}/").status_code == 405
    finally:
        server.close()
