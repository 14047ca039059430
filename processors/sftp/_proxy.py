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

    Raises:
        ProxyError: the proxy refused (the message names the proxy and its answer).
        OSError: the proxy is unreachable, or the connection timed out.
    """
    sock = socket.create_connection(proxy, timeout=timeout)
    try:
        if kind == SOCKS:
            _socks5(sock, proxy, target, user, password)
        else:
            _http_connect(sock, proxy, target, user, password)
    except BaseException:
        with contextlib.suppress(OSError):
            sock.close()
        raise
    return sock


def _socks5(
    sock: socket.socket, proxy: tuple[str, int], target: tuple[str, int],
    user: str | None, password: str | None,
) -> None:  # fmt: skip
    where = f"SOCKS proxy {proxy[0]}:{proxy[1]}"
    methods = b"\x00\x02" if user else b"\x00"
    sock.sendall(b"\x05" + bytes([len(methods)]) + methods)
    version, method = _read(sock, 2, where)
    if version != 5 or method == 0xFF:
        msg = f"{where} accepts none of the offered authentication methods"
        raise ProxyError(msg)
    if method == 2:
        name, secret = (user or "").encode(), (password or "").encode()
        sock.sendall(b"\x01" + bytes([len(name)]) + name + bytes([len(secret)]) + secret)
        if _read(sock, 2, where)[1] != 0:
            msg = f"{where} refused the username and password (Http Proxy Username)"
            raise ProxyError(msg)
    host, port = target
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        address = b"\x03" + bytes([len(host.encode())]) + host.encode()
    else:
        address = (b"\x01" if ip.version == 4 else b"\x04") + ip.packed
    sock.sendall(b"\x05\x01\x00" + address + struct.pack("!H", port))
    reply = _read(sock, 4, where)
    if reply[1] != 0:
        msg = f"{where} could not connect to {host}:{port}: " + _SOCKS_ERRORS.get(
            reply[1], f"error {reply[1]}"
        )
        raise ProxyError(msg)
    bound = {1: 4, 4: 16}.get(reply[3])
    if bound is None:
        bound = _read(sock, 1, where)[0]
    _read(sock, bound + 2, where)  # the proxy's bound address and port: unused


def _http_connect(
    sock: socket.socket, proxy: tuple[str, int], target: tuple[str, int],
    user: str | None, password: str | None,
) -> None:  # fmt: skip
    where = f"HTTP proxy {proxy[0]}:{proxy[1]}"
    host, port = target
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
    if user:
        token = base64.b64encode(f"{user}:{password or ''}".encode()).decode()
        lines.append(f"Proxy-Authorization: Basic {token}")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:  # byte by byte: what follows the head is the SSH server's
        head += _read(sock, 1, where)
        if len(head) > 65536:
            msg = f"{where} answered CONNECT with an over-long head"
            raise ProxyError(msg)
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = status.split(" ", 2)
    if len(parts) < 2 or not parts[1].startswith("2"):
        msg = f"{where} refused CONNECT {authority}: {status}"
        raise ProxyError(msg)


def _read(sock: socket.socket, count: int, where: str) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            msg = f"{where} closed the connection during the handshake"
            raise ProxyError(msg)
        data += chunk
    return data
