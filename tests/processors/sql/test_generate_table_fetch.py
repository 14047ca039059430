"""GenerateTableFetch: paged SELECT statements, maxima as state, run by ExecuteSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flowcore.testing import TestRunner
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.generate_table_fetch import GenerateTableFetch


def _runner(path: Path, **props: str) -> TestRunner:
    runner = TestRunner(
        GenerateTableFetch(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "TEST_QUERY_DB_TABLE",
                **props,
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
    )
    return runner


def _db(tmp_path: Path, ids: range) -> Path:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table if not exists TEST_QUERY_DB_TABLE (id integer, name text)")
        db.executemany("insert into TEST_QUERY_DB_TABLE values (?, ?)", [(i, f"n{i}") for i in ids])
    return path


def test_pages_and_incremental_state(tmp_path: Path) -> None:
    """NiFi's testAddedRows: pages of Partition Size, then only the rows added since."""
    path = _db(tmp_path, range(3))
    runner = _runner(path, **{"Maximum-value Columns": "ID", "Partition Size": "2"})
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.content.decode() for o in outs] == [
        "SELECT * FROM TEST_QUERY_DB_TABLE WHERE ID <= 2 ORDER BY ID LIMIT 2",
        "SELECT * FROM TEST_QUERY_DB_TABLE WHERE ID <= 2 ORDER BY ID LIMIT 2 OFFSET 2",
    ]
    outs[1].assert_attribute_equals("generatetablefetch.offset", "2")
    outs[1].assert_attribute_equals("fragment.count", "2")
    outs[0].assert_attribute_equals("maxvalue.id", "2")
    assert runner.state == {"test_query_db_table@!@id": "2"}
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    _db(tmp_path, range(3, 5))
    runner.run()
    assert [o.content.decode() for o in runner.flowfiles_for("success")] == [
        "SELECT * FROM TEST_QUERY_DB_TABLE WHERE ID > 2 AND ID <= 4 ORDER BY ID LIMIT 2"
    ]


def test_statements_fetch_every_row_once(tmp_path: Path) -> None:
    """Running the generated statements returns each row once."""
    path = _db(tmp_path, range(7))
    runner = _runner(path, **{"Maximum-value Columns": "id", "Partition Size": "3"})
    runner.run()
    with sqlite3.connect(path) as db:
        ids = [
            r[0]
            for o in runner.flowfiles_for("success")
            for r in db.execute(o.content.decode()).fetchall()
        ]
    assert ids == list(range(7))
