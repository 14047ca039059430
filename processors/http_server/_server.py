"""The standard library's threading HTTP server as ListenHTTP runs it on the driver.

Only POST (content) and HEAD are taken on the base path, GET on ``<base>/healthcheck`` (``OK``),
as NiFi's ListenHTTP; other methods get 405. The request line and headers together stay within
Request Header Maximum Size, as Jetty bounds them in NiFi: past it, 431 (414 when the request
line alone is too long), and the connection is closed. The body must say its length
(Content-Length; a chunked body gets 411) and stay within the size limit, and a
multipart/form-data body within Multipart Request Max Size too (413 before a byte of it is
read); the socket times out after :data:`SOCKET_TIMEOUT_S` without progress, so a stalled
client cannot hold a thread for ever, and an HTTPS connection's TLS handshake must be done
within :data:`~processors.http_server._tls.HANDSHAKE_DEADLINE_S` in all.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import ssl
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

from flowcore.processor.context import carry_context
from processors.http_server._deadline import (
    BODY_GRACE_S,
    HEAD_DEADLINE_S,
    MIN_BODY_RATE,
    DeadlineReader,
    drain,
)
from processors.http_server._inbox import SERVICE_UNAVAILABLE, Held, Inbox
from processors.http_server._received import ACCEPT_HEADERS, Refused, received
from processors.http_server._tls import (
    HANDSHAKE_DEADLINE_S,
    TlsServerMixin,
    handshake,
    peer_certificate,
    principal,
)

__all__ = [
    "NO_DN",
    "SOCKET_TIMEOUT_S",
    "BoundedHeadersHandler",
    "ListenerConfig",
    "ListenerServer",
    "read_body",
]

log = logging.getLogger(__name__)

#: Seconds a connection may go without progress (reading headers or body) before it is closed.
SOCKET_TIMEOUT_S = 30.0
#: Seconds between the server loop's looks for a shutdown (how long closing it may wait).
SHUTDOWN_POLL_S = 0.05
_CHUNK = 64 * 1024
# a gzip member opens with its magic and CM 8 (deflate); Java stops at bytes that do not
_GZIP_MAGIC = b"\x1f\x8b\x08"
#: NiFi's subject and issuer DN when the client shows no certificate.
NO_DN = "none"


@attrs.frozen
class ListenerConfig:
    """What the request handler needs from ListenHTTP's properties.

    Attributes:
        base_path: the base path without slashes (``contentListener``).
        max_body: the largest body taken, bytes.
        wait_s: how long a request waits for its commit (Max Unconfirmed Flowfile Time).
        headers: the pattern of header names kept as attributes, or None.
        max_header: the most bytes of request line and headers taken (Request Header Maximum
            Size, Jetty's ``requestHeaderSize``).
        max_multipart: the largest multipart/form-data body taken (Multipart Request Max Size,
            the ``maxRequestSize`` NiFi gives Jetty's multipart parser).
        subjects: Authorized Subject DN Pattern (a client certificate's subject must match).
        issuers: Authorized Issuer DN Pattern.
        health_only: a Listening Port for Health Check Requests: content is not taken there.
        records: the Record Reader and Record Writer services, when the body is records.
    """

    base_path: str
    max_body: int
    wait_s: float
    headers: re.Pattern[str] | None = None
    max_header: int = 8 * 1024
    max_multipart: int = 1024 * 1024
    subjects: re.Pattern[str] | None = None
    issuers: re.Pattern[str] | None = None
    health_only: bool = False
    records: tuple[Any, Any] | None = None


class ListenerServer:
    """A threading HTTP server on *port* feeding *inbox*, serving in a daemon thread.

    Args:
        host: the address to bind ('' for all).
        port: the port (0: any free one; see :attr:`port`).
        config: the request handling settings.
        inbox: where requests wait for their commit.
        handler_class: the request handler (ListenHTTP's by default).
        tls: the server TLS context (HTTPS), or None (HTTP).
    """

    def __init__(
        self,
        host: str,
        port: int,
        config: Any,
        inbox: Inbox,
        *,
        handler_class: type[BaseHTTPRequestHandler] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        handler = type(
            "ListenerHandler",
            (handler_class or _Handler,),
            {"config": config, "inbox": inbox, "max_header": config.max_header},
        )
        self._server = _Server((host, port), handler)
        self._server.daemon_threads = True
        self._server.tls = tls
        self._thread = threading.Thread(
            target=carry_context(self._server.serve_forever),
            args=(SHUTDOWN_POLL_S,),
            name=f"ListenHTTP:{self.port}",
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._server.server_address[1])

    def close(self) -> None:
        """Stop taking connections; requests in progress are answered by the inbox's close."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=SOCKET_TIMEOUT_S)


class _Server(TlsServerMixin, ThreadingHTTPServer):
    """The threading HTTP server, serving HTTPS when its ``tls`` context is set."""

    def __init__(self, address: tuple[str, int], handler: type) -> None:
        super().__init__(address, handler)
        # Each connection's thread logs as the processor does: its secrets masked.
        self.process_request_thread = carry_context(self.process_request_thread)  # type: ignore[method-assign]


class BoundedHeadersHandler(BaseHTTPRequestHandler):
    """A request handler whose request line and headers stay within ``max_header`` bytes.

    NiFi's Jetty bounds them (``requestHeaderSize``, Request Header Maximum Size on ListenHTTP
    and HandleHttpRequest) while it parses, before any servlet sees the request: past it 431,
    or 414 when the request line alone is too long. ListenHTTP's and HandleHttpRequest's
    handlers both take the bound here, before the method, the path or a header is looked at.

    Attributes:
        max_header: the most bytes of request line and headers taken (set on the handler class
            each server makes).
        handshake_deadline_s: the seconds an HTTPS connection's whole TLS handshake may take.
    """

    max_header: int = 8 * 1024
    handshake_deadline_s: float = HANDSHAKE_DEADLINE_S
    head_deadline_s: float = HEAD_DEADLINE_S
    body_grace_s: float = BODY_GRACE_S
    min_body_rate: int = MIN_BODY_RATE

    def setup(self) -> None:
        """The connection's reader, under deadlines (see :mod:`._deadline`)."""
        super().setup()
        self.rfile.close()  # the socket's own: its reference would keep the socket open
        self.deadlines = DeadlineReader(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self.deadlines)

    def handle(self) -> None:
        """The connection's requests, after its TLS handshake (HTTPS) succeeded in time."""
        if handshake(self, self.handshake_deadline_s):
            super().handle()

    def handle_one_request(self) -> None:
        """One request, its head and body read within their deadlines, else 408 and closed.

        The standard handler closes the connection on a timeout; a client that had begun its
        request (or its body) is told why first, as Jetty answers 408, and what it still
        sends is drained briefly before the close, so that it reads the 408 rather than a
        reset. A connection idle between requests is closed without a word, as before.
        """
        self.deadlines.head(self.head_deadline_s)
        # what a 408 needs should the request line not come whole (parse_request sets them)
        self.requestline, self.request_version, self.command = "", "HTTP/1.1", None
        try:
            super().handle_one_request()
        finally:
            self.deadlines.off()
        late = self.deadlines.timed_out
        if late is None:
            return
        self.close_connection = True
        log.info("%s: %s; connection closed", self.address_string(), late)
        if late.started or late.phase == "body":
            with contextlib.suppress(OSError):  # it may have gone: nothing more to tell it
                self.send_error(408, "Request Timeout")
                self.wfile.flush()
                drain(self.connection)

    def parse_request(self) -> bool:
        """The request line and headers, refused (431, or 414) past Request Header Maximum Size.

        The headers are read through a counting reader, so an over-large block is refused as
        soon as it passes the limit, without holding more than one line of it.
        """
        budget = self.max_header - len(self.raw_requestline)
        rfile = self.rfile
        self.rfile = _HeaderBudget(rfile, budget)  # type: ignore[assignment]
        try:
            parsed = super().parse_request()
        except _HeadersTooLarge:
            if budget < 0:
                self.send_error(414, "URI Too Long")
            else:
                self.send_error(431, "Request Header Fields Too Large")
            return False
        finally:
            self.rfile = rfile
        if parsed:
            self.deadlines.body(self.body_grace_s, self.min_body_rate)
        return parsed


class _Handler(BoundedHeadersHandler):
    """One connection's requests (a thread each, as ThreadingHTTPServer gives)."""

    config: ListenerConfig
    inbox: Inbox
    timeout = SOCKET_TIMEOUT_S
    protocol_version = "HTTP/1.1"
    server_version = "flowcore-ListenHTTP"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def _path(self) -> str:
        return self.path.split("?", 1)[0]

    def _base(self) -> str:
        return "/" + self.config.base_path if self.config.base_path else "/"

    def _send(self, status: int, body: bytes = b"", *, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        if body:
            self.send_header("Content-Type", "text/plain")
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        """The health check answers OK; content is only POSTed."""
        if self._path().rstrip("/") == self._base().rstrip("/") + "/healthcheck":
            self._send(200, b"OK")
        else:
            self._send(405, b"Method Not Allowed: POST content to " + self._base().encode())

    def do_HEAD(self) -> None:
        """NiFi answers HEAD on the base path with what it accepts (a NiFi sender asks)."""
        if self._path().rstrip("/") == self._base().rstrip("/") + "/healthcheck":
            self._send(200)  # the health check, on either port
            return
        if self.config.health_only or self._path() != self._base():
            self._send(405 if self.config.health_only else 404)
            return
        self.send_response(200)
        for name, value in ACCEPT_HEADERS:
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _not_allowed(self) -> None:
        # the body is not read: the connection cannot carry another request
        self._send(405, b"Method Not Allowed", close=True)

    do_PUT = do_DELETE = do_OPTIONS = do_TRACE = do_PATCH = _not_allowed

    def _client(self) -> tuple[str, str] | None:
        """The client certificate's subject and issuer DN (``none``); None after a 403.

        NiFi's servlet: a certificate whose subject does not match Authorized Subject DN
        Pattern, or whose issuer does not match Authorized Issuer DN Pattern, is refused.
        """
        certificate = peer_certificate(self)
        if certificate is None:
            return NO_DN, NO_DN
        subject, issuer = principal(certificate.subject), principal(certificate.issuer)
        for pattern, value, what in (
            (self.config.subjects, subject, "subject"),
            (self.config.issuers, issuer, "issuer"),
        ):
            if pattern is not None and not pattern.fullmatch(value):
                log.warning(
                    "Access Forbidden [%s not authorized] Host [%s] Subject [%s] Issuer [%s]",
                    what.capitalize(),
                    self.client_address[0],
                    subject,
                    issuer,
                )
                self._send(403, f"not allowed based on {what} dn".encode(), close=True)
                return None
        return subject, issuer

    def do_POST(self) -> None:
        """Read the body, hold it until its FlowFiles are committed, then answer."""
        if self.config.health_only:  # NiFi's servlet: content only on the Listening Port
            self._not_allowed()
            return
        if self._path() != self._base():
            self._send(404, b"Not Found", close=True)
            return
        client = self._client()
        if client is None:
            return
        size = self._length()
        if size is None:
            return
        started = time.monotonic()
        body = self._read(size)
        if body is None:
            return
        gzipped = self.headers.get("Content-Encoding") == "gzip" or (
            (self.headers.get("flowfile-gzipped") or "").lower() == "true"
        )
        if gzipped:  # NiFi's servlet: Content-Encoding gzip (or flowfile-gzipped) is inflated
            body = self._inflate(body)
            if body is None:
                return
        try:
            pieces = received(body, self.headers, self.config.records, limit=self.config.max_body)
        except Refused as refused:
            log.error(
                "Unable to receive file from Remote Host: [%s] SubjectDN [%s] IssuerDN [%s] "
                "due to %s",
                self.client_address[0],
                *client,
                refused.message,
            )
            self._send(refused.status, refused.message.encode())
            return
        millis = int((time.monotonic() - started) * 1000)
        host, port = self.server.server_address[:2]
        scheme = "https" if getattr(self.server, "tls", None) is not None else "http"
        held = Held(
            body=body,  # the pieces' content is this very object unless unpacked or converted
            attributes=self._attributes(*client),
            url=f"{scheme}://{self.headers.get('Host') or f'{host}:{port}'}{self.path}",
            subject=client[0],
            millis=millis,
            issuer=client[1],
            pieces=pieces,
        )
        if not self.inbox.offer(held):
            self._send(SERVICE_UNAVAILABLE, b"Service Unavailable: too many requests waiting")
            return
        if not held.done.wait(self.config.wait_s) and held.status is None:
            never_listed = self.inbox.give_up(held)
            why = "" if never_listed else " (it may be committed: a retry may land twice)"
            log.warning("a request from %s waited too long for its commit%s", host, why)
            self._send(SERVICE_UNAVAILABLE, b"Service Unavailable: not committed in time")
            return
        status = held.status or SERVICE_UNAVAILABLE
        self._send(status, b"" if status < 300 else b"Service Unavailable")

    def _length(self) -> int | None:
        """The body's declared length, or None after answering why it cannot be taken."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self._send(411, b"Length Required: send a Content-Length", close=True)
            return None
        try:
            size = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            self._send(400, b"Bad Request: Content-Length is not a number", close=True)
            return None
        if size < 0:
            self._send(400, b"Bad Request: negative Content-Length", close=True)
            return None
        multipart = "multipart/form-data" in (self.headers.get("Content-Type") or "").lower()
        if multipart and size > self.config.max_multipart:
            # Jetty's words for NiFi's MultipartConfigElement(maxRequestSize), which NiFi's
            # servlet passes on; here before a byte of the body is read, not once it has been
            message = f"Request exceeds maxRequestSize ({self.config.max_multipart})"
            self._send(413, message.encode(), close=True)
            return None
        if size > self.config.max_body:
            message = f"Payload Too Large: at most {self.config.max_body} bytes"
            self._send(413, message.encode(), close=True)
            return None
        return size

    def _inflate(self, body: bytes) -> bytes | None:
        """The gzip body inflated, at most Max Request Body Size; None after answering why not.

        Every member is inflated, as Java's GZIPInputStream does (``cat a.gz b.gz`` is one
        body), and bytes after a member that do not open another are ignored as it ignores
        them; a stream cut short is refused, not taken as partial content.
        """
        limit = self.config.max_body
        parts: list[bytes] = []
        size = 0
        rest = body
        while True:
            inflater = zlib.decompressobj(wbits=31)
            try:
                plain = inflater.decompress(rest, limit - size + 1)
            except zlib.error as error:
                self._send(400, f"Bad Request: Content-Encoding gzip but {error}".encode())
                return None
            size += len(plain)
            if size > limit or inflater.unconsumed_tail:
                message = f"Payload Too Large: at most {limit} bytes inflated"
                self._send(413, message.encode())
                return None
            if not inflater.eof:
                message = "Bad Request: Content-Encoding gzip but the stream is truncated"
                self._send(400, message.encode())
                return None
            parts.append(plain)
            rest = inflater.unused_data
            if not rest.startswith(_GZIP_MAGIC):
                return b"".join(parts)

    def _read(self, size: int) -> bytes | None:
        """The body; None when the client went away or stalled."""
        return read_body(self, size)

    def _attributes(self, subject: str, issuer: str) -> dict[str, str]:
        """NiFi's restlistener.* attributes, and the headers the pattern keeps."""
        attributes: dict[str, str] = {}
        pattern = self.config.headers
        if pattern is not None:
            for name in self.headers:
                if pattern.fullmatch(name):
                    attributes[name] = self.headers[name]
        attributes["restlistener.remote.source.host"] = self.client_address[0]
        attributes["restlistener.request.uri"] = self._path()
        attributes["restlistener.remote.user.dn"] = subject
        attributes["restlistener.remote.issuer.dn"] = issuer
        return attributes


class _HeadersTooLarge(Exception):
    """The request line and headers passed Request Header Maximum Size."""


class _HeaderBudget:
    """The connection's reader while headers are parsed: it counts what they take."""

    def __init__(self, rfile: Any, budget: int) -> None:
        self._rfile = rfile
        self._left = budget

    def readline(self, limit: int = -1) -> bytes:
        """One header line; raises :class:`_HeadersTooLarge` once the budget is spent."""
        if self._left < 0:
            raise _HeadersTooLarge
        line = self._rfile.readline(limit)
        self._left -= len(line)
        if self._left < 0:
            raise _HeadersTooLarge
        return bytes(line)


def read_body(handler: BaseHTTPRequestHandler, size: int) -> bytes | None:
    """*size* bytes of *handler*'s body; None if the client went away."""
    parts: list[bytes] = []
    left = size
    try:
        while left:
            part = handler.rfile.read(min(left, _CHUNK))
            if not part:
                break
            parts.append(part)
            left -= len(part)
    except OSError:  # the socket timed out, or the client reset it
        handler.close_connection = True
        return None
    if left:
        handler.close_connection = True
        return None
    return b"".join(parts)
