"""Tests for processors/http_server/_deadline.py: a request's head and body are read within
deadlines, so a trickling client cannot hold a handler thread for hours."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from processors.http_server import _request_server as request_server
from processors.http_server._inbox import Inbox
from processors.http_server._request_server import ContainerQueue, RequestConfig, RequestServer
from processors.http_server._server import BoundedHeadersHandler, ListenerConfig, ListenerServer

HEAD = (
    b"POST /contentListener HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n" + b"X-Pad: y\r\n" * 40
)


@pytest.fixture
def tight(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deadlines small enough for a test: a head in 0.4 s, a body at 200 B/s after 0.3 s."""
    monkeypatch.setattr(BoundedHeadersHandler, "head_deadline_s", 0.4)
    monkeypatch.setattr(BoundedHeadersHandler, "body_grace_s", 0.3)
    monkeypatch.setattr(BoundedHeadersHandler, "min_body_rate", 200)


@pytest.fixture
def one_thread() -> Iterator[int]:
    """HandleHttpRequest's server with Maximum Threads 1 (its port); requests wait 1 s."""
    config = RequestConfig(frozenset({"GET", "POST"}), None, 1 << 20, 1 << 20, 8 * 1024, 1.0)
    server = RequestServer("127.0.0.1", 0, config, ContainerQueue(8), threads=1)
    try:
        yield server.port
    finally:
        server.close()


def _trickle(port: int, prefix: bytes, slow: bytes) -> tuple[int, bytes]:
    """Send *prefix*, then *slow* a byte each 20 ms until the server answers or closes.

    Returns how many bytes of *slow* were sent and what the server answered.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(prefix)
        sent = 0
        for byte in slow:
            if select.select([connection], [], [], 0.02)[0]:
                break  # an answer, or the connection closed
            try:
                connection.sendall(bytes([byte]))
            except OSError:
                break
            sent += 1
        reply = b""
        while part := connection.recv(4096):
            reply += part
    return sent, reply


def test_a_trickled_head_is_answered_408_at_its_deadline(tight: None, one_thread: int) -> None:
    """Headers sent a byte each 20 ms (far within the 30 s socket timeout) are cut at the
    head's deadline with 408 and the connection closed; the one thread then serves others."""
    sent, reply = _trickle(one_thread, b"POST / HTTP/1.1\r\n", HEAD[16:])
    assert sent < len(HEAD) - 16
    assert reply.startswith(b"HTTP/1.1 408 ")
    with httpx.Client(timeout=10) as client:
        assert client.request("PUT", f"http://127.0.0.1:{one_thread}/").status_code == 405


def test_a_trickled_body_is_answered_408_below_the_least_rate(tight: None, one_thread: int) -> None:
    """A body at 50 B/s, below the least rate of 200 B/s, is cut soon after its grace with
    408; it never reaches the queue."""
    head = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n\r\n"
    sent, reply = _trickle(one_thread, head, b"b" * 400)
    assert sent < 400
    assert reply.startswith(b"HTTP/1.1 408 ")


def test_listen_http_cuts_a_trickled_head_too(tight: None) -> None:
    """ListenHTTP's server takes the same deadlines (its handler shares the bounded base)."""
    inbox = Inbox(8)
    config = ListenerConfig(base_path="contentListener", max_body=1024, wait_s=1)
    server = ListenerServer("127.0.0.1", 0, config, inbox)
    try:
        sent, reply = _trickle(server.port, b"", HEAD)
    finally:
        inbox.close()
        server.close()
    assert sent < len(HEAD)
    assert reply.startswith(b"HTTP/1.1 408 ")


def test_an_idle_keep_alive_connection_is_closed_without_an_answer(
    tight: None, monkeypatch: pytest.MonkeyPatch, one_thread: int
) -> None:
    """A connection that began no request is closed at the idle timeout, with no 408 (a
    client would take it as the answer to a request it sends at that moment)."""
    monkeypatch.setattr(request_server._Handler, "timeout", 0.4)
    with socket.create_connection(("127.0.0.1", one_thread), timeout=10) as connection:
        assert connection.recv(4096) == b""


def _answer(connection: socket.socket) -> bytes:
    """The status line of the next answer on *connection* (its body read too); b"" if closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        if not (part := connection.recv(4096)):
            return b""
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next(
        int(v) for n, _, v in (x.partition(b":") for x in lines) if n.lower() == b"content-length"
    )
    while len(body) < length:
        body += connection.recv(4096)
    return lines[0]


def test_idle_time_before_a_request_does_not_count_against_its_head(tight: None) -> None:
    """A keep-alive connection idle past the head's 0.4 s deadline, whose next request then
    comes promptly in two parts, has that request answered, not cut with 408: the head's
    deadline starts at its first byte, the wait before it is under the idle timeout."""
    inbox = Inbox(8)
    config = ListenerConfig(base_path="contentListener", max_body=1024, wait_s=1)
    server = ListenerServer("127.0.0.1", 0, config, inbox)
    request = b"GET /contentListener/healthcheck HTTP/1.1\r\nHost: x\r\n\r\n"
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
            connection.sendall(request)
            first = _answer(connection)
            time.sleep(0.5)  # idle past the head's deadline
            connection.sendall(request[:20])
            time.sleep(0.1)
            connection.sendall(request[20:])
            second = _answer(connection)
    finally:
        inbox.close()
        server.close()
    assert first.startswith(b"HTTP/1.1 200 ")
    assert second.startswith(b"HTTP/1.1 200 ")


def test_a_client_still_sending_its_body_after_a_408_is_not_reset(tight: None) -> None:
    """After a 408 the server drains what the client still sends before closing: a client
    writing on (it has not read the answer yet) is not reset, and then reads the 408."""
    inbox = Inbox(8)
    config = ListenerConfig(base_path="contentListener", max_body=1 << 20, wait_s=1)
    server = ListenerServer("127.0.0.1", 0, config, inbox)
    head = b"POST /contentListener HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
            connection.sendall(head)
            select.select([connection], [], [], 10)  # the 408, at the body's deadline
            for _ in range(5):  # the client writes on before it reads
                connection.sendall(b"b" * 1000)
                time.sleep(0.01)
            reply = b""
            while part := connection.recv(4096):
                reply += part
    finally:
        inbox.close()
        server.close()
    assert reply.startswith(b"HTTP/1.1 408 ")
