"""Requests held by an HTTP listener until their FlowFiles are durable, and the server taking them.

A request handler thread reads a request, hands it to the :class:`Inbox` and waits; the
source's ``list_work`` takes it out on the driver; the engine commits its FlowFiles; the
source's ``after_commit`` answers it, which wakes the handler thread to send the status. A
request that cannot be taken in (the inbox is full: back pressure) is answered 503 at once; one
not committed in time is answered 503 too, and taken back if it was not handed out yet, so a
client that retries it does not land it twice.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["SERVICE_UNAVAILABLE", "Held", "Inbox"]

#: Answered when the inbox is full, a request waits too long, or the listener stops.
SERVICE_UNAVAILABLE = 503


@attrs.define(eq=False)
class Held:
    """One request waiting for its FlowFiles' commit.

    Attributes:
        body: the request content.
        attributes: the FlowFile attributes the request gives.
        url: the request URL (the RECEIVE event's transit URI).
        subject: the client certificate's subject DN, or ``"none"``.
        millis: how long receiving the body took (the RECEIVE event's duration).
        issuer: the client certificate's issuer DN, or ``"none"``.
        pieces: the FlowFiles the body gives (the body itself, unpacked, or its records).
        key: the request's unique key (its work item's).
        status: the answer, once there is one.
        taken: whether ``list_work`` handed it out (its FlowFiles may be committing).
    """

    body: bytes
    attributes: Mapping[str, str]
    url: str
    subject: str
    millis: int
    issuer: str = "none"
    pieces: list[Any] = attrs.field(kw_only=True)
    key: str = attrs.field(factory=lambda: uuid.uuid4().hex)
    status: int | None = None
    taken: bool = False
    done: threading.Event = attrs.field(factory=threading.Event)


class Inbox:
    """The requests of one listener not answered yet: waiting to be listed, or listed.

    Args:
        capacity: requests held at most (waiting and listed); more are refused (503).
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        self._waiting: OrderedDict[str, Held] = OrderedDict()
        self._taken: dict[str, Held] = {}
        self._closed = False

    def offer(self, held: Held) -> bool:
        """Hold *held* until it is answered; False if the inbox is full or closed."""
        with self._lock:
            if self._closed or len(self._waiting) + len(self._taken) >= self._capacity:
                return False
            self._waiting[held.key] = held
            return True

    def take(self, limit: int) -> list[Held]:
        """Up to *limit* waiting requests, oldest first, now listed."""
        with self._lock:
            out: list[Held] = []
            while self._waiting and len(out) < limit:
                _, held = self._waiting.popitem(last=False)
                held.taken = True
                self._taken[held.key] = held
                out.append(held)
            return out

    def put_back(self, keys: Iterable[str]) -> None:
        """Listed requests whose read failed: they wait to be listed again, first."""
        with self._lock:
            for key in reversed(list(keys)):
                held = self._taken.pop(key, None)
                if held is not None and held.status is None:
                    held.taken = False
                    self._waiting[key] = held
                    self._waiting.move_to_end(key, last=False)

    def answer(self, keys: Iterable[str], status: int) -> None:
        """Answer the listed requests *keys* with *status* (their FlowFiles are committed)."""
        with self._lock:
            for key in keys:
                held = self._taken.pop(key, None)
                if held is not None:
                    held.status = status
                    held.done.set()

    def give_up(self, held: Held) -> bool:
        """*held* waited too long: True if it was never listed (then it is dropped here)."""
        with self._lock:
            if self._waiting.pop(held.key, None) is not None:
                return True
            self._taken.pop(held.key, None)  # its commit may still come: too late to tell
            return False

    def waiting(self) -> int:
        """Requests waiting to be listed."""
        with self._lock:
            return len(self._waiting)

    def close(self) -> None:
        """Answer every request 503 and refuse new ones (the listener stops)."""
        with self._lock:
            self._closed = True
            held = [*self._waiting.values(), *self._taken.values()]
            self._waiting.clear()
            self._taken.clear()
        for one in held:
            one.status = SERVICE_UNAVAILABLE
            one.done.set()
