"""Tests for the CSVReader codec (cases after NiFi's TestCSVRecordReader)."""

from __future__ import annotations

import datetime as dt
import io
import subprocess
import sys
import textwrap
from pathlib import Path

import attrs
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import RecordError
from flowcore.records import _csv_inference, _csv_values
from flowcore.records import schema as s
from flowcore.records.csv_reader import CsvReaderOptions, read_csv
from flowcore.records.csv_writer import CsvWriterOptions, write_csv
from flowcore.records.inference import infer_text_schema

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


_CELLS = st.sampled_from(
    [
        "",
        "0",
        "-0",
        "12",
        "-2147483649",
        "2147483647",
        "9223372036854775808",
        "1.5",
        "-1.5",
        ".5",
        "0.0",
        "1" + "0" * 40 + ".5",
        "true",
        "FALSE",
        "tru",
        "x",
        "é",
        "١٢",
        '"7"',
        '""',
        '"',
        "2024-01-02 03:04:05",
        " 2024-01-02 03:04:05",
        "2024-01-02",
        "01/02/2024",
        "03:04:05",
        "1700000000000",
        "NaN",
        "1e5",
        "+1",
    ]
)


@given(st.lists(st.lists(_CELLS, min_size=0, max_size=4), min_size=1, max_size=12))
@settings(max_examples=80, deadline=None)
def test_column_wise_inference_is_the_row_wise_inference(rows: list[list[str]]) -> None:
    """The reader's column-wise inference gives infer_text_schema's schema on tricky text."""
    for temporal in (
        CsvReaderOptions(),
        CsvReaderOptions(timestamp_format="yyyy-MM-dd HH:mm:ss", date_format="MM/dd/yyyy"),
        CsvReaderOptions(time_format="HH:mm:ss", date_format="yyyy-MM-dd"),
    ):
        options = attrs.evolve(temporal, trim_fields=False)
        dialect = options.dialect()
        columns = {f"f{i}": i for i in range(4)}
        cleaned = [
            [
                _csv_values.clean(row[i], dialect, trim_double_quote=options.trim_double_quote)
                if i < len(row)
                else None
                for i in columns.values()
            ]
            for row in rows
        ]
        expected = infer_text_schema(list(columns), cleaned, options.temporal)
        inferred = _csv_inference.infer_schema(
            columns,
            rows,
            dialect,
            trim_double_quote=options.trim_double_quote,
            temporal=options.temporal,
        )
        assert inferred == expected, rows


_EDGES = st.sampled_from(
    [
        *["", "5.", "-", ".", "-.5", "--1", "1-", "1.2.3", "7 ", " 7", "\t", "x1", "True"],
        *["nope", "é1", "2024-01-02 03:04:05", "-2024-01-02 03:04:05", "a2024-01-02 03:04:05"],
        "01/02/2024",
    ]
)


@given(st.lists(st.lists(_EDGES, min_size=1, max_size=3), min_size=1, max_size=10))
@settings(max_examples=60, deadline=None)
def test_column_wise_inference_skips_kernels_only_where_they_cannot_match(
    rows: list[list[str]],
) -> None:
    """Values that almost look like numbers or booleans get infer_text_schema's schema."""
    options = CsvReaderOptions(timestamp_format="yyyy-MM-dd HH:mm:ss", date_format="MM/dd/yyyy")
    dialect = options.dialect()
    columns = {f"f{i}": i for i in range(3)}
    cleaned = [
        [
            _csv_values.clean(row[i], dialect, trim_double_quote=True) if i < len(row) else None
            for i in columns.values()
        ]
        for row in rows
    ]
    expected = infer_text_schema(list(columns), cleaned, options.temporal)
    inferred = _csv_inference.infer_schema(
        columns, rows, dialect, trim_double_quote=True, temporal=options.temporal
    )
    assert inferred == expected, rows


