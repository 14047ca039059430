"""ExecuteSQL: NiFi's TestExecuteSQL cases on SQLite (no server) and on PostgreSQL."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import fastavro
import pytest

from flowcore.testing import TestRunner
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.execute_sql import ExecuteSQL


def _sqlite(tmp_path: Path, rows: int = 3) -> str:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table persons (id integer, name varchar(100), code integer)")
        db.executemany(
            "insert into persons values (?, ?, ?)", [(i, f"Joe{i}", i * 10) for i in range(rows)]
        )
    return f"jdbc:sqlite:{path}"


def _runner(url: str, incoming: bool = True, **props: str) -> TestRunner:
    runner = TestRunner(ExecuteSQL(**{"Database Connection Pooling Service": "dbcp", **props}))
    user = {"Database User": "postgres"} if "postgresql" in url else {}
    runner.add_service(DBCPConnectionPool("dbcp", **{"Database Connection URL": url, **user}))
    runner.context._has_input = incoming
    return runner


def _records(content: bytes) -> tuple[dict, list[dict]]:
    reader = fastavro.reader(io.BytesIO(content))
    return reader.writer_schema, list(reader)


def test_query_from_property_without_input(tmp_path: Path) -> None:
    """No incoming connection: one Avro FlowFile, RECEIVE, NiFi's attributes."""
    runner = _runner(_sqlite(tmp_path), incoming=False, **{"SQL Query": "select * from persons"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("executesql.row.count", "3")
    out.assert_attribute_equals("executesql.resultset.index", "0")
    out.assert_attribute_equals("mime.type", "application/avro-binary")
    for name in (
        "executesql.query.duration",
        "executesql.query.executiontime",
        "executesql.query.fetchtime",
    ):
        assert out.attributes[name].isdigit()
    schema, records = _records(out.content)
    assert schema["name"] == "any.data.NiFi_ExecuteSQL_Record"
    assert records[1] == {"id": 1, "name": "Joe1", "code": 10}
    assert [e.event_type.value for e in runner.provenance_events] == ["RECEIVE"]
    assert runner.provenance_events[0].transit_uri.startswith("jdbc:sqlite:")


def test_query_from_content_with_input(tmp_path: Path) -> None:
    """The query is the content; the input is removed; FETCH and input.flowfile.uuid."""
    runner = _runner(_sqlite(tmp_path))
    runner.enqueue(b"select id from persons where id > 0")
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("executesql.row.count", "2")
    assert out.attributes["input.flowfile.uuid"]
    assert "FETCH" in [e.event_type.value for e in runner.provenance_events]


def test_max_rows_per_flowfile_fragments(tmp_path: Path) -> None:
    """Max Rows Per Flow File cuts the result set; fragment.* set, the empty tail dropped."""
    runner = _runner(_sqlite(tmp_path, rows=7), **{"Max Rows Per Flow File": "3"})
    runner.enqueue(b"select * from persons")
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.attributes["executesql.row.count"] for o in outs] == ["3", "3", "1"]
    assert [o.attributes["fragment.index"] for o in outs] == ["0", "1", "2"]
    assert {o.attributes["fragment.count"] for o in outs} == {"3"}
    assert len({o.attributes["fragment.identifier"] for o in outs}) == 1
    runner2 = _runner(
        _sqlite(tmp_path / "x", rows=6) if (tmp_path / "x").mkdir() is None else "",
        **{"Max Rows Per Flow File": "3"},
    )
    runner2.enqueue(b"select * from persons")
    runner2.run()
    assert [o.attributes["executesql.row.count"] for o in runner2.flowfiles_for("success")] == [
        "3",
        "3",
    ]


def test_no_result_set_gives_empty_avro_or_original(tmp_path: Path) -> None:
    """A statement without results: an empty Avro FlowFile (EMPTY) or the input (ORIGINAL)."""
    url = _sqlite(tmp_path)
    runner = _runner(url)
    runner.enqueue(b"update persons set code = 1 where id = 0")
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("executesql.row.count", "0")
    assert _records(out.content)[1] == []
    runner = _runner(url, **{"Content Output Strategy": "ORIGINAL"})
    runner.enqueue(b"update persons set code = 2 where id = 0")
    runner.run()
    runner.flowfiles_for("success")[0].assert_content_equals(
        "update persons set code = 2 where id = 0"
    )


def test_bad_query_goes_to_failure_penalized(tmp_path: Path) -> None:
    """A missing table: failure, penalized, executesql.error.message naming the cause."""
    runner = _runner(_sqlite(tmp_path))
    runner.enqueue(b"select * from nowhere")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["executesql.error.message"]
    assert "no such table: nowhere" in message
    assert message.startswith("jdbc:sqlite")


def test_sql_args_bind_parameters(tmp_path: Path) -> None:
    """sql.args.N.type/value bind the query's ? placeholders."""
    runner = _runner(_sqlite(tmp_path), **{"SQL Query": "select name from persons where id = ?"})
    runner.enqueue(b"", {"sql.args.1.type": "4", "sql.args.1.value": "2"})
    runner.run()
    assert _records(runner.flowfiles_for("success")[0].content)[1] == [{"name": "Joe2"}]


def test_pre_and_post_queries(tmp_path: Path) -> None:
    """Pre- and post-queries run around the query; a failing one fails the FlowFile."""
    runner = _runner(
        _sqlite(tmp_path),
        **{
            "SQL Pre-Query": "create temp table t (a int); insert into t values (5)",
            "SQL Query": "select a from t",
            "SQL Post-Query": "drop table t",
        },
    )
    runner.enqueue(b"")
    runner.run()
    assert _records(runner.flowfiles_for("success")[0].content)[1] == [{"a": 5}]
    runner = _runner(
        _sqlite(tmp_path / "y") if (tmp_path / "y").mkdir() is None else "",
        **{"SQL Pre-Query": "select * from nothing", "SQL Query": "select 1"},
    )
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_no_query_and_no_input_is_refused(tmp_path: Path) -> None:
    """Neither SQL Query nor an incoming connection: NiFi's scheduling error."""
    runner = _runner(_sqlite(tmp_path), incoming=False)
    with pytest.raises(Exception, match="Either the Select Query must be specified"):
        runner.run()


def test_postgres_types_and_logical_types(postgres) -> None:
    """PostgreSQL columns map as NiFi's JdbcCommon: logical types or Java strings."""
    postgres.execute("drop table if exists typed")
    postgres.execute(
        "create table typed (i int, b bigint, s smallint, f real, d double precision, "
        "n numeric(10,2), t text, bo boolean, dt date, ts timestamp, by bytea)"
    )
    postgres.execute(
        "insert into typed values (1, 2, 3, 1.5, 2.5, 12.34, 'x', true, '2024-01-02', "
        "'2024-01-02 03:04:05', '\\x0102')"
    )
    postgres.execute(
        "insert into typed values (null,null,null,null,null,null,null,null,null,null,null)"
    )
    runner = _runner(postgres.jdbc_url, **{"SQL Query": "select * from typed"})
    runner.enqueue(b"")
    runner.run()
    schema, records = _records(runner.flowfiles_for("success")[0].content)
    types = {f["name"]: f["type"][1] for f in schema["fields"]}
    assert types == {
        "i": "int",
        "b": "long",
        "s": "int",
        "f": "float",
        "d": "double",
        "n": "string",
        "t": "string",
        "bo": "boolean",
        "dt": "string",
        "ts": "string",
        "by": "bytes",
    }
    assert records[0]["n"] == "12.34"
    assert records[0]["ts"] == "2024-01-02 03:04:05.0"
    assert records[0]["dt"] == "2024-01-02"
    assert records[1] == dict.fromkeys(types)
    runner = _runner(
        postgres.jdbc_url,
        **{"SQL Query": "select n, dt, ts from typed", "Use Avro Logical Types": "true"},
    )
    runner.enqueue(b"")
    runner.run()
    schema, records = _records(runner.flowfiles_for("success")[0].content)
    assert schema["fields"][0]["type"][1]["logicalType"] == "decimal"
    assert schema["fields"][0]["type"][1]["scale"] == 2
    assert str(records[0]["n"]) == "12.34"
    fetch = next(e for e in runner.provenance_events if e.event_type.value == "FETCH")
    assert fetch.transit_uri.startswith("jdbc:postgresql://127.0.0.1:")


def test_null_int_column_and_duplicate_columns(postgres) -> None:
    """NiFi's testWithNullIntColumn and testWithDuplicateColumns: a NULL integer is a null
    field; two columns of one name from a join become one row."""
    postgres.execute("drop table if exists host1, host2, test_null_int")
    postgres.execute("create table test_null_int (id integer primary key, val1 int, val2 int)")
    postgres.execute("insert into test_null_int values (0, NULL, 1), (1, 1, 1)")
    postgres.execute("create table host1 (id integer not null, host varchar(45))")
    postgres.execute("create table host2 (id integer not null, host varchar(45))")
    postgres.execute("insert into host1 values (1, 'host1')")
    postgres.execute("insert into host2 values (1, 'host2')")
    runner = _runner(
        postgres.jdbc_url, incoming=False, **{"SQL Query": "select * from test_null_int"}
    )
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("executesql.row.count", "2")
    assert [r["val1"] for r in _records(out.content)[1]] == [None, 1]
    runner = _runner(
        postgres.jdbc_url,
        incoming=False,
        **{
            "SQL Query": "select a.host as hostA, b.host as hostB from host1 a "
            "join host2 b on b.id = a.id"
        },
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("executesql.row.count", "1")


def test_output_batch_size_leaves_out_fragment_count(tmp_path: Path) -> None:
    """NiFi's testWithOutputBatching(AndIncomingFlowFile): fragments without fragment.count."""
    runner = _runner(
        _sqlite(tmp_path, rows=20), **{"Max Rows Per Flow File": "5", "Output Batch Size": "2"}
    )
    runner.enqueue(b"select * from persons", {"attr1": "value1"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 4)
    outs = runner.flowfiles_for("success")
    assert [o.attributes["fragment.index"] for o in outs] == ["0", "1", "2", "3"]
    for out in outs:
        out.assert_attribute_not_exists("fragment.count")
        out.assert_attribute_equals("executesql.row.count", "5")
        out.assert_attribute_equals("executesql.resultset.index", "0")
        out.assert_attribute_equals("attr1", "value1")
    assert len({o.attributes["input.flowfile.uuid"] for o in outs}) == 1


def test_failure_after_a_sent_batch_keeps_it(tmp_path: Path) -> None:
    """A post-query failing after a batch went out: the batch stays in success, the failure
    is a new FlowFile with the input's attributes (NiFi's retained attributes)."""
    runner = _runner(
        _sqlite(tmp_path, rows=10),
        **{
            "Max Rows Per Flow File": "5",
            "Output Batch Size": "1",
            "SQL Post-Query": "select * from missing_table",
        },
    )
    runner.enqueue(b"select * from persons", {"attr1": "value1"})
    runner.run()
    runner.assert_transfer_count("success", 2)
    runner.assert_transfer_count("failure", 1)
    failed = runner.flowfiles_for("failure")[0]
    failed.assert_attribute_equals("attr1", "value1")
    assert "no such table: missing_table" in failed.attributes["executesql.error.message"]


def test_max_wait_time_cancels_a_long_query(tmp_path: Path) -> None:
    """Max Wait Time (NiFi's query timeout): a query past it is cancelled, to failure with
    a message naming the property; 0 seconds is no limit."""
    endless = (
        "with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c"
    )
    url = _sqlite(tmp_path)
    runner = _runner(url, **{"Max Wait Time": "1 sec"})
    runner.enqueue(endless.encode())
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["executesql.error.message"]
    assert "Max Wait Time (1 seconds)" in message
    runner = _runner(url, **{"Max Wait Time": "0 seconds"})
    runner.enqueue(b"select count(*) from persons")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)


def test_set_auto_commit_false_rolls_back_with_the_failure(tmp_path: Path) -> None:
    """Set Auto Commit false: a pre-query's change is rolled back when the query fails;
    true (the default): it was committed by itself."""
    url = _sqlite(tmp_path)
    for auto, expected in (("false", 3), ("true", 4)):
        runner = _runner(
            url,
            **{
                "Set Auto Commit": auto,
                "SQL Pre-Query": "insert into persons values (9, 'Ann', 90)",
            },
        )
        runner.enqueue(b"select * from nowhere")
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)
        with sqlite3.connect(url.removeprefix("jdbc:sqlite:")) as db:
            assert db.execute("select count(*) from persons").fetchone()[0] == expected


def test_no_input_failure_yields_without_flowfile(tmp_path: Path) -> None:
    """NiFi's testWithSqlException: no incoming connection, a bad query: nothing routed."""
    runner = _runner(_sqlite(tmp_path), incoming=False, **{"SQL Query": "select val1 from x"})
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.assert_transfer_count("failure", 0)


def test_postgres_auto_commit_and_statement_cancel(postgres) -> None:
    """On PostgreSQL: VACUUM runs only with Set Auto Commit true (outside a transaction);
    pg_sleep past Max Wait Time is cancelled; the pool's one connection comes back out of
    autocommit with no transaction open (either Set Auto Commit) and serves the next run."""
    postgres.execute("drop table if exists vac")
    postgres.execute("create table vac (a int)")
    runner = _runner(postgres.jdbc_url, **{"Set Auto Commit": "false"})
    runner.enqueue(b"vacuum vac")
    runner.run()
    message = runner.flowfiles_for("failure")[0].attributes["executesql.error.message"]
    assert "cannot run inside a transaction block" in message
    for auto_commit in ("true", "false"):
        runner = TestRunner(
            ExecuteSQL(**{
                "Database Connection Pooling Service": "dbcp", "Max Wait Time": "1 sec",
                "Set Auto Commit": auto_commit, "SQL Post-Query": "select 1",
            })
        )  # fmt: skip
        runner.add_service(
            DBCPConnectionPool(
                "dbcp",
                **{
                    "Database Connection URL": postgres.jdbc_url,
                    "Database User": "postgres",
                    "Max Total Connections": "1",
                    "Maximum Idle Connections": "1",
                },
            )
        )
        runner.enqueue(b"vacuum vac")
        runner.enqueue(b"select pg_sleep(30)")
        runner.enqueue(b"select 1 as one")
        runner.run(3, stop_on_finish=False)
        # VACUUM only in autocommit; the query after the cancel ran on the same connection.
        failed = [f.attributes["executesql.error.message"] for f in runner.flowfiles_for("failure")]
        assert "Max Wait Time" in failed[-1]
        assert len(failed) == (1 if auto_commit == "true" else 2)
        outs = runner.flowfiles_for("success")
        expected = ["0", "1"] if auto_commit == "true" else ["1"]
        assert [o.attributes["executesql.row.count"] for o in outs] == expected
        raw = runner.controller_service("dbcp").engine().raw_connection()
        try:
            assert raw.driver_connection.autocommit is False
            assert raw.driver_connection.info.transaction_status == 0  # IDLE: none open
        finally:
            raw.close()
            runner.stop()


def test_incoming_connection_with_no_flowfile(tmp_path: Path) -> None:
    """NiFi's testIncomingConnectionWithNoFlowFile: an empty queue runs no query."""
    runner = _runner(_sqlite(tmp_path), **{"SQL Query": "select * from persons"})
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.assert_transfer_count("failure", 0)


@pytest.mark.parametrize("codec", ["DEFLATE", "BZIP2", "SNAPPY"])
def test_compression(tmp_path: Path, codec: str) -> None:
    """NiFi's testCompression: the Avro file's avro.codec is the Compression Format's."""
    runner = _runner(_sqlite(tmp_path), **{"Compression Format": codec})
    runner.enqueue(b"select * from persons")
    runner.run()
    content = runner.flowfiles_for("success")[0].content
    reader = fastavro.reader(io.BytesIO(content))
    assert reader.metadata["avro.codec"] == codec.lower()
    assert len(list(reader)) == 3


def test_multiple_result_sets_fragment_counts(postgres) -> None:
    """Two result sets (two statements, psycopg's nextset): each is fragmented on its own,
    with its own resultset.index and fragment.count."""
    runner = _runner(postgres.jdbc_url, **{"Max Rows Per Flow File": "2"})
    runner.enqueue(b"select generate_series(1, 3) as a; select generate_series(1, 5) as b")
    runner.run()
    outs = runner.flowfiles_for("success")
    seen = [
        (o.attributes["executesql.resultset.index"], o.attributes["fragment.count"]) for o in outs
    ]
    assert seen == [("0", "2"), ("0", "2"), ("1", "3"), ("1", "3"), ("1", "3")]
    assert [o.attributes["executesql.row.count"] for o in outs] == ["2", "1", "2", "2", "1"]


def test_drop_table_gives_an_empty_avro_file(tmp_path: Path) -> None:
    """NiFi's testDropTableWithOverwrite: a DROP TABLE yields one Avro file of no records."""
    runner = _runner(_sqlite(tmp_path), **{"SQL Query": "DROP TABLE persons"})
    runner.enqueue(b"some data")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert _records(runner.flowfiles_for("success")[0].content)[1] == []


def test_nifi_1_property_names_are_accepted() -> None:
    """NiFi's testMigrateProperties: the old internal names set today's properties."""
    renamed = {
        "sql-pre-query": "SQL Pre-Query",
        "SQL select query": "SQL Query",
        "sql-post-query": "SQL Post-Query",
        "esql-max-rows": "Max Rows Per Flow File",
        "esql-output-batch-size": "Output Batch Size",
        "esql-fetch-size": "Fetch Size",
        "esql-auto-commit": "Set Auto Commit",
        "compression-format": "Compression Format",
        "dbf-normalize": "Normalize Table/Column Names",
        "dbf-user-logical-types": "Use Avro Logical Types",
        "dbf-default-precision": "Default Decimal Precision",
        "dbf-default-scale": "Default Decimal Scale",
    }
    values = {"esql-auto-commit": "false", "compression-format": "SNAPPY"}
    values |= {"dbf-normalize": "true", "dbf-user-logical-types": "true"}
    for old, new in renamed.items():
        value = values.get(old, "7")
        processor = ExecuteSQL(**{old: value})
        descriptor = processor.resolve_descriptor(new)
        assert descriptor is not None
        assert processor.effective_value(descriptor) == value, old
        assert not processor.dynamic_properties, old


def test_nifi_2_property_names_are_accepted() -> None:
    """NiFi 2's JdbcProperties name: Normalize Table and Column Names sets the property, not a
    dynamic one (which would be taken for a statement argument)."""
    processor = ExecuteSQL(**{"Normalize Table and Column Names": "true"})
    descriptor = processor.resolve_descriptor("Normalize Table/Column Names")
    assert descriptor is not None
    assert processor.effective_value(descriptor) == "true"
    assert not processor.dynamic_properties


def test_a_value_avro_cannot_hold_names_its_column_not_the_database(tmp_path: Path) -> None:
    """A value the Avro writer cannot convert is blamed on its column and row, not the URL."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("create table t (id integer, n integer)")
        db.executemany("insert into t values (?, ?)", [(1, 5), (2, "oops")])
    runner = _runner(f"jdbc:sqlite:{path}")
    runner.enqueue(b"select * from t")
    runner.run()
    message = runner.flowfiles_for("failure")[0].attributes["executesql.error.message"]
    assert "column 'n' of row 2 holds 'oops'" in message
    assert "sqlite:" not in message


def test_postgres_json_arrays_and_objects_as_nifi_writes_them(postgres) -> None:
    """jsonb is PostgreSQL's text, an ARRAY JdbcCommon's [null, bytes, array] holding the
    array's text (getBytes), an interval PGInterval's text, money a double."""
    runner = _runner(
        postgres.jdbc_url,
        **{
            "SQL Query": "select '{\"k\": [1, 2.50, null]}'::jsonb as jb, "
            "'{1,NULL,3}'::int[] as ia, array['a b', '', 'NULL', null, 'x\"y'] as ta, "
            "array[[1.5, 2], [3, 4]]::float8[] as fa, "
            "array['2024-01-01 10:00:00.5'::timestamp, '2024-02-29'] as tsa, "
            "'1 year 2 mons 3 days 04:05:06.5'::interval as iv, '-1234.5'::money as m, "
            "null::int[] as nothing"
        },
    )
    runner.enqueue(b"")
    runner.run()
    schema, records = _records(runner.flowfiles_for("success")[0].content)
    types = {f["name"]: f["type"] for f in schema["fields"]}
    array = ["null", "bytes", {"type": "array", "items": "string"}]
    assert types == {
        "jb": ["null", "string"],
        "ia": array,
        "ta": array,
        "fa": array,
        "tsa": array,
        "iv": ["null", "string"],
        "m": ["null", "double"],
        "nothing": array,
    }
    assert records == [
        {
            "jb": '{"k": [1, 2.50, null]}',
            "ia": b"{1,NULL,3}",
            "ta": b'{"a b","","NULL",NULL,"x\\"y"}',
            "fa": b"{{1.5,2},{3,4}}",
            "tsa": b'{"2024-01-01 10:00:00.5","2024-02-29 00:00:00"}',
            "iv": "1 years 2 mons 3 days 4 hours 5 mins 6.5 secs",
            "m": -1234.5,
            "nothing": None,
        }
    ]
    expected = postgres.execute(
        "select array['a b', '', 'NULL', null, 'x\"y']::text, "
        "array['2024-01-01 10:00:00.5'::timestamp, '2024-02-29']::text"
    )
    assert expected == [(records[0]["ta"].decode(), records[0]["tsa"].decode())]
