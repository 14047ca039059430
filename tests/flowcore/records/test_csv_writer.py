"""Tests for the CSVRecordSetWriter codec: NiFi's bytes (cases from NiFi's TestWriteCSVResult)."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.records import schema as s
from flowcore.records.csv_writer import CsvRecordWriter, CsvWriterOptions, write_csv

PERSON = s.RecordSchema.of({"name": s.STRING, "age": s.INT})
ID_NAME = s.RecordSchema.of({"id": s.STRING, "name": s.STRING})


def _write(schema: s.RecordSchema, rows: list[dict], **options: object) -> bytes:
    out = io.BytesIO()
    batches = [pa.RecordBatch.from_pylist(rows, schema.to_arrow())] if rows else []
    attributes = write_csv(batches, out, CsvWriterOptions(**options), schema)
    assert attributes == {"record.count": str(len(rows)), "mime.type": "text/csv"}
    return out.getvalue()


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("NON_NUMERIC", b'"name","age"\n"John Doe",30\n'),  # testQuoteNonNumeric
        ("MINIMAL", b"name,age\nJohn Doe,30\n"),
        ("ALL", b'"name","age"\n"John Doe","30"\n'),
    ],
)
def test_quote_modes(mode: str, expected: bytes) -> None:
    """testNumbersNotQuoted: Quote Mode as Commons CSV prints it."""
    assert _write(PERSON, [{"name": "John Doe", "age": 30}], quote_mode=mode) == expected


def test_escape_characters_as_nifis_tests() -> None:
    """testEscapeCharInValueWriteRecord / testEmptyEscapeCharWriteRecord: the escape char forces
    quotes, escaped."""
    row = {"id": "1\\", "name": "John Doe"}
    assert _write(ID_NAME, [row]) == b'id,name\n"1\\\\",John Doe\n'
    assert _write(ID_NAME, [row], escape_character=None) == b"id,name\n1\\,John Doe\n"


def test_a_header_alone_with_quote_mode_none_and_a_record_separator() -> None:
    """testWriteHeaderWithNoRecords: the header is written even with no record."""
    assert _write(ID_NAME, [], quote_mode="NONE", record_separator=",") == b"id,name,"


def test_minimal_quoting_rules() -> None:
    """Delimiters, quotes, line breaks, a leading char up to '#', a trailing space and an empty
    first value are quoted; a quote inside is escaped."""
    schema = s.RecordSchema.of({"a": s.STRING, "b": s.STRING})
    rows = [
        {"a": "x,y", "b": 'say "hi"'},
        {"a": "#tag", "b": "line\nbreak"},
        {"a": "", "b": ""},
        {"a": None, "b": "ok"},
    ]
    assert _write(schema, rows, trim_fields=False) == (
        b'a,b\n"x,y","say \\"hi\\""\n"#tag","line\nbreak"\n"",\n,ok\n'
    )
    assert _write(schema, [{"a": 'q"', "b": "z"}], escape_character=None) == b'a,b\n"q""",z\n'


def test_numbers_and_temporal_values_print_as_java() -> None:
    """Doubles as Double.toString, decimals as BigDecimal, dates in the format or epoch millis."""
    schema = s.RecordSchema.of(
        {"f": s.FLOAT, "d": s.DOUBLE, "dec": s.DecimalType(5, 1), "day": s.DATE, "at": s.TIMESTAMP}
    )
    row = {
        "f": 8.0,
        "d": 1e10,
        "dec": Decimal("8.1"),
        "day": dt.date(2017, 1, 2),
        "at": dt.datetime(1970, 1, 1, 0, 0, 1),
    }
    assert (
        _write(schema, [row], include_header_line=False) == b"8.0,1.0E10,8.1,1483315200000,1000\n"
    )
    formatted = _write(
        schema,
        [row],
        include_header_line=False,
        date_format="MM/dd/yyyy",
        timestamp_format="yyyy-MM-dd HH:mm:ss",
    )
    assert formatted == b"8.0,1.0E10,8.1,01/02/2017,1970-01-01 00:00:01\n"


def test_formats_separators_and_null_strings() -> None:
    """RFC 4180 ends records with CRLF, MySQL uses tabs and \\N, a trailing delimiter is added."""
    rows = [{"id": "1", "name": None}]
    assert _write(ID_NAME, rows, csv_format="rfc-4180") == b"id,name\r\n1,\r\n"
    assert _write(ID_NAME, rows, csv_format="mysql") == b"id\tname\n1\t\\N\n"
    assert (
        _write(ID_NAME, rows, include_trailing_delimiter=True, null_string="NULL")
        == b"id,name,\n1,NULL,\n"
    )