@given(
    st.lists(st.one_of(st.none(), st.text(max_size=4)), max_size=12),
    st.integers(0, 3),
    st.booleans(),
)
@settings(max_examples=100, deadline=None)
def test_column_ends_and_cleaning_are_the_values(
    values: list[str | None], start: int, trim: bool
) -> None:
    """Ends reads each value's bytes (sliced arrays too); clean_column is clean per value."""
    strings = pa.array(["pad"] * start + values, pa.string()).slice(start)
    bounds = _csv_values.ends(strings)
    present = [v.encode() for v in values if v]
    assert bounds.ascii() == all(v.isascii() for v in values if v is not None)
    assert bounds.any_empty() == ("" in values)
    assert bounds.may_have_space() == any(v[0] <= 32 or v[-1] <= 32 for v in present)
    assert [
        bytes([f, la]) for f, la, h in zip(bounds.first, bounds.last, bounds.has, strict=True) if h
    ] == [v[:1] + v[-1:] for v in present]
    dialect = attrs.evolve(CsvReaderOptions(), trim_fields=trim).dialect()
    column = _csv_values.clean_column(strings, dialect, trim_double_quote=True)
    expected = [
        None if v is None else _csv_values.clean(v, dialect, trim_double_quote=True) for v in values
    ]
    assert column.to_pylist() == expected


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


_NUMBERISH = st.text(alphabet="0123456789.-+e x", max_size=8)


@given(
    st.lists(st.one_of(st.none(), _NUMBERISH, st.text(max_size=3)), max_size=12), st.integers(0, 2)
)
@settings(max_examples=100, deadline=None)
def test_numbers_from_the_bytes_are_the_number_regex(values: list[str | None], start: int) -> None:
    """Ends.numbers (numpy over the bytes) picks exactly the values the inference's regex
    matches, those with a point and those that are zero, in sliced arrays with nulls and
    non-ASCII text too."""
    strings = pa.array(["7.5"] * start + values, pa.string()).slice(start)
    numbers = _csv_values.ends(strings).numbers()
    regex = pa.compute.match_substring_regex(strings, _csv_inference._NUMBER)
    expected = [bool(m) for m in regex.to_pylist()]
    assert numbers.numeric.tolist() == expected
    assert numbers.points.tolist() == [
        m and "." in (v or "") for m, v in zip(expected, values, strict=True)
    ]
    assert numbers.zeros.tolist() == [
        m and float(v or 0) == 0 for m, v in zip(expected, values, strict=True)
    ]


_WHOLE = st.integers(-(2**63), 2**63 - 1).map(str)
_DECIMAL = st.tuples(st.integers(-(10**12), 10**12), st.integers(0, 10**6)).map(
    lambda p: f"{p[0]}.{p[1]}"
)
_NEAR_INT = st.sampled_from(["999999999", "-999999999", "1000000000", "2147483648", "0000000001"])
_NEAR_FLOAT = st.sampled_from(
    [
        *["0.0", "-0.0", ".0", "00.000", "-.5", "0.1", "9" * 36 + ".9", "." + "0" * 36 + "1"],
        *["0." + "0" * 44 + "1", "0." + "0" * 45 + "1", "1" * 39 + ".5", "4" + "0" * 38 + ".0"],
    ]
)


@given(
    st.lists(
        st.lists(st.one_of(_WHOLE, _DECIMAL, _NEAR_INT, _NEAR_FLOAT), min_size=2, max_size=2),
        min_size=1,
        max_size=12,
    )
)
@settings(max_examples=100, deadline=None)
def test_columns_of_numbers_infer_as_row_wise(rows: list[list[str]]) -> None:
    """Columns of whole and decimal numbers (INT, FLOAT and DOUBLE without a cast when short)
    get infer_text_schema's INT, LONG, FLOAT and DOUBLE in the same order."""
    options = CsvReaderOptions()
    columns = {"a": 0, "b": 1}
    expected = infer_text_schema(list(columns), rows, options.temporal)
    inferred = _csv_inference.infer_schema(
        columns, rows, options.dialect(), trim_double_quote=True, temporal=options.temporal
    )
    assert inferred == expected, rows


