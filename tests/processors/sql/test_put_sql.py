"""PutSQL: statements from content or property, sql.args, fragments in one transaction."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flowcore.testing import TestRunner
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_sql import PutSQL


def _runner(tmp_path: Path, **props: str) -> tuple[TestRunner, Path]:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table PERSONS (id integer primary key, name varchar(100), code int)")
    runner = TestRunner(PutSQL(**{"JDBC Connection Pool": "dbcp", **props}))
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
    )
    return runner, path


def _rows(path: Path) -> list:
    with sqlite3.connect(path) as db:
        return db.execute("select id, name, code from PERSONS order by id").fetchall()


def test_direct_statement_and_parameters(tmp_path: Path) -> None:
    """NiFi's testDirectStatements and testInsertWithGeneratedKeys-style parameters."""
    runner, path = _runner(tmp_path)
    runner.enqueue("INSERT INTO PERSONS (ID, NAME, CODE) VALUES (1, 'Mark', 84)")
    runner.enqueue(
        "INSERT INTO PERSONS (ID, NAME, CODE) VALUES (?, ?, ?)",
        {
            "sql.args.1.type": "4",
            "sql.args.1.value": "2",
            "sql.args.2.type": "12",
            "sql.args.2.value": "Jeff",
            "sql.args.3.type": "4",
            "sql.args.3.value": "48",
        },
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    assert _rows(path) == [(1, "Mark", 84), (2, "Jeff", 48)]
    assert {e.event_type.value for e in runner.provenance_events} == {"SEND"}


def test_failure_and_bad_argument(tmp_path: Path) -> None:
    """A duplicate key and an argument that does not parse go to failure."""
    runner, path = _runner(tmp_path)
    runner.enqueue("INSERT INTO PERSONS (ID, NAME) VALUES (1, 'a')")
    runner.enqueue("INSERT INTO PERSONS (ID, NAME) VALUES (1, 'b')")
    runner.enqueue(
        "INSERT INTO PERSONS (ID) VALUES (?)", {"sql.args.1.type": "4", "sql.args.1.value": "x"}
    )
    runner.run()
    assert len(runner.flowfiles_for("success")) == 1
    assert len(runner.flowfiles_for("failure")) == 2
    assert _rows(path) == [(1, "a", None)]


def test_fragments_commit_together_or_not_at_all(tmp_path: Path) -> None:
    """FlowFiles of one fragment.identifier: one transaction, all rolled back on a failure."""
    runner, path = _runner(tmp_path)
    for index, sql in enumerate(
        [
            "INSERT INTO PERSONS (ID, NAME) VALUES (1, 'a')",
            "INSERT INTO PERSONS (ID, NAME) VALUES (1, 'dup')",
        ]
    ):
        runner.enqueue(
            sql, {"fragment.identifier": "t1", "fragment.count": "2", "fragment.index": str(index)}
        )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 2)
    assert _rows(path) == []


def test_incomplete_fragments_wait(tmp_path: Path) -> None:
    """Fragments not all queued stay in the queue."""
    runner, path = _runner(tmp_path)
    runner.enqueue(
        "INSERT INTO PERSONS (ID) VALUES (5)",
        {"fragment.identifier": "t2", "fragment.count": "2", "fragment.index": "0"},
    )
    runner.run()
    assert runner.flowfiles_for("success") == []
    assert _rows(path) == []


def test_sql_statement_property(tmp_path: Path) -> None:
    """SQL Statement (Expression Language) wins over the content."""
    runner, path = _runner(
        tmp_path, **{"SQL Statement": "INSERT INTO PERSONS (ID, NAME) VALUES (${id}, 'p')"}
    )
    runner.enqueue("ignored", {"id": "7"})
    runner.run()
    assert _rows(path) == [(7, "p", None)]
