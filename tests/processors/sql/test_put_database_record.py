"""PutDatabaseRecord: NiFi's statement types, one transaction per FlowFile, routing."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from flowcore.errors import InvalidProcessorError, ProcessException
from flowcore.testing import TestRunner
from processors.record_services import JsonTreeReader
from processors.sql.dbcp import DBCPConnectionPool
from processors.sql.put_database_record import PutDatabaseRecord


def _sqlite(tmp_path: Path) -> str:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "create table PERSONS (id integer primary key, name varchar(100) not null, "
            "code integer)"
        )
    return str(path)


def _runner(url: str, user: str | None = None, **props: str) -> TestRunner:
    runner = TestRunner(
        PutDatabaseRecord(
            **{
                "Record Reader": "reader",
                "Database Connection Pooling Service": "dbcp",
                "Table Name": "PERSONS",
                "Statement Type": "INSERT",
                **props,
            }
        )
    )
    extra = {"Database User": user, "Password": "hunter2-secret"} if user else {}
    runner.add_service(DBCPConnectionPool("dbcp", **{"Database Connection URL": url, **extra}))
    runner.add_service(JsonTreeReader("reader"))
    return runner


def _rows(path: str, sql: str = "select id, name, code from PERSONS order by id") -> list:
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


def test_insert_translating_field_names(tmp_path: Path) -> None:
    """NiFi's testInsert: fields matched to columns ignoring case; SEND to the database."""
    path = _sqlite(tmp_path)
    runner = _runner(f"jdbc:sqlite:{path}", **{"Maximum Batch Size": "2"})
    runner.enqueue(
        b'[{"id": 1, "NAME": "rec1", "code": 101}, {"id": 2, "name": "rec2", '
        b'"code": 102}, {"id": 3, "name": "rec3", "code": 103}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert _rows(path) == [(1, "rec1", 101), (2, "rec2", 102), (3, "rec3", 103)]
    assert [e.event_type.value for e in runner.provenance_events] == ["SEND"]


def test_failure_rolls_back_the_whole_flowfile(tmp_path: Path) -> None:
    """A duplicate key in the third record: nothing of the FlowFile stays; failure, error."""
    path = _sqlite(tmp_path)
    runner = _runner(f"jdbc:sqlite:{path}", **{"Maximum Batch Size": "1"})
    runner.enqueue(b'[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 1, "name": "c"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "UNIQUE constraint failed: PERSONS.id" in error
    assert "PERSONS" in error
    assert _rows(path) == []


def test_update_upsert_delete_and_statement_type_attribute(tmp_path: Path) -> None:
    """UPDATE by primary key, UPSERT, INSERT_IGNORE, DELETE, statement.type from attributes."""
    path = _sqlite(tmp_path)
    url = f"jdbc:sqlite:{path}"
    runner = _runner(url, **{"Statement Type": "Use statement.type Attribute"})
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
    runner.enqueue(b'[{"id": 4}]', {"statement.type": "DELETE"})
    runner.run(5)
    runner.assert_all_flowfiles_transferred("success", 5)
    assert _rows(path) == [(1, "A", 1), (2, "B", 20), (3, "C", 30)]
    runner = _runner(url, **{"Statement Type": "Use statement.type Attribute"})
    runner.enqueue(b'[{"id": 9, "name": "z"}]', {"statement.type": "MERGE"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_upsert_is_idempotent(tmp_path: Path) -> None:
    """The same FlowFile upserted twice leaves the table as once (exactly-once results)."""
    path = _sqlite(tmp_path)
    runner = _runner(f"jdbc:sqlite:{path}", **{"Statement Type": "UPSERT"})
    content = b'[{"id": 1, "name": "a", "code": 1}, {"id": 2, "name": "b", "code": 2}]'
    runner.enqueue(content)
    runner.enqueue(content)
    runner.run(2)
    assert _rows(path) == [(1, "a", 1), (2, "b", 2)]


def test_unmatched_fields_and_columns(tmp_path: Path) -> None:
    """Fail on Unmatched Fields names the field; a missing NOT NULL column fails."""
    path = _sqlite(tmp_path)
    url = f"jdbc:sqlite:{path}"
    runner = _runner(url, **{"Unmatched Field Behavior": "Fail on Unmatched Fields"})
    runner.enqueue(b'[{"id": 1, "name": "a", "extra": 5}]')
    runner.run()
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "Cannot map field 'extra'" in error
    runner = _runner(url)
    runner.enqueue(b'[{"id": 1, "code": 5}]')
    runner.run()
    assert (
        "Required column"
        in runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    )
    runner = _runner(url, **{"Unmatched Column Behavior": "Ignore Unmatched Columns"})
    runner.enqueue(b'[{"id": 1, "name": "n"}]')
    runner.run()
    assert _rows(path) == [(1, "n", None)]


def test_missing_table_and_rollback_on_failure(tmp_path: Path) -> None:
    """A table that does not exist fails naming it; Rollback On Failure keeps it queued."""
    path = _sqlite(tmp_path)
    runner = _runner(f"jdbc:sqlite:{path}", **{"Table Name": "NOWHERE"})
    runner.enqueue(b'[{"id": 1}]')
    runner.run()
    assert (
        "table 'NOWHERE' does not exist"
        in runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    )
    runner = _runner(
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
    runner = _runner(postgres.jdbc_url, user="postgres", **{"Table Name": "persons"})
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
    runner = _runner(
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
        runner = _runner(
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


def _pg_persons(postgres, ddl: str, *inserts: str, **props: str) -> TestRunner:
    postgres.execute("drop table if exists persons")
    postgres.execute(f"create table persons ({ddl})")
    for sql in inserts:
        postgres.execute(sql)
    return _runner(postgres.jdbc_url, user="postgres", **{"Table Name": "persons", **props})


def test_update_specify_update_keys(postgres) -> None:
    """NiFi's testUpdateSpecifyUpdateKeys: no primary key, Update Keys names the row."""
    runner = _pg_persons(
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
    runner = _pg_persons(
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
    runner = _pg_persons(
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
    runner = _pg_persons(
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
    runner = _pg_persons(postgres, "id integer primary key, code integer, name text")
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
    runner = _pg_persons(
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
    runner = _pg_persons(postgres, ddl, **{"Unmatched Column Behavior": "Ignore Unmatched Columns"})
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
    runner = _pg_persons(postgres, ddl)
    runner.enqueue(b'[{"ID": 1, "Person_Name": "rec1"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons") == [(1, "rec1")]
    runner = _pg_persons(
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
    runner = _pg_persons(postgres, "id integer primary key, name varchar(100), code integer")
    runner.enqueue(b'[{"id": "1", "name": 42, "code": "101"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons") == [(1, "42", 101)]


_PERSONS = "id integer primary key, name varchar(100), code integer"


def _sql_runner(postgres, content: bytes, **props: str) -> TestRunner:
    """NiFi's SQL-type setup: Use statement.type Attribute, Field Containing SQL 'sql'."""
    runner = _pg_persons(
        postgres,
        _PERSONS,
        **{
            "Statement Type": "Use statement.type Attribute",
            "Field Containing SQL": "sql",
            **props,
        },
    )
    runner.enqueue(content, {"statement.type": "sql"})
    return runner


def _sql_records(*statements: str) -> bytes:
    return json.dumps([{"sql": s} for s in statements]).encode()


_INSERT_1 = "INSERT INTO persons (id, name, code) VALUES (1, 'rec1',101)"
_INSERT_2 = "INSERT INTO persons (id, name, code) VALUES (2, 'rec2',102)"


def test_insert_via_sql_type(postgres) -> None:
    """NiFi's testInsertViaSqlTypeOneStatement: statement.type SQL runs a record's field as it
    is (a literal % is the SQL's own); SQL is no Statement Type value (NiFi's: attribute only)."""
    runner = _sql_runner(
        postgres, _sql_records("INSERT INTO persons (id, name, code) VALUES (1, '100%', 101)")
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons") == [(1, "100%", 101)]
    assert [e.event_type.value for e in runner.provenance_events] == ["SEND"]
    with pytest.raises(InvalidProcessorError, match="Statement Type"):
        _pg_persons(
            postgres, _PERSONS, **{"Statement Type": "SQL", "Field Containing SQL": "sql"}
        ).run()


@pytest.mark.parametrize(
    ("statements", "multiple", "rows"),
    [
        ((_INSERT_1, _INSERT_2 + ";"), "true", [(1, "rec1", 101), (2, "rec2", 102)]),
        (
            (_INSERT_1, _INSERT_2, "UPDATE persons SET code = 101 WHERE id = 1"),
            "false",
            [(1, "rec1", 101), (2, "rec2", 102)],
        ),
        ((f"{_INSERT_1};{_INSERT_2};",), "true", [(1, "rec1", 101), (2, "rec2", 102)]),
    ],
    ids=["two-records-semicolon", "three-records", "one-record-two-statements"],
)
def test_insert_via_sql_type_statements(postgres, statements, multiple, rows) -> None:
    """NiFi's testInsertViaSqlTypeTwoStatementsSemicolon, ...ThreeStatements and
    testMultipleInsertsForTwoStatementsViaSqlStatementType: a record per statement, or one
    record's statements split on ';' with Allow Multiple SQL Statements."""
    runner = _sql_runner(
        postgres, _sql_records(*statements), **{"Allow Multiple SQL Statements": multiple}
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == rows


def test_multiple_inserts_via_sql_statement_type_bad_sql(postgres) -> None:
    """NiFi's testMultipleInsertsViaSqlStatementTypeBadSQL: a bad third statement fails the
    FlowFile and rolls back the two before it; the error names the missing table."""
    bad = "INSERT INTO persons2 (id, name, code) VALUES (2, 'rec2',102)"
    runner = _sql_runner(
        postgres,
        _sql_records(f"{_INSERT_1};{_INSERT_2};{bad};"),
        **{"Allow Multiple SQL Statements": "true"},
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "persons2" in runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert postgres.execute("select count(*) from persons") == [(0,)]


def test_sql_statement_type_no_value(postgres) -> None:
    """NiFi's testSqlStatementTypeNoValue and ...RollbackOnFailure: an empty or null SQL
    field fails the FlowFile with NiFi's message (queued again with Rollback On Failure); a
    schema without the field, or no Field Containing SQL, fails naming what to set."""
    for content in (_sql_records(""), b'[{"sql": null}]'):
        runner = _sql_runner(postgres, content)
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)
        error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
        assert "Record had no (or null) value for Field Containing SQL: sql" in error
    runner = _sql_runner(postgres, _sql_records(""), **{"Rollback On Failure": "true"})
    with pytest.raises(ProcessException, match="Field Containing SQL"):
        runner.run()
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("success", 0)
    runner = _sql_runner(postgres, b'[{"statement": "select 1"}]')
    runner.run()
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "Record schema does not contain Field Containing SQL: sql" in error
    runner = _sql_runner(
        postgres, _sql_records(_INSERT_1), **{"Field Containing SQL": "${no.such.attribute}"}
    )
    runner.run()
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "no Field Containing SQL was found" in error


def test_record_path_options(postgres) -> None:
    """NiFi's testRecordPathOptions: Use Record Path takes each record's statement type
    (INSERT, DELETE, UPDATE and Debezium's c, u) and Data Record Path the record written, in
    the records' order."""
    runner = _pg_persons(
        postgres,
        "id integer, name varchar(100), code integer",
        **{
            "Statement Type": "Use Record Path",
            "Statement Type Record Path": "/operation",
            "Data Record Path": "/data",
            "Update Keys": "id",
        },
    )
    records = [
        ("INSERT", 1, "John Doe", 55),
        ("INSERT", 2, "Jane Doe", 44),
        ("c", 3, "Jim Doe", 2),
        ("DELETE", 2, "Jane Doe", 44),
        ("UPDATE", 1, "John Doe", 201),
        ("u", 3, "Jim Doe", 20),
    ]
    runner.enqueue(
        json.dumps(
            [{"operation": o, "data": {"id": i, "name": n, "code": c}} for o, i, n, c in records]
        ).encode()
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons order by id") == [
        (1, "John Doe", 201),
        (3, "Jim Doe", 20),
    ]


def test_record_path_errors(postgres) -> None:
    """NiFi's RecordPathStatementType and getDataRecords messages: an unknown operation, a
    Data Record Path selecting nothing or no record fail the FlowFile, nothing written."""
    props = {"Statement Type": "Use Record Path", "Statement Type Record Path": "/op"}
    cases = [
        (b'[{"op": "c", "id": 1}, {"op": "MERGE", "id": 2}]', {}, "found invalid value: MERGE"),
        (b'[{"id": 1}]', {}, "found invalid value: NULL"),
        (
            b'[{"op": "c", "id": 1}]',
            {"Statement Type Record Path": "/op[. = 'x']"},
            "against Record but got no results",
        ),
        (b'[{"op": "c", "data": 5}]', {"Data Record Path": "/data"}, "expected to return one"),
        (b'[{"op": "c", "x": 5}]', {"Data Record Path": "/data"}, "yielded no results"),
    ]
    for content, extra, message in cases:
        runner = _pg_persons(postgres, _PERSONS, **{**props, **extra})
        runner.enqueue(content)
        runner.run()
        runner.assert_all_flowfiles_transferred("failure", 1)
        assert message in runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
        assert postgres.execute("select count(*) from persons") == [(0,)]


def test_delete_matches_every_field_without_delete_keys(postgres) -> None:
    """NiFi's testDelete: DELETE without Delete Keys matches every field (a row whose other
    columns differ stays, though its primary key matches); Delete Keys name the columns."""
    inserts = "insert into persons values (1, 'rec1', 101), (2, 'rec2', 102), (3, 'rec3', 103)"
    runner = _pg_persons(postgres, _PERSONS, inserts, **{"Statement Type": "DELETE"})
    runner.enqueue(b'[{"id": 2, "name": "rec2", "code": 102}, {"id": 3, "name": "x", "code": 1}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id from persons order by id") == [(1,), (3,)]
    runner = _pg_persons(
        postgres, _PERSONS, inserts, **{"Statement Type": "DELETE", "Delete Keys": "id"}
    )
    runner.enqueue(b'[{"id": 3, "name": "x", "code": 1}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id from persons order by id") == [(1,), (2,)]


def test_pre_post_processing_sql(postgres) -> None:
    """NiFi's testPrePostProcessingSql and testPreProcessingSqlFailure: Pre-Processing SQL
    runs first in the FlowFile's transaction (the table it creates is written), Post-
    Processing SQL last; a failing one fails the FlowFile naming the property."""
    postgres.execute("drop table if exists persons")
    postgres.execute("drop table if exists audit")
    runner = _runner(
        postgres.jdbc_url,
        user="postgres",
        **{
            "Table Name": "persons",
            "Pre-Processing SQL": f"CREATE TABLE persons ({_PERSONS}); CREATE TABLE audit (n int)",
            "Post-Processing SQL": "INSERT INTO audit SELECT count(*) FROM persons",
        },
    )
    runner.enqueue(b'[{"id": 1, "name": "testing"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select * from persons") == [(1, "testing", None)]
    assert postgres.execute("select n from audit") == [(1,)]
    runner = _runner(
        postgres.jdbc_url,
        user="postgres",
        **{"Table Name": "persons", "Pre-Processing SQL": "DROP TABLE unknown"},
    )
    runner.enqueue(b'[{"id": 2, "name": "two"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "Failed to execute Pre-Processing SQL Statement [DROP TABLE unknown]" in error
    assert postgres.execute("select count(*) from persons") == [(1,)]


_BLOBS = "id integer primary key, name text, content bytea, code integer"


def _parquet(**columns: pa.Array) -> bytes:
    import io

    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(pa.table(columns), out)
    return out.getvalue()


def _blob_runner(postgres, content: bytes, **props: str) -> TestRunner:
    from processors.record_services import ParquetReader

    runner = _pg_persons(postgres, _BLOBS, **props)
    runner.add_service(ParquetReader("reader"))
    runner.enqueue(content)
    return runner


@pytest.mark.parametrize(
    "content_type", [pa.list_(pa.int8()), pa.list_(pa.uint8()), pa.string(), pa.binary()]
)
def test_insert_with_blob_clob(postgres, content_type) -> None:
    """NiFi's testInsertWithBlobClob, ...ObjectArraySource and ...StringSource: an array of
    bytes, text (UTF-8) or bytes into a bytea; a long text into a text (CLOB) column."""
    blob = [66, 76, 79, 66] if pa.types.is_list(content_type) else "BLOB"
    if pa.types.is_binary(content_type):
        blob = b"BLOB"
    long_text = "rec1-" + "x" * 1_000_000
    runner = _blob_runner(
        postgres,
        _parquet(
            id=pa.array([1, 2]),
            name=pa.array([long_text, None]),
            content=pa.array([blob, None], content_type),
            code=pa.array([101, 102]),
        ),
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, name, content, code from persons order by id") == [
        (1, long_text, b"BLOB", 101),
        (2, None, None, 102),
    ]


def test_insert_with_blob_integer_array_source(postgres) -> None:
    """NiFi's testInsertWithBlobIntegerArraySource: an array of ints is no BLOB: failure."""
    runner = _blob_runner(
        postgres,
        _parquet(id=pa.array([1]), content=pa.array([[1, 2, 3]], pa.list_(pa.int32()))),
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "Cannot convert field 'content'" in error
    assert postgres.execute("select count(*) from persons") == [(0,)]


@pytest.mark.parametrize(
    ("text", "binary_format", "expected"),
    [
        ("abCDef", "Hexadecimal", bytes([171, 205, 239])),
        (base64.b64encode(bytes([10, 103, 234])).decode(), "Base64", bytes([10, 103, 234])),
        ("zz", "Hexadecimal", None),
    ],
    ids=["hex", "base64", "bad-hex"],
)
def test_insert_string_into_binary(postgres, text, binary_format, expected) -> None:
    """NiFi's testInsertHexStringIntoBinary and testInsertBase64StringIntoBinary: Binary
    String Format decodes text for a binary column; text that does not decode fails."""
    runner = _blob_runner(
        postgres,
        _parquet(id=pa.array([1]), content=pa.array([text])),
        **{"Binary String Format": binary_format},
    )
    runner.run()
    if expected is None:
        runner.assert_all_flowfiles_transferred("failure", 1)
        error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
        assert "is not Hexadecimal text" in error
        return
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select content from persons") == [(expected,)]


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
    path = _sqlite(tmp_path)
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
        _sql_records(
            "insert into PERSONS values (1, 'a', 2); insert into PERSONS values (2, 'b', 3)"
        ),
        {"statement.type": "SQL"},
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert _rows(path) == [(1, "a", 2), (2, "b", 3)]


def test_insert_uuid_column(postgres) -> None:
    """NiFi's testInsertUUIDColumn: text UUIDs into a uuid column."""
    runner = _pg_persons(postgres, "id integer primary key, name uuid, code integer")
    runner.enqueue(
        b'[{"id": 1, "name": "425085a0-03ef-11ee-be56-0242ac120002"}, '
        b'{"id": 2, "name": "56a000e4-03ef-11ee-be56-0242ac120002"}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, name::text from persons order by id") == [
        (1, "425085a0-03ef-11ee-be56-0242ac120002"),
        (2, "56a000e4-03ef-11ee-be56-0242ac120002"),
    ]


def test_insert_mismatched_not_compatible_data_types(postgres) -> None:
    """NiFi's testInsertMismatchedNotCompatibleDataTypes: an array of floats for a date
    column fails the FlowFile; none of its rows stays."""
    runner = _pg_persons(
        postgres, "id integer primary key, name varchar(100), code integer, dt date"
    )
    runner.enqueue(
        b'[{"id": "1", "name": "rec1", "code": 101, "dt": [1.0, 2.0]}, '
        b'{"id": "3", "name": "rec3", "code": 103, "dt": null}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert postgres.execute("select count(*) from persons") == [(0,)]


def test_update_after_insert_and_no_table_specified(postgres) -> None:
    """NiFi's testUpdateAfterInsert and testInsertNoTableSpecified: rows inserted then
    updated by key; a Table Name evaluating to nothing fails the FlowFile."""
    runner = _pg_persons(postgres, _PERSONS, **{"Statement Type": "Use statement.type Attribute"})
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
    runner = _pg_persons(postgres, _PERSONS, **{"Table Name": "${not.a.real.attr}"})
    runner.enqueue(b'[{"id": 1, "name": "rec1"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "because Table Name is null or empty" in error
    runner.assert_all_flowfiles_transferred("failure", 1)


_PERSON = (
    "name varchar(255) not null primary key, age int, favorite_color varchar(255), dob date, "
    "lastTransactionTime timestamp with time zone"
)


def _person_runner(postgres, statement_type: str = "INSERT") -> TestRunner:
    """PutDatabaseRecordIT's setup: the person table, a JsonTreeReader with its formats."""
    postgres.execute("drop table if exists person")
    postgres.execute(f"create table person ({_PERSON})")
    runner = _runner(
        postgres.jdbc_url,
        user="postgres",
        **{"Table Name": "person", "Database Type": "PostgreSQL", "Statement Type": statement_type},
    )
    runner.add_service(
        JsonTreeReader(
            "reader",
            **{"Date Format": "yyyy-MM-dd", "Timestamp Format": "yyyy-MM-dd HH:mm:ss.SSSSSS"},
        )
    )
    return runner


@pytest.mark.parametrize("statement_type", ["INSERT", "UPSERT", "INSERT_IGNORE"])
def test_it_simple_put_upsert_insert_ignore_with_date(postgres, statement_type) -> None:
    """PutDatabaseRecordIT's testSimplePut, testUpsert, testInsertIgnore and testWithDate."""
    runner = _person_runner(postgres, statement_type)
    runner.enqueue(
        b'{"name": "John Doe", "age": 50, "favorite_color": "blue", "dob": "1975-01-01"}'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select name, age, favorite_color, dob::text from person") == [
        ("John Doe", 50, "blue", "1975-01-01")
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1707238288351", "2024-02-06 16:51:28.351+00"),
        pytest.param(
            "2024-02-06 11:51:28.351567",
            None,
            marks=pytest.mark.xfail(
                strict=True,
                reason="flowcore's record TIMESTAMP is timestamp[ms] (flowcore/records/schema.py):"
                " a reader's Timestamp Format value keeps milliseconds, NiFi's keeps micros",
            ),
        ),
        ("1707238288351567", "2024-02-06 16:51:28.351567+00"),
        ("1707238288.351567", "2024-02-06 16:51:28.351567+00"),
    ],
    ids=["millis", "formatted-micros", "numeric-micros", "decimal-micros"],
)
def test_it_timestamps(postgres, value, expected) -> None:
    """PutDatabaseRecordIT's testWithTimestampUsingMillis(AsString), ...StringTimestampUsing
    Micros, ...NumericTimestampUsingMicros and ...DecimalTimestampUsingMicros(AsString): epoch
    milliseconds, microseconds (past year 10,000 in millis) and decimal seconds in a string
    become the timestamp column's instant, as NiFi's record conversion reads them."""
    runner = _person_runner(postgres)
    runner.enqueue(
        json.dumps({"name": "John Doe", "age": 50, "lastTransactionTime": value}).encode()
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    found = postgres.execute(
        "select (lasttransactiontime at time zone 'UTC')::text || '+00', "
        "(lasttransactiontime at time zone current_setting('TimeZone'))::text from person"
    )
    if expected is None:  # a local time of the reader's format: the session's zone
        assert found[0][1] == "2024-02-06 11:51:28.351567"
    else:
        assert found[0][0] == expected
