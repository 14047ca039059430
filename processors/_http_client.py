"""InvokeHTTP's HTTP side: one pooled httpx client per task, and calls that run on a bounded pool.

A task opens one :class:`HttpRuntime` (lazily, at its first trigger) and keeps it until the
processor stops: an ``httpx.Client`` whose connection pool is shared by every call of the
task, and a thread pool of ``Concurrent Requests`` workers. A call (:func:`perform`) sends the
request and returns as soon as the response's status and headers arrived, its body still
unread: the trigger's own thread streams the body into the content repository (the session
is not thread-safe), so at most ``Concurrent Requests`` calls are in flight and at most as
many responses wait, each holding one pooled connection.

Every wait is bounded: connecting (``Connection Timeout``), each read of the response
(``Socket Read Timeout``), each write of the request (``Socket Write Timeout``), and getting a
pooled connection (the connection timeout again).
"""

from __future__ import annotations

import functools
import http.cookiejar
import shutil
import ssl
import tempfile
import time
import zlib
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO

import attrs
import httpx

from flowcore.processor.context import carry_context
from flowcore.ssl_context import StandardSSLContextService

__all__ = ["Call", "ClientSettings", "Exchange", "HttpRuntime", "RequestBody", "perform"]

#: Bytes read per chunk from a request body file and from a response.
CHUNK = 64 * 1024
#: A response body of at most this many bytes (by its Content-Length) is read by the call
#: itself; a larger or unknown one streams on the trigger's thread into the content repository.
READ_IN_CALL = 64 * 1024
#: A request body up to this size is sent from memory; a larger one is spooled to a file.
BODY_IN_MEMORY = 1024 * 1024


