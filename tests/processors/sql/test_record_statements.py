"""record_statements: values converted for their columns (binary, timestamps), DELETE keys."""

from __future__ import annotations

import base64
import datetime as dt
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.testing import TestRunner
from processors.record_services import ParquetReader
from processors.sql.record_statements import (
    YEAR_TEN_THOUSAND_MILLIS,
    YEAR_TEN_THOUSAND_SECONDS,
    epoch_instant,
    translate,
)
from tests.processors.sql.put_runners import PERSONS, person_runner, pg_persons

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MAX_MICROS = int((dt.datetime(9999, 12, 31, tzinfo=dt.UTC) - _EPOCH).total_seconds()) * 10**6


@given(st.integers(min_value=0, max_value=YEAR_TEN_THOUSAND_MILLIS - 1), st.booleans())
def test_integer_is_milliseconds(millis: int, as_text: bool) -> None:
    """An integer (or its text) up to the year 10,000 in milliseconds is milliseconds."""
    value = str(millis) if as_text else millis
    assert epoch_instant(value) == _EPOCH + dt.timedelta(milliseconds=millis)


@given(st.integers(min_value=YEAR_TEN_THOUSAND_MILLIS + 1, max_value=_MAX_MICROS))
def test_large_integer_is_microseconds(micros: int) -> None:
    """An integer past the year 10,000 in milliseconds is microseconds (NiFi's bound)."""
    assert epoch_instant(f" {micros} ") == _EPOCH + dt.timedelta(microseconds=micros)


@given(
    st.integers(min_value=0, max_value=4_102_444_800),
    st.integers(min_value=0, max_value=999_999),
)
def test_decimal_is_seconds_to_the_microsecond(seconds: int, micros: int) -> None:
    """A decimal is seconds with its fraction rounded to the microsecond (the year 2100 and
    before: a double holds the microseconds exactly enough there)."""
    text = f"{seconds}.{micros:06d}"
    assert epoch_instant(text) == _EPOCH + dt.timedelta(seconds=seconds, microseconds=micros)
    assert seconds <= YEAR_TEN_THOUSAND_SECONDS


def test_decimal_past_year_ten_thousand_seconds_is_milliseconds() -> None:
    """A decimal whose integral part passes the year 10,000 in seconds is milliseconds."""
    assert epoch_instant(1707238288351.5) == _EPOCH + dt.timedelta(
        milliseconds=1707238288351, microseconds=500
    )


def test_not_a_number() -> None:
    """Text that is no number, booleans and other values are not instants (None)."""
    for value in ("2024-02-06 11:51:28", "", "12a", True, None, b"1"):
        assert epoch_instant(value) is None


@pytest.mark.parametrize(
    ("name", "strategy", "pattern", "expected"),
    [  # NiFi's TranslationStrategy descriptions' examples, and its trim
        ("Pics_1_23", "REMOVE_UNDERSCORE", None, "PICS123"),
        (" User Name\t", "REMOVE_UNDERSCORE", None, "USER NAME"),
        ("User Name", "REMOVE_SPACE", None, "USERNAME"),
        ("User_1 Name", "REMOVE_UNDERSCORE_AND_SPACE", None, "USER1NAME"),
        ("user-id", "REMOVE_ALL_SPECIAL_CHAR", None, "USERID"),
        ("total(estimated)", "REMOVE_ALL_SPECIAL_CHAR", None, "TOTALESTIMATED"),
        ("col_1_2", "PATTERN", r"\d", "COL__"),
        ("a-b_c", "PATTERN", "[^a-zA-Z0-9_]", "AB_C"),
    ],
)
def test_translate_as_nifis_normalizers(name, strategy, pattern, expected) -> None:
    """NiFi's NameNormalizers then trim and upper case (TableSchema.normalizedName)."""
    assert translate(name, strategy, pattern) == expected


