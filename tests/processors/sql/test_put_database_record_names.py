"""PutDatabaseRecord: NiFi's name handling (translation, quoting, schemas, table case), batches."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flowcore.testing import TestRunner
from processors.record_services import ParquetReader
from tests.processors.sql.put_runners import pg_persons, put_runner


def _error(runner: TestRunner) -> str:
    return runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]


@pytest.mark.parametrize(
    ("strategy", "pattern", "field", "routed"),
    [
        ("REMOVE_UNDERSCORE", None, "User Name", "failure"),  # NiFi's default keeps spaces
        ("REMOVE_UNDERSCORE", None, "_user_Name_ ", "success"),  # ... and trims
        ("REMOVE_SPACE", None, "User Name", "success"),
        ("REMOVE_SPACE", None, "user_name", "failure"),
        ("REMOVE_UNDERSCORE_AND_SPACE", None, "User_ Name", "success"),
        ("REMOVE_ALL_SPECIAL_CHAR", None, "user-name#", "success"),
        ("PATTERN", "[ #\\d]", "User Name#1", "success"),
        ("PATTERN", "[ #]", "User Name#1", "failure"),
    ],
)
def test_column_name_translation_strategy(postgres, strategy, pattern, field, routed) -> None:
    """NiFi's Column Name Translation Strategy (and Pattern): a field meets column username
    when the strategy's removals, a trim and upper case make both the same."""
    props = {
        "Column Name Translation Strategy": strategy,
        "Unmatched Field Behavior": "Fail on Unmatched Fields",
    }
    if pattern:
        props["Column Name Translation Pattern"] = pattern
    runner = pg_persons(postgres, "id integer primary key, username varchar(100)", **props)
    runner.enqueue(json.dumps([{"id": 1, field: "rec1"}]).encode())
    runner.run()
    runner.assert_all_flowfiles_transferred(routed, 1)
    if routed == "success":
        assert postgres.execute("select id, username from persons") == [(1, "rec1")]
    else:
        assert f"Cannot map field '{field}'" in _error(runner)


def test_translation_pattern_required_and_validated(postgres) -> None:
    """Regular Expression needs a Column Name Translation Pattern, one that compiles."""
    runner = pg_persons(postgres, "id integer primary key", **{
        "Column Name Translation Strategy": "PATTERN",
    })  # fmt: skip
    runner.assert_not_valid()
    runner = pg_persons(postgres, "id integer primary key", **{
        "Column Name Translation Strategy": "PATTERN",
        "Column Name Translation Pattern": "[unclosed",
    })  # fmt: skip
    runner.assert_not_valid()
    runner = pg_persons(postgres, "id integer primary key", **{
        "Translate Field Names": "false",
        "Column Name Translation Strategy": "PATTERN",
    })  # fmt: skip
    runner.assert_valid()  # the strategy applies only when translating


def test_update_specify_update_keys_not_first(postgres) -> None:
    """NiFi's testUpdateSpecifyUpdateKeysNotFirst: no primary key, Update Keys 'code'."""
    runner = pg_persons(
        postgres,
        "id integer, name varchar(100), code integer",
        "insert into persons values (10, 'x1', 201), (12, 'x2', 202)",
        **{"Statement Type": "UPDATE", "Update Keys": "code"},
    )
    runner.enqueue(
        b'[{"id": 1, "name": "rec1", "code": 201}, {"id": 2, "name": "rec2", "code": 202}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by code") == [
        (1, "rec1", 201),
        (2, "rec2", 202),
    ]


