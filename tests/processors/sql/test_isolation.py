"""Transaction Isolation Level: QueryDatabaseTable's reads at the level set (isolation.py)."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import fastavro
import pytest

from flowcore.testing import TestRunner
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.query_database_table import QueryDatabaseTable
from processors.sql.query_database_table_record import QueryDatabaseTableRecord

#: A query that says its transaction's isolation level (and a maximum to list by).
_LEVEL_QUERY = "SELECT 1 AS n, current_setting('transaction_isolation') AS level"


def _runner(url: str, user: str | None, **props: str) -> TestRunner:
    runner = TestRunner(
        QueryDatabaseTable(
            **{"Database Connection Pooling Service": "dbcp", "Table Name": "t", **props}
        )
    )
    extra = {"Database User": user} if user else {}
    runner.add_service(DBCPConnectionPool("dbcp", **{"Database Connection URL": url, **extra}))
    return runner


def _rows(runner: TestRunner) -> list[dict]:
    return [
        r for o in runner.flowfiles_for("success") for r in fastavro.reader(io.BytesIO(o.content))
    ]


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        (None, "read committed"),
        ("8", "serializable"),
        ("4", "repeatable read"),
        ("1", "read uncommitted"),
        ("0", "read committed"),  # TRANSACTION_NONE: the driver's default stays
    ],
)
@pytest.mark.parametrize("max_column", [None, "n"])
def test_read_runs_at_the_level(postgres, level, expected, max_column) -> None:
    """NiFi's setTransactionIsolation: the read (and the maxima's listing query) run in a
    transaction of the level; the pooled connection goes back at the driver's default."""
    props = {"Custom Query": _LEVEL_QUERY}
    if level is not None:
        props["Transaction Isolation Level"] = level
    if max_column:
        props["Maximum-value Columns"] = max_column
    runner = _runner(postgres.jdbc_url, postgres.user, **props)
    runner.run(stop_on_finish=False)
    assert [r["level"] for r in _rows(runner)] == [expected]
    raw = runner.controller_service("dbcp").engine().raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("select current_setting('transaction_isolation')")
        assert cursor.fetchone() == ("read committed",)
    finally:
        raw.close()
        runner.stop()


def test_values_are_nifis() -> None:
    """JDBC's constants are the values (NiFi's names shown); another value is invalid."""
    runner = _runner("jdbc:sqlite::memory:", None, **{"Transaction Isolation Level": "3"})
    runner.assert_not_valid()
    runner = _runner("jdbc:sqlite::memory:", None, **{"Transaction Isolation Level": "2"})
    runner.assert_valid()


def test_a_level_the_database_lacks_is_raised(tmp_path: Path) -> None:
    """SQLite has no READ COMMITTED: the read runs at SERIALIZABLE, as SQLite's JDBC driver
    takes it (its rows read)."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table t (id integer)")
        db.execute("insert into t values (1)")
    runner = _runner(f"jdbc:sqlite:{path}", None, **{"Transaction Isolation Level": "2"})
    runner.run()
    assert _rows(runner) == [{"id": 1}]


def test_record_processor_has_none() -> None:
    """NiFi's QueryDatabaseTableRecord has no Transaction Isolation Level (QDT's only)."""
    names = {d.display_name for d in QueryDatabaseTableRecord.property_descriptors}
    assert "Transaction Isolation Level" not in names
    assert "Transaction Isolation Level" in {
        d.display_name for d in QueryDatabaseTable.property_descriptors
    }
