"""Tests for the CSVReader codec (cases after NiFi's TestCSVRecordReader)."""

from __future__ import annotations

import datetime as dt
import io
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import attrs
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import RecordError
from flowcore.records import csv_reader
from flowcore.records import schema as s
from flowcore.records.csv_reader import CsvReaderOptions, read_csv
from flowcore.records.csv_writer import CsvWriterOptions, write_csv

NAMES = ["id", "name", "balance", "address", "city", "state", "zipCode", "country"]
ACCOUNTS = s.RecordSchema(
    [s.RecordField(n, s.DOUBLE if n == "balance" else s.STRING) for n in NAMES]
)
HEADER = CsvReaderOptions(first_line_is_header=True)


def _rows(
    data: bytes, options: CsvReaderOptions = HEADER, schema: s.RecordSchema | None = ACCOUNTS
) -> list[dict]:
    return [
        row for batch in read_csv(io.BytesIO(data), options, schema) for row in batch.to_pylist()
    ]


def test_extra_white_space_and_quotes_are_trimmed() -> None:
    """testExtraWhiteSpace / testMissingField: values trimmed, a pair of quotes removed, a short
    row's missing values null."""
    data = (
        b"id, name, balance, address, city, state, zipCode, country\n"
        b'1, John, 40.80, "123 My Street", My City, MS, 11111\n'
    )
    (row,) = _rows(data)
    assert row == {
        "id": "1",
        "name": "John",
        "balance": 40.8,
        "address": "123 My Street",
        "city": "My City",
        "state": "MS",
        "zipCode": "11111",
        "country": None,
    }


def test_quotes_escapes_and_the_excel_format() -> None:
    """testQuote, testExcelFormat and escaped delimiters."""
    one = s.RecordSchema.of({"name": s.STRING})
    assert _rows(
        b'"name"\n""""""""\n',
        CsvReaderOptions(csv_format="rfc-4180", first_line_is_header=True),
        one,
    ) == [{"name": '"'}]
    two = s.RecordSchema.of({"fieldA": s.STRING, "fieldB": s.STRING})
    assert _rows(
        b"fieldA,fieldB\nvalueA,valueB",
        CsvReaderOptions(csv_format="excel", first_line_is_header=True),
        two,
    ) == [{"fieldA": "valueA", "fieldB": "valueB"}]
    assert _rows(b"fieldA,fieldB\na\\,b,c\n", HEADER, two) == [{"fieldA": "a,b", "fieldB": "c"}]


def test_header_names_map_columns_unless_ignored() -> None:
    """Columns are taken by header name (schema fields missing from it are null); with "Ignore
    CSV Header Column Names" by position."""
    schema = s.RecordSchema.of({"b": s.INT, "a": s.INT, "z": s.STRING})
    assert _rows(b"a,b\n1,2\n", HEADER, schema) == [{"b": 2, "a": 1, "z": None}]
    ignore = CsvReaderOptions(first_line_is_header=True, ignore_header_column_names=True)
    assert _rows(b"a,b\n1,2\n", ignore, schema) == [{"b": 1, "a": 2, "z": None}]
    assert _rows(b"1,2\n", CsvReaderOptions(), schema) == [{"b": 1, "a": 2, "z": None}]


def test_duplicate_header_names_are_refused_when_not_allowed() -> None:
    """Allow Duplicate Header Names false names the repeated column."""
    options = CsvReaderOptions(first_line_is_header=True, allow_duplicate_header_names=False)
    with pytest.raises(RecordError, match="'id' twice"):
        _rows(b"id,id\n1,2\n", options, s.RecordSchema.of({"id": s.STRING}))


