"""The PostgreSQL cluster the SQL tests share (one per test session)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.postgres import PostgresServer, postgres_server


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL 15 cluster on loopback."""
    with postgres_server() as server:
        yield server
