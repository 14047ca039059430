"""QueryDatabaseTable: incremental reads by Maximum-value Columns, NiFi's state keys."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import fastavro
import pytest

from flowcore.errors import ProcessException
from flowcore.testing import TestRunner
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.query_database_table import QueryDatabaseTable


def _db(tmp_path: Path) -> Path:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "create table TEST_QUERY_DB_TABLE (id integer, name varchar(100), "
            "scale float, created_on timestamp)"
        )
        db.executemany(
            "insert into TEST_QUERY_DB_TABLE values (?, ?, ?, ?)",
            [
                (0, "Joe Smith", 1.0, "1962-09-23 03:23:34.234"),
                (1, "Carrie Jones", 5.0, "2000-01-01 03:23:34.234"),
                (2, None, 2.0, "2012-01-01 03:23:34.234"),
            ],
        )
    return path


def _insert(path: Path, *rows: tuple) -> None:
    with sqlite3.connect(path) as db:
        db.executemany("insert into TEST_QUERY_DB_TABLE values (?, ?, ?, ?)", rows)


def _runner(path: Path, **props: str) -> TestRunner:
    runner = TestRunner(
        QueryDatabaseTable(
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


def _rows(flowfile) -> list[dict]:
    return list(fastavro.reader(io.BytesIO(flowfile.content)))


def test_incremental_by_max_value_column(tmp_path: Path) -> None:
    """NiFi's testAddedRows: all rows first, then only new ones, state under table@!@column."""
    path = _db(tmp_path)
    runner = _runner(path, **{"Maximum-value Columns": "ID", "Max Rows Per Flow File": "2"})
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [o.attributes["querydbtable.row.count"] for o in outs] == ["2", "1"]
    outs[0].assert_attribute_equals("tablename", "TEST_QUERY_DB_TABLE")
    outs[0].assert_attribute_equals("maxvalue.id", "2")
    assert [o.attributes["fragment.index"] for o in outs] == ["0", "1"]
    assert runner.state == {"test_query_db_table@!@id": "2"}
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    _insert(path, (3, "Mary West", 15.0, "2000-01-01 03:23:34.234"))
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [r["id"] for o in outs for r in _rows(o)] == [3]
    assert runner.state == {"test_query_db_table@!@id": "3"}
    assert {e.event_type.value for e in runner.provenance_events} == {"RECEIVE"}


def test_initial_max_value_property(tmp_path: Path) -> None:
    """initial.maxvalue.<column> starts past the rows below it."""
    runner = _runner(_db(tmp_path), **{"Maximum-value Columns": "id", "initial.maxvalue.id": "0"})
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [1, 2]


def test_start_at_current_maximum(tmp_path: Path) -> None:
    """Start at Current Maximum Values: the first trigger only records the maxima."""
    path = _db(tmp_path)
    runner = _runner(
        path,
        **{
            "Maximum-value Columns": "id",
            "Initial Load Strategy": "Start at Current Maximum Values",
        },
    )
    runner.run()
    runner.assert_transfer_count("success", 0)
    assert runner.state == {"test_query_db_table@!@id": "2"}
    _insert(path, (7, "x", 1.0, "2000-01-01"))
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [7]
    bad = _runner(path, **{"Initial Load Strategy": "Start at Current Maximum Values"})
    assert not bad.is_valid()


def test_columns_and_where_clause(tmp_path: Path) -> None:
    """Columns to Return and Additional WHERE clause shape the query."""
    runner = _runner(
        _db(tmp_path),
        **{
            "Maximum-value Columns": "id",
            "Columns to Return": "id, scale",
            "Additional WHERE clause": "scale > 1.5",
        },
    )
    runner.run()
    assert [r for o in runner.flowfiles_for("success") for r in _rows(o)] == [
        {"id": 1, "scale": 5.0},
        {"id": 2, "scale": 2.0},
    ]