def test_update_specify_quoted_update_keys(postgres) -> None:
    """NiFi's testUpdateSpecifyQuotedUpdateKeys: columns created quoted (upper case in
    PostgreSQL, as lower case in Derby), Quote Column Identifiers, Update Keys by expression."""
    runner = pg_persons(
        postgres,
        '"ID" integer, "NAME" varchar(100), "CODE" integer',
        "insert into persons values (1, 'x1', 101), (2, 'x2', 102)",
        **{
            "Statement Type": "UPDATE",
            "Update Keys": "${updateKey}",
            "Quote Column Identifiers": "true",
        },
    )
    runner.enqueue(
        b'[{"id": 1, "name": "rec1", "code": 201}, {"id": 2, "name": "rec2", "code": 202}]',
        {"updateKey": "id"},
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute('select * from persons order by "ID"') == [
        (1, "rec1", 201),
        (2, "rec2", 202),
    ]


def test_unquoted_table_name_folds_as_the_database_does(postgres) -> None:
    """Table Name PERSONS finds PostgreSQL's persons (created unquoted), as NiFi's unquoted
    SQL does; with Quote Table Identifiers the name is exact: "PERSONS" does not exist."""
    runner = pg_persons(postgres, "id integer primary key, name varchar(100)")
    runner = put_runner(postgres.jdbc_url, user="postgres", **{"Table Name": "PERSONS"})
    runner.enqueue(b'[{"id": 1, "name": "rec1"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons") == [(1, "rec1")]
    runner = put_runner(
        postgres.jdbc_url,
        user="postgres",
        **{"Table Name": "PERSONS", "Quote Table Identifiers": "true"},
    )
    runner.enqueue(b'[{"id": 2, "name": "rec2"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "table 'PERSONS' does not exist" in _error(runner)


def test_quote_table_identifiers_mixed_case_table(postgres) -> None:
    """NiFi's Quote Table Identifiers: a table created quoted in mixed case is found by its
    exact name (and, unquoted, by that name as given too)."""
    postgres.execute('drop table if exists "Persons Two"')
    postgres.execute('create table "Persons Two" (id integer primary key, name varchar(100))')
    for index, quoted in enumerate(["true", "false"]):
        runner = put_runner(
            postgres.jdbc_url,
            user="postgres",
            **{"Table Name": "Persons Two", "Quote Table Identifiers": quoted},
        )
        runner.enqueue(b'[{"id": %d, "name": "rec"}]' % index)
        runner.run()
        runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute('select id from "Persons Two" order by id') == [(0,), (1,)]
    postgres.execute('drop table "Persons Two"')


def test_update_multiple_schemas(postgres) -> None:
    """NiFi's testUpdateMultipleSchemas: PERSONS in SCHEMA1 and SCHEMA2 (created unquoted);
    Schema Name SCHEMA1 updates its table only."""
    for schema in ("schema1", "schema2"):
        postgres.execute(f"drop schema if exists {schema} cascade")
        postgres.execute(f"create schema {schema.upper()}")
        postgres.execute(
            f"create table {schema.upper()}.PERSONS (id integer primary key, "
            "name varchar(100), code integer, dt date)"
        )
    postgres.execute("insert into SCHEMA1.PERSONS values (1, 'x1', 101, null)")
    postgres.execute("insert into SCHEMA2.PERSONS values (2, 'x2', 102, null)")
    runner = put_runner(
        postgres.jdbc_url,
        user="postgres",
        **{"Statement Type": "UPDATE", "Schema Name": "SCHEMA1", "Table Name": "PERSONS"},
    )
    runner.enqueue(
        b'[{"id": 1, "name": "rec1", "code": 201}, {"id": 2, "name": "rec2", "code": 202}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, name, code from schema1.persons") == [(1, "rec1", 201)]
    assert postgres.execute("select id, name, code from schema2.persons") == [(2, "x2", 102)]
    for schema in ("schema1", "schema2"):
        postgres.execute(f"drop schema {schema} cascade")


@pytest.mark.parametrize(("batch_size", "batches"), [("5", 3), ("1000", 1), ("0", 1)])
@pytest.mark.parametrize("statement_type", ["INSERT", "UPSERT"])
def test_insert_with_max_batch_size(postgres, batch_size, batches, statement_type) -> None:
    """NiFi's testInsertWithMaxBatchSize and ...DefaultMaxBatchSize: 11 records in batches of
    5 are 3 executed batches, of 1000 (or unlimited) one; NiFi's counters say so."""
    runner = pg_persons(
        postgres,
        "id integer primary key, name varchar(100), code integer",
        **{"Maximum Batch Size": batch_size, "Statement Type": statement_type},
    )
    rows = ", ".join(f'{{"id": {i}, "name": "rec{i}", "code": {100 + i}}}' for i in range(1, 12))
    runner.enqueue(f"[{rows}]".encode())
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select count(*) from persons") == [(11,)]
    assert runner.get_counter_value("Batches Executed") == batches
    assert runner.get_counter_value(f"{statement_type} updates performed") == 11


def test_insert_enum(postgres) -> None:
    """NiFi's testInsertEnum: record strings into a PostgreSQL enum column (NiFi's Derby
    test checks the values by constraint; PostgreSQL's own enum type here)."""
    postgres.execute("drop table if exists enum_test")
    postgres.execute("drop type if exists suit")
    postgres.execute("create type suit as enum ('clubs', 'diamonds', 'hearts', 'spades')")
    postgres.execute("create table enum_test (id integer primary key, suit suit not null)")
    runner = put_runner(postgres.jdbc_url, user="postgres", **{"Table Name": "ENUM_TEST"})
    runner.enqueue(b'[{"id": 1, "suit": "diamonds"}, {"id": 2, "suit": "hearts"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, suit::text from enum_test order by id") == [
        (1, "diamonds"),
        (2, "hearts"),
    ]
    runner = put_runner(postgres.jdbc_url, user="postgres", **{"Table Name": "enum_test"})
    runner.enqueue(b'[{"id": 3, "suit": "stars"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "stars" in _error(runner)
    postgres.execute("drop table enum_test")
    postgres.execute("drop type suit")


def test_clob(postgres) -> None:
    """NiFi's testClob: strings into a text (CLOB) column."""
    runner = pg_persons(postgres, "id integer primary key, name text")
    runner.enqueue(b'[{"id": 1, "name": "rec1"}, {"id": 2, "name": "rec2"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == [(1, "rec1"), (2, "rec2")]


def test_insert_long_var_binary_column(postgres) -> None:
    """NiFi's testInsertLongVarBinaryColumn: a record's array of bytes into a bytea column."""
    out = io.BytesIO()
    table = pa.table({
        "id": pa.array([1, 2], pa.int32()),
        "name": pa.array([[97, 98, 99], [100, 101, 102]], pa.list_(pa.int8())),
    })  # fmt: skip
    pq.write_table(table, out)
    runner = pg_persons(postgres, "id integer primary key, name bytea")
    runner.add_service(ParquetReader("reader"))
    runner.enqueue(out.getvalue())
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == [(1, b"abc"), (2, b"def")]


_TWINS = "id integer primary key, user_id integer, userid integer, name text"


def test_exact_column_name_wins_over_a_normalized_twin(postgres) -> None:
    """Columns user_id and userid normalize alike: each field goes to the column named
    exactly (NiFi's normalized map let the last column take both)."""
    runner = pg_persons(postgres, _TWINS)
    runner.enqueue(b'[{"id": 1, "user_id": 5}, {"id": 2, "userid": 6}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, user_id, userid from persons order by id") == [
        (1, 5, None),
        (2, None, 6),
    ]


def test_ambiguous_normalized_field_fails_naming_the_columns(postgres) -> None:
    """A field matching two columns only once normalized (PATTERN removing digits: a1, a2)
    fails naming both; the exact names still go to their own columns."""
    props = {
        "Column Name Translation Strategy": "PATTERN",
        "Column Name Translation Pattern": "\\d",
    }
    runner = pg_persons(postgres, "id integer primary key, a1 integer, a2 integer", **props)
    runner.enqueue(b'[{"id": 1, "a1": 5, "a2": 6}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, a1, a2 from persons") == [(1, 5, 6)]
    runner.clear_transfer_state()
    runner.enqueue(b'[{"id": 2, "a3": 7}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "field 'a3' matches the columns ['a1', 'a2']" in _error(runner)
    assert postgres.execute("select count(*) from persons") == [(1,)]


@pytest.mark.parametrize("statement_type", ["UPDATE", "DELETE"])
def test_keys_go_to_the_exact_column(postgres, statement_type) -> None:
    """Update Keys / Delete Keys user_id match rows by user_id, not by its twin userid."""
    inserts = "insert into persons values (1, 10, 20, 'a'), (2, 20, 10, 'b')"
    key_property = "Update Keys" if statement_type == "UPDATE" else "Delete Keys"
    props = {
        "Statement Type": statement_type,
        key_property: "user_id",
        "Unmatched Column Behavior": "Ignore Unmatched Columns",  # DELETE: id not given
    }
    runner = pg_persons(postgres, _TWINS, inserts, **props)
    record = {"user_id": 10, "name": "CHANGED"} if statement_type == "UPDATE" else {"user_id": 10}
    runner.enqueue(json.dumps([record]).encode())
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    expected = [(1, "CHANGED"), (2, "b")] if statement_type == "UPDATE" else [(2, "b")]
    assert postgres.execute("select id, name from persons order by id") == expected


def test_unquoted_table_name_folds_before_an_exact_twin(postgres) -> None:
    """With both "Persons" and persons in PostgreSQL, Table Name Persons unquoted writes to
    persons (NiFi's unquoted SQL folds it); Quote Table Identifiers writes to "Persons"."""
    pg_persons(postgres, "id integer primary key, name varchar(100)")
    postgres.execute('drop table if exists "Persons"')
    postgres.execute('create table "Persons" (id integer primary key, name varchar(100))')
    for index, quoted in enumerate(["false", "true"]):
        runner = put_runner(
            postgres.jdbc_url,
            user="postgres",
            **{"Table Name": "Persons", "Quote Table Identifiers": quoted},
        )
        runner.enqueue(b'[{"id": %d, "name": "rec"}]' % index)
        runner.run()
        runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id from persons") == [(0,)]
    assert postgres.execute('select id from "Persons"') == [(1,)]
    postgres.execute('drop table "Persons"')
