"""Deadlines for reading a request: its head as a whole, its body at a least rate.

A socket timeout restarts with every chunk received, so a client sending its headers a byte
each 29 s would hold a handler thread (a Maximum Threads slot of HandleHttpRequest) for hours.
:class:`DeadlineReader` sits under the handler's buffered reader and bounds, beside that idle
timeout, the request line and headers together (:data:`HEAD_DEADLINE_S` from the request's
first byte; before it, a keep-alive connection waiting for its next request is bounded by the
idle timeout alone, as Jetty's idle timeout bounds it, so a prompt request after a long idle
is read whole) and the body by a least average rate (:data:`MIN_BODY_RATE` bytes a second after a
grace of :data:`BODY_GRACE_S`, as Jetty's ``minRequestDataRate``): a slow honest upload goes
on, a trickle is cut. Past a deadline the read raises :class:`RequestTimeout`; the handler
answers 408 where a response can still be sent, and closes the connection.
"""

from __future__ import annotations

import io
import socket
import time
from typing import Any

__all__ = [
    "BODY_GRACE_S",
    "DRAIN_BYTES",
    "DRAIN_S",
    "HEAD_DEADLINE_S",
    "MIN_BODY_RATE",
    "DeadlineReader",
    "RequestTimeout",
    "drain",
]

#: Seconds the request line and headers may take in all, from the request's first byte (a
#: keep-alive connection's wait for its next request does not count: the idle timeout bounds
#: it, and an idle connection is closed after it without an answer).
HEAD_DEADLINE_S = 30.0
#: Seconds a body may take before its rate is held to :data:`MIN_BODY_RATE`.
BODY_GRACE_S = 30.0
#: The least average rate of a body past its grace, bytes a second (a body of 1 MiB may take
#: 30 s plus 17 min; a trickle of a byte a second is cut after 30 s and 1 KiB).
MIN_BODY_RATE = 1024
#: After a 408, the most bytes and seconds of what the client still sends that are read and
#: dropped before the connection is closed: closed with its bytes unread, or while it still
#: writes, the client gets a reset and may never read the 408 (a lingering close, as Jetty's).
DRAIN_BYTES = 64 * 1024
DRAIN_S = 1.0


class RequestTimeout(TimeoutError):
    """A request's head or body was not received within its deadline.

    Attributes:
        phase: ``"head"`` (request line and headers) or ``"body"``.
        started: whether any of that part had arrived (a connection idle between requests
            has not started one, and is closed without an answer).
    """

    def __init__(self, phase: str, started: bool) -> None:
        super().__init__(f"the request {phase} was not received within its deadline")
        self.phase = phase
        self.started = started


class DeadlineReader(io.RawIOBase):
    """A socket's reads bounded by the socket's idle timeout and the current part's deadline.

    Args:
        sock: the connection (plain or TLS).
        idle_s: the socket's own timeout (restarting with each chunk), or None.
    """

    def __init__(self, sock: Any, idle_s: float | None) -> None:
        super().__init__()
        self._sock = sock
        self._idle = idle_s
        self.received = 0  # bytes read from the socket
        self._phase: str | None = None
        self._start = 0.0  # when the phase began (monotonic)
        self._base = 0  # self.received then
        self._grace = 0.0
        self._rate = 0  # bytes a second past the grace (0: the grace is the whole deadline)
        self._awaiting = False  # a head whose first byte has not arrived: idle timeout only
        #: the deadline that passed in the current request, if one did
        self.timed_out: RequestTimeout | None = None

    def readable(self) -> bool:
        return True

    def head(self, deadline_s: float) -> None:
        """A new request: its line and headers must arrive within *deadline_s* of its first byte.

        Until that byte only the idle timeout applies: the time a keep-alive connection idles
        between requests is not the next request's.
        """
        self.timed_out = None
        self._begin("head", deadline_s, 0)
        self._awaiting = True

    def body(self, grace_s: float, rate: int) -> None:
        """From now, the body must arrive at *rate* bytes a second on average after *grace_s*."""
        self._begin("body", grace_s, rate)

    def off(self) -> None:
        """No deadline: only the idle timeout (while the handler waits or answers)."""
        self._phase = None

    def _begin(self, phase: str, grace_s: float, rate: int) -> None:
        self._phase = phase
        self._awaiting = False
        self._start = time.monotonic()
        self._base = self.received
        self._grace = grace_s
        self._rate = rate

    def _deadline(self) -> float:
        taken = self.received - self._base
        return self._start + self._grace + (taken / self._rate if self._rate else 0.0)

    def readinto(self, buffer: Any) -> int:
        """Read what the socket has (at least a byte), or raise past the idle timeout or deadline.

        Raises:
            RequestTimeout: the current part's deadline passed.
            TimeoutError: the idle timeout passed.
        """
        phase = self._phase
        if phase is None or self._awaiting:
            count = self._sock.recv_into(buffer)  # under the socket's idle timeout
            self.received += count
            if count and self._awaiting:  # the request's first byte: its head's deadline starts
                self._awaiting = False
                self._start = time.monotonic()
            return int(count)
        deadline = self._deadline()
        left = deadline - time.monotonic()
        started = self.received > self._base
        if left <= 0:
            self.timed_out = RequestTimeout(phase, started)
            raise self.timed_out
        wait = left if self._idle is None else min(self._idle, left)
        self._sock.settimeout(wait)
        try:
            count = self._sock.recv_into(buffer)
        except TimeoutError:
            if self._idle is None or left < self._idle:  # the deadline came first
                self.timed_out = RequestTimeout(phase, started)
                raise self.timed_out from None
            raise
        finally:
            self._sock.settimeout(self._idle)
        self.received += count
        return int(count)


def drain(sock: Any) -> None:
    """End *sock*'s sending side, then read and drop what the client still sends, briefly.

    Called after a 408: the client learns the answer is whole (its end of file), and its
    writes still in flight are taken, not reset, for up to :data:`DRAIN_BYTES` bytes and
    :data:`DRAIN_S` seconds, or until it closes; the connection is closed after.
    """
    end = time.monotonic() + DRAIN_S
    left = DRAIN_BYTES
    try:
        sock.shutdown(socket.SHUT_WR)
        while left > 0 and (wait := end - time.monotonic()) > 0:
            sock.settimeout(wait)
            data = sock.recv(min(left, 16 * 1024))
            if not data:
                break
            left -= len(data)
    except OSError:  # timed out, or the client went: nothing more to take
        pass