def test_postgres_incremental_with_timestamps(postgres) -> None:
    """A timestamp Maximum-value Column on PostgreSQL: state holds its text, reads resume."""
    postgres.execute("drop table if exists events")
    postgres.execute("create table events (id int, at timestamp)")
    postgres.execute(
        "insert into events values (1, '2024-01-01 00:00:01'), (2, '2024-01-01 00:00:02')"
    )
    runner = TestRunner(
        QueryDatabaseTable(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "events",
                "Maximum-value Columns": "at",
            }
        )
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp", **{"Database Connection URL": postgres.jdbc_url, "Database User": "postgres"}
        )
    )
    runner.run()
    assert runner.state == {"events@!@at": "2024-01-01 00:00:02.0"}
    postgres.execute("insert into events values (3, '2024-01-01 00:00:03')")
    runner.clear_transfer_state()
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [3]
    event = runner.provenance_events[-1]
    assert event.transit_uri == f"jdbc:postgresql://127.0.0.1:{postgres.port}/postgres"


def test_missing_table_lists_nothing_and_yields(tmp_path: Path, caplog) -> None:
    """A table that does not exist: no FlowFile, no state, an error naming the cause."""
    runner = _runner(_db(tmp_path), **{"Table Name": "NOWHERE", "Maximum-value Columns": "id"})
    runner.run()
    runner.assert_transfer_count("success", 0)
    assert runner.state == {}
    assert "no such table: NOWHERE" in caplog.text
    assert runner.context.yielded


def test_listing_errors_name_the_pool_and_what_to_check(postgres, caplog) -> None:
    """A missing table names Table Name; a refused password names the DBCPConnectionPool and
    its properties, without the password (found by review: neither was named)."""
    missing = _pg(postgres, **{"Table Name": "nowhere", "Maximum-value Columns": "id"})
    missing.run()
    assert "Unable to list new rows of nowhere: DBCPConnectionPool 'dbcp': " in caplog.text
    assert "check Table Name and Maximum-value Columns" in caplog.text
    caplog.clear()
    refused = TestRunner(
        QueryDatabaseTable(
            **{"Database Connection Pooling Service": "Shop database", "Table Name": "t"},
            **{"Maximum-value Columns": "id"},
        )
    )
    url = postgres.jdbc_url.replace("/postgres", "/no_such_database")
    refused.add_service(
        DBCPConnectionPool(
            "Shop database",
            **{"Database Connection URL": url, "Database User": "postgres"},
            **{"Password": "Wr0ng-pw"},
        )
    )
    refused.run()
    assert refused.context.yielded
    fix = "check Database Connection URL, Database User and Password of DBCPConnectionPool"
    assert f"{fix} 'Shop database'" in caplog.text
    assert "no_such_database" in caplog.text
    assert "Wr0ng-pw" not in caplog.text


def _pg(postgres, **props: str) -> TestRunner:
    runner = TestRunner(
        QueryDatabaseTable(**{"Database Connection Pooling Service": "dbcp", **props})
    )
    runner.add_service(
        DBCPConnectionPool(
            "dbcp", **{"Database Connection URL": postgres.jdbc_url, "Database User": "postgres"}
        )
    )
    return runner


def _pg_table(postgres, table: str, rows: list[str]) -> None:
    postgres.execute(f"drop table if exists {table}")
    postgres.execute(
        f"create table {table} (id integer not null, type varchar(20), name varchar(100), "
        "scale float, created_on timestamp, bignum bigint default 0)"
    )
    for row in rows:
        postgres.execute(f"insert into {table} (id, type, name, scale, created_on) values {row}")


_ROWS = [
    "(0, 'male', 'Joe Smith', 1.0, '1962-09-23 03:23:34.234')",
    "(1, 'female', 'Carrie Jones', 5.0, '2000-01-01 03:23:34.234')",
    "(2, NULL, NULL, 2.0, '2010-01-01 00:00:00')",
]