@attrs.frozen
class ClientSettings:
    """What one task's client is built from (the processor's properties, parsed once).

    Attributes:
        connect_timeout: seconds to connect, and to wait for a pooled connection.
        read_timeout: seconds each read of a response may wait.
        write_timeout: seconds each write of a request may wait.
        idle_timeout: seconds an idle pooled connection is kept.
        idle_connections: how many idle connections the pool keeps.
        concurrency: calls in flight at once (the pool holds as many connections).
        follow_redirects: follow 3xx responses (``Response Redirects Enabled``).
        accept_cookies: keep cookies across calls (``Response Cookie Strategy`` ACCEPT_ALL).
        proxy: the proxy URL, credentials included, or None.
        ssl: the SSL Context Service, or None (the platform's authorities).
    """

    connect_timeout: float
    read_timeout: float
    write_timeout: float
    idle_timeout: float
    idle_connections: int
    concurrency: int
    follow_redirects: bool
    accept_cookies: bool = False
    proxy: str | None = attrs.field(default=None, repr=False)
    ssl: StandardSSLContextService | None = None


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """A cookie policy that accepts none (NiFi's default cookie strategy, DISABLED)."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: object) -> bool:
        del cookie, request
        return False


@functools.lru_cache(maxsize=16)
def _tls_context(service: StandardSSLContextService | None) -> ssl.SSLContext:
    """The TLS context for *service* (None: the platform's authorities), made once per process.

    Reading the stores (or the default authorities) costs far more than a request; a client
    context is safe to share between clients and threads.
    """
    if service is None:
        return httpx.create_ssl_context()
    return service.create_context()


def open_client(settings: ClientSettings) -> httpx.Client:
    """A pooled client for *settings*.

    The pool holds ``concurrency`` connections (every call in flight has one) and keeps
    ``idle_connections`` idle ones for ``idle_timeout``. httpx's own ``User-Agent`` is dropped:
    InvokeHTTP sends one only when ``Request User-Agent`` is set.
    """
    timeout = httpx.Timeout(
        connect=settings.connect_timeout,
        read=settings.read_timeout,
        write=settings.write_timeout,
        pool=settings.connect_timeout,
    )
    limits = httpx.Limits(
        max_connections=settings.concurrency,
        max_keepalive_connections=min(settings.idle_connections, settings.concurrency),
        keepalive_expiry=settings.idle_timeout,
    )
    verify = _tls_context(settings.ssl)
    cookies = http.cookiejar.CookieJar(policy=None if settings.accept_cookies else _NoCookies())
    client = httpx.Client(
        timeout=timeout,
        limits=limits,
        verify=verify,
        follow_redirects=settings.follow_redirects,
        proxy=settings.proxy,
        cookies=cookies,
        trust_env=False,  # the flow's properties decide, not the executor's environment
    )
    client.headers.pop("User-Agent", None)
    return client


@attrs.frozen
class RequestBody:
    """A request's body: bytes, or a spooled file removed after the call."""

    data: bytes | None = None
    path: Path | None = None
    gzip: bool = False

    @property
    def size(self) -> int:
        """Its length as sent without compression."""
        if self.path is not None:
            return self.path.stat().st_size
        return len(self.data or b"")

    @classmethod
    def spool(cls, stream: IO[bytes], size: int, *, compress: bool) -> RequestBody:
        """The body read from *stream* (a FlowFile's content): in memory when small."""
        if size <= BODY_IN_MEMORY:
            return cls(data=stream.read(), gzip=compress)
        handle = tempfile.NamedTemporaryFile(prefix="flowcore-http-", delete=False)  # noqa: SIM115
        with handle:
            shutil.copyfileobj(stream, handle, CHUNK)
        return cls(path=Path(handle.name), gzip=compress)

    def __iter__(self) -> Iterator[bytes]:
        """:meth:`chunks` afresh on every pass, so httpx can send the body again.

        Digest authentication answers a 401 and a 307/308 redirect repeats the request: httpx
        refuses to resend a generator it consumed, not an iterable it can walk again.
        """
        return self.chunks()

    def chunks(self) -> Iterator[bytes]:
        """The bytes to send, gzipped when asked, a chunk at a time."""
        raw = self._raw_chunks()
        if not self.gzip:
            yield from raw
            return
        packer = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
        for chunk in raw:
            packed = packer.compress(chunk)
            if packed:
                yield packed
        yield packer.flush()

    def _raw_chunks(self) -> Iterator[bytes]:
        if self.path is None:
            yield self.data or b""
            return
        with self.path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                yield chunk

    def discard(self) -> None:
        """Remove the spooled file, if any."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)


@functools.lru_cache(maxsize=1024)
def _url(text: str) -> httpx.URL:
    """*text* parsed once: most flows call one URL, and parsing is a request's largest cost."""
    return httpx.URL(text)


@attrs.frozen
class Call:
    """One HTTP request, fully evaluated on the trigger's thread.

    Attributes:
        method: the HTTP method, upper case.
        url: the URL.
        headers: header name and value pairs, in order (names may repeat).
        body: the body, or None for methods sent without one.
        chunked: send the body with ``Transfer-Encoding: chunked`` (no ``Content-Length``).
        auth: httpx auth (basic or digest), or None.
    """

    method: str
    url: str
    headers: Sequence[tuple[str, str]] = attrs.field(repr=False)
    body: RequestBody | None = None
    chunked: bool = False
    auth: httpx.Auth | None = attrs.field(default=None, repr=False)

    def request(self, client: httpx.Client) -> httpx.Request:
        """The httpx request for this call."""
        headers = list(self.headers)
        content: object = None
        if self.body is not None:
            if self.body.gzip and not self.chunked:
                # the length must be known before sending: compress in memory first
                packed = b"".join(self.body.chunks())
                headers.append(("Content-Length", str(len(packed))))
                content = packed
            else:
                content = self.body  # iterable again for a digest challenge or a redirect
                if not self.chunked:
                    headers.append(("Content-Length", str(self.body.size)))
        return client.build_request(self.method, _url(self.url), headers=headers, content=content)  # type: ignore[arg-type]


@attrs.define
class Exchange:
    """What a call came back with: an open response (body unread) or the error it raised.

    Attributes:
        response: the response with its body still to be read; the reader closes it.
        error: the exception the call raised instead.
        started: ``time.monotonic()`` when the call began.
        headers_ms: milliseconds until the status and headers arrived.
    """

    response: httpx.Response | None
    error: BaseException | None
    started: float
    headers_ms: int

    def close(self) -> None:
        """Close the response (its connection goes back to the pool)."""
        if self.response is not None:
            self.response.close()


def perform(client: httpx.Client, call: Call) -> Exchange:
    """Send *call*; return as soon as the status and headers arrived (body unread).

    Runs on a worker thread: it touches no session. Every exception is returned, not raised,
    so the trigger's thread routes it to Failure with the FlowFile.
    """
    started = time.monotonic()
    try:
        request = call.request(client)
        response = client.send(request, auth=call.auth, stream=True)
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) <= READ_IN_CALL:
            response.read()  # small: read here, off the trigger's thread
    except Exception as error:  # routed to Failure with its class and message
        return Exchange(None, error, started, int((time.monotonic() - started) * 1000))
    finally:
        if call.body is not None:
            call.body.discard()
    return Exchange(response, None, started, int((time.monotonic() - started) * 1000))


class HttpRuntime:
    """A task's client and its call pool; made at the first trigger, closed at stop.

    With one concurrent request the calls run on the trigger's thread (no hand-over cost);
    otherwise on ``concurrency`` worker threads.
    """

    def __init__(self, settings: ClientSettings) -> None:
        self.settings = settings
        self.client = open_client(settings)
        self._pool = (
            ThreadPoolExecutor(settings.concurrency, thread_name_prefix="invokehttp")
            if settings.concurrency > 1
            else None
        )

    def submit(self, call: Call) -> Future[Exchange]:
        """Start *call* (at once, inline, with one concurrent request)."""
        if self._pool is None:
            done: Future[Exchange] = Future()
            done.set_result(perform(self.client, call))
            return done
        return self._pool.submit(carry_context(perform), self.client, call)  # secrets masked

    def close(self) -> None:
        """Wait for calls in flight, then close every pooled connection."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self.client.close()
