"""PutDatabaseRecord: NiFi's statement types, one transaction per FlowFile, routing."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from flowcore.errors import ProcessException
from flowcore.testing import TestRunner
from processors.record_services import JsonTreeReader
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_database_record import PutDatabaseRecord
from tests.processors.sql.put_runners import (
    PERSONS,
    person_runner,
    pg_persons,
    put_runner,
    sqlite_db,
    sqlite_rows,
)


def test_insert_translating_field_names(tmp_path: Path) -> None:
    """NiFi's testInsert: fields matched to columns ignoring case; SEND to the database."""
    path = sqlite_db(tmp_path)
    runner = put_runner(f"jdbc:sqlite:{path}", **{"Maximum Batch Size": "2"})
    runner.enqueue(
        b'[{"id": 1, "NAME": "rec1", "code": 101}, {"id": 2, "name": "rec2", '
        b'"code": 102}, {"id": 3, "name": "rec3", "code": 103}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert sqlite_rows(path) == [(1, "rec1", 101), (2, "rec2", 102), (3, "rec3", 103)]
    assert [e.event_type.value for e in runner.provenance_events] == ["SEND"]


def test_failure_rolls_back_the_whole_flowfile(tmp_path: Path) -> None:
    """A duplicate key in the third record: nothing of the FlowFile stays; failure, error."""
    path = sqlite_db(tmp_path)
    runner = put_runner(f"jdbc:sqlite:{path}", **{"Maximum Batch Size": "1"})
    runner.enqueue(b'[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 1, "name": "c"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "UNIQUE constraint failed: PERSONS.id" in error
    assert "PERSONS" in error
    assert sqlite_rows(path) == []


def test_update_upsert_delete_and_statement_type_attribute(tmp_path: Path) -> None:
    """UPDATE by primary key, UPSERT, INSERT_IGNORE, DELETE, statement.type from attributes."""
    path = sqlite_db(tmp_path)
    url = f"jdbc:sqlite:{path}"
    runner = put_runner(url, **{"Statement Type": "Use statement.type Attribute"})
    runner.enqueue(
        b'[{"id": 1, "name": "a", "code": 1}, {"id": 2, "name": "b", "code": 2}]',
        {"statement.type": "INSERT"},
    )
    runner.enqueue(b'[{"id": 1, "name": "A"}]', {"statement.type": "update"})
    runner.enqueue(
        b'[{"id": 2, "name": "B", "code": 20}, {"id": 3, "name": "C", "code": 30}]',
        {"statement.type": "UPSERT"},
    )
    runner.enqueue(
        b'[{"id": 3, "name": "X", "code": 0}, {"id": 4, "name": "D", "code": 4}]',
        {"statement.type": "INSERT_IGNORE"},
    )
    # name is NOT NULL: NiFi's DELETE fails a record schema without it (Fail on Unmatched
    # Columns), so the record gives it (and every field given is matched).
    runner.enqueue(b'[{"id": 4, "name": "D"}]', {"statement.type": "DELETE"})
    runner.run(5)
    runner.assert_all_flowfiles_transferred("success", 5)
    assert sqlite_rows(path) == [(1, "A", 1), (2, "B", 20), (3, "C", 30)]
    runner = put_runner(url, **{"Statement Type": "Use statement.type Attribute"})
    runner.enqueue(b'[{"id": 9, "name": "z"}]', {"statement.type": "MERGE"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_upsert_is_idempotent(tmp_path: Path) -> None:
    """The same FlowFile upserted twice leaves the table as once (exactly-once results)."""
    path = sqlite_db(tmp_path)
    runner = put_runner(f"jdbc:sqlite:{path}", **{"Statement Type": "UPSERT"})
    content = b'[{"id": 1, "name": "a", "code": 1}, {"id": 2, "name": "b", "code": 2}]'
    runner.enqueue(content)
    runner.enqueue(content)
    runner.run(2)
    assert sqlite_rows(path) == [(1, "a", 1), (2, "b", 2)]


def test_unmatched_fields_and_columns(tmp_path: Path) -> None:
    """Fail on Unmatched Fields names the field; a missing NOT NULL column fails."""
    path = sqlite_db(tmp_path)
    url = f"jdbc:sqlite:{path}"
    runner = put_runner(url, **{"Unmatched Field Behavior": "Fail on Unmatched Fields"})
    runner.enqueue(b'[{"id": 1, "name": "a", "extra": 5}]')
    runner.run()
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "Cannot map field 'extra'" in error
    runner = put_runner(url)
    runner.enqueue(b'[{"id": 1, "code": 5}]')
    runner.run()
    assert (
        "Required column"
        in runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    )
    runner = put_runner(url, **{"Unmatched Column Behavior": "Ignore Unmatched Columns"})
    runner.enqueue(b'[{"id": 1, "name": "n"}]')
    runner.run()
    assert sqlite_rows(path) == [(1, "n", None)]


def test_missing_table_and_rollback_on_failure(tmp_path: Path) -> None:
    """A table that does not exist fails naming it; Rollback On Failure keeps it queued."""
    path = sqlite_db(tmp_path)
    runner = put_runner(f"jdbc:sqlite:{path}", **{"Table Name": "NOWHERE"})
    runner.enqueue(b'[{"id": 1}]')
    runner.run()
    assert (
        "table 'NOWHERE' does not exist"
        in runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    )
    runner = put_runner(
        f"jdbc:sqlite:{path}", **{"Table Name": "NOWHERE", "Rollback On Failure": "true"}
    )
    runner.enqueue(b'[{"id": 1}]')
    with pytest.raises(ProcessException):
        runner.run()
    assert runner.queue_size == 1 or runner.queue_size() == 1


def test_postgres_constraint_names_table_and_constraint(postgres) -> None:
    """PostgreSQL: a unique violation names the constraint; the password never shows."""
    postgres.execute("drop table if exists persons")
    postgres.execute("create table persons (id int primary key, name text not null, code int)")
    runner = put_runner(postgres.jdbc_url, user="postgres", **{"Table Name": "persons"})
    runner.enqueue(b'[{"id": 1, "name": "a"}, {"id": 1, "name": "b"}]')
    runner.enqueue(b'[{"id": 2, "name": "c", "code": 3}]')
    runner.run(2)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "persons_pkey" in error
    assert "table persons" in error
    assert "hunter2-secret" not in error
    assert postgres.execute("select id, name, code from persons") == [(2, "c", 3)]


def test_postgres_unreachable_goes_to_retry(postgres) -> None:
    """A server that is not there: retry (transient), with the cause."""
    runner = put_runner(
        "jdbc:postgresql://127.0.0.1:1/none", user="postgres", **{"Table Name": "persons"}
    )
    runner.enqueue(b'[{"id": 1, "name": "a"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("retry", 1)
    assert (
        "hunter2-secret"
        not in runner.flowfiles_for("retry")[0].attributes["putdatabaserecord.error"]
    )


_KINDS_TABLE = (
    "create table kinds (id int primary key, name varchar(5), day date, at timestamp, "
    "atz timestamptz, price numeric(6,2), ok boolean, blob bytea, ratio real, small smallint, "
    "mood kinds_mood, code char(10), at2 timestamp(2), said timestamp(1), "
    "amount numeric(6,2), big numeric(20,0), tag kinds_tag, note text default 'none')"
)


def _kinds_parquet(names: list[str | None], **strings: list[str]) -> bytes:
    """Rows of every scalar kind the column-wise INSERT sends (nulls among them), as Parquet."""
    import datetime as dt
    import decimal
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    count = len(names)
    at = dt.datetime(2024, 2, 29, 12, 30, 15, 123456)
    table = pa.table(
        {
            "id": pa.array(range(count), pa.int64()),
            "name": pa.array(names, pa.string()),
            "day": pa.array(["2024-02-29", None, "1999-12-31"][:count] * (count // 3 + 1))[:count],
            "at": pa.array([at, None] * count, pa.timestamp("us"))[:count],
            "atz": pa.array([at] * count, pa.timestamp("us", tz="UTC")),
            "price": pa.array([decimal.Decimal("1234.565"), None] * count, pa.decimal128(10, 3))[
                :count
            ],
            "ok": pa.array([True, False, None] * count, pa.bool_())[:count],
            "blob": pa.array([b"\x00\xff", None] * count, pa.binary())[:count],
            "ratio": pa.array([0.1, 2.5] * count, pa.float64())[:count],
            "small": pa.array([7, None] * count, pa.int64())[:count],
            "mood": pa.array(["happy", "sad"] * count, pa.string())[:count],
            "code": pa.array(strings.get("code", ["ABCDEF", "XY"] * count), pa.string())[:count],
            "tag": pa.array(strings.get("tag", ["abcd", "ab"] * count), pa.string())[:count],
            "at2": pa.array([at] * count, pa.timestamp("us")),
            "said": pa.array(["2024-02-29 12:30:15.16"] * count, pa.string()),
            "amount": pa.array(["12.345", "-0.005"] * count, pa.string())[:count],
            "big": pa.array([2**64 - 1, 7] * count, pa.uint64())[:count],
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("names", "strings", "routed", "error"),
    [
        (["a", None, "ccccc", "d"], {}, "success", ""),
        (["a", "too long"], {}, "failure", "value too long for type character varying(5)"),
        (
            ["a", "b"],
            {"code": ["x", "ABCDEFGHIJK"]},
            "failure",
            "value too long for type character(10)",
        ),
        (
            ["a", "b"],
            {"tag": ["x", "abcde"]},
            "failure",
            "value too long for type character varying(4)",
        ),
    ],
    ids=["success", "varchar-too-long", "char-too-long", "domain-too-long"],
)
def test_postgres_column_wise_insert_matches_executemany(  # noqa: PLR0917
    postgres, monkeypatch, names, strings, routed, error
):
    """PostgreSQL INSERT goes column-wise (one statement of arrays per batch): the rows it
    leaves, text cast to the column's type (a date, an enum, char(n) kept whole),
    numbers and times rounded to the scale and precision, uint64 above 2^63, defaults, and its
    failures (a varchar(n), char(n) or domain over varchar(n) value too long fails, nothing
    is kept) are executemany's."""
    from processors.record_services import ParquetReader
    from processors.sql import _column_insert, record_statements

    postgres.execute("drop table if exists kinds")
    postgres.execute("drop type if exists kinds_mood")
    postgres.execute("drop domain if exists kinds_tag")
    postgres.execute("create type kinds_mood as enum ('happy', 'sad')")
    postgres.execute("create domain kinds_tag as varchar(4) check (value <> 'bad')")
    postgres.execute(_KINDS_TABLE)
    calls: list[int] = []
    original = _column_insert.column_insert

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(record_statements, "column_insert", counted)
    outcomes = []
    for column_wise in (True, False):
        if not column_wise:
            monkeypatch.setattr(record_statements, "usable", lambda *_: False)
        postgres.execute("delete from kinds")
        runner = put_runner(
            postgres.jdbc_url,
            user="postgres",
            **{"Table Name": "kinds", "Maximum Batch Size": "3"},
        )
        runner.add_service(ParquetReader("reader"))
        runner.enqueue(_kinds_parquet(names, **strings))
        runner.run()
        (flowfile,) = runner.flowfiles_for(routed)
        error = flowfile.attributes.get("putdatabaserecord.error", "")
        rows = postgres.execute(
            "select *, price::text, atz at time zone 'UTC' from kinds order by id"
        )
        outcomes.append((rows, error.split("\n")[0]))
    assert calls
    assert outcomes[0] == outcomes[1]
    if routed == "failure":
        assert error in outcomes[0][1]
        assert outcomes[0][0] == []
    else:
        assert len(outcomes[0][0]) == len(names)
        first = outcomes[0][0][0]
        assert first[-2] == "1234.57"
        assert first[-3] == "none"
        assert postgres.execute(
            "select code, at2::text, said::text, amount::text, big::text, tag "
            "from kinds where id in (0, 1) order by id"
        ) == [
            ("ABCDEF    ", "2024-02-29 12:30:15.12", "2024-02-29 12:30:15.2", "12.35",
             str(2**64 - 1), "abcd"),
            ("XY        ", "2024-02-29 12:30:15.12", "2024-02-29 12:30:15.2", "-0.01",
             "7", "ab"),
        ]  # fmt: skip


def test_update_specify_update_keys(postgres) -> None:
    """NiFi's testUpdateSpecifyUpdateKeys: no primary key, Update Keys names the row."""
    runner = pg_persons(
        postgres,
        "id integer, name varchar(100), code integer",
        "insert into persons values (1, 'x1', 101), (2, 'x2', 102)",
        **{"Statement Type": "UPDATE", "Update Keys": "id"},
    )
    runner.enqueue(
        b'[{"id": 1, "name": "rec1", "code": 201}, {"id": 2, "name": "rec2", "code": 202}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == [
        (1, "rec1", 201),
        (2, "rec2", 202),
    ]


def test_update_pk_not_first(postgres) -> None:
    """NiFi's testUpdatePkNotFirst: the primary key found wherever it sits in the table."""
    runner = pg_persons(
        postgres,
        "name varchar(100), id integer primary key, code integer",
        "insert into persons values ('x1', 1, 101), ('x2', 2, 102)",
        **{"Statement Type": "UPDATE"},
    )
    runner.enqueue(
        b'[{"name": "rec1", "id": 1, "code": 201}, {"name": "rec2", "id": 2, "code": 202}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == [
        ("rec1", 1, 201),
        ("rec2", 2, 202),
    ]


def test_update_no_primary_keys_fails(postgres) -> None:
    """NiFi's testUpdateNoPrimaryKeys: UPDATE without a primary key or Update Keys fails."""
    runner = pg_persons(
        postgres,
        "id integer, name varchar(100), code integer",
        "insert into persons values (1, 'x1', 101)",
        **{"Statement Type": "UPDATE"},
    )
    runner.enqueue(b'[{"id": 1, "name": "rec1", "code": 201}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert postgres.execute("select * from persons") == [(1, "x1", 101)]


def test_delete_with_nulls(postgres) -> None:
    """NiFi's testDeleteWithNulls: a NULL field matches a NULL column; only that row goes."""
    runner = pg_persons(
        postgres,
        "id integer, name varchar(100), code integer, dt date",
        "insert into persons values (1, 'rec1', 101, null), (2, 'rec2', null, null), "
        "(3, 'rec3', 103, null)",
        **{"Statement Type": "DELETE", "Unmatched Column Behavior": "Ignore Unmatched Columns"},
    )
    runner.enqueue(b'[{"id": 2, "name": "rec2", "code": null}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, name, code from persons order by id") == [
        (1, "rec1", 101),
        (3, "rec3", 103),
    ]


def test_insert_with_different_column_ordering(postgres) -> None:
    """NiFi's testInsertWithDifferentColumnOrdering: fields bind by name, not position."""
    runner = pg_persons(postgres, "id integer primary key, code integer, name text")
    runner.enqueue(
        b'[{"name": "rec1", "id": 1, "code": 101}, {"name": "rec2", "id": 2, "code": 102}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == [
        (1, 101, "rec1"),
        (2, 102, "rec2"),
    ]


def test_insert_non_required_columns_unmatched_field(postgres) -> None:
    """NiFi's testInsertNonRequiredColumnsUnmatchedField: a field no column takes fails the
    FlowFile under Fail on Unmatched Fields; ignored by default, the others are inserted."""
    ddl = "id integer primary key, name varchar(100), code integer, dt date"
    content = b'[{"id": 1, "name": "rec1", "extra": "test", "dt": "2021-01-26"}, {"id": 5}]'
    runner = pg_persons(
        postgres,
        ddl,
        **{
            "Unmatched Field Behavior": "Fail on Unmatched Fields",
            "Unmatched Column Behavior": "Ignore Unmatched Columns",
        },
    )
    runner.enqueue(content)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert postgres.execute("select count(*) from persons") == [(0,)]
    runner = pg_persons(postgres, ddl, **{"Unmatched Column Behavior": "Ignore Unmatched Columns"})
    runner.enqueue(content)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, name, code, dt::text from persons order by id") == [
        (1, "rec1", None, "2021-01-26"),
        (5, None, None, None),
    ]


def test_translate_field_names(postgres) -> None:
    """NiFi's Translate Field Names: case and underscores ignored when true; when false a
    field must name its column exactly (case aside) or it is unmatched."""
    ddl = "id integer primary key, personname varchar(100)"
    runner = pg_persons(postgres, ddl)
    runner.enqueue(b'[{"ID": 1, "Person_Name": "rec1"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons") == [(1, "rec1")]
    runner = pg_persons(
        postgres,
        ddl,
        **{
            "Translate Field Names": "false",
            "Unmatched Field Behavior": "Fail on Unmatched Fields",
        },
    )
    runner.enqueue(b'[{"id": 1, "Person_Name": "rec1"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "Person_Name" in runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]


def test_insert_mismatched_compatible_data_types(postgres) -> None:
    """NiFi's testInsertMismatchedCompatibleDataTypes: a numeric string into an integer
    column and a number into a text column are coerced."""
    runner = pg_persons(postgres, "id integer primary key, name varchar(100), code integer")
    runner.enqueue(b'[{"id": "1", "name": 42, "code": "101"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons") == [(1, "42", 101)]


_NIFI_1_NAMES = {
    "put-db-record-record-reader": ("Record Reader", "reader"),
    "db-type": ("Database Type", "PostgreSQL"),
    "put-db-record-statement-type": ("Statement Type", "Use statement.type Attribute"),
    "put-db-record-dcbp-service": ("Database Connection Pooling Service", "dbcp"),
    "put-db-record-catalog-name": ("Database Name", "catalog"),
    "put-db-record-schema-name": ("Schema Name", "main"),
    "put-db-record-table-name": ("Table Name", "PERSONS"),
    "put-db-record-binary-format": ("Binary String Format", "Base64"),
    "put-db-record-translate-field-names": ("Translate Field Names", "false"),
    "put-db-record-unmatched-field-behavior": (
        "Unmatched Field Behavior",
        "Fail on Unmatched Fields",
    ),
    "put-db-record-unmatched-column-behavior": (
        "Unmatched Column Behavior",
        "Ignore Unmatched Columns",
    ),
    "put-db-record-update-keys": ("Update Keys", "id"),
    "put-db-record-field-containing-sql": ("Field Containing SQL", "sql"),
    "put-db-record-allow-multiple-statements": ("Allow Multiple SQL Statements", "true"),
    "put-db-record-quoted-identifiers": ("Quote Column Identifiers", "true"),
    "put-db-record-quoted-table-identifiers": ("Quote Table Identifiers", "true"),
    "put-db-record-query-timeout": ("Max Wait Time", "5 sec"),
    "table-schema-cache-size": ("Table Schema Cache Size", "7"),
    "put-db-record-max-batch-size": ("Maximum Batch Size", "3"),
    "database-session-autocommit": ("Database Session AutoCommit", "false"),
    "rollback-on-failure": ("Rollback On Failure", "true"),
}


def test_migrate_properties(tmp_path: Path) -> None:
    """NiFi's testMigrateProperties: a flow saved with NiFi 1's names sets NiFi 2's properties
    (Catalog Name is now Database Name) and runs (here the SQL type, from statement.type)."""
    path = sqlite_db(tmp_path)
    runner = TestRunner(
        PutDatabaseRecord(**{old: value for old, (_, value) in _NIFI_1_NAMES.items()})
    )
    runner.add_service(
        DBCPConnectionPool("dbcp", **{"Database Connection URL": f"jdbc:sqlite:{path}"})
    )
    runner.add_service(JsonTreeReader("reader"))
    for old, (name, value) in _NIFI_1_NAMES.items():
        assert runner.context.get_property(name).value == value, old
    runner.enqueue(
        json.dumps(
            [
                {
                    "sql": "insert into PERSONS values (1, 'a', 2); "
                    "insert into PERSONS values (2, 'b', 3)"
                }
            ]
        ).encode(),
        {"statement.type": "SQL"},
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert sqlite_rows(path) == [(1, "a", 2), (2, "b", 3)]


def test_update_after_insert_and_no_table_specified(postgres) -> None:
    """NiFi's testUpdateAfterInsert and testInsertNoTableSpecified: rows inserted then
    updated by key; a Table Name evaluating to nothing fails the FlowFile."""
    runner = pg_persons(postgres, PERSONS, **{"Statement Type": "Use statement.type Attribute"})
    runner.enqueue(
        b'[{"id": 1, "name": "rec1", "code": 101}, {"id": 2, "name": "rec2", "code": 102}]',
        {"statement.type": "INSERT"},
    )
    runner.enqueue(
        b'[{"id": 1, "name": "rec1", "code": 201}, {"id": 2, "name": "rec2", "code": 202}]',
        {"statement.type": "UPDATE"},
    )
    runner.run(2)
    runner.assert_all_flowfiles_transferred("success", 2)
    assert postgres.execute("select * from persons order by id") == [
        (1, "rec1", 201),
        (2, "rec2", 202),
    ]
    runner = pg_persons(postgres, PERSONS, **{"Table Name": "${not.a.real.attr}"})
    runner.enqueue(b'[{"id": 1, "name": "rec1"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "because Table Name is null or empty" in error
    runner.assert_all_flowfiles_transferred("failure", 1)


@pytest.mark.parametrize("statement_type", ["INSERT", "UPSERT", "INSERT_IGNORE"])
def test_it_simple_put_upsert_insert_ignore_with_date(postgres, statement_type) -> None:
    """PutDatabaseRecordIT's testSimplePut, testUpsert, testInsertIgnore and testWithDate."""
    runner = person_runner(postgres, statement_type)
    runner.enqueue(
        b'{"name": "John Doe", "age": 50, "favorite_color": "blue", "dob": "1975-01-01"}'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select name, age, favorite_color, dob::text from person") == [
        ("John Doe", 50, "blue", "1975-01-01")
    ]


def test_max_wait_time_cancels_statements(postgres) -> None:
    """Max Wait Time (NiFi's setQueryTimeout) cancels a record batch's statements waiting on a
    lock and a slow Pre-Processing SQL statement: the FlowFile goes to retry (a timeout is
    transient, as NiFi's SQLTimeoutException), the error names the property; nothing written."""
    runner = pg_persons(postgres, PERSONS, **{"Max Wait Time": "1 sec"})
    runner.enqueue(b'[{"id": 1, "name": "a"}]')
    locker = postgres.connect()
    locker.autocommit = False
    locker.execute("lock table persons in access exclusive mode")
    release = threading.Timer(15, locker.rollback)  # without the bound: written, not retried
    release.start()
    try:
        runner.run()
    finally:
        release.cancel()
        locker.rollback()
        locker.close()
    runner.assert_all_flowfiles_transferred("retry", 1)
    error = runner.flowfiles_for("retry")[0].attributes["putdatabaserecord.error"]
    assert "the statement ran longer than Max Wait Time (1 seconds)" in error
    runner = pg_persons(
        postgres,
        PERSONS,
        **{"Max Wait Time": "1 sec", "Pre-Processing SQL": "SELECT pg_sleep(20)"},
    )
    runner.enqueue(b'[{"id": 1, "name": "a"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("retry", 1)
    error = runner.flowfiles_for("retry")[0].attributes["putdatabaserecord.error"]
    assert "the statement ran longer than Max Wait Time (1 seconds)" in error
    assert postgres.execute("select count(*) from persons") == [(0,)]


@pytest.mark.parametrize("column_wise", [True, False], ids=["column-wise", "executemany"])
def test_double_into_numeric_keeps_its_digits(postgres, monkeypatch, column_wise) -> None:
    """A record DOUBLE into numeric(20,6) is bound as NiFi's BigDecimal.valueOf: every digit
    the double holds (17 significant), not float8's 15 (12345678901234.1)."""
    from processors.sql import record_statements

    if not column_wise:
        monkeypatch.setattr(record_statements, "usable", lambda *_: False)
    runner = pg_persons(postgres, "id integer primary key, amount numeric(20,6), ratio numeric")
    runner.enqueue(
        b'[{"id": 1, "amount": 12345678901234.123456, "ratio": 0.1},'
        b' {"id": 2, "amount": -98765432109.87654, "ratio": 1e-7},'
        b' {"id": 3, "amount": null, "ratio": 123456789012345678}]'
    )
    runner.run()
    assert runner.flowfiles_for("success")
    assert postgres.execute("select amount::text, ratio::text from persons order by id") == [
        ("12345678901234.123000", "0.1"),
        ("-98765432109.876540", "0.0000001"),
        (None, "123456789012345680"),  # the double's 17 digits (the field is DOUBLE)
    ]


def test_json_null_into_jsonb_is_sql_null(postgres) -> None:
    """A record's null into a jsonb or json column is SQL NULL (NiFi's), not the JSON value
    null; objects and arrays are their JSON (keys other records give come as null)."""
    runner = pg_persons(postgres, "id integer primary key, doc jsonb, raw json")
    runner.enqueue(
        b'[{"id": 1, "doc": null, "raw": null},'
        b' {"id": 2, "doc": {"b": null}, "raw": {"b": null}},'
        b' {"id": 3, "doc": {"a": 1, "b": "x"}, "raw": {"a": 2}}]'
    )
    runner.run()
    assert runner.flowfiles_for("success")
    assert postgres.execute(
        "select id, doc is null, raw is null, doc::text, raw::text from persons order by id"
    ) == [
        (1, True, True, None, None),
        (2, False, False, '{"a": null, "b": null}', '{"b": null, "a": null}'),
        (3, False, False, '{"a": 1, "b": "x"}', '{"b": null, "a": 2}'),  # json keeps the order
    ]
