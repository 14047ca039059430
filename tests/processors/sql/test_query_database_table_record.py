"""QueryDatabaseTableRecord: incremental reads through a Record Writer, in a flow too."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import PutFile
from processors.record_services import JsonRecordSetWriter, JsonTreeReader
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.query_database_table_record import QueryDatabaseTableRecord
from tests.processors.sql.put_runners import put_runner


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


def test_postgres_microseconds_print_in_a_millisecond_format(postgres) -> None:
    """A timestamp(6)/time(6) column written with SSS formats prints milliseconds (the
    record's TIMESTAMP keeps the microseconds, its TIME holds milliseconds as NiFi's)."""
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


def test_postgres_microseconds_reach_put_database_record(postgres) -> None:
    """A timestamp(6) read with a SSSSSS Timestamp Format keeps its microseconds through the
    record (NiFi's java.sql.Timestamp), and PutDatabaseRecord writes them back; a time(6) is a
    java.sql.Time in NiFi: milliseconds."""
    postgres.execute("drop table if exists t_micro_in")
    postgres.execute("drop table if exists t_micro_out")
    postgres.execute("create table t_micro_in (id int, ts timestamp, tt time)")
    postgres.execute("create table t_micro_out (id int, ts timestamp, tt time)")
    postgres.execute(
        "insert into t_micro_in values (1, '2024-01-02 03:04:05.123456', '01:02:03.654321'),"
        " (2, '1969-12-31 23:59:59.999999', null)"
    )
    formats = {
        "Timestamp Format": "yyyy-MM-dd HH:mm:ss.SSSSSS",
        "Time Format": "HH:mm:ss.SSSSSS",
    }
    read = _pg_record_runner(postgres, "t_micro_in", **{"Maximum-value Columns": "id"})
    read.add_service(JsonRecordSetWriter("json", **formats))
    read.run()
    (out,) = read.flowfiles_for("success")
    assert json.loads(out.content) == [
        {"id": 1, "ts": "2024-01-02 03:04:05.123456", "tt": "01:02:03.654000"},
        {"id": 2, "ts": "1969-12-31 23:59:59.999999", "tt": None},
    ]
    put = put_runner(postgres.jdbc_url, user=postgres.user, **{"Table Name": "t_micro_out"})
    put.add_service(JsonTreeReader("reader", **formats))
    put.enqueue(out.content)
    put.run()
    put.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, ts::text, tt::text from t_micro_out order by id") == [
        (1, "2024-01-02 03:04:05.123456", "01:02:03.654"),
        (2, "1969-12-31 23:59:59.999999", None),
    ]


def _pg_record_runner(postgres, table: str, **props: str) -> TestRunner:
    runner = TestRunner(
        QueryDatabaseTableRecord(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": table,
                "Record Writer": "json",
                **props,
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp",
            **{"Database Connection URL": postgres.jdbc_url, "Database User": postgres.user},
        )
    )
    runner.add_service(JsonRecordSetWriter("json"))
    return runner


def test_added_rows(postgres) -> None:
    """NiFi's testAddedRows (QueryDatabaseTableRecordTest): record.count and maxvalue.* per
    run; a first read by a column with NULLs reads those rows too (as NiFi's unbounded first
    query does; flowcore's upper bound left them out)."""
    postgres.execute("drop table if exists qdtr_added")
    postgres.execute(
        "create table qdtr_added (id integer not null, name varchar(100), scale float, "
        "created_on timestamp, bignum bigint default 0)"
    )
    insert = "insert into qdtr_added (id, name, scale, created_on) values "
    postgres.execute(
        insert + "(0, 'Joe Smith', 1.0, '1962-09-23 03:23:34.234'), "
        "(1, 'Carrie Jones', 5.0, '2000-01-01 03:23:34.234'), (2, NULL, 2.0, '2010-01-01')"
    )
    runner = _pg_record_runner(
        postgres, "qdtr_added", **{"Maximum-value Columns": "ID", "Max Rows Per Flow File": "2"}
    )

    def run() -> list[tuple[str, dict[str, str]]]:
        runner.run()
        outs = runner.flowfiles_for("success")
        runner.clear_transfer_state()
        return [
            (o.attributes["record.count"], {k: v for k, v in o.attributes.items() if "max" in k})
            for o in outs
        ]

    assert run() == [("2", {"maxvalue.id": "2"}), ("1", {"maxvalue.id": "2"})]
    assert run() == []
    runner.set_property("Max Rows Per Flow File", "0")
    postgres.execute(insert + "(3, 'Mary West', 15.0, '2000-01-01 03:23:34.234')")
    assert run() == [("1", {"maxvalue.id": "3"})]
    runner.set_property("Maximum-value Columns", "id, created_on")
    postgres.execute(insert + "(4, 'Marty Johnson', 15.0, '2011-01-01 03:23:34.234')")
    assert run() == [("1", {"maxvalue.id": "4", "maxvalue.created_on": "2011-01-01 03:23:34.234"})]
    postgres.execute(insert + "(5, 'NO NAME', 15.0, '2001-01-01 03:23:34.234')")
    assert run() == []
    postgres.execute(insert + "(6, 'Mr. NiFi', 1.0, '2012-01-01 03:23:34.234')")
    assert [count for count, _ in run()] == ["1"]
    for column, before, row, count in [
        ("name", "7", "(7, 'NULK', 1.0, '2012-01-01 03:23:34.234')", "1"),
        ("scale", "8", "(8, 'NULK', 100.0, '2012-01-01 03:23:34.234')", "1"),
    ]:
        runner.set_state({})
        runner.set_property("Maximum-value Columns", column)
        assert [c for c, _ in run()] == [before]
        postgres.execute(insert + row)
        assert [c for c, _ in run()] == [count]
    runner.set_state({})
    runner.set_property("Maximum-value Columns", "bignum")
    assert [c for c, _ in run()] == ["9"]
    postgres.execute(
        "insert into qdtr_added values (9, 'Alice Bob', 100.0, '2012-01-01 03:23:34.234', 1)"
    )
    assert [c for c, _ in run()] == ["1"]


def test_output_batch_size(postgres) -> None:
    """NiFi's testOutputBatchSize (QueryDatabaseTableRecordTest): record.count per fragment,
    fragment.index kept, no fragment.count."""
    postgres.execute("drop table if exists qdtr_batch")
    postgres.execute("create table qdtr_batch (id integer not null, name text)")
    postgres.execute("insert into qdtr_batch select g, 'Joe Smith' from generate_series(0, 99) g")
    runner = _pg_record_runner(
        postgres,
        "qdtr_batch",
        **{
            "Maximum-value Columns": "ID",
            "Max Rows Per Flow File": "7",
            "Output Batch Size": "4",
        },
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.attributes["record.count"] for o in outs] == ["7"] * 14 + ["2"]
    assert [o.attributes["fragment.index"] for o in outs] == [str(i) for i in range(15)]
    assert not [o for o in outs if "fragment.count" in o.attributes]


#: PostgreSQL types psycopg loads as Python objects, and the JSON NiFi's QDTR writes for each
#: (pgjdbc's values: PostgreSQL's text for json, jsonb, ranges; PGInterval's text; money as
#: a double; an ARRAY as a record array of its elements).
_OBJECT_TYPES = [
    ("jb", "jsonb", '\'{"k": [1, 2.50, null]}\'', '{"k": [1, 2.50, null]}'),
    ("js", "json", '\'{"k":  [1, 2.50, null]}\'', '{"k":  [1, 2.50, null]}'),
    ("ia", "int[]", "'{1,NULL,3}'", [1, None, 3]),
    ("ta", "text[]", "'{a,\"b c\",NULL}'", ["a", "b c", None]),
    ("na", "numeric[]", "'{2.50,-1}'", [2.5, -1]),
    ("ua", "uuid[]", "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'",
     ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]),
    ("iv", "interval", "'1 year 2 mons 3 days 04:05:06.5'",
     "1 years 2 mons 3 days 4 hours 5 mins 6.5 secs"),
    ("ng", "interval", "'-1 hour'", "0 years 0 mons 0 days -1 hours 0 mins 0.0 secs"),
    ("r", "int4range", "'[1,10)'", "[1,10)"),
    ("tr", "tsrange", "'[2024-01-01,)'", '["2024-01-01 00:00:00",)'),
    ("m", "money", "'-1234.5'", -1234.5),
    ("u", "uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    ("ip", "inet", "'192.168.1.5/24'", "192.168.1.5/24"),
    ("x", "xml", "'<a>1</a>'", "<a>1</a>"),
]  # fmt: skip


@pytest.mark.parametrize("binary", [True, False], ids=["binary-read", "text-read"])
def test_postgres_object_types_are_written_as_nifi_does(postgres, monkeypatch, binary) -> None:
    """json/jsonb are PostgreSQL's text (not Python's repr of a dict), arrays record arrays,
    intervals PGInterval's text, ranges their text, money a double: NiFi's values, whether
    the rows come in binary (the types read so) or text."""
    from processors.sql import query_base

    types = _OBJECT_TYPES
    if binary:
        binary_types = ("jsonb", "json", "int[]", "text[]", "interval", "uuid", "inet")
        types = [t for t in types if t[1] in binary_types]
    streams: list[bool] = []
    streamed = query_base._Streamed

    class Recording(streamed):  # type: ignore[misc,valid-type]
        def __init__(self, *args, binary: bool, **kwargs) -> None:  # type: ignore[no-untyped-def]
            streams.append(binary)
            super().__init__(*args, binary=binary, **kwargs)

    monkeypatch.setattr(query_base, "_Streamed", Recording)
    postgres.execute("drop table if exists objects")
    columns = ", ".join(f"{name} {sql}" for name, sql, _, _ in types)
    postgres.execute(f"create table objects (id int primary key, {columns})")
    literals = ", ".join(literal for _, _, literal, _ in types)
    postgres.execute(f"insert into objects values (1, {literals})")
    postgres.execute("insert into objects (id) values (2)")
    runner = _pg_record_runner(postgres, "objects", **{"Maximum-value Columns": "id"})
    runner.run()
    (out,) = runner.flowfiles_for("success")
    first, second = json.loads(out.content)
    assert streams == [binary]
    assert first == {"id": 1, **{name: value for name, _, _, value in types}}
    assert second == {"id": 2, **{name: None for name, _, _, _ in types}}


def test_columns_null_in_the_first_fetch_keep_their_types(postgres, monkeypatch) -> None:
    """Columns NULL in the first fetch (and first FlowFile) take their types from the
    description, not the values: later chunks with values are written, and every FlowFile of
    the query has one schema (NiFi's types come from the ResultSetMetaData)."""
    from processors.sql import execute_sql_record

    schemas: list[object] = []
    write = execute_sql_record.RecordResults.write

    def recording(self, out, description, rows):  # type: ignore[no-untyped-def]
        count = write(self, out, description, rows)
        schemas.append(self._schemas[1] if self._schemas else None)
        return count

    monkeypatch.setattr(execute_sql_record.RecordResults, "write", recording)
    postgres.execute("drop table if exists nulls_first")
    postgres.execute(
        "create table nulls_first (id int primary key, n numeric(12, 2), u numeric, t text, "
        "ts timestamp, b boolean, j jsonb)"
    )
    postgres.execute(
        "insert into nulls_first select g, case when g > 4 then g + 0.5 end, "
        "case when g > 4 then g end, case when g > 4 then 't' || g end, "
        "case when g > 4 then timestamp '2026-01-01 01:02:03' end, "
        "case when g > 4 then g % 2 = 0 end, case when g > 4 then '{\"k\": 1}'::jsonb end "
        "from generate_series(1, 8) g"
    )
    runner = _pg_record_runner(
        postgres,
        "nulls_first",
        **{"Maximum-value Columns": "id", "Fetch Size": "2", "Max Rows Per Flow File": "3"},
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    records = [r for o in outs for r in json.loads(o.content)]
    assert [o.attributes["record.count"] for o in outs] == ["3", "3", "2"]
    assert records[0] == {
        "id": 1,
        "n": None,
        "u": None,
        "t": None,
        "ts": None,
        "b": None,
        "j": None,
    }
    assert records[5] == {
        "id": 6,
        "n": 6.5,
        "u": 6,
        "t": "t6",
        "ts": records[5]["ts"],
        "b": True,
        "j": '{"k": 1}',
    }
    assert records[5]["ts"] is not None
    assert len({str(s) for s in schemas}) == 1
    types = dict(zip(schemas[0].names, map(str, schemas[0].types), strict=True))
    assert types["n"] == "decimal128(38, 2)"
    assert types["t"] == "string"
    assert types["ts"] == "timestamp[us]"
    assert types["b"] == "bool"
    assert types["j"] == "string"
