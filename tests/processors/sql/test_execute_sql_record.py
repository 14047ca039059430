"""ExecuteSQLRecord: result sets through a Record Writer, fetched as Arrow batches."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from flowcore.testing import TestRunner
from processors.record_services import JsonRecordSetWriter
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.execute_sql_record import ExecuteSQLRecord


def _runner(url: str, user: str | None = None, **props: str) -> TestRunner:
    runner = TestRunner(
        ExecuteSQLRecord(
            **{"Database Connection Pooling Service": "dbcp", "Record Writer": "json", **props}
        )
    )
    extra = {"Database User": user} if user else {}
    runner.add_service(DBCPConnectionPool("dbcp", **{"Database Connection URL": url, **extra}))
    runner.add_service(JsonRecordSetWriter("json", output_grouping="output-oneline"))
    return runner


def test_rows_as_json_records_in_fetches(tmp_path: Path) -> None:
    """Rows fetched 2 at a time reach the writer as batches; record.count and mime.type set."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table t (id integer, name text)")
        db.executemany("insert into t values (?, ?)", [(i, f"n{i}") for i in range(5)])
    runner = _runner(f"jdbc:sqlite:{path}", **{"Fetch Size": "2"})
    runner.enqueue(b"select * from t order by id")
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("record.count", "5")
    out.assert_attribute_equals("executesql.row.count", "5")
    out.assert_attribute_equals("mime.type", "application/json")
    rows = [json.loads(line) for line in out.content.decode().splitlines()]
    assert rows == [{"id": i, "name": f"n{i}"} for i in range(5)]


def test_max_rows_fragments_and_empty_result(tmp_path: Path) -> None:
    """Max Rows Per Flow File fragments; a result with no rows is a FlowFile of 0 records."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table t (id integer)")
        db.executemany("insert into t values (?)", [(i,) for i in range(5)])
    runner = _runner(f"jdbc:sqlite:{path}", **{"Max Rows Per Flow File": "2"})
    runner.enqueue(b"select * from t")
    runner.run()
    counts = [f.attributes["record.count"] for f in runner.flowfiles_for("success")]
    assert counts == ["2", "2", "1"]
    runner = _runner(f"jdbc:sqlite:{path}")
    runner.enqueue(b"select * from t where id > 99")
    runner.run()
    runner.flowfiles_for("success")[0].assert_attribute_equals("record.count", "0")


def test_postgres_types_reach_the_writer(postgres) -> None:
    """PostgreSQL numerics, dates and timestamps become typed Arrow columns."""
    postgres.execute("drop table if exists rec")
    postgres.execute("create table rec (id bigint, amount numeric(8,2), day date, at timestamp)")
    postgres.execute("insert into rec values (1, 2.50, '2024-03-04', '2024-03-04 05:06:07')")
    runner = _runner(postgres.jdbc_url, user="postgres", **{"SQL Query": "select * from rec"})
    runner.enqueue(b"")
    runner.run()
    out = runner.flowfiles_for("success")[0]
    row = json.loads(out.content)
    assert row["id"] == 1
    assert float(row["amount"]) == 2.5
    assert row["day"] == 1709510400000  # NiFi's writer: epoch millis without a Date Format
    assert row["at"] == 1709528767000
