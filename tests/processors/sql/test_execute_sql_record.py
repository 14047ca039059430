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


def _bad_row_table(tmp_path: Path) -> str:
    """A table whose integer column holds text in its last row (SQLite keeps it as written)."""
    path = tmp_path / "bad.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table t (id integer, v integer)")
        db.executemany("insert into t values (?, ?)", [(0, 0), (1, 1), (2, 2), (3, "abc")])
    return f"jdbc:sqlite:{path}"


def test_write_failure_after_a_sent_batch_keeps_it(tmp_path: Path) -> None:
    """NiFi's testStreamingExceptionWhileOutputBatchingRoutesOriginalFlowFileToFailure: the
    batch already sent stays in success; the failure carries the input's attributes."""
    props = {"Max Rows Per Flow File": "2", "Output Batch Size": "1", "Fetch Size": "2"}
    runner = _runner(_bad_row_table(tmp_path), **props)
    runner.enqueue(b"select * from t order by id", {"retain.attr": "retain-value"})
    runner.run()
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("failure", 1)
    failed = runner.flowfiles_for("failure")[0]
    failed.assert_attribute_equals("retain.attr", "retain-value")
    assert "'abc'" in failed.attributes["executesql.error.message"]


def test_write_failure_without_batching_fails_the_input(tmp_path: Path) -> None:
    """NiFi's testWithOutputBatchingLastBatchFails / ...ErrorProcessingResultSet: a fragment
    failing to write sends the input, unchanged, to failure and no fragment to success."""
    runner = _runner(_bad_row_table(tmp_path), **{"Max Rows Per Flow File": "2"})
    runner.enqueue(b"select * from t order by id")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals("select * from t order by id")


def test_pre_and_post_queries_and_post_query_failure(tmp_path: Path) -> None:
    """NiFi's testPreQuery, testPostQuery and testPostQueryFail: the queries run around the
    query; a failing post-query sends the input, content unchanged, to failure."""
    url = _bad_row_table(tmp_path)
    props = {"SQL Pre-Query": "select 1", "SQL Query": "select id from t where id = 1"}
    runner = _runner(url, **props, **{"SQL Post-Query": "select 2"})
    runner.enqueue(b"test")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("executesql.row.count", "1")
    runner = _runner(url, **props, **{"SQL Post-Query": "select * from missing_table"})
    runner.enqueue(b"test")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals("test")


def test_flowfile_attribute_resolution(tmp_path: Path) -> None:
    """NiFi's testFlowFileAttributeResolution: the Record Writer evaluates its properties
    against the input FlowFile's attributes (a CSV separator from csv.separator)."""
    from processors.record_services import CSVRecordSetWriter

    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table t (id integer, val1 integer, val2 integer)")
        db.executemany("insert into t values (?, 1, 1)", [(0,), (1,)])
    runner = _runner(
        f"jdbc:sqlite:{path}", **{"Record Writer": "csv", "SQL Query": "select * from t"}
    )
    runner.add_service(
        CSVRecordSetWriter(
            "csv",
            value_separator="${csv.separator}",
            quote_mode="MINIMAL",
            include_header_line="true",
        )
    )
    runner.enqueue(b"", {"csv.separator": "|"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals("id|val1|val2\n0|1|1\n1|1|1\n")


def test_a_value_the_writer_cannot_hold_names_its_column_not_the_database(
    tmp_path: Path,
) -> None:
    """A value the record batch cannot convert is blamed on its column, not the URL."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table t (id integer, n integer)")
        db.executemany("insert into t values (?, ?)", [(1, 5), (2, "oops")])
    runner = _runner(f"jdbc:sqlite:{path}")
    runner.enqueue(b"select * from t")
    runner.run()
    message = runner.flowfiles_for("failure")[0].attributes["executesql.error.message"]
    assert message.startswith("cannot write the result: column 'n' holds a value that is not int64")
    assert "sqlite:" not in message


def test_a_database_error_still_names_the_database(tmp_path: Path) -> None:
    """The database's own error keeps its URL in front (the culprit there)."""
    path = tmp_path / "db.sqlite"
    sqlite3.connect(path).close()
    runner = _runner(f"jdbc:sqlite:{path}")
    runner.enqueue(b"select * from missing")
    runner.run()
    message = runner.flowfiles_for("failure")[0].attributes["executesql.error.message"]
    assert message == f"jdbc:sqlite:{path}: no such table: missing"