_STAMPS = st.one_of(
    st.datetimes(dt.datetime(900, 1, 1), dt.datetime(9999, 12, 31)).map(
        lambda d: d.strftime("%Y-%m-%d %H:%M:%S").rjust(19, "0")
    ),
    st.sampled_from(["2024-02-30 10:00:00", "1700000000000", "", "2024-01-02 03:04:05 "]),
)


@given(st.lists(_STAMPS, min_size=1, max_size=10))
@settings(max_examples=50, deadline=None)
def test_an_inferred_timestamp_column_reads_as_with_its_schema_given(stamps: list[str]) -> None:
    """A timestamp column the inference parsed (its parse kept for the conversion) reads the
    same records as when the schema is given and the conversion parses the column itself."""
    options = CsvReaderOptions(
        first_line_is_header=True, timestamp_format="yyyy-MM-dd HH:mm:ss", trim_fields=False
    )
    data = ("stamp,n\n" + "".join(f"{v},1\n" for v in stamps)).encode()
    inferred = list(read_csv(io.BytesIO(data), options))
    schema = s.RecordSchema.from_arrow(inferred[0].schema)
    given = list(read_csv(io.BytesIO(data), options, schema))
    assert [b.to_pylist() for b in inferred] == [b.to_pylist() for b in given]
    if all(v[:1].isdigit() and len(v) == 19 and v[5:7] != "02" for v in stamps):
        assert inferred[0].schema.field("stamp").type == pa.timestamp("ms")


@given(
    st.lists(st.one_of(st.none(), st.text(alphabet=' "ab\t', max_size=4)), max_size=12),
    st.integers(0, 3),
)
@settings(max_examples=100, deadline=None)
def test_cleaning_gives_the_ends_of_the_cleaned_column(
    values: list[str | None], start: int
) -> None:
    """clean_column_ends gives clean_column's column and that column's own Ends."""
    strings = pa.array(["pad"] * start + values, pa.string()).slice(start)
    dialect = CsvReaderOptions().dialect()
    cleaned, bounds = _csv_values.clean_column_ends(strings, dialect, trim_double_quote=True)
    assert (
        cleaned.to_pylist()
        == _csv_values.clean_column(strings, dialect, trim_double_quote=True).to_pylist()
    )
    fresh = _csv_values.ends(cleaned)
    assert bounds.has.tolist() == fresh.has.tolist()
    assert bounds.lengths.tolist() == fresh.lengths.tolist()
    assert (bounds.first[bounds.has]).tolist() == (fresh.first[fresh.has]).tolist()


_PATTERNS = [
    ("yyyy-MM-dd HH:mm:ss", "%Y-%m-%d %H:%M:%S"),
    ("MM.dd", "%m.%d"),
    ("yyyy.MM", "%Y.%m"),
    ("yyyyMMdd", "%Y%m%d"),
    ("HH:mm:ss", "%H:%M:%S"),
]


@given(
    st.sampled_from(_PATTERNS),
    st.lists(st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31)), min_size=1),
    st.sampled_from(["timestamp_format", "date_format", "time_format"]),
)
@settings(max_examples=80, deadline=None)
def test_a_column_of_one_format_infers_as_row_wise(
    pattern: tuple[str, str], stamps: list[dt.datetime], which: str
) -> None:
    """A column all in the first configured format (whose values may also be numbers, as
    ``MM.dd``'s are) gets infer_text_schema's type."""
    options = CsvReaderOptions(**{which: pattern[0]})
    rows = [[stamp.strftime(pattern[1])] for stamp in stamps]
    expected = infer_text_schema(["a"], rows, options.temporal)
    inferred = _csv_inference.infer_schema(
        {"a": 0}, rows, options.dialect(), trim_double_quote=True, temporal=options.temporal
    )
    assert inferred == expected, rows


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
