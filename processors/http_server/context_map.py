"""StandardHttpContextMap: the HTTP requests HandleHttpRequest holds for HandleHttpResponse.

NiFi's controller service of that name keeps each request that HandleHttpRequest took in,
under its ``http.context.identifier``, until HandleHttpResponse answers it. Here a held request
is an :class:`Exchange`: the request handler thread waits on it, and whoever answers it first
(the response, the expiry, the server stopping) decides what the client gets; an exchange is
answered at most once, so no request is ever answered twice.

The requests live in the process that runs the HTTP server: the driver. A map enabled in a task
on a Spark executor holds none and says so (:meth:`StandardHttpContextMap.holds_requests`), so
HandleHttpResponse there leaves the lookup to its driver side, after the commit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, ClassVar

import attrs

from flowcore.controller_service import ControllerService, ServiceContext
from flowcore.errors import ProcessException
from flowcore.processor.context import carry_context
from flowcore.properties import PropertyDescriptor
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR, TIME_PERIOD_VALIDATOR

if TYPE_CHECKING:
    from flowcore.flowfile import Content
    from flowcore.processor.context import CommittedContent

__all__ = [
    "SERVICE_UNAVAILABLE",
    "Answer",
    "ContentBody",
    "Exchange",
    "HttpContextMap",
    "StandardHttpContextMap",
]

log = logging.getLogger(__name__)

#: The status an expired request, a refused one and a stopping server's get.
SERVICE_UNAVAILABLE = 503
#: NiFi's longest wait between two sweeps of expired requests, seconds.
CLEANUP_MAX_DELAY_S = 5.0


#: The piece of a :class:`ContentBody` read and sent at a time.
BODY_CHUNK = 1 << 20


class ContentBody:
    """A response body streamed from the content repository, a window at a time.

    HandleHttpResponse holds a large FlowFile's content when it hands the response over (after
    the commit that moved the FlowFile on); the request's handler thread reads and sends it a
    window at a time, and closes it once sent (or never to be sent), which lets the content's
    claims go. The body is never whole in memory, and never copied.

    Args:
        source: where the content is read, and held until :meth:`close`.
        content: the FlowFile's content, held by the caller already.
    """

    def __init__(self, source: CommittedContent, content: Content) -> None:
        self.source = source
        self.content = content
        self.length = content.length
        self._lock = threading.Lock()
        self._open = True

    @classmethod
    def held(cls, source: CommittedContent, content: Content) -> ContentBody:
        """A body of *content*, held from now until it is closed."""
        source.hold(content)
        return cls(source, content)

    def chunks(self) -> Iterator[bytes]:
        """The bytes, in pieces of at most :data:`BODY_CHUNK`.

        Raises:
            ContentNotFoundError, ContentCorruptionError: a window could not be read.
        """
        for offset in range(0, self.length, BODY_CHUNK):
            yield self.source.read(self.content, offset, min(BODY_CHUNK, self.length - offset))

    def close(self) -> None:
        """Release the content (once, however often it is called)."""
        with self._lock:
            if not self._open:
                return
            self._open = False
        self.source.release(self.content)


@attrs.frozen
class Answer:
    """What a client gets back for one request.

    Attributes:
        status: the HTTP status code.
        headers: response headers, in order (name, value).
        body: the response content.
        reason: the status line's phrase when it is an error flowcore gives (``Timeout occurred``).
    """

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | ContentBody = b""
    reason: str | None = None

    @property
    def length(self) -> int:
        """The body's bytes (the Content-Length)."""
        return self.body.length if isinstance(self.body, ContentBody) else len(self.body)

    def chunks(self) -> Iterator[bytes]:
        """The body in pieces, streamed from the content repository when it is held there."""
        if isinstance(self.body, ContentBody):
            yield from self.body.chunks()
        elif self.body:
            yield self.body

    def close(self) -> None:
        """Release the body's content, once sent (or never to be sent)."""
        if isinstance(self.body, ContentBody):
            self.body.close()


