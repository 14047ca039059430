"""A throwaway PostgreSQL cluster on loopback for the SQL tests (one per test session).

``initdb`` makes a cluster in a temporary directory, ``pg_ctl`` starts it on a free loopback
port with its unix socket in that directory (``max_prepared_transactions=10`` for two-phase
commits), and it is stopped and removed when the session ends. Run as root, the cluster is
owned and run by the ``postgres`` user (PostgreSQL refuses to run as root). Without
PostgreSQL's binaries the tests that need it skip, saying why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

__all__ = ["PostgresServer", "find_bin_dir", "postgres_server"]

_CANDIDATES = tuple(f"/usr/lib/postgresql/{v}/bin" for v in (15, 16, 17))


@attrs.frozen
class PostgresServer:
    """A running cluster: where to reach it and how to name it in a URL."""

    host: str
    port: int
    user: str
    database: str
    socket_dir: str

    @property
    def jdbc_url(self) -> str:
        """The URL a NiFi flow's DBCPConnectionPool would hold."""
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    def connect(self):
        """A psycopg connection with autocommit, for setting up and checking tables."""
        import psycopg

        return psycopg.connect(
            host=self.host, port=self.port, user=self.user, dbname=self.database, autocommit=True
        )

    def execute(self, sql: str, params: tuple | None = None) -> list[tuple]:
        """Run *sql* in its own connection; the rows it returns (none for a statement)."""
        with self.connect() as connection, connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall() if cursor.description else []


def find_bin_dir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``, or None when PostgreSQL is missing."""
    for candidate in _CANDIDATES:
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_owner(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@contextlib.contextmanager
def postgres_server(*, max_prepared_transactions: int = 10) -> Iterator[PostgresServer]:
    """Start a cluster, yield it, stop it and remove its directory.

    *max_prepared_transactions* 0 is PostgreSQL's own default (no PREPARE TRANSACTION).
    """
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (initdb not found): make installs it")
    psycopg = pytest.importorskip("psycopg", reason="psycopg missing: pip install 'flowcore[sql]'")
    del psycopg
    root = Path(tempfile.mkdtemp(prefix="flowcore-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")
    port = _free_port()
    try:
        subprocess.run(
            _as_owner(
                [
                    str(bin_dir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    user,
                    "-A",
                    "trust",
                    "--no-sync",
                    "-E",
                    "UTF8",
                    "--locale=C",
                ]
            ),
            check=True,
            capture_output=True,
            timeout=60,
        )
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={sockets} "
            f"-c max_prepared_transactions={max_prepared_transactions} -c fsync=off "
            "-c synchronous_commit=off "
            "-c full_page_writes=off -c max_connections=60"
        )
        subprocess.run(
            _as_owner(
                [
                    str(bin_dir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    "30",
                    "-l",
                    str(root / "log"),
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
            timeout=60,
        )
    except subprocess.CalledProcessError as error:
        log = (root / "log").read_text() if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {error.stderr.decode()[-500:]} {log[-500:]}")
    try:
        yield PostgresServer("127.0.0.1", port, user, "postgres", str(sockets))
    finally:
        subprocess.run(
            _as_owner([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            check=False,
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(root, ignore_errors=True)
