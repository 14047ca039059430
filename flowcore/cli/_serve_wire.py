"""What ``flowcore serve`` and ``flowcore run --server`` share: the socket's place and the messages.

The server listens on a Unix domain socket, never on TCP. By default there is one per user and
Spark master, ``$XDG_RUNTIME_DIR/flowcore/<master>.sock`` (``~/.flowcore/serve/<master>.sock``
where that variable is unset), in a directory only its owner may enter (0700); a server takes
an advisory lock on ``<socket>.lock`` for its lifetime, so a second one on the same socket is
refused and a socket file left by a killed one is known to be stale. The socket itself is made
0700 too and the server accepts only peers of its own user id (``SO_PEERCRED``).

Messages are JSON objects, one per line, both ways. The client sends its request first, then
``{"stop": true}`` when Ctrl-C asks the run to stop; the server sends ``out`` and ``err`` (what the
run prints on stdout and stderr), ``note`` (about the server, e.g. that the run waits for another)
and finally ``exit`` (the run's exit status). A connection that ends before ``exit`` means the
server died.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import struct
import threading
import zlib
from pathlib import Path
from typing import Any

from flowcore.cli._argv import SERVER_ENV
from flowcore.cli._common import UsageError

__all__ = [
    "PROTOCOL",
    "Channel",
    "connect",
    "default_socket",
    "lock_file",
    "peer_credentials",
    "server_directory",
]

#: The version of the messages; a client and server of other versions refuse each other.
PROTOCOL = 1


#: The longest path a Unix domain socket may have (``sun_path`` is 108 bytes with its NUL).
_MAX_SOCKET_PATH = 107
_SLUG_LIMIT = 40  # characters of a master URL kept in the default socket's name


def server_directory() -> Path:
    """The private directory of the default sockets: created 0700 when missing.

    Raises:
        UsageError: the directory exists but another user owns it or others may enter it.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "flowcore" if runtime else Path.home() / ".flowcore" / "serve"
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = base.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        msg = (
            f"{base} must be a directory only you can use (mode 0700, owned by you) to hold "
            f"flowcore's server sockets; chmod 700 {base}, or pass --socket PATH"
        )
        raise UsageError(msg)
    return base


def default_socket(master: str) -> Path:
    """The default socket of a server on *master*: one per user and master.

    The name is the master URL with ``*`` spelt ``all`` and other characters than letters,
    digits and dots made dashes (``local[2]`` -> ``local-2.sock``, ``local[*]`` ->
    ``local-all.sock``); a long URL keeps its start and a checksum.
    """
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", master.replace("*", "all")).strip("-") or "master"
    if len(slug) > _SLUG_LIMIT:
        slug = f"{slug[:_SLUG_LIMIT]}-{zlib.crc32(master.encode()):08x}"
    return server_directory() / f"{slug}.sock"


def checked_path(path: Path) -> Path:
    """*path* made absolute, refused when too long for a Unix domain socket.

    Raises:
        UsageError: the path has more bytes than a socket's address can hold.
    """
    path = Path(os.path.abspath(path))
    if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
        msg = (
            f"socket path {path} is longer than the {_MAX_SOCKET_PATH} bytes a Unix domain "
            "socket's address holds; pass a shorter --socket PATH"
        )
        raise UsageError(msg)
    return path


def lock_file(path: Path) -> Path:
    """The lock file a server on socket *path* holds while it runs."""
    return path.with_name(path.name + ".lock")


def connect(path: Path) -> socket.socket:
    """A connection to the server at *path*.

    Raises:
        UsageError: no server there (no socket, or a stale one left by a server that was
            killed), or it is not the user's to use; each says to start ``flowcore serve``.
    """
    path = checked_path(path)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(os.fspath(path))
    except (FileNotFoundError, ConnectionRefusedError) as error:
        client.close()
        stale = " (its socket is left from a server that stopped)" if path.exists() else ""
        msg = (
            f"no flowcore server at {path}{stale}; start one with: flowcore serve "
            f"--socket {path} (or run without --server and {SERVER_ENV})"
        )
        raise UsageError(msg) from error
    except PermissionError as error:
        client.close()
        msg = (
            f"the flowcore server at {path} is not yours to use (permission denied); start "
            "your own with: flowcore serve"
        )
        raise UsageError(msg) from error
    except OSError as error:  # not a socket, or another reason: the system's words
        client.close()
        msg = f"cannot reach a flowcore server at {path}: {error.strerror or error}"
        raise UsageError(msg) from error
    return client


def peer_credentials(connection: socket.socket) -> tuple[int, int] | None:
    """The (pid, uid) of the process at the other end of *connection*; None off Linux."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", raw)
    return pid, uid


class Channel:
    """One connection's messages: JSON objects, a line each; sends from any thread.

    Once the peer has gone, :meth:`send` reports it by returning False (and :attr:`gone` is
    set) rather than raising: the server's run goes on without its client, to stop cleanly.
    """

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self._reader = connection.makefile("rb")
        self._lock = threading.Lock()
        self.gone = threading.Event()

    def send(self, **message: Any) -> bool:
        """Send *message*; False when the peer has gone (then nothing more is sent)."""
        data = (json.dumps(message, ensure_ascii=False) + "\n").encode()
        with self._lock:
            if self.gone.is_set():
                return False
            try:
                self.connection.sendall(data)
            except OSError:
                self.gone.set()
                return False
        return True

    def receive(self) -> dict[str, Any] | None:
        """The next message; None once the peer has closed (or sent what is no message).

        Raises:
            TimeoutError: the connection has a timeout and nothing came within it.
        """
        try:
            line = self._reader.readline()
        except TimeoutError:
            raise
        except OSError:
            line = b""
        if not line:
            self.gone.set()
            return None
        try:
            message = json.loads(line)
        except ValueError:
            self.gone.set()
            return None
        return message if isinstance(message, dict) else None

    def close(self) -> None:
        """Close the connection (the peer then reads its end)."""
        with contextlib.suppress(OSError):
            self._reader.close()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.connection.close()