def test_with_null_int_column(postgres) -> None:
    """NiFi's testWithNullIntColumn: a NULL integer is a row like the others."""
    postgres.execute("drop table if exists test_null_int")
    postgres.execute(
        "create table test_null_int (id integer not null primary key, val1 integer, val2 integer)"
    )
    postgres.execute("insert into test_null_int values (0, NULL, 1), (1, 1, 1)")
    runner = _pg(postgres, **{"Table Name": "TEST_NULL_INT"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("querydbtable.row.count", "2")
    assert [r["val1"] for r in _rows(out)] == [None, 1]


def test_max_rows_per_flowfile_with_max_fragments(postgres) -> None:
    """NiFi's testMaxRowsPerFlowFileWithMaxFragments: 100 rows, 9 a FlowFile, 3 fragments."""
    _pg_table(postgres, "qdt_frags", [])
    postgres.execute(
        "insert into qdt_frags (id, name, scale, created_on) "
        "select g, 'Joe Smith', 1.0, '1962-09-23 03:23:34.234' from generate_series(0, 99) g"
    )
    runner = _pg(
        postgres,
        **{
            "Table Name": "qdt_frags",
            "Maximum-value Columns": "ID",
            "Max Rows Per Flow File": "9",
            "Maximum Number of Fragments": "3",
        },
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [len(_rows(o)) for o in outs] == [9, 9, 9]
    assert [o.attributes["fragment.index"] for o in outs] == ["0", "1", "2"]
    assert {o.attributes["fragment.count"] for o in outs} == {"3"}
    assert len({o.attributes["fragment.identifier"] for o in outs}) == 1


def test_added_rows_two_tables(postgres) -> None:
    """NiFi's testAddedRowsTwoTables: another Table Name keeps its own maximum in state."""
    _pg_table(postgres, "qdt_one", _ROWS)
    _pg_table(postgres, "qdt_two", _ROWS)
    runner = _pg(
        postgres,
        **{"Table Name": "qdt_one", "Maximum-value Columns": "ID", "Max Rows Per Flow File": "2"},
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [len(_rows(o)) for o in outs] == [2, 1]
    assert {o.attributes["maxvalue.id"] for o in outs} == {"2"}
    runner.clear_transfer_state()
    runner.set_property("Table Name", "qdt_two")
    runner.set_property("Max Rows Per Flow File", "0")
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [len(_rows(o)) for o in outs] == [3]
    outs[0].assert_attribute_equals("tablename", "qdt_two")
    runner.clear_transfer_state()
    postgres.execute("insert into qdt_two (id, name) values (3, 'Mary West')")
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [r["id"] for o in outs for r in _rows(o)] == [3]
    outs[0].assert_attribute_equals("maxvalue.id", "3")
    assert runner.state == {"qdt_one@!@id": "2", "qdt_two@!@id": "3"}
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)


def test_custom_sql_and_two_max_value_columns(postgres) -> None:
    """NiFi's testCustomSQL: a Custom Query is aliased by Table Name and filtered by the WHERE
    clause; with two Maximum-value Columns a row must pass both to be read."""
    _pg_table(postgres, "qdt_custom", _ROWS)
    postgres.execute("drop table if exists type_list")
    postgres.execute("create table type_list (type_id integer, type varchar(20), descr text)")
    postgres.execute("insert into type_list values (0, 'male', 'Man'), (1, 'female', 'Woman')")
    runner = _pg(
        postgres,
        **{
            "Table Name": "qdt_custom",
            "Custom Query": "SELECT id, b.type as gender, b.descr, name, scale, created_on, "
            "bignum FROM qdt_custom a INNER JOIN type_list b ON (a.type=b.type)",
            "Additional WHERE clause": "gender = 'male'",
            "Maximum-value Columns": "ID",
            "Max Rows Per Flow File": "2",
        },
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [r["id"] for o in outs for r in _rows(o)] == [0]
    outs[0].assert_attribute_equals("tablename", "qdt_custom")
    outs[0].assert_attribute_equals("maxvalue.id", "0")
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.set_property("Max Rows Per Flow File", "0")
    postgres.execute("insert into qdt_custom (id, type, name) values (3, 'female', 'Mary West')")
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.set_property("Maximum-value Columns", "id, created_on")
    postgres.execute(
        "insert into qdt_custom (id, type, name, scale, created_on) "
        "values (4, 'male', 'Marty Johnson', 15.0, '2011-01-01 03:23:34.234')"
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [r["id"] for o in outs for r in _rows(o)] == [4]
    outs[0].assert_attribute_equals("maxvalue.id", "4")
    outs[0].assert_attribute_equals("maxvalue.created_on", "2011-01-01 03:23:34.234")
    runner.clear_transfer_state()
    postgres.execute(
        "insert into qdt_custom (id, type, name, scale, created_on) "
        "values (5, 'male', 'NO NAME', 15.0, '2001-01-01 03:23:34.234')"
    )
    runner.run()
    runner.assert_transfer_count("success", 0)
    postgres.execute(
        "insert into qdt_custom (id, type, name, scale, created_on) "
        "values (6, 'male', 'Mr. NiFi', 1.0, '2012-01-01 03:23:34.234')"
    )
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [6]


def test_initial_max_value_with_el(postgres, monkeypatch) -> None:
    """NiFi's testInitialMaxValueWithEL: Table Name and initial.maxvalue.<column> from
    environment variables; the timestamp maximum kept as NiFi's 1970-01-01 00:09:00.0."""
    _pg_table(postgres, "qdt_el", [])
    postgres.execute(
        "insert into qdt_el (id, name, scale, created_on) select g, 'Joe Smith', 1.0, "
        "timestamp '1970-01-01' + g * interval '1 minute' from generate_series(0, 9) g"
    )
    monkeypatch.setenv("QDT_TABLE", "qdt_el")
    monkeypatch.setenv("created.on", "1970-01-01 00:05:00.000")
    runner = _pg(
        postgres,
        **{
            "Table Name": "${QDT_TABLE}",
            "Maximum-value Columns": "created_on",
            "initial.maxvalue.CREATED_ON": "${created.on}",
        },
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [len(_rows(o)) for o in outs] == [4]
    assert runner.state == {"qdt_el@!@created_on": "1970-01-01 00:09:00.0"}
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    assert runner.state == {"qdt_el@!@created_on": "1970-01-01 00:09:00.0"}


def test_multiple_partitions(postgres) -> None:
    """NiFi's testMultiplePartitions: with Maximum-value Columns ID, BUCKET a new id in an
    old bucket is not read, one in the newest bucket is."""
    postgres.execute("drop table if exists qdt_buckets")
    postgres.execute("create table qdt_buckets (id integer not null, bucket integer not null)")
    postgres.execute("insert into qdt_buckets values (0, 0), (1, 0)")
    runner = _pg(postgres, **{"Table Name": "qdt_buckets", "Maximum-value Columns": "ID, BUCKET"})
    counts = []
    for row in [None, (2, 0), (3, 1), (4, 0), (5, 1)]:
        if row:
            postgres.execute(f"insert into qdt_buckets values {row}")
        runner.run()
        counts.append(
            [o.attributes["querydbtable.row.count"] for o in runner.flowfiles_for("success")]
        )
        runner.clear_transfer_state()
    assert counts == [["2"], ["1"], ["1"], [], ["1"]]


def test_timestamp_nanos(postgres) -> None:
    """NiFi's testTimestampNanos, in PostgreSQL's microseconds: a row below the kept maximum
    in the same millisecond is not read, one above it by microseconds is."""
    postgres.execute("drop table if exists qdt_nanos")
    postgres.execute("create table qdt_nanos (id integer not null, created_on timestamp)")
    postgres.execute("insert into qdt_nanos values (1, '2000-01-01 03:23:34.000123')")
    runner = _pg(postgres, **{"Table Name": "qdt_nanos", "Maximum-value Columns": "created_on"})
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [1]
    assert runner.state == {"qdt_nanos@!@created_on": "2000-01-01 03:23:34.000123"}
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    postgres.execute("insert into qdt_nanos values (2, '2000-01-01 03:23:34.000')")
    runner.run()
    runner.assert_transfer_count("success", 0)
    postgres.execute("insert into qdt_nanos values (3, '2000-01-01 03:23:34.0003')")
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [3]
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)


def test_output_batch_size(postgres, monkeypatch) -> None:
    """NiFi's testOutputBatchSize: fragments keep fragment.identifier and fragment.index but,
    as NiFi releases batches before the end, get no fragment.count nor maxvalue.*."""
    _pg_table(postgres, "qdt_batch", [])
    postgres.execute(
        "insert into qdt_batch (id, name, scale, created_on) "
        "select g, 'Joe Smith', 1.0, '1962-09-23 03:23:34.234' from generate_series(0, 99) g"
    )
    monkeypatch.setenv("MAX_ROWS", "7")
    monkeypatch.setenv("outputBatchSize", "4")
    runner = _pg(
        postgres,
        **{
            "Table Name": "qdt_batch",
            "Maximum-value Columns": "ID",
            "Max Rows Per Flow File": "${MAX_ROWS}",
            "Output Batch Size": "${outputBatchSize}",
        },
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [len(_rows(o)) for o in outs] == [7] * 14 + [2]
    assert [o.attributes["fragment.index"] for o in outs] == [str(i) for i in range(15)]
    assert len({o.attributes["fragment.identifier"] for o in outs}) == 1
    assert not [
        k for o in outs for k in o.attributes if k.startswith(("fragment.count", "maxvalue."))
    ]
    assert runner.state == {"qdt_batch@!@id": "99"}


def test_max_rows_per_flowfile(postgres, monkeypatch) -> None:
    """NiFi's testMaxRowsPerFlowFile: 100 rows 9 a FlowFile are 12 fragments counted 12; later
    runs read only the new rows; cleared state reads them all again."""
    _pg_table(postgres, "qdt_maxrows", [])
    insert = (
        "insert into qdt_maxrows (id, name) select g, 'Joe Smith' from generate_series({}, {}) g"
    )
    postgres.execute(insert.format(0, 99))
    monkeypatch.setenv("MAX_ROWS", "9")
    runner = _pg(
        postgres,
        **{
            "Table Name": "qdt_maxrows",
            "Maximum-value Columns": "ID",
            "Max Rows Per Flow File": "${MAX_ROWS}",
        },
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [len(_rows(o)) for o in outs] == [9] * 11 + [1]
    assert [o.attributes["fragment.index"] for o in outs] == [str(i) for i in range(12)]
    assert {o.attributes["fragment.count"] for o in outs} == {"12"}
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    postgres.execute(insert.format(100, 104))
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert (len(_rows(out)), out.attributes["fragment.count"]) == (5, "1")
    runner.clear_transfer_state()
    postgres.execute(insert.format(105, 118))
    runner.run()
    assert [len(_rows(o)) for o in runner.flowfiles_for("success")] == [9, 5]
    runner.clear_transfer_state()
    runner.set_state({})
    runner.run()
    assert [len(_rows(o)) for o in runner.flowfiles_for("success")] == [9] * 13 + [2]


def test_initial_load_strategy_start_at_beginning(postgres) -> None:
    """NiFi's testInitialLoadStrategyStartAtBeginning: the first run reads every row."""
    _pg_table(postgres, "qdt_begin", _ROWS)
    runner = _pg(
        postgres,
        **{
            "Table Name": "qdt_begin",
            "Maximum-value Columns": "ID",
            "Initial Load Strategy": "Start at Beginning",
        },
    )
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [0, 1, 2]


def test_added_rows_custom_where_clause(postgres) -> None:
    """NiFi's testAddedRowsCustomWhereClause: the clause filters each run's new rows; a new
    Maximum-value Column after clearing state reads the matching rows again."""
    _pg_table(postgres, "qdt_where", _ROWS)
    runner = _pg(
        postgres,
        **{
            "Table Name": "qdt_where",
            "Additional WHERE clause": "type = 'male'",
            "Maximum-value Columns": "ID",
            "Max Rows Per Flow File": "2",
        },
    )
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [0]
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    postgres.execute("insert into qdt_where (id, type, name) values (3, 'female', 'Mary West')")
    runner.run()
    runner.assert_transfer_count("success", 0)
    postgres.execute(
        "insert into qdt_where (id, type, name) values (4, 'male', 'Marty Johnson'), "
        "(5, 'male', 'Marty Johnson')"
    )
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [4, 5]
    runner.clear_transfer_state()
    runner.set_state({})
    runner.set_property("Maximum-value Columns", "name")
    runner.run()
    assert sorted(r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)) == [0, 4, 5]


def test_with_sql_exception(postgres) -> None:
    """NiFi's testWithSqlException: a column that does not exist makes no FlowFile and keeps
    no state; the error names the statement and the database's cause."""
    postgres.execute("drop table if exists qdt_no_rows")
    postgres.execute("create table qdt_no_rows (id integer)")
    postgres.execute("insert into qdt_no_rows values (1)")
    runner = _pg(postgres, **{"Table Name": "qdt_no_rows", "Columns to Return": "val1"})
    with pytest.raises(ProcessException) as raised:
        runner.run()
    assert str(raised.value) == (
        "Unable to execute SQL select query SELECT val1 FROM qdt_no_rows: "
        'database: column "val1" does not exist'
    )
    runner.assert_transfer_count("success", 0)
    assert runner.state == {}


def test_missing_column(postgres, caplog) -> None:
    """NiFi's testMissingColumn: a Maximum-value Column the Custom Query does not return fails
    the trigger with NiFi's message; nothing is read and no state is kept."""
    _pg_table(postgres, "qdt_missing", _ROWS)
    postgres.execute("drop table if exists type_list")
    postgres.execute("create table type_list (type_id integer, type varchar(20), descr text)")
    postgres.execute("insert into type_list values (0, 'male', 'Man'), (1, 'female', 'Woman')")
    runner = _pg(
        postgres,
        **{
            "Table Name": "TYPE_LIST",
            "Custom Query": "SELECT b.type, b.descr, name, scale, created_on, bignum FROM "
            "qdt_missing a INNER JOIN type_list b ON (a.type=b.type)",
            "Additional WHERE clause": "type = 'male'",
            "Maximum-value Columns": "ID",
            "Max Rows Per Flow File": "2",
        },
    )
    runner.run()
    runner.assert_transfer_count("success", 0)
    assert runner.state == {}
    assert "Column not found in the table/query specified: ID" in caplog.text
    assert runner.context.yielded


def test_expressions_are_evaluated_once_per_trigger(postgres, monkeypatch) -> None:
    """The read uses the values the listing found the maxima with: an expression whose value
    changes in between (here the environment) is not evaluated again."""
    _pg_table(postgres, "qdt_once", _ROWS)
    monkeypatch.setenv("QDT_WHERE", "type = 'male'")
    monkeypatch.setenv("QDT_COLUMNS", "id")
    runner = _pg(
        postgres,
        **{
            "Table Name": "qdt_once",
            "Columns to Return": "${QDT_COLUMNS}",
            "Additional WHERE clause": "${QDT_WHERE}",
            "Maximum-value Columns": "id",
        },
    )
    listed = QueryDatabaseTable.list_work

    def list_then_change(self, context, state):  # type: ignore[no-untyped-def]
        listing = listed(self, context, state)
        monkeypatch.setenv("QDT_WHERE", "type = 'female'")
        monkeypatch.setenv("QDT_COLUMNS", "id, name")
        return listing

    monkeypatch.setattr(QueryDatabaseTable, "list_work", list_then_change)
    runner.run()
    assert [r for o in runner.flowfiles_for("success") for r in _rows(o)] == [{"id": 0}]


def test_migrate_properties(tmp_path: Path) -> None:
    """NiFi's testMigrateProperties: NiFi 1's internal names (and NiFi 2.7's "Additional WHERE
    Clause") set QueryDatabaseTable's properties, none left as a dynamic property."""
    runner = _runner(
        _db(tmp_path),
        **{
            "Maximum-value Columns": "id",
            "db-fetch-db-type": "Generic",
            "Additional WHERE Clause": "scale > 1.5",
            "qdbt-max-rows": "1",
            "qdbt-output-batch-size": "0",
            "qdbt-max-frags": "1",
            "transaction-isolation-level": "2",
            "initial-load-strategy": "Start at Beginning",
            "dbf-normalize": "false",
            "dbf-user-logical-types": "false",
            "dbf-default-scale": "0",
            "dbf-default-precision": "10",
        },
    )
    assert runner.context.dynamic_properties == {}
    runner.run()
    assert [r["id"] for o in runner.flowfiles_for("success") for r in _rows(o)] == [1]


@pytest.mark.parametrize("auto_commit", ["true", "false"])
def test_added_rows_auto_commit(postgres, auto_commit: str) -> None:
    """NiFi's testAddedRowsAutoCommitTrue / testAddedRowsAutoCommitFalse: either Set Auto
    Commit reads the rows in fragments of Max Rows Per Flow File, Fetch Size 2."""
    _pg_table(postgres, "qdt_autocommit", _ROWS)
    runner = _pg(
        postgres,
        **{
            "Table Name": "qdt_autocommit",
            "Maximum-value Columns": "ID",
            "Max Rows Per Flow File": "2",
            "Fetch Size": "2",
            "Set Auto Commit": auto_commit,
        },
    )
    runner.run()
    outs = runner.flowfiles_for("success")
    assert [len(_rows(o)) for o in outs] == [2, 1]
    assert [(o.attributes["tablename"], o.attributes["maxvalue.id"]) for o in outs] == [
        ("qdt_autocommit", "2"),
        ("qdt_autocommit", "2"),
    ]


def _tz_runner(postgres, zone: str) -> TestRunner:
    """QueryDatabaseTable on tz_events, its sessions in time zone *zone*."""
    runner = TestRunner(
        QueryDatabaseTable(
            **{
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "tz_events",
                "Maximum-value Columns": "at",
            }
        )
    )
    url = f"{postgres.jdbc_url}?options=-c%20TimeZone%3D{zone.replace('/', '%2F')}"
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": url, "Database User": "postgres"})
    )
    return runner


def test_postgres_timestamptz_maximum_is_java_timestamp_text(postgres) -> None:
    """A timestamptz Maximum-value Column is kept (state, maxvalue.at) as NiFi's
    Timestamp.toString in flowcore's zone (UTC), and bounds the next read right after the
    session's time zone changes; state in PostgreSQL's old text form (with its offset) is
    still read right."""
    postgres.execute("drop table if exists tz_events")
    postgres.execute("create table tz_events (id int, at timestamptz)")
    postgres.execute(
        "insert into tz_events values (1, '2026-01-01 00:00:00+00'), "
        "(2, '2026-01-01 01:00:00-05:00')"
    )
    runner = _tz_runner(postgres, "America/New_York")
    runner.run()
    assert runner.state == {"tz_events@!@at": "2026-01-01 06:00:00.0"}
    (out,) = runner.flowfiles_for("success")
    assert out.attributes["maxvalue.at"] == "2026-01-01 06:00:00.0"
    postgres.execute("insert into tz_events values (3, '2026-01-01 06:00:01+00')")
    later = _tz_runner(postgres, "Asia/Tokyo")
    later.set_state(dict(runner.state))
    later.run()
    assert [r["id"] for o in later.flowfiles_for("success") for r in _rows(o)] == [3]
    assert later.state == {"tz_events@!@at": "2026-01-01 06:00:01.0"}
    old = _tz_runner(postgres, "Asia/Tokyo")
    old.set_state({"tz_events@!@at": "2026-01-01 01:00:00-05:00"})
    old.run()
    assert [r["id"] for o in old.flowfiles_for("success") for r in _rows(o)] == [3]