_TEXT = st.text(st.sampled_from([*'a1 ,;"\\\t\n\r#!\x01é', "\u2028"]), max_size=6)


@given(
    st.lists(
        st.tuples(st.one_of(st.none(), _TEXT), st.one_of(st.none(), st.integers(-99, 99))),
        max_size=6,
    ),
    st.builds(
        CsvWriterOptions,
        csv_format=st.sampled_from(
            ["custom", "rfc-4180", "excel", "tdf", "mysql", "informix-unload"]
        ),
        value_separator=st.sampled_from([",", ";", "\t", "|"]),
        quote_character=st.sampled_from(['"', "'"]),
        escape_character=st.sampled_from(["\\", None, "'"]),
        null_string=st.sampled_from([None, "", "NULL"]),
        trim_fields=st.booleans(),
        quote_mode=st.sampled_from(["MINIMAL", "ALL", "NON_NUMERIC", "NONE"]),
        record_separator=st.sampled_from(["\\n", "\\r\\n"]),
        include_trailing_delimiter=st.booleans(),
        character_set=st.sampled_from(["UTF-8", "UTF-16LE"]),
    ),
)
@settings(max_examples=300, deadline=None)
def test_columns_printed_at_once_are_the_record_printers_bytes(
    rows: list[tuple[str | None, int | None]], options: CsvWriterOptions
) -> None:
    """The vectorised writer gives the record-by-record printer's bytes for any format."""
    schema = s.RecordSchema.of({"t": s.STRING, "n": s.INT, "f": s.DOUBLE})
    table = pa.RecordBatch.from_pylist(
        [{"t": t, "n": n, "f": None if n is None else n / 8} for t, n in rows], schema.to_arrow()
    )
    outputs = []
    for vectorised in (True, False):
        out = io.BytesIO()
        writer = CsvRecordWriter(out, schema, options)
        (writer.write if vectorised else writer._write_records)(table)
        writer.finish()
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]


def test_missing_and_extra_fields_follow_the_writers_schema() -> None:
    """testMissingFieldWriteRecord / testExtraFieldInWriteRecord /
    testMissingAndExtraFieldWriteRecord: a field the records lack is empty, one the schema
    lacks is not written."""

    def write(schema: s.RecordSchema, rows: list[dict]) -> bytes:
        out = io.BytesIO()
        write_csv([pa.RecordBatch.from_pylist(rows)], out, CsvWriterOptions(), schema)
        return out.getvalue()

    assert write(ID_NAME, [{"id": "1"}]) == b"id,name\n1,\n"
    assert write(ID_NAME, [{"id": "1", "dob": "1/1/1970"}]) == b"id,name\n1,\n"
    only_id = s.RecordSchema.of({"id": s.STRING})
    assert write(only_id, [{"id": "1", "name": "John"}]) == b"id\n1\n"


def test_bytes_are_written_as_javas_arrays_to_string() -> None:
    """An Avro bytes value is an Object[] of Byte in NiFi (AvroTypeUtil.normalizeValue), which
    WriteCSVResult's getAsString prints with Arrays.toString: signed bytes, not lossy UTF-8."""
    schema = s.RecordSchema.of({"b": s.ArrayType(s.BYTE)})
    assert _write(schema, [{"b": b"\x00\xffA"}, {"b": b""}]) == b'b\n"[0, -1, 65]"\n[]\n'


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        (None, b"t\n1707238288351\n-2\n"),
        ("yyyy-MM-dd HH:mm:ss", b"t\n2024-02-06 16:51:28\n1969-12-31 23:59:59\n"),
        (
            "yyyy-MM-dd HH:mm:ss.SSSSSS",
            b"t\n2024-02-06 16:51:28.351567\n1969-12-31 23:59:59.998500\n",
        ),
    ],
    ids=["epoch-millis", "seconds", "SSSSSS"],
)
def test_microseconds_are_written_only_by_a_format_that_shows_them(fmt, expected) -> None:
    """A TIMESTAMP keeps microseconds: a SSSSSS Timestamp Format prints them, epoch millis floor
    them as NiFi's Timestamp.getTime() does."""
    rows = [
        {"t": dt.datetime(2024, 2, 6, 16, 51, 28, 351567)},
        {"t": dt.datetime(1969, 12, 31, 23, 59, 59, 998500)},
    ]
    assert _write(s.RecordSchema.of({"t": s.TIMESTAMP}), rows, timestamp_format=fmt) == expected