def test_delete_matches_every_field_without_delete_keys(postgres) -> None:
    """NiFi's testDelete: DELETE without Delete Keys matches every field (a row whose other
    columns differ stays, though its primary key matches); Delete Keys name the columns."""
    inserts = "insert into persons values (1, 'rec1', 101), (2, 'rec2', 102), (3, 'rec3', 103)"
    runner = pg_persons(postgres, PERSONS, inserts, **{"Statement Type": "DELETE"})
    runner.enqueue(b'[{"id": 2, "name": "rec2", "code": 102}, {"id": 3, "name": "x", "code": 1}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id from persons order by id") == [(1,), (3,)]
    runner = pg_persons(
        postgres, PERSONS, inserts, **{"Statement Type": "DELETE", "Delete Keys": "id"}
    )
    runner.enqueue(b'[{"id": 3, "name": "x", "code": 1}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id from persons order by id") == [(1,), (2,)]


def test_delete_checks_the_required_columns(postgres) -> None:
    """NiFi's generateDelete: a record lacking a NOT NULL column without a default fails
    under Fail on Unmatched Columns (nothing deleted); nullable columns may be missing;
    Ignore Unmatched Columns deletes by the fields given."""
    ddl = "id integer primary key, name varchar(100) not null, code integer"
    inserts = "insert into persons values (1, 'a', 1), (2, 'b', 2)"
    runner = pg_persons(postgres, ddl, inserts, **{"Statement Type": "DELETE"})
    runner.enqueue(b'[{"id": 1}, {"id": 2}]')  # the records' schema has no name
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "Record does not have a value for the Required column(s) ['name']" in error
    assert postgres.execute("select id from persons order by id") == [(1,), (2,)]
    runner = pg_persons(postgres, ddl, inserts, **{"Statement Type": "DELETE"})
    runner.enqueue(b'[{"id": 1, "name": "a"}]')  # code (nullable) missing: fine
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id from persons order by id") == [(2,)]
    runner = pg_persons(
        postgres,
        ddl,
        inserts,
        **{"Statement Type": "DELETE", "Unmatched Column Behavior": "Ignore Unmatched Columns"},
    )
    runner.enqueue(b'[{"id": 2}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id from persons order by id") == [(1,)]


def test_two_fields_of_one_column_with_different_values_fail(postgres) -> None:
    """Fields "NAME" and "name" (Translate Field Names) coalesce where a record gives one of
    them (or the same value); a record giving both different values fails naming both, as
    NiFi's statement naming the column twice is refused; nothing written."""
    runner = pg_persons(postgres, PERSONS)
    runner.enqueue(b'[{"id": 1, "NAME": "a"}, {"id": 2, "name": "b", "NAME": "b"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert postgres.execute("select id, name from persons order by id") == [(1, "a"), (2, "b")]
    runner = pg_persons(postgres, PERSONS)
    runner.enqueue(b'[{"id": 1, "NAME": "a"}, {"id": 2, "NAME": "b", "name": "c"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    error = runner.flowfiles_for("failure")[0].attributes["putdatabaserecord.error"]
    assert "fields 'NAME' and 'name' of one record both give column 'name'" in error
    assert postgres.execute("select count(*) from persons") == [(0,)]


_BLOBS = "id integer primary key, name text, content bytea, code integer"


def _parquet(**columns: pa.Array) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table(columns), out)
    return out.getvalue()


def _blob_runner(postgres, content: bytes, **props: str) -> TestRunner:
    runner = pg_persons(postgres, _BLOBS, **props)
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


def test_insert_uuid_column(postgres) -> None:
    """NiFi's testInsertUUIDColumn: text UUIDs into a uuid column."""
    runner = pg_persons(postgres, "id integer primary key, name uuid, code integer")
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
    runner = pg_persons(
        postgres, "id integer primary key, name varchar(100), code integer, dt date"
    )
    runner.enqueue(
        b'[{"id": "1", "name": "rec1", "code": 101, "dt": [1.0, 2.0]}, '
        b'{"id": "3", "name": "rec3", "code": 103, "dt": null}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert postgres.execute("select count(*) from persons") == [(0,)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1707238288351", "2024-02-06 16:51:28.351+00"),
        ("2024-02-06 11:51:28.351567", None),
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
    runner = person_runner(postgres)
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
