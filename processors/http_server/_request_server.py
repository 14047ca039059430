"""HandleHttpRequest's HTTP server: requests read whole, queued, and answered when decided.

A handler thread checks the method (405 ``Method Not Allowed``) and the path (404 ``Path Not
Found``) as NiFi's servlet does, reads the body, queues the request as a :class:`Container` (503
``Request Queue Full`` past Container Queue Size) and waits on its
:class:`~processors.http_server.context_map.Exchange` until someone answers it: the response
after its FlowFile's commit, the context map's expiry, or the server stopping. A handler gives
up by itself (503) a little after the map's Request Expiration, so no thread waits for ever.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import re
import ssl
import threading
import time
import uuid
from typing import Any

import attrs

from flowcore.errors import FlowcoreError
from flowcore.processor.context import carry_context
from processors.http_server._server import (
    SHUTDOWN_POLL_S,
    SOCKET_TIMEOUT_S,
    BoundedHeadersHandler,
    _Server,
    read_body,
)
from processors.http_server._tls import certificate_attributes, peer_certificate
from processors.http_server.context_map import CLEANUP_MAX_DELAY_S, Answer, Exchange

__all__ = ["Container", "ContainerQueue", "RequestConfig", "RequestServer"]

log = logging.getLogger(__name__)

_CHUNK_LINE_MAX = 1024  # bytes of one chunk-size line


@attrs.frozen
class RequestConfig:
    """What the handler needs from HandleHttpRequest's properties.

    Attributes:
        methods: the allowed methods, upper case.
        paths: the Allowed Paths pattern, or None for any path.
        max_body: the largest body taken, bytes (flowcore's Max Request Body Size).
        max_multipart: the largest multipart/form-data body taken (Multipart Request Max Size).
        max_header: the largest request header block taken (Request Header Maximum Size).
        wait_s: how long a handler waits for its answer before it gives up (503).
    """

    methods: frozenset[str]
    paths: re.Pattern[str] | None
    max_body: int
    max_multipart: int
    max_header: int
    wait_s: float


@attrs.define(eq=False)
class Container:
    """One request read whole, waiting to be listed, then to be answered.

    Attributes:
        method: the request method.
        target: the request target as sent (path and query).
        version: the protocol (``HTTP/1.1``).
        headers: the headers as sent, in order.
        body: the content.
        client: the client's (address, port).
        local: the server socket's (address, port).
        millis: how long reading the body took.
        identifier: the ``http.context.identifier``.
        exchange: what the handler thread waits on.
        registered: whether the context map holds it.
        secure: whether it came over HTTPS.
        certificate: the client certificate's ``http.subject.dn``, ``http.issuer.dn`` and
            ``http.certificate.sans.*`` attributes (empty without one).
    """

    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]
    body: bytes
    client: tuple[str, int]
    local: tuple[str, int]
    millis: int
    identifier: str = attrs.field(factory=lambda: str(uuid.uuid4()))
    exchange: Exchange = attrs.field(factory=Exchange)
    registered: bool = False
    secure: bool = False
    certificate: dict[str, str] = attrs.field(factory=dict)


class ContainerQueue:
    """Requests read and not listed yet, at most Container Queue Size of them."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        self._waiting: collections.deque[Container] = collections.deque()
        self._closed = False

    def offer(self, container: Container) -> bool:
        """Queue *container*; False when the queue is full or the server stopping."""
        with self._lock:
            if self._closed or len(self._waiting) >= self._capacity:
                return False
            self._waiting.append(container)
            return True

    def take(self, limit: int) -> list[Container]:
        """Up to *limit* queued requests, oldest first."""
        with self._lock:
            count = min(limit, len(self._waiting))
            return [self._waiting.popleft() for _ in range(count)]

    def put_back(self, containers: list[Container]) -> None:
        """Requests listed but not read: first in line again."""
        with self._lock:
            self._waiting.extendleft(reversed(containers))

    def withdraw(self, container: Container) -> None:
        """Drop *container* if it is still queued (its handler gave up)."""
        with self._lock, contextlib.suppress(ValueError):
            self._waiting.remove(container)

    def close(self) -> list[Container]:
        """Refuse new requests; the ones still queued (NiFi's drainContainerQueue)."""
        with self._lock:
            self._closed = True
            drained = list(self._waiting)
            self._waiting.clear()
            return drained

    def __len__(self) -> int:
        with self._lock:
            return len(self._waiting)


class _BoundedServer(_Server):
    """A threading server handling at most *threads* connections at once (Maximum Threads)."""

    daemon_threads = True
    request_queue_size = 64  # the listen backlog (socketserver's 5 is too few for a busy flow)

    def __init__(self, address: tuple[str, int], handler: type, threads: int) -> None:
        self._slots = threading.BoundedSemaphore(threads)
        self.closing = False
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Every thread busy: this connection waits (and later ones in the listen backlog),
        # unless the server is stopping, when it is dropped.
        while not self._slots.acquire(timeout=SHUTDOWN_POLL_S):
            if self.closing:
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class RequestServer:
    """The server on (*host*, *port*) feeding *queue*, serving in a daemon thread.

    Args:
        host: the address to bind ('' for all: Hostname unset).
        port: the port (0: any free one; see :attr:`port`).
        config: the request handling settings.
        queue: where read requests wait to be listed.
        threads: Maximum Threads.
        tls: the server TLS context (HTTPS), or None (HTTP).
    """

    def __init__(
        self,
        host: str,
        port: int,
        config: RequestConfig,
        queue: ContainerQueue,
        threads: int,
        *,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        handler = type(
            "RequestHandler",
            (_Handler,),
            {"config": config, "queue": queue, "max_header": config.max_header},
        )
        self._server = _BoundedServer((host, port), handler, threads)
        self._server.tls = tls
        self._thread = threading.Thread(
            target=carry_context(self._server.serve_forever),
            args=(SHUTDOWN_POLL_S,),
            name=f"HandleHttpRequest:{self.port}",
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._server.server_address[1])

    def close(self) -> None:
        """Stop taking connections (requests held are answered by whoever stops them)."""
        self._server.closing = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=SOCKET_TIMEOUT_S)


class _Handler(BoundedHeadersHandler):
    """One connection's requests; every method comes to :meth:`_serve`.

    Request Header Maximum Size is enforced as the request is parsed (431 or 414, the
    connection closed), before the method, the path or the body are looked at.
    """

    config: RequestConfig
    queue: ContainerQueue
    timeout = SOCKET_TIMEOUT_S
    protocol_version = "HTTP/1.1"
    server_version = "flowcore-HandleHttpRequest"

    def __getattr__(self, name: str) -> Any:
        # BaseHTTPRequestHandler dispatches to do_<METHOD>: any method (Additional HTTP
        # Methods) reaches _serve, which checks it against the allowed ones.
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def _send(self, answer: Answer, *, close: bool = False) -> None:
        # RFC 9110: a 1xx, 204 or 304 response has no content, and a 1xx or 204 no length
        bodiless = answer.status < 200 or answer.status in (204, 304)
        try:
            self.send_response(answer.status, answer.reason)
            named = {name.lower() for name, _ in answer.headers}
            for name, value in answer.headers:
                self.send_header(name, value)
            if "content-length" not in named and not bodiless:
                self.send_header("Content-Length", str(answer.length))
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            if self.command != "HEAD" and not bodiless:
                for chunk in answer.chunks():  # a large body streams from the content repository
                    self.wfile.write(chunk)
            self.wfile.flush()
        except FlowcoreError as error:  # its content could not be read: the body is cut short
            log.error(
                "could not send the body of the answer to %s: %s", self.address_string(), error
            )
            self.close_connection = True
        except OSError as error:  # the client went away: nothing more to tell it
            log.info("could not answer %s: %s", self.address_string(), error)
            self.close_connection = True
        finally:
            answer.close()

    def _error(self, status: int, reason: str, *, close: bool = True) -> None:
        plain = (("Content-Type", "text/plain"),)
        self._send(Answer(status, plain, reason.encode(), reason), close=close)

    def _serve(self) -> None:
        """NiFi's servlet: method, path, then the body and the queue; wait for the answer."""
        config = self.config
        if self.command.upper() not in config.methods:
            self._error(405, "Method Not Allowed")
            return
        path = self.path.split("?", 1)[0]
        if config.paths is not None and not config.paths.fullmatch(path):
            self._error(404, "Path Not Found")
            return
        started = time.monotonic()
        body = self._body()
        if body is None:
            return
        container = Container(
            method=self.command,
            target=self.path,
            version=self.request_version,
            headers=list(self.headers.items()),
            body=body,
            client=self.client_address[:2],
            local=self.connection.getsockname()[:2],
            millis=int((time.monotonic() - started) * 1000),
            secure=isinstance(self.connection, ssl.SSLSocket),
        )
        certificate = peer_certificate(self)
        if certificate is not None:
            container.certificate = certificate_attributes(certificate)
        del body  # the container's goes once its FlowFile is committed: this thread waits on
        container.exchange.remote = self.client_address[0]
        if not self.queue.offer(container):
            self._error(503, "Request Queue Full", close=False)
            return
        answer = container.exchange.wait(config.wait_s)
        if answer is None:
            self.queue.withdraw(container)
            container.exchange.unavailable("Timeout occurred")
            answer = container.exchange.wait(0)
        assert answer is not None  # answered above if nobody else did
        self._send(answer)

    def _body(self) -> bytes | None:
        """The request content, or None after answering why it cannot be taken."""
        limit = self.config.max_body
        if "multipart/form-data" in (self.headers.get("Content-Type") or ""):
            limit = min(limit, self.config.max_multipart)
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._chunked(limit)
        try:
            size = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            self._error(400, "Bad Request: Content-Length is not a number")
            return None
        if size < 0:
            self._error(400, "Bad Request: negative Content-Length")
            return None
        if size > limit:
            self._error(413, f"Payload Too Large: at most {limit} bytes")
            return None
        body = read_body(self, size)
        if body is None:
            self.close_connection = True
        return body

    def _chunked(self, limit: int) -> bytes | None:
        """A chunked body, decoded; None (answered 400 or 413) when it breaks the rules."""
        parts: list[bytes] = []
        size = 0
        try:
            while True:
                line = self.rfile.readline(_CHUNK_LINE_MAX)
                length = int(line.split(b";", 1)[0].strip() or b"x", 16)
                if length == 0:
                    while self.rfile.readline(_CHUNK_LINE_MAX) not in (b"\r\n", b"\n", b""):
                        pass  # trailers are not kept
                    return b"".join(parts)
                size += length
                if size > limit:
                    self._error(413, f"Payload Too Large: at most {limit} bytes")
                    return None
                part = self.rfile.read(length)
                if len(part) != length:
                    self.close_connection = True
                    return None
                parts.append(part)
                self.rfile.readline(_CHUNK_LINE_MAX)
        except ValueError:
            self._error(400, "Stream Processing Failed")
            return None
        except OSError:
            self.close_connection = True
            return None


def handler_wait_s(expiration_s: float) -> float:
    """How long a handler waits for its answer: past the map's expiry and its next sweep."""
    return expiration_s + CLEANUP_MAX_DELAY_S + 1.0