class Exchange:
    """One held request: its handler thread waits in :meth:`wait` until it is answered.

    Args:
        remote: the client's address (for log lines).
    """

    def __init__(self, remote: str = "") -> None:
        self.remote = remote
        self.created = time.monotonic()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._answer: Answer | None = None
        self._claimed = False
        #: The (small) body a claim prepared, sent when the response is (see :meth:`claim`).
        self.body: bytes | None = None

    def claim(self) -> bool:
        """Take the request for one response; False when a response has it already.

        A multipart request's FlowFiles share its identifier: the first to claim it is the
        answer, the others go to failure (NiFi answers with the first and finds no request
        for the rest). The claimant may keep the body it will send in :attr:`body`.
        """
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True

    def answer(self, answer: Answer) -> bool:
        """Answer the request; False (nothing sent, *answer* closed) if it was answered already."""
        with self._lock:
            taken = self._answer is None
            if taken:
                self._answer = answer
                self.body = None
        if not taken:
            answer.close()  # its body's content is let go: it will never be sent
            return False
        self._done.set()
        return True

    def unavailable(self, reason: str) -> bool:
        """Answer ``503 <reason>`` (NiFi's ``sendError(SC_SERVICE_UNAVAILABLE, reason)``)."""
        return self.answer(Answer(SERVICE_UNAVAILABLE, body=reason.encode(), reason=reason))

    @property
    def answered(self) -> bool:
        """Whether the request has its answer."""
        return self._done.is_set()

    def wait(self, timeout: float) -> Answer | None:
        """The answer, once given, or None after *timeout* seconds."""
        self._done.wait(timeout)
        return self._answer


class HttpContextMap(ControllerService):
    """NiFi's ``HttpContextMap`` interface: requests held by identifier until answered.

    A map of another kind (a test's) implements these five methods.
    """

    implements: ClassVar = ("HttpContextMap",)

    def register(self, identifier: str, exchange: Exchange) -> bool:
        """Hold *exchange* under *identifier*; False when the map is full.

        Raises:
            ProcessException: *identifier* is held already.
        """
        raise NotImplementedError

    def get_response(self, identifier: str) -> Exchange | None:
        """The held request *identifier*, or None when there is none (answered or expired)."""
        raise NotImplementedError

    def complete(self, identifier: str) -> Exchange:
        """Stop holding *identifier* (it is being answered): its exchange.

        Raises:
            ProcessException: nothing is held under *identifier*.
        """
        raise NotImplementedError

    def request_timeout_s(self) -> float:
        """How long a request is held before it is answered 503 (Request Expiration)."""
        raise NotImplementedError

    def holds_requests(self) -> bool:
        """Whether this process holds the map's requests (False in a task on an executor)."""
        raise NotImplementedError

    def serve_here(self) -> None:
        """Mark this process as the one holding the requests (the driver)."""


