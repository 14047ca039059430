"""The SFTP processors through a SOCKS5 or HTTP CONNECT proxy (a tiny one on loopback)."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flowcore.testing import TestRunner
from processors.sftp import _proxy
from processors.sftp.fetch_sftp import FetchSFTP
from tests.processors.sftp.sftp_server import SftpServer, configure


class Proxy:
    """A SOCKS5 (username/password when *user* is set) and HTTP CONNECT proxy on loopback."""

    def __init__(self, user: str = "", password: str = "") -> None:
        self.user, self.password = user, password
        self.targets: list[tuple[str, str, int]] = []  # (kind, host, port) of each tunnel
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            first = conn.recv(1, socket.MSG_PEEK)
            target = self._socks(conn) if first == b"\x05" else self._http(conn)
            if target is None:
                return
            with socket.create_connection(target) as upstream:
                done = threading.Event()
                for a, b in ((conn, upstream), (upstream, conn)):
                    threading.Thread(target=_pipe, args=(a, b, done), daemon=True).start()
                done.wait(30)

    def _socks(self, conn: socket.socket) -> tuple[str, int] | None:
        _, count = _read(conn, 2)
        methods = _read(conn, count)
        if self.user:
            if 2 not in methods:
                conn.sendall(b"\x05\xff")
                return None
            conn.sendall(b"\x05\x02")
            _read(conn, 1)
            user = _read(conn, _read(conn, 1)[0]).decode()
            password = _read(conn, _read(conn, 1)[0]).decode()
            ok = (user, password) == (self.user, self.password)
            conn.sendall(b"\x01\x00" if ok else b"\x01\x01")
            if not ok:
                return None
        else:
            conn.sendall(b"\x05\x00")
        _, _, _, kind = _read(conn, 4)
        if kind == 3:
            host = _read(conn, _read(conn, 1)[0]).decode()
        else:
            host = socket.inet_ntoa(_read(conn, 4))
        (port,) = struct.unpack("!H", _read(conn, 2))
        self.targets.append(("SOCKS", host, port))
        conn.sendall(b"\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x00")
        return host, port

    def _http(self, conn: socket.socket) -> tuple[str, int] | None:
        head = b""
        while b"\r\n\r\n" not in head:
            head += _read(conn, 1)
        request = head.decode().split("\r\n")
        authority = request[0].split()[1]
        host, port = authority.rsplit(":", 1)
        if self.user and not any(h.startswith("Proxy-Authorization: Basic") for h in request):
            conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
            return None
        self.targets.append(("HTTP", host, int(port)))
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        return host, int(port)

    def close(self) -> None:
        """Stop accepting tunnels."""
        self._sock.close()


def _read(conn: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            msg = "closed"
            raise OSError(msg)
        data += chunk
    return data


def _pipe(source: socket.socket, sink: socket.socket, done: threading.Event) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    done.set()


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    """A proxy asking for user ``p`` with password ``q`` (SOCKS5) or any Basic credentials."""
    server = Proxy("p", "q")
    yield server
    server.close()


def _fetch(server: SftpServer, remote: Path, **more: str) -> TestRunner:
    (remote / "a.txt").write_bytes(b"through the proxy")
    runner = TestRunner(FetchSFTP())
    configure(runner, server, **{"Remote File": f"/{remote.name}/a.txt", **more})
    runner.enqueue(b"")
    runner.run()
    return runner


@pytest.mark.parametrize("kind", ["SOCKS", "HTTP"])
def test_fetch_through_a_proxy(
    sftp_server: SftpServer, remote: Path, proxy: Proxy, kind: str
) -> None:
    """Proxy Type SOCKS or HTTP tunnels the SSH connection through Proxy Host and Port."""
    runner = _fetch(sftp_server, remote, **{
        "Proxy Type": kind, "Proxy Host": "127.0.0.1", "Proxy Port": str(proxy.port),
        "Http Proxy Username": "p", "Http Proxy Password": "q",
    })  # fmt: skip
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(b"through the proxy")
    assert proxy.targets == [(kind, "127.0.0.1", sftp_server.port)]


def test_a_refusing_proxy_is_a_comms_failure(
    sftp_server: SftpServer, remote: Path, proxy: Proxy
) -> None:
    """Wrong SOCKS credentials: comms.failure, and no tunnel was made."""
    runner = _fetch(sftp_server, remote, **{
        "Proxy Type": "SOCKS", "Proxy Host": "127.0.0.1", "Proxy Port": str(proxy.port),
        "Http Proxy Username": "p", "Http Proxy Password": "wrong",
    })  # fmt: skip
    runner.assert_all_flowfiles_transferred("comms.failure", 1)
    assert proxy.targets == []


def test_a_proxy_type_without_a_host_names_the_fix(sftp_server: SftpServer, remote: Path) -> None:
    """Proxy Type HTTP without Proxy Host and Port: one error naming both properties."""
    with pytest.raises(Exception, match="Proxy Type HTTP needs Proxy Host and Proxy Port"):
        _fetch(sftp_server, remote, **{"Proxy Type": "HTTP"})


def _scripted(answer: bytes, drip: float = 0.0) -> tuple[str, int]:
    """A one-connection proxy that reads the request then sends *answer* (a byte each *drip* s)."""
    server = socket.create_server(("127.0.0.1", 0))

    def run() -> None:
        with contextlib.suppress(OSError), server:
            conn, _ = server.accept()
            with conn:
                conn.recv(4096)
                for i in range(len(answer)) if drip else [None]:
                    conn.sendall(answer[i : i + 1] if i is not None else answer)
                    if drip:
                        time.sleep(drip)
                time.sleep(1)

    threading.Thread(target=run, daemon=True).start()
    return server.getsockname()[:2]


def test_a_dripping_proxy_ends_at_one_deadline() -> None:
    """A proxy answering a byte at a time ends the handshake at the timeout, not per byte."""
    where = _scripted(b"HTTP/1.1 200 OK\r\nX: " + b"a" * 100, drip=0.05)
    with pytest.raises(_proxy.ProxyError, match="in time"):
        _proxy.open_tunnel("HTTP", where, ("h", 22), timeout=0.5)


@pytest.mark.parametrize(
    ("kind", "target", "user", "answer", "match"),
    [
        ("SOCKS", ("h", 22), "u" * 300, b"\x05\x02", "Http Proxy Username is 300 bytes"),
        ("SOCKS", ("h" * 300, 22), None, b"\x05\x00", "is 300 bytes"),
        ("HTTP", ("h\r\nX-Injected: 1", 22), None, b"", "control characters"),
        ("SOCKS", ("h", 22), None, b"\x05\x02", "none of the offered"),
        ("SOCKS", ("h", 22), None, b"\x04\x00", "version 4, not 5"),
        ("SOCKS", ("h", 22), "u", b"\x05\x02\x02\x00", "version 2, not 1"),
        ("HTTP", ("h", 22), None, b"SSH-2.0-x 200\r\n\r\n", "out of HTTP"),
    ],
)
def test_a_request_the_protocol_cannot_carry_or_an_answer_out_of_it_is_refused(
    kind: str, target: tuple[str, int], user: str | None, answer: bytes, match: str
) -> None:
    """Over-long fields, a host with control characters (header injection), a method not
    offered and wrong version bytes or status line end in ProxyError (an OSError)."""
    with pytest.raises(_proxy.ProxyError, match=match):
        _proxy.open_tunnel(kind, _scripted(answer), target, timeout=2, user=user, password="p")
