"""A real SFTP server for the tests: paramiko's server side on a free loopback port.

It serves a temporary directory (``root``) to user ``flow`` with password ``flow-secret`` or
the client key ``client_key``; its host key is generated per session. One server per test
session (``sftp_server``); traffic never leaves loopback.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

USER = "flow"
PASSWORD = "flow-secret-password"
#: setstat (chmod, utime) on a path holding this is refused, as some servers refuse it
REFUSE_SETSTAT = "nosetstat"
#: a plain (SFTP v3) rename onto a path holding this fails
REFUSE_RENAME = "norename"
#: posix-rename@openssh.com onto a path holding this is unsupported, as on a server without it
POSIX_RENAME_OFF = "noposixrename"
#: ... refused with a generic failure instead (servers word a missing extension their own way)
POSIX_RENAME_FAILS = "posixrenamefails"


def _paramiko() -> Any:
    return pytest.importorskip("paramiko")


def _server_classes(root: Path, client_public: str) -> tuple[type, type]:
    paramiko = _paramiko()

    class Handle(paramiko.SFTPHandle):
        def stat(self) -> Any:
            try:
                return paramiko.SFTPAttributes.from_stat(os.fstat(self.readfile.fileno()))
            except OSError as e:
                return paramiko.SFTPServer.convert_errno(e.errno)

        def chattr(self, attr: Any) -> int:
            return paramiko.sftp.SFTP_OK

    class Sftp(paramiko.SFTPServerInterface):
        def _real(self, path: str) -> str:
            plain = paramiko.SFTPServerInterface.canonicalize(self, path)  # links kept
            return str(root / plain.lstrip("/"))

        def canonicalize(self, path: str) -> str:
            """REALPATH resolves links, as OpenSSH's realpath(3) does."""
            real = os.path.realpath(self._real(path))
            relative = os.path.relpath(real, os.path.realpath(root))
            if relative.startswith(".."):
                return paramiko.SFTPServerInterface.canonicalize(self, path)
            return "/" if relative == "." else "/" + relative

        def list_folder(self, path: str) -> Any:
            real = self._real(path)
            try:
                out = []
                for name in os.listdir(real):
                    attr = paramiko.SFTPAttributes.from_stat(os.lstat(os.path.join(real, name)))
                    attr.filename = name
                    out.append(attr)
                return out
            except OSError as e:
                return paramiko.SFTPServer.convert_errno(e.errno)

        def stat(self, path: str) -> Any:
            try:
                return paramiko.SFTPAttributes.from_stat(os.stat(self._real(path)))
            except OSError as e:
                return paramiko.SFTPServer.convert_errno(e.errno)

        lstat = stat

        def open(self, path: str, flags: int, attr: Any) -> Any:
            real = self._real(path)
            try:
                fd = os.open(real, flags | getattr(os, "O_BINARY", 0), 0o644)
            except OSError as e:
                return paramiko.SFTPServer.convert_errno(e.errno)
            if flags & os.O_WRONLY:
                mode = "ab" if flags & os.O_APPEND else "wb"
            elif flags & os.O_RDWR:
                mode = "a+b" if flags & os.O_APPEND else "r+b"
            else:
                mode = "rb"
            handle = Handle(flags)
            handle.filename = real
            handle.readfile = handle.writefile = os.fdopen(fd, mode)
            return handle

        def remove(self, path: str) -> int:
            try:
                os.remove(self._real(path))
            except OSError as e:
                return paramiko.SFTPServer.convert_errno(e.errno)
            return paramiko.sftp.SFTP_OK

        def rename(self, old: str, new: str) -> int:
            if REFUSE_RENAME in new:
                return paramiko.sftp.SFTP_FAILURE  # a rename that fails (disk, quota, ...)
            if os.path.exists(self._real(new)):
                return paramiko.sftp.SFTP_FAILURE  # SFTP v3: rename does not overwrite
            try:
                os.rename(self._real(old), self._real(new))
            except OSError as e:
                return paramiko.SFTPServer.convert_errno(e.errno)
            return paramiko.sftp.SFTP_OK

        def posix_rename(self, old: str, new: str) -> int:
            if POSIX_RENAME_OFF in new:
                return paramiko.sftp.SFTP_OP_UNSUPPORTED  # a server without the extension
            if POSIX_RENAME_FAILS in new:
                return paramiko.sftp.SFTP_FAILURE
            try:
                os.replace(self._real(old), self._real(new))
            except OSError as e:
                return paramiko.SFTPServer.convert_errno(e.errno)
            return paramiko.sftp.SFTP_OK

        def mkdir(self, path: str, attr: Any) -> int:
            try:
                os.mkdir(self._real(path))
            except OSError as e:
                return paramiko.SFTPServer.convert_errno(e.errno)
            return paramiko.sftp.SFTP_OK

        def rmdir(self, path: str) -> int:
            try:
                os.rmdir(self._real(path))
            except OSError as e:
                return paramiko.SFTPServer.convert_errno(e.errno)
            return paramiko.sftp.SFTP_OK

        def chattr(self, path: str, attr: Any) -> int:
            if REFUSE_SETSTAT in path:  # a server that allows no setstat on such files
                return paramiko.sftp.SFTP_PERMISSION_DENIED
            real = self._real(path)
            if attr.st_mtime is not None:
                os.utime(real, (attr.st_atime or attr.st_mtime, attr.st_mtime))
            if attr.st_mode is not None:
                os.chmod(real, attr.st_mode & 0o7777)
            if attr.st_uid is not None:
                os.chown(real, attr.st_uid, attr.st_gid)
            return paramiko.sftp.SFTP_OK

    class Server(paramiko.ServerInterface):
        def check_auth_password(self, username: str, password: str) -> int:
            ok = username == USER and password == PASSWORD
            return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

        def check_auth_publickey(self, username: str, key: Any) -> int:
            ok = username == USER and key.get_base64() == client_public
            return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

        def get_allowed_auths(self, username: str) -> str:
            return "password,publickey"

        def check_channel_request(self, kind: str, chanid: int) -> int:
            return paramiko.OPEN_SUCCEEDED

    return Server, Sftp


