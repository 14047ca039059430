"""The SFTP connection through a proxy: NiFi's Proxy Type, Proxy Host, Proxy Port (FTPTransfer's).

Paramiko takes an open socket (``sock=``); this module opens it through a SOCKS5 proxy (RFC
1928, with RFC 1929 username/password when Http Proxy Username is set) or an HTTP proxy's
CONNECT (with Basic authentication), and hands it over once the tunnel is up. The target
host is sent by name (the proxy resolves it), as NiFi's proxied connections do.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import socket
import struct
import time

__all__ = ["DIRECT", "HTTP", "SOCKS", "ProxyError", "open_tunnel"]

DIRECT, HTTP, SOCKS = "DIRECT", "HTTP", "SOCKS"
_SOCKS_ERRORS = {
    1: "general SOCKS server failure", 2: "connection not allowed by ruleset",
    3: "network unreachable", 4: "host unreachable", 5: "connection refused",
    6: "TTL expired", 7: "command not supported", 8: "address type not supported",
}  # fmt: skip


class ProxyError(OSError):
    """The proxy refused the tunnel (an OSError: the processors route it as a network error)."""


def open_tunnel(  # noqa: PLR0917 (the tunnel's parts)
    kind: str, proxy: tuple[str, int], target: tuple[str, int], timeout: float,
    user: str | None = None, password: str | None = None,
) -> socket.socket:  # fmt: skip
    """A socket connected to *target* through the *kind* proxy at *proxy*.

    The whole handshake has *timeout* seconds (one deadline, not one per read: a proxy
    answering a byte at a time would hold it for ever), and only what the protocol can
    carry is sent: a field over 255 bytes, or a host with spaces or control characters (a
    Hostname from attributes could add headers to CONNECT), is refused before.

    Raises:
        ProxyError: the proxy refused (the message names the proxy and its answer), answered
            out of protocol or too slowly, or the target or credentials cannot be sent.
        OSError: the proxy is unreachable, or the connection timed out.
    """
    _check_host(target[0])
    deadline = time.monotonic() + timeout
    sock = socket.create_connection(proxy, timeout=timeout)
    try:
        if kind == SOCKS:
            _socks5(sock, proxy, target, (user, password), deadline)
        else:
            _http_connect(sock, proxy, target, (user, password), deadline)
    except BaseException:
        with contextlib.suppress(OSError):
            sock.close()
        raise
    sock.settimeout(timeout)  # the handshake's last read left its remainder
    return sock


def _check_host(host: str) -> None:
    """A target host the proxy request can carry: no spaces or control characters."""
    if not host or any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in host):
        msg = f"Hostname {host!r} holds spaces or control characters: it cannot be sent to a proxy"
        raise ProxyError(msg)


def _field(value: str, what: str, where: str) -> bytes:
    """One SOCKS length-prefixed field (at most 255 bytes)."""
    data = value.encode()
    if len(data) > 255:
        msg = f"{what} is {len(data)} bytes: {where} takes at most 255"
        raise ProxyError(msg)
    return bytes([len(data)]) + data


def _socks5(
    sock: socket.socket, proxy: tuple[str, int], target: tuple[str, int],
    credentials: tuple[str | None, str | None], deadline: float,
) -> None:  # fmt: skip
    where = f"SOCKS proxy {proxy[0]}:{proxy[1]}"
    user, password = credentials
    host, port = target
    if user:  # the fields checked before anything is sent
        login = b"\x01" + _field(user, "Http Proxy Username", where)
        login += _field(password or "", "Http Proxy Password", where)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        address = b"\x03" + _field(host, f"Hostname {host[:40]!r}", where)
    else:
        address = (b"\x01" if ip.version == 4 else b"\x04") + ip.packed
    methods = b"\x00\x02" if user else b"\x00"
    sock.sendall(b"\x05" + bytes([len(methods)]) + methods)
    version, method = _read(sock, 2, where, deadline)
    if version != 5:
        msg = f"{where} answered as SOCKS version {version}, not 5"
        raise ProxyError(msg)
    if method not in methods:
        msg = f"{where} accepts none of the offered authentication methods"
        raise ProxyError(msg)
    if method == 2:
        sock.sendall(login)
        answer = _read(sock, 2, where, deadline)
        if answer[0] != 1:
            msg = f"{where} answered the login as version {answer[0]}, not 1 (RFC 1929)"
            raise ProxyError(msg)
        if answer[1] != 0:
            msg = f"{where} refused the username and password (Http Proxy Username)"
            raise ProxyError(msg)
    sock.sendall(b"\x05\x01\x00" + address + struct.pack("!H", port))
    reply = _read(sock, 4, where, deadline)
    if reply[0] != 5:
        msg = f"{where} answered CONNECT as SOCKS version {reply[0]}, not 5"
        raise ProxyError(msg)
    if reply[1] != 0:
        msg = f"{where} could not connect to {host}:{port}: " + _SOCKS_ERRORS.get(
            reply[1], f"error {reply[1]}"
        )
        raise ProxyError(msg)
    bound = {1: 4, 4: 16}.get(reply[3])
    if bound is None:
        bound = _read(sock, 1, where, deadline)[0]
    _read(sock, bound + 2, where, deadline)  # the proxy's bound address and port: unused


def _http_connect(
    sock: socket.socket, proxy: tuple[str, int], target: tuple[str, int],
    credentials: tuple[str | None, str | None], deadline: float,
) -> None:  # fmt: skip
    where = f"HTTP proxy {proxy[0]}:{proxy[1]}"
    user, password = credentials
    host, port = target
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
    if user:
        token = base64.b64encode(f"{user}:{password or ''}".encode()).decode()
        lines.append(f"Proxy-Authorization: Basic {token}")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:  # byte by byte: what follows the head is the SSH server's
        head += _read(sock, 1, where, deadline)
        if len(head) > 65536:
            msg = f"{where} answered CONNECT with an over-long head"
            raise ProxyError(msg)
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = status.split(" ", 2)
    if not parts[0].startswith("HTTP/"):
        msg = f"{where} answered CONNECT out of HTTP: {status[:80]!r}"
        raise ProxyError(msg)
    if len(parts) < 2 or not parts[1].startswith("2"):
        msg = f"{where} refused CONNECT {authority}: {status}"
        raise ProxyError(msg)


def _read(sock: socket.socket, count: int, where: str, deadline: float) -> bytes:
    """*count* bytes, or ProxyError once the handshake's *deadline* (monotonic) passes."""
    data = b""
    while len(data) < count:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            msg = f"{where} did not finish the handshake in time (Connection Timeout)"
            raise ProxyError(msg)
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(count - len(data))
        except TimeoutError:
            msg = f"{where} did not finish the handshake in time (Connection Timeout)"
            raise ProxyError(msg) from None
        if not chunk:
            msg = f"{where} closed the connection during the handshake"
            raise ProxyError(msg)
        data += chunk
    return data