def test_duplicate_header_names_shift_the_values_as_nifi_does() -> None:
    """testDuplicateHeaderNames: the de-duplicated names take the columns in order from the first
    (values shift left), the last columns are dropped."""
    header = "id, id, name, name, balance, BALANCE, address, city, state, zipCode, country"
    row = '1, Another ID, John, Smith, 40.80, 10.20, "123 My Street", My City, MS, 11111, USA'
    names = [n.strip() for n in header.split(",")]
    schema = s.RecordSchema.of(dict.fromkeys(dict.fromkeys(names), s.STRING))
    (record,) = _rows(f"{header}\n{row}".encode(), HEADER, schema)
    assert record == {
        "id": "1",
        "name": "Another ID",
        "balance": "John",
        "BALANCE": "Smith",
        "address": "40.80",
        "city": "10.20",
        "state": "123 My Street",
        "zipCode": "My City",
        "country": "MS",
    }


def test_duplicate_header_names_read_with_an_inferred_schema() -> None:
    """Issue 35: inference takes each name's last column, reading shifts as NiFi's reader does."""
    assert _rows(b"a,a,b\n1,2,3\n", HEADER, None) == [{"a": 1, "b": 2}]
    assert _rows(b"a,,\n1,2,3\n", HEADER, None) == [{"a": 1, "": 2}]
    # id is inferred from its last column (2, an int) but reads the first one's "x", as in NiFi
    with pytest.raises(RecordError, match=r"Cannot convert value \[x\].* to Integer") as caught:
        _rows(b"id,name,id\n1,x,2\n", HEADER, None)
    assert (caught.value.record, caught.value.field) == (1, "id")


def test_duplicate_header_names_false_is_commons_csvs_disallow_mode() -> None:
    """Blank names repeat too; the property is Custom Format's, the predefined formats allow all."""
    options = CsvReaderOptions(first_line_is_header=True, allow_duplicate_header_names=False)
    with pytest.raises(RecordError, match='The header contains a duplicate name: ""'):
        _rows(b"a,,\n1,2,3\n", options, None)
    rfc = attrs.evolve(options, csv_format="rfc-4180")
    assert _rows(b"a,a,b\n1,2,3\n", rfc, None) == [{"a": 1, "b": 2}]


def test_trim_double_quote_takes_a_pair_around_lines_and_an_empty_pair_is_null() -> None:
    """AbstractCSVRecordReader.trim: one pair off any value of two or more characters, then an
    empty value is null; a single quote stays."""
    schema = s.RecordSchema.of({"a": s.STRING, "b": s.STRING, "c": s.STRING})
    data = b'a,b,c\n"""x\ny""","""""",""""\n'
    assert _rows(data, HEADER, schema) == [{"a": "x\ny", "b": None, "c": '"'}]
    kept = CsvReaderOptions(first_line_is_header=True, trim_double_quote=False)
    assert _rows(data, kept, schema) == [{"a": '"x\ny"', "b": '""', "c": '"'}]


def test_formats_comments_null_strings_and_character_sets() -> None:
    """Comment Marker lines are skipped, the Null String is null (MySQL's too), Latin-1 decodes."""
    schema = s.RecordSchema.of({"a": s.STRING, "b": s.STRING})
    options = CsvReaderOptions(first_line_is_header=True, comment_marker="#", null_string="NULL")
    assert _rows(b"# note\na,b\nx,NULL\n", options, schema) == [{"a": "x", "b": None}]
    mysql = CsvReaderOptions(csv_format="mysql", first_line_is_header=True)
    assert _rows(b"a\tb\nx\t\\N\n", mysql, schema) == [{"a": "x", "b": None}]
    assert _rows(b"\xef\xbb\xbfa,b\nx,y\n", HEADER, schema) == [{"a": "x", "b": "y"}]  # a BOM
    latin = CsvReaderOptions(first_line_is_header=True, character_set="ISO-8859-1")
    assert _rows("a,b\ncafé,1\n".encode("latin-1"), latin, schema) == [{"a": "café", "b": "1"}]


def test_inference_reads_the_header_and_nifis_text_rules() -> None:
    """Without a schema the header names the fields and NiFi's CSV inference types them."""
    batches = list(
        read_csv(
            io.BytesIO(b"id,price,ok,when\n1,1.5,true,2019-01-07\n2,2.5,FALSE,\n"),
            CsvReaderOptions(first_line_is_header=True, date_format="yyyy-MM-dd"),
        )
    )
    schema = s.RecordSchema.from_arrow(batches[0].schema)
    assert [f.type for f in schema] == [s.INT, s.FLOAT, s.BOOLEAN, s.DATE]
    assert batches[0].column("ok").to_pylist() == [True, False]


