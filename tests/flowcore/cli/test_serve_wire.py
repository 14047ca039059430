"""Tests for what ``flowcore serve`` and its clients share: the socket's place and the messages."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from flowcore.cli._common import UsageError
from flowcore.cli._serve_wire import (
    Channel,
    checked_path,
    connect,
    default_socket,
    lock_file,
    peer_credentials,
)


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$XDG_RUNTIME_DIR`` pointed at a fresh private directory."""
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(directory))
    return directory


def test_default_sockets_are_one_per_master_in_a_private_directory(runtime: Path) -> None:
    """The default socket is named after the master, in $XDG_RUNTIME_DIR/flowcore made 0700."""
    assert default_socket("local[2]") == runtime / "flowcore" / "local-2.sock"
    assert default_socket("local[*]") == runtime / "flowcore" / "local-all.sock"
    assert default_socket("local") == runtime / "flowcore" / "local.sock"
    assert default_socket("spark://host:7077") == runtime / "flowcore" / "spark-host-7077.sock"
    assert (runtime / "flowcore").stat().st_mode & 0o777 == 0o700


def test_a_long_master_url_keeps_its_start_and_a_checksum(runtime: Path) -> None:
    """Two long master URLs alike at the start get different sockets of bounded length."""
    first = default_socket("k8s://https://" + "a" * 80 + ".example.com:6443")
    second = default_socket("k8s://https://" + "a" * 80 + ".example.org:6443")
    assert first != second
    assert first.name.startswith("k8s-https-aaaa")
    assert len(first.name) < 60


def test_without_xdg_runtime_dir_the_sockets_live_in_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without $XDG_RUNTIME_DIR the sockets go to ~/.flowcore/serve, made 0700."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_socket("local[1]") == tmp_path / ".flowcore" / "serve" / "local-1.sock"
    assert (tmp_path / ".flowcore" / "serve").stat().st_mode & 0o777 == 0o700


def test_a_directory_others_may_enter_is_refused(runtime: Path) -> None:
    """A sockets' directory open to others is refused, naming it and the chmod that fixes it."""
    (runtime / "flowcore").mkdir(mode=0o755)
    (runtime / "flowcore").chmod(0o755)
    with pytest.raises(UsageError, match=r"only you can use \(mode 0700.*chmod 700"):
        default_socket("local[1]")


def test_a_socket_path_too_long_is_refused(tmp_path: Path) -> None:
    """A path longer than a socket address holds is refused, saying to pass a shorter one."""
    with pytest.raises(UsageError, match="shorter --socket"):
        checked_path(tmp_path / ("x" * 120))
    assert checked_path(Path("s.sock")) == Path.cwd() / "s.sock"
    assert lock_file(Path("/a/b.sock")) == Path("/a/b.sock.lock")


def test_no_server_and_a_stale_socket_say_to_start_one(tmp_path: Path) -> None:
    """Connecting where nothing listens names the path and `flowcore serve`; a socket file
    nobody listens on is called stale."""
    path = tmp_path / "s.sock"
    with pytest.raises(UsageError, match=f"no flowcore server at {path}; start one with"):
        connect(path)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, as a killed server leaves it
    with pytest.raises(UsageError, match="left from a server that stopped"):
        connect(path)


def test_messages_cross_a_connection_and_a_gone_peer_is_noticed() -> None:
    """Messages arrive whole and in order; once the peer closes, receive gives None and
    send returns False instead of raising."""
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    one, other = Channel(left), Channel(right)
    assert one.send(out="a\nb", note="ü")
    assert one.send(exit=3)
    assert other.receive() == {"out": "a\nb", "note": "ü"}
    assert other.receive() == {"exit": 3}
    other.close()
    assert one.receive() is None
    assert one.gone.is_set()
    assert one.send(out="late") is False
    one.close()


def test_peer_credentials_name_the_process_and_its_user() -> None:
    """SO_PEERCRED gives the peer's pid and uid (this process, at both ends of a pair)."""
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        found = peer_credentials(left)
    if found is not None:  # Linux
        assert found == (os.getpid(), os.getuid())