class StandardHttpContextMap(HttpContextMap):
    """Holds HTTP requests until they are answered or expire (NiFi's StandardHttpContextMap).

    At most Maximum Outstanding Requests are held (HandleHttpRequest answers one more 503
    ``Request Registration Failed``); one held longer than Request Expiration is answered 503
    ``Timeout occurred`` by a sweep that runs every half expiration, at most every 5 seconds.
    """

    nifi_types: ClassVar = ("org.apache.nifi.http.StandardHttpContextMap",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-http-context-map-nar")
    tags: ClassVar = ("http", "request", "response")

    MAX_OUTSTANDING_REQUESTS = PropertyDescriptor(
        "Maximum Outstanding Requests",
        description="The maximum number of HTTP requests that can be outstanding at any one "
        "time. Any attempt to register an additional HTTP Request will cause an error",
        required=True,
        default="5000",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    REQUEST_EXPIRATION = PropertyDescriptor(
        "Request Expiration",
        description="Specifies how long an HTTP Request should be left unanswered before being "
        "evicted from the cache and being responded to with a Service Unavailable status code",
        required=True,
        default="1 min",
        validators=(TIME_PERIOD_VALIDATOR,),
    )
    property_descriptors: ClassVar = (MAX_OUTSTANDING_REQUESTS, REQUEST_EXPIRATION)

    def on_enabled(self, context: ServiceContext) -> None:
        """Read the limits; the expiry sweep starts with the first request held."""
        self.max_size = int(context.get_property(self.MAX_OUTSTANDING_REQUESTS).as_integer() or 1)
        self.expiration_s = (
            float(context.get_property(self.REQUEST_EXPIRATION).as_time_period("ms") or 0) / 1000
        )
        self._held: dict[str, Exchange] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._home = False

    def on_disabled(self) -> None:
        """Stop the sweep and answer every request still held 503 (nobody will answer it)."""
        self._stop.set()
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for exchange in held:
            exchange.unavailable("Service Unavailable")

    # --- the interface --------------------------------------------------------------------------

    def register(self, identifier: str, exchange: Exchange) -> bool:
        """Hold *exchange*; False when Maximum Outstanding Requests are held already."""
        with self._lock:
            if len(self._held) >= self.max_size:
                return False
            if identifier in self._held:
                msg = f"HTTP Request already registered with identifier {identifier}"
                raise ProcessException(msg)
            self._held[identifier] = exchange
            self._home = True
            if self._sweeper is None:
                self._sweeper = threading.Thread(
                    target=carry_context(self._sweep),
                    name=f"StandardHttpContextMap-{self.name}",
                    daemon=True,
                )
                self._sweeper.start()
        return True

    def get_response(self, identifier: str) -> Exchange | None:
        """The request held under *identifier*, or None."""
        with self._lock:
            return self._held.get(identifier)

    def complete(self, identifier: str) -> Exchange:
        """Take *identifier* out of the map to answer it.

        Raises:
            ProcessException: nothing is held under it (answered, or expired).
        """
        with self._lock:
            exchange = self._held.pop(identifier, None)
        if exchange is None:
            msg = f"No HTTP Request registered with identifier {identifier}"
            raise ProcessException(msg)
        return exchange

    def request_timeout_s(self) -> float:
        """Request Expiration, in seconds."""
        return self.expiration_s

    def holds_requests(self) -> bool:
        """Whether this process is the one holding the requests (see :meth:`serve_here`)."""
        return self._home

    def serve_here(self) -> None:
        """This process holds the requests: the driver, where the servers and answers run.

        HandleHttpRequest calls it when its server starts, HandleHttpResponse's driver side
        at start-up: from then on a lookup that finds nothing here means the request is gone.
        """
        self._home = True

    def size(self) -> int:
        """Requests held now."""
        with self._lock:
            return len(self._held)

    def abandon(self, identifiers: Mapping[str, Exchange] | list[str], reason: str) -> None:
        """Answer the requests *identifiers* 503 *reason* and let them go (a server stops)."""
        with self._lock:
            gone = [self._held.pop(i, None) for i in identifiers]
        for exchange in gone:
            if exchange is not None:
                exchange.unavailable(reason)

    # --- expiry ---------------------------------------------------------------------------------

    def _sweep(self) -> None:
        """Answer expired requests 503 ``Timeout occurred`` until the map is disabled."""
        delay = max(0.01, min(self.expiration_s / 2, CLEANUP_MAX_DELAY_S))
        while not self._stop.wait(delay):
            self.expire_now()

    def expire_now(self) -> int:
        """Answer every request held longer than Request Expiration; how many there were."""
        threshold = time.monotonic() - self.expiration_s
        with self._lock:
            expired = [i for i, e in self._held.items() if e.created < threshold]
            gone = [self._held.pop(i) for i in expired]
        for exchange in gone:
            log.warning(
                "Request from %s timed out; responding with SERVICE_UNAVAILABLE", exchange.remote
            )
            exchange.unavailable("Timeout occurred")
        return len(gone)