def test_a_bad_value_names_record_and_field_after_the_good_records() -> None:
    """The records of the batch before the bad one come first, then one RecordError."""
    schema = s.RecordSchema.of({"id": s.INT})
    batches = read_csv(
        io.BytesIO(b"id\n1\n2\nx\n4\n"), CsvReaderOptions(first_line_is_header=True), schema
    )
    assert next(batches).to_pylist() == [{"id": 1}, {"id": 2}]
    with pytest.raises(
        RecordError, match=r"record 3, field 'id': Cannot convert value \[x\]"
    ) as caught:
        next(batches)
    assert (caught.value.record, caught.value.field) == (3, "id")
    with pytest.raises(RecordError, match="not UTF-8"):
        _rows(b"id\n\xff\n", HEADER, schema)


@pytest.mark.parametrize("comment", [None, "#"])  # Arrow's split, the csv module's
@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b'id,name\n1,a\n2,"b', 3),
        (b'id,name\n1,a\n2,"b\n', 3),
        (b'id,name\n1,a\n2,"b""', 3),
        (b'id,name\n1,a\n2,"b\n\nc\r\nd', 3),
        (b'id,name\n1,a\n2,"', 3),
        (b'id,name\n1,"a\nb"\n2,"b\\\n', 4),
    ],
)
def test_a_content_cut_inside_a_quoted_value_fails_after_the_records_before(
    data: bytes, line: int, comment: str | None
) -> None:
    """Commons CSV's "EOF reached before encapsulated token finished": the records before come
    first, then one RecordError naming the record and the line the open value starts on."""
    options = CsvReaderOptions(first_line_is_header=True, comment_marker=comment)
    batches = read_csv(io.BytesIO(data), options, s.RecordSchema.of({"id": s.INT}))
    assert next(batches).to_pylist() == [{"id": 1}]
    with pytest.raises(RecordError, match="EOF reached before encapsulated token") as caught:
        next(batches)
    assert (caught.value.record, caught.value.line) == (2, line)
    assert f"record 2 (line {line})" in str(caught.value)


@pytest.mark.parametrize("comment", [None, "#"])
def test_the_end_of_a_content_is_read_as_commons_csv_reads_it(comment: str | None) -> None:
    """An escape character last fails ("EOF whilst processing escape sequence"); an escaped
    line break last, an escaped escape last or a closed quote last are whole records."""
    options = CsvReaderOptions(first_line_is_header=False, comment_marker=comment)
    schema = s.RecordSchema.of({"a": s.STRING, "b": s.STRING})
    with pytest.raises(RecordError, match="EOF whilst processing escape sequence") as caught:
        _rows(b"a,b\nc,d\\", options, schema)
    assert (caught.value.record, caught.value.line) == (2, 2)
    kept = attrs.evolve(options, trim_fields=False)
    assert _rows(b"a,b\\\n", kept, schema) == [{"a": "a", "b": "b\n"}]
    assert _rows(b"a,b\\\nc", kept, schema) == [{"a": "a", "b": "b\nc"}]
    assert _rows(b"a,b\\\\", kept, schema) == [{"a": "a", "b": "b\\"}]
    assert _rows(b'a,"b\nc"', kept, schema) == [{"a": "a", "b": "b\nc"}]
    assert _rows(b'a,"b"""', kept, schema) == [{"a": "a", "b": 'b"'}]


TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r\x00"), max_size=8).map(
    lambda t: t.strip("".join(chr(c) for c in range(33)))
)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(TEXT, st.integers(-(2**31), 2**31 - 1), st.booleans()), max_size=5))
def test_rows_round_trip_through_the_csv_writer(rows: list[tuple[str, int, bool]]) -> None:
    """What the CSV writer writes (any quoting needed) reads back the same; empty text is null."""
    schema = s.RecordSchema.of({"text": s.STRING, "number": s.INT, "flag": s.BOOLEAN})
    records = [{"text": t, "number": n, "flag": f} for t, n, f in rows]
    out = io.BytesIO()
    write_csv(
        [pa.RecordBatch.from_pylist(records, schema.to_arrow())], out, CsvWriterOptions(), schema
    )
    back = _rows(
        out.getvalue(), CsvReaderOptions(first_line_is_header=True, trim_double_quote=False), schema
    )
    assert back == [{**r, "text": r["text"] or None} for r in records]


def test_a_50_mb_csv_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """A ~50 MB CSV streams in batches: the reader's peak RSS growth stays far below it (the
    modules it imports on first use are loaded before the measure: 10 MB of noise in CI)."""
    path = tmp_path / "big.csv"
    with path.open("wb") as out:
        out.write(b"id,name,balance,flag\n")
        for start in range(0, 1_300_000, 50_000):
            out.write(
                b"".join(
                    b"%d,name number %d,%d.25,true\n" % (i, i, i)
                    for i in range(start, start + 50_000)
                )
            )
    size = path.stat().st_size
    assert size > 45_000_000
    code = textwrap.dedent(
        f"""
        import io
        from flowcore.records.csv_reader import read_csv, CsvReaderOptions
        from flowcore.records import schema as s
        def hwm():
            for line in open("/proc/self/status"):
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) * 1024
        schema = s.RecordSchema.of({{"id": s.INT, "name": s.STRING, "balance": s.DOUBLE,
                                     "flag": s.BOOLEAN}})
        # one tiny read first: the modules the reader imports on first use are not its batches
        tiny = io.BytesIO(b"id,name,balance,flag\\n1,a,1.25,true\\n")
        for _ in read_csv(tiny, CsvReaderOptions(first_line_is_header=True), schema):
            pass
        base = hwm()
        n = 0
        with open({str(path)!r}, "rb") as f:
            for batch in read_csv(f, CsvReaderOptions(first_line_is_header=True), schema):
                n += batch.num_rows
        print(n, hwm() - base)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, growth = map(int, out.stdout.split())
    assert count == 1_300_000
    assert growth < 40_000_000, f"peak grew {growth / 1e6:.1f} MB reading {size / 1e6:.1f} MB"
    print(f"CSV of {size / 1e6:.1f} MB: peak RSS grew {growth / 1e6:.1f} MB")


def test_timestamps_and_dates_parse_vectorised_with_the_odd_values_one_by_one() -> None:
    """Dates and timestamps with spaces or as epoch millis read as NiFi reads them, in the same
    column as values Arrow parses; an invalid date (Arrow: March 1st) names its record."""
    rows = [
        ("2024-02-28 10:00:00", "2024-02-28"),
        (" 2024-02-08 01:02:03", "2024-02-08 "),
        ("1700000000000", " 2024-01-01"),
        ("", ""),
    ]
    content = "\n".join(f"{a},{b}" for a, b in rows).encode()
    schema = s.RecordSchema.of([("stamp", s.TIMESTAMP), ("day", s.DATE)])
    options = CsvReaderOptions(trim_fields=False)
    (batch,) = read_csv(io.BytesIO(content), options, schema)
    assert batch.to_pylist() == [
        {"stamp": dt.datetime(2024, 2, 28, 10), "day": dt.date(2024, 2, 28)},
        {"stamp": dt.datetime(2024, 2, 8, 1, 2, 3), "day": dt.date(2024, 2, 8)},
        {"stamp": dt.datetime(2023, 11, 14, 22, 13, 20), "day": dt.date(2024, 1, 1)},
        {"stamp": None, "day": None},
    ]
    bad = b"2024-02-28 10:00:00\n2024-02-30 10:00:00\n"
    stamps = s.RecordSchema.of([("stamp", s.TIMESTAMP)])
    with pytest.raises(RecordError) as error:
        list(read_csv(io.BytesIO(bad), CsvReaderOptions(), stamps))
    assert error.value.record == 2
    assert error.value.field == "stamp"


@pytest.mark.parametrize("data", [b"id,name\n", b"id,name", b"\xef\xbb\xbfid,name\r\n"])
def test_a_header_alone_gives_an_empty_batch_of_the_headers_fields(data: bytes) -> None:
    """A CSV of its header line only gives one empty batch whose fields are the header's
    (strings when inferred, the schema's types when given), not no batch at all."""
    (inferred,) = list(read_csv(io.BytesIO(data), HEADER))
    assert inferred.num_rows == 0
    assert inferred.schema == pa.schema([("id", pa.string()), ("name", pa.string())])
    given = s.RecordSchema.of({"id": s.INT, "name": s.STRING})
    (typed,) = list(read_csv(io.BytesIO(data), HEADER, given))
    assert typed.num_rows == 0
    assert typed.schema == given.to_arrow()


ESCAPED = (
    b"id, name, balance, address, city, state, zipCode, country\n"
    b'1, John Doe\\, "4750.89", "123 My Street", My City, MS, 11111, USA\n'
    b"2, Jane Doe, 4820.09, 321 Your Street, Your City, NY, 33333, USA"
)
JANE = {
    "id": "2",
    "name": "Jane Doe",
    "balance": 4820.09,
    "address": "321 Your Street",
    "city": "Your City",
    "state": "NY",
    "zipCode": "33333",
    "country": "USA",
}


def test_utf8_values_read_unchanged() -> None:
    """testUTF8: a UTF-8 value outside Latin-1 reads back as written."""
    schema = s.RecordSchema.of({"name": s.STRING})
    assert _rows("name\n黃凱揚".encode(), HEADER, schema) == [{"name": "黃凱揚"}]


def test_a_schema_field_missing_from_the_header_is_null_unless_the_header_is_ignored() -> None:
    """testFieldInSchemaButNotHeader: by header name the extra value has no column (country
    null); with "Ignore CSV Header Column Names" the schema names the columns (country USA)."""
    data = (
        b"id, name, balance, address, city, state, zipCode\n"
        b'1, John, 40.80, "123 My Street", My City, MS, 11111, USA'
    )
    strings = s.RecordSchema.of(dict.fromkeys(NAMES, s.STRING))
    (row,) = _rows(data, HEADER, strings)
    assert (row["balance"], row["address"], row["zipCode"]) == ("40.80", "123 My Street", "11111")
    assert row["country"] is None
    ignore = CsvReaderOptions(first_line_is_header=True, ignore_header_column_names=True)
    (row,) = _rows(data, ignore, strings)
    assert row["country"] == "USA"


def test_a_value_beyond_the_header_is_dropped() -> None:
    """testExtraFieldNotInHeader: a ninth value with no header name is not in the record."""
    data = (
        b"id, name, balance, address, city, state, zipCode, country\n"
        b'1, John, 40.80, "123 My Street", My City, MS, 11111, USA, North America'
    )
    (row,) = _rows(data, HEADER, s.RecordSchema.of(dict.fromkeys(NAMES, s.STRING)))
    assert list(row) == NAMES
    assert (row["address"], row["country"]) == ("123 My Street", "USA")


def test_a_control_character_value_separator() -> None:
    """testMultipleRecordsDelimitedWithSpecialChar: Value Separator \\u0001, quoted values."""
    data = ESCAPED.replace(b"\\,", b",").replace(b", ", b"\x01").replace(b",", b"\x01")
    options = CsvReaderOptions(first_line_is_header=True, value_separator="\x01")
    rows = _rows(data, options)
    assert rows[0] == {
        "id": "1",
        "name": "John Doe",
        "balance": 4750.89,
        "address": "123 My Street",
        "city": "My City",
        "state": "MS",
        "zipCode": "11111",
        "country": "USA",
    }
    assert rows[1] == JANE


def test_without_an_escape_character_a_backslash_is_a_plain_character() -> None:
    """testMultipleRecordsEscapedWithNull: no Escape Character keeps "John Doe\\" as written."""
    options = CsvReaderOptions(first_line_is_header=True, escape_character=None)
    rows = _rows(ESCAPED, options)
    assert (rows[0]["name"], rows[0]["balance"]) == ("John Doe\\", 4750.89)
    assert rows[1] == JANE


def test_an_escaped_separator_that_shifts_a_number_column_is_a_record_error() -> None:
    """testMultipleRecordsEscapedWithChar: the escaped comma joins two values, so balance reads
    "123 My Street" and the record is refused."""
    with pytest.raises(RecordError, match="123 My Street"):
        _rows(ESCAPED)


def test_without_double_quote_trimming_quoted_values_keep_their_quotes() -> None:
    """testSimpleParse_withoutDoubleQuoteTrimming / testMissingField_withoutDoubleQuoteTrimming:
    Trim Double Quote false leaves the quotes a trimmed value kept, a short row's rest null."""
    data = (
        b"id, name, balance, address, city, state, zipCode, country\n"
        b'1, John, 40.80, "123 My Street", My City, MS, 11111\n'
    )
    options = CsvReaderOptions(first_line_is_header=True, trim_double_quote=False)
    (row,) = _rows(data, options)
    assert (row["address"], row["country"]) == ('"123 My Street"', None)


def test_dates_and_times_parse_with_the_default_and_given_formats() -> None:
    """testDate / testDateNullFormat / testTimeNullFormat: NiFi's default formats without a
    Date/Time Format, the Java pattern when one is given."""
    schema = s.RecordSchema.of({"date": s.DATE, "time": s.TIME})
    (row,) = _rows(b"date,time\n1983-11-30,12:34:56\n", HEADER, schema)
    assert row == {"date": dt.date(1983, 11, 30), "time": dt.time(12, 34, 56)}
    us = CsvReaderOptions(first_line_is_header=True, date_format="MM/dd/yyyy", time_format="HHmmss")
    (row,) = _rows(b"date,time\n11/30/1983,123456\n", us, schema)
    assert row == {"date": dt.date(1983, 11, 30), "time": dt.time(12, 34, 56)}


def test_a_date_not_in_the_date_format_is_a_record_error() -> None:
    """testDateNoCoercionUnexpectedFormat, coerced: "11/30/1983" does not fit MM-dd-yyyy."""
    schema = s.RecordSchema.of({"date": s.DATE})
    options = CsvReaderOptions(first_line_is_header=True, date_format="MM-dd-yyyy")
    with pytest.raises(RecordError, match="11/30/1983"):
        _rows(b"date\n11/30/1983", options, schema)


def _python_batches(
    stream: IO[bytes], options: CsvReaderOptions, schema: s.RecordSchema | None
) -> Iterator[pa.RecordBatch]:
    """The batches of the Python path (the ``csv`` module's split), Arrow's never tried."""
    return csv_reader._read_python(
        stream, options, options.dialect(), schema, csv_reader._Progress()
    )


_PATHS = pytest.mark.parametrize("open_", [read_csv, _python_batches], ids=["arrow", "python"])
_TWO = s.RecordSchema.of({"id": s.INT, "name": s.STRING})


@_PATHS
@pytest.mark.parametrize(
    ("last", "line", "char"),
    [
        (b'1,"a"x\n', 3, "x"),
        (b'1,"a" x,b\n', 3, "x"),
        (b'1,"a"""x\n', 3, "x"),
        (b'1,""x\n', 3, "x"),
        (b'1,"a" "b"\n', 3, '"'),
        (b'1,"a,"x\n', 3, "x"),
        (b'1,"a\nb"x\r\n', 4, "x"),
        (b'1,"a"\\,b\n', 3, "\\"),
        (b'1,"a"x', 3, "x"),
    ],
)
def test_a_character_after_a_closing_quote_is_refused_as_commons_csv_does(
    open_: Callable[..., Iterator[pa.RecordBatch]], last: bytes, line: int, char: str
) -> None:
    """Commons CSV (NiFi's CSVReader) takes only whitespace, a separator or a line end after a
    quoted value's closing quote; anything else is "Invalid character between encapsulated
    token and delimiter": the records before come first, then one RecordError names the line."""
    batches = open_(io.BytesIO(b'id,name\n0,"z"\n' + last), HEADER, _TWO)
    assert next(batches).to_pylist() == [{"id": 0, "name": "z"}]
    with pytest.raises(RecordError) as caught:
        next(batches)
    assert (caught.value.record, caught.value.line) == (2, line)
    assert "Invalid character between encapsulated token and delimiter" in str(caught.value)
    assert f"followed by {char!r}" in str(caught.value)


@_PATHS
@pytest.mark.parametrize(
    ("data", "names"),
    [
        (b'id,name\n1,"a" ,b\n2,"c"  \n', ["a", "c"]),
        ('id,name\n1,"a"\t\u3000\n2,c\n'.encode(), ["a", "c"]),
        (b'id,name\n1,"a""b"\n2,"""c"""\n', ['a"b', '"c"']),
        (b'id,name\r\n1,"a"\r\n2,"b\r\nc"\r\n', ["a", "b\r\nc"]),
        (b'id,name\n1,"a"\n2,"b"', ["a", "b"]),
        (b'id,name\n1,"a" \n2,"b" ', ["a", "b"]),
        (b'id,name\n1,x""\n2,a"b"c\n', ['x""', 'a"b"c']),
        (b'id,name\n1,"a\\"b"\n2,"c\\""\n', ['a"b', 'c"']),
    ],
)
def test_what_commons_csv_takes_after_a_closing_quote_reads_as_it_does(
    open_: Callable[..., Iterator[pa.RecordBatch]], data: bytes, names: list[str]
) -> None:
    """Whitespace after a closing quote is skipped, not kept, even with Trim Fields off; a
    doubled or escaped quote, CRLF, the content's end and quotes inside an unquoted value are
    read as Commons CSV reads them."""
    options = CsvReaderOptions(
        first_line_is_header=True, trim_fields=False, trim_double_quote=False
    )
    rows = [row for batch in open_(io.BytesIO(data), options, _TWO) for row in batch.to_pylist()]
    assert rows == [{"id": i + 1, "name": name} for i, name in enumerate(names)]


@_PATHS
def test_schema_inference_reads_a_character_after_a_closing_quote_as_refused(
    open_: Callable[..., Iterator[pa.RecordBatch]],
) -> None:
    """With no schema, the inference sample is split by the same rule: the records before the
    bad one are inferred and given, then the RecordError."""
    batches = open_(io.BytesIO(b'id,name\n0,"z"\n1,"a"x\n2,b\n'), HEADER, None)
    assert next(batches).to_pylist() == [{"id": 0, "name": "z"}]
    with pytest.raises(RecordError, match="between encapsulated token and delimiter") as caught:
        next(batches)
    assert (caught.value.record, caught.value.line) == (2, 3)


def test_a_timestamp_format_with_micros_keeps_them() -> None:
    """A Timestamp Format of SSSSSS reads microseconds into the record (inferred and given
    schema); the default format parses by column into the same microsecond type."""
    data = b"t\n2024-02-06 11:51:28.351567\n1969-12-31 23:59:59.000001\n"
    options = attrs.evolve(HEADER, timestamp_format="yyyy-MM-dd HH:mm:ss.SSSSSS")
    expected = [
        dt.datetime(2024, 2, 6, 11, 51, 28, 351567),
        dt.datetime(1969, 12, 31, 23, 59, 59, 1),
    ]
    for schema in (None, s.RecordSchema.of({"t": s.TIMESTAMP})):
        assert [r["t"] for r in _rows(data, options, schema)] == expected
    plain = b"t\n2024-02-06 11:51:28\n"
    (batch,) = read_csv(io.BytesIO(plain), HEADER, s.RecordSchema.of({"t": s.TIMESTAMP}))
    assert batch.schema.field("t").type == pa.timestamp("us")
    assert batch.to_pylist() == [{"t": dt.datetime(2024, 2, 6, 11, 51, 28)}]