class SftpServer:
    """The running server: where it listens, what it serves, its keys."""

    def __init__(self, root: Path, keys: Path) -> None:
        paramiko = _paramiko()
        self.root = root
        self.host = "127.0.0.1"
        self.host_key = paramiko.RSAKey.generate(2048)
        client = paramiko.RSAKey.generate(2048)
        self.client_key = keys / "client_rsa"
        client.write_private_key_file(str(self.client_key))
        self.known_hosts = keys / "known_hosts"
        self._server_cls, self._sftp_cls = _server_classes(root, client.get_base64())
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((self.host, 0))
        self._sock.listen(32)
        self.port = int(self._sock.getsockname()[1])
        self.known_hosts.write_text(
            f"[{self.host}]:{self.port} {self.host_key.get_name()} {self.host_key.get_base64()}\n"
        )
        self._stopped = False
        self.connections = 0  # SSH connections accepted so far
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        paramiko = _paramiko()
        while not self._stopped:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            transport = paramiko.Transport(conn)
            transport.add_server_key(self.host_key)
            transport.use_compression(True)  # offered: a client asking for zlib gets it
            transport.set_subsystem_handler("sftp", paramiko.SFTPServer, self._sftp_cls)
            try:
                transport.start_server(server=self._server_cls())
            except Exception:
                transport.close()

    def stop(self) -> None:
        """Stop accepting connections."""
        self._stopped = True
        self._sock.close()


@pytest.fixture(scope="session")
def sftp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SftpServer]:
    """One SFTP server on loopback for the session."""
    server = SftpServer(tmp_path_factory.mktemp("sftp-root"), tmp_path_factory.mktemp("keys"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def remote(sftp_server: SftpServer, tmp_path: Path) -> Path:
    """A fresh directory on the server for one test (its path relative to the root)."""
    directory = sftp_server.root / tmp_path.name
    directory.mkdir()
    return directory


def configure(runner: Any, server: SftpServer, **more: str) -> None:
    """Point a runner's SFTP processor at the server, with password auth."""
    runner.set_property("Hostname", server.host)
    runner.set_property("Port", str(server.port))
    runner.set_property("Username", USER)
    runner.set_property("Password", PASSWORD)
    runner.set_property("Connection Timeout", "5 sec")
    runner.set_property("Data Timeout", "5 sec")
    for name, value in more.items():
        runner.set_property(name, value)
