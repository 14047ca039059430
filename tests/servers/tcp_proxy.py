"""A loopback TCP forwarder that a test can cut: a lost connection to a real server.

``cut()`` closes every forwarded connection and refuses new ones (a network outage);
``restore()`` accepts again. Used to lose PostgreSQL between a PREPARE and its COMMIT PREPARED.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

__all__ = ["TcpProxy", "tcp_proxy"]


class TcpProxy:
    """Forwards 127.0.0.1:``port`` to ``target``; see the module docstring."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open = True
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if not self._open:
                    client.close()
                    continue
                try:
                    server = socket.create_connection(self.target, timeout=5)
                except OSError:
                    client.close()
                    continue
                self._sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Drop every forwarded connection; refuse new ones until :meth:`restore`."""
        with self._lock:
            self._open = False
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def restore(self) -> None:
        """Forward new connections again."""
        with self._lock:
            self._open = True

    def close(self) -> None:
        """Stop listening and drop everything."""
        self._stopped = True
        self.cut()
        self._listener.close()


@contextlib.contextmanager
def tcp_proxy(host: str, port: int) -> Iterator[TcpProxy]:
    """A :class:`TcpProxy` to ``host:port`` for the block."""
    proxy = TcpProxy((host, port))
    try:
        yield proxy
    finally:
        proxy.close()
