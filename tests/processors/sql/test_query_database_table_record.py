"""QueryDatabaseTableRecord: incremental reads through a Record Writer, in a flow too."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import PutFile
from processors.record_services import JsonRecordSetWriter
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.query_database_table_record import QueryDatabaseTableRecord


def _db(path: Path, ids: range) -> None:
    with sqlite3.connect(path) as db:
        db.execute("create table if not exists t (id integer, name text)")
        db.executemany("insert into t values (?, ?)", [(i, f"n{i}") for i in ids])


def test_records_and_state_in_the_harness(tmp_path: Path) -> None:
    """JSON records, record.count, and the maximum kept as t@!@id."""
    path = tmp_path / "db.sqlite"
    _db(path, range(4))
    runner = TestRunner(
        QueryDatabaseTableRecord(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "t",
                "Maximum-value Columns": "id",
                "Record Writer": "json",
                "Fetch Size": "3",
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
    )
    runner.add_service(JsonRecordSetWriter("json", output_grouping="output-oneline"))
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("record.count", "4")
    out.assert_attribute_equals("mime.type", "application/json")
    assert [json.loads(line)["id"] for line in out.content.decode().splitlines()] == [0, 1, 2, 3]
    assert runner.state == {"t@!@id": "3"}


def test_in_a_flow_reads_each_row_once(tmp_path: Path) -> None:
    """On the direct runner the listing asks the pool on the driver; a second run reads only
    the rows added since, its state committed with the first run's FlowFiles."""
    path = tmp_path / "db.sqlite"
    _db(path, range(5))
    out = tmp_path / "out"

    def run() -> None:
        flow = Flow("qdtr")
        flow.add_service(
            DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
        )
        flow.add_service(JsonRecordSetWriter("json", output_grouping="output-oneline"))
        source = flow.add(
            QueryDatabaseTableRecord(
                **{
                    "Database Connection Pooling Service": "dbcp",
                    "Table Name": "t",
                    "Maximum-value Columns": "id",
                    "Record Writer": "json",
                }
            ),
            name="qdtr",
        )
        put = flow.add(PutFile(directory=str(out)), name="put")
        flow.connect(source, put)
        flow.auto_terminate(put, ["success", "failure"])
        run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))

    run()
    _db(path, range(5, 8))
    run()
    ids = sorted(
        json.loads(line)["id"] for f in out.iterdir() for line in f.read_text().splitlines()
    )
    assert ids == list(range(8))


def test_postgres_microseconds_are_cut_to_nifi_milliseconds(postgres) -> None:
    """A timestamp(6)/time(6) column reads with its microseconds cut, as NiFi's TIMESTAMP and TIME
    hold milliseconds (the JSON writer's cast refused the read before)."""
    postgres.execute("drop table if exists t_micro")
    postgres.execute("create table t_micro (id int, ts timestamp, tt time)")
    postgres.execute(
        "insert into t_micro values (1, '2024-01-02 03:04:05.123456', '01:02:03.654321')"
    )
    runner = TestRunner(
        QueryDatabaseTableRecord(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "t_micro",
                "Maximum-value Columns": "id",
                "Record Writer": "json",
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp",
            **{"Database Connection URL": postgres.jdbc_url, "Database User": postgres.user},
        )
    )
    runner.add_service(
        JsonRecordSetWriter(
            "json",
            output_grouping="output-oneline",
            timestamp_format="yyyy-MM-dd HH:mm:ss.SSS",
            time_format="HH:mm:ss.SSS",
        )
    )
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert json.loads(out.content) == {
        "id": 1,
        "ts": "2024-01-02 03:04:05.123",
        "tt": "01:02:03.654",
    }
