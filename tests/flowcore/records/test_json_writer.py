"""Tests for the JsonRecordSetWriter codec: NiFi's bytes (cases from NiFi's TestWriteJsonResult)."""

from __future__ import annotations

import datetime as dt
import io
import math
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import RecordError
from flowcore.records import schema as s
from flowcore.records.json_reader import read_json
from flowcore.records.json_writer import (
    JsonRecordWriter,
    JsonWriterOptions,
    _fast_string,
    _Printer,
    json_string,
    write_json,
)


def _write(schema: s.RecordSchema, rows: list[dict], **options: object) -> str:
    out = io.BytesIO()
    batch = pa.RecordBatch.from_pylist(rows, schema.to_arrow())
    write_json([batch], out, JsonWriterOptions(**options), schema)
    return out.getvalue().decode()


def test_scientific_notation_as_nifi() -> None:
    """testScientificNotationUsage: Java's forms with it, plain BigDecimal forms without."""
    schema = s.RecordSchema.of(
        {"float": s.FLOAT, "double": s.DOUBLE, "decimal": s.DecimalType(10, 9)}
    )
    row = {"float": -4.291032244, "double": 0.000000451, "decimal": Decimal("0.000000080")}
    assert _write(schema, [row], allow_scientific_notation=True) == (
        '[{"float":-4.2910323,"double":4.51E-7,"decimal":8.0E-8}]'
    )
    assert (
        _write(schema, [row]) == '[{"float":-4.2910323,"double":0.000000451,"decimal":0.000000080}]'
    )


def test_data_types_pretty_printed_as_nifis_data_types_json() -> None:
    """testDataTypes: every type, Jackson's default pretty printer, NiFi's default formats."""
    schema = s.RecordSchema(
        [
            s.RecordField("boolean", s.BOOLEAN),
            s.RecordField("byte", s.BYTE),
            s.RecordField("short", s.SHORT),
            s.RecordField("int", s.INT),
            s.RecordField("long", s.LONG),
            s.RecordField("bigint", s.BIGINT),
            s.RecordField("float", s.FLOAT),
            s.RecordField("double", s.DOUBLE),
            s.RecordField("decimal", s.DecimalType(10, 1)),
            s.RecordField("timestamp", s.TIMESTAMP),
            s.RecordField("date", s.DATE),
            s.RecordField("time", s.TIME),
            s.RecordField("uuid", s.UUID),
            s.RecordField("char", s.CHAR),
            s.RecordField("enum", s.EnumType(["A"])),
            s.RecordField("string", s.STRING),
            s.RecordField("record", s.RecordType(s.RecordSchema.of({"x": s.INT}))),
            s.RecordField("choice", s.ChoiceType([s.INT, s.LONG])),
            s.RecordField("array", s.ArrayType(s.INT)),
            s.RecordField("map", s.MapType(s.INT)),
        ]
    )
    row = {
        "boolean": True,
        "byte": 1,
        "short": 8,
        "int": 9,
        "long": 8,
        "bigint": Decimal(8),
        "float": 8.0,
        "double": 8.0,
        "decimal": Decimal("8.1"),
        "timestamp": dt.datetime(2017, 1, 1, 17),
        "date": dt.date(2017, 1, 1),
        "time": dt.time(17),
        "uuid": "8bb20bf2-ec41-4b94-80a4-922f4dba009c",
        "char": "c",
        "enum": None,
        "string": "string",
        "record": None,
        "choice": "48",
        "array": None,
        "map": [("height", 48), ("width", 96)],
    }
    expected = """[ {
  "boolean" : true,
  "byte" : 1,
  "short" : 8,
  "int" : 9,
  "long" : 8,
  "bigint" : 8,
  "float" : 8.0,
  "double" : 8.0,
  "decimal" : 8.1,
  "timestamp" : "2017-01-01 17:00:00",
  "date" : "2017-01-01",
  "time" : "17:00:00",
  "uuid" : "8bb20bf2-ec41-4b94-80a4-922f4dba009c",
  "char" : "c",
  "enum" : null,
  "string" : "string",
  "record" : null,
  "choice" : 48,
  "array" : null,
  "map" : {
    "height" : 48,
    "width" : 96
  }
} ]"""
    formats = {
        "date_format": "yyyy-MM-dd",
        "time_format": "HH:mm:ss",
        "timestamp_format": "yyyy-MM-dd HH:mm:ss",
    }
    assert _write(schema, [row], pretty_print=True, **formats) == expected


def test_temporal_values_without_formats_are_epoch_millis() -> None:
    """testTimestampWithNullFormat / testOnelineOutput: millis, one object per line, no array."""
    schema = s.RecordSchema.of({"timestamp": s.TIMESTAMP, "time": s.TIME, "date": s.DATE})
    rows = [
        {
            "timestamp": dt.datetime(1970, 1, 1, 10, 21, 33, 723000),
            "time": dt.time(10, 21, 33, 723000),
            "date": dt.date(1970, 1, 1),
        },
        {
            "timestamp": dt.datetime(1970, 1, 1, 10, 21, 33, 999000),
            "time": dt.time(10, 21, 33, 999000),
            "date": dt.date(1970, 1, 1),
        },
    ]
    assert _write(schema, rows[:1]) == '[{"timestamp":37293723,"time":37293723,"date":0}]'
    assert _write(schema, rows, output_grouping="output-oneline") == (
        '{"timestamp":37293723,"time":37293723,"date":0}\n{"timestamp":37293999,"time":37293999,"date":0}'
    )


@pytest.mark.parametrize(
    ("representation", "expected"),
    [
        ("EPOCH_MILLISECONDS", '[{"timestamp":1623926285001}]'),
        ("EPOCH_SECONDS", '[{"timestamp":1623926285.001}]'),
        ("FORMATTED_STRING", '[{"timestamp":"formatted-001"}]'),
    ],
)
def test_timestamp_representations(representation: str, expected: str) -> None:
    """testTimestampRepresentations."""
    schema = s.RecordSchema.of({"timestamp": s.TIMESTAMP})
    row = {"timestamp": dt.datetime(2021, 6, 17, 10, 38, 5, 1000)}
    fmt = "'formatted-'SSS" if representation == "FORMATTED_STRING" else None
    assert (
        _write(schema, [row], timestamp_representation=representation, timestamp_format=fmt)
        == expected
    )


def test_null_suppression() -> None:
    """testNullSuppression (a null counts as present, so suppress-missing keeps it)."""
    schema = s.RecordSchema.of({"id": s.STRING, "name": s.STRING})
    row = {"id": "1", "name": None}
    assert _write(schema, [row]) == '[{"id":"1","name":null}]'
    assert _write(schema, [row], suppress_nulls="always-suppress") == '[{"id":"1"}]'
    assert _write(schema, [row], suppress_nulls="suppress-missing") == '[{"id":"1","name":null}]'


def test_empty_record_sets_and_jackson_escapes() -> None:
    """No record writes ``[]`` (``[ ]`` pretty); control characters escape in upper-case hex."""
    schema = s.RecordSchema.of({"a": s.STRING})
    assert _write(schema, []) == "[]"
    assert _write(schema, [], pretty_print=True) == "[ ]"
    assert json_string('q"\\\n\x01é') == '"q\\"\\\\\\n\\u0001é"'
    assert _write(
        schema, [{"a": "x"}, {"a": "y"}], pretty_print=True, output_grouping="output-oneline"
    ) == ('{\n  "a" : "x"\n} {\n  "a" : "y"\n}')


@pytest.mark.parametrize(
    ("pretty", "expected"),
    [
        (False, ["", '{"a":"x"}', '{"a":"x"}\n{"a":"y"}\n{"a":"z"}']),
        (True, ["", '{\n  "a" : "x"\n}', '{\n  "a" : "x"\n} {\n  "a" : "y"\n} {\n  "a" : "z"\n}']),
    ],
)
def test_one_line_per_object_writes_no_newline_after_the_last_record(
    pretty: bool, expected: list[str]
) -> None:
    """WriteJsonResult's One Line Per Object: Jackson's root value separator ("\\n" from its
    MinimalPrettyPrinter; " " from the default printer with Pretty Print) goes between records
    only, none after the last, nothing for no record; a batch boundary changes nothing."""
    schema = s.RecordSchema.of({"a": s.STRING})
    options = JsonWriterOptions(output_grouping="output-oneline", pretty_print=pretty)
    written = []
    for rows in ([], ["x"], ["x", "y", "z"]):
        out = io.BytesIO()
        batches = [pa.record_batch({"a": pa.array(rows[i : i + 2], pa.string())}) for i in (0, 2)]
        write_json(batches, out, options, schema)
        written.append(out.getvalue().decode())
    assert written == expected


def test_nested_arrays_and_records_pretty_print_as_jackson() -> None:
    """Arrays stay on one line with spaces, objects inside them indent one level deeper."""
    inner = s.RecordSchema.of({"x": s.INT})
    schema = s.RecordSchema.of(
        {"list": s.ArrayType(s.RecordType(inner)), "empty": s.ArrayType(s.INT)}
    )
    text = _write(schema, [{"list": [{"x": 1}, {"x": 2}], "empty": []}], pretty_print=True)
    assert text == (
        '[ {\n  "list" : [ {\n    "x" : 1\n  }, {\n    "x" : 2\n  } ],\n  "empty" : [ ]\n} ]'
    )


def test_the_writer_counts_records_across_batches() -> None:
    """Batches written one after another form one record set with NiFi's attributes."""
    schema = s.RecordSchema.of({"a": s.INT})
    out = io.BytesIO()
    writer = JsonRecordWriter(out, schema)
    for value in (1, 2):
        writer.write(pa.RecordBatch.from_pylist([{"a": value}], schema.to_arrow()))
    assert writer.finish() == {"record.count": "2", "mime.type": "application/json"}
    assert out.getvalue() == b'[{"a":1},{"a":2}]'


def test_float_and_double_columns_outside_the_plain_range() -> None:
    """Beyond 10^7 and below 10^-3 both column types follow Java's rules in either notation."""
    schema = s.RecordSchema.of({"f": s.FLOAT, "d": s.DOUBLE})
    row = {"f": 1e10, "d": 12345678.0}
    assert _write(schema, [row]) == '[{"f":10000000000,"d":12345678}]'
    assert _write(schema, [row], allow_scientific_notation=True) == '[{"f":1.0E10,"d":1.2345678E7}]'
    small = {"f": 0.0001, "d": 0.0001}
    assert _write(schema, [small]) == '[{"f":0.00010,"d":0.00010}]'


@settings(max_examples=100, deadline=None)
@given(st.text())
def test_the_fast_string_encoder_gives_jacksons_text(text: str) -> None:
    """orjson's strings, case-fixed, are the standard encoder's Jackson-style strings."""
    assert _fast_string(text) == json_string(text)


_ROW_VALUES = st.fixed_dictionaries(
    {
        "s": st.none() | st.text(max_size=6),
        "f": st.none() | st.floats(width=32),
        "d": st.none() | st.floats(),
        "i": st.none() | st.integers(-(2**63), 2**63 - 1),
        "b": st.none() | st.booleans(),
    }
)
_ROW_SCHEMA = s.RecordSchema.of(
    [("s", s.STRING), ("f", s.FLOAT), ("d", s.DOUBLE), ("i", s.LONG), ("b", s.BOOLEAN)]
)


def _halves(writer: JsonRecordWriter, batch: pa.RecordBatch, half: int) -> None:
    writer.write(batch.slice(0, half))
    writer.write(batch.slice(half))


@given(
    st.lists(_ROW_VALUES, max_size=8),
    st.booleans(),
    st.sampled_from(["never-suppress", "always-suppress"]),
    st.sampled_from(["output-array", "output-oneline"]),
    st.booleans(),
)
@settings(max_examples=80, deadline=None)
def test_vectorised_records_are_the_value_by_value_printers_bytes(
    rows: list[dict[str, object]], pretty: bool, suppress: str, grouping: str, scientific: bool
) -> None:
    """Columns rendered by Arrow kernels give the bytes the value-by-value printer gives (or
    both refuse a NaN or infinity, without scientific notation)."""
    options = JsonWriterOptions(
        pretty_print=pretty,
        suppress_nulls=suppress,
        output_grouping=grouping,
        allow_scientific_notation=scientific,
    )
    batch = pa.RecordBatch.from_pylist(rows, _ROW_SCHEMA.to_arrow())
    printer = _Printer(options)
    texts = []
    refused = None
    for row in batch.to_pylist():
        parts: list[str] = []
        try:
            printer.record(parts, row, _ROW_SCHEMA, 0)
        except RecordError as exc:
            refused = refused or exc
        texts.append("".join(parts))
    out = io.BytesIO()
    writer = JsonRecordWriter(out, _ROW_SCHEMA, options)
    if refused is not None:  # the writer goes a column at a time: the first in column order
        assert not scientific
        half = len(rows) // 2
        first = min(
            (n >= half, name == "d", n)
            for n, row in enumerate(rows)
            for name in ("f", "d")
            if row[name] is not None and not math.isfinite(row[name])  # type: ignore[arg-type]
        )
        with pytest.raises(
            RecordError, match=r"^record \d+, field '[fd]': the (float|double) "
        ) as e:
            _halves(writer, batch, half)
        assert (e.value.record, e.value.field) == (first[2] + 1, "d" if first[1] else "f")
        return
    writer.write(batch.slice(0, len(rows) // 2))
    writer.write(batch.slice(len(rows) // 2))
    writer.finish()
    body = printer.record_separator.join(texts)
    if grouping == "output-array":
        body = ("[ " + body + " ]" if rows else "[ ]") if pretty else "[" + body + "]"
    assert out.getvalue().decode() == body


def test_missing_and_extra_fields_follow_the_writers_schema() -> None:
    """testMissingFieldInWriteRecord / testExtraFieldInWriteRecord /
    testMissingAndExtraFieldInWriteRecord: a field the records lack is null, one the schema
    lacks is not written."""
    schema = s.RecordSchema.of({"id": s.STRING, "name": s.STRING})
    out = io.BytesIO()
    write_json([pa.RecordBatch.from_pylist([{"id": "1"}])], out, schema=schema)
    assert out.getvalue() == b'[{"id":"1","name":null}]'
    out = io.BytesIO()
    extra = pa.RecordBatch.from_pylist([{"id": "1", "dob": "1/1/1970"}])
    write_json([extra], out, schema=schema)
    assert out.getvalue() == b'[{"id":"1","name":null}]'
    out = io.BytesIO()
    only_id = s.RecordSchema.of({"id": s.STRING})
    write_json([pa.RecordBatch.from_pylist([{"id": "1", "name": "John"}])], out, schema=only_id)
    assert out.getvalue() == b'[{"id":"1"}]'


@pytest.mark.parametrize(
    ("millis", "expected"),
    [
        (1623926285000, "1623926285.000"),
        (1623926285001, "1623926285.001"),
        (1623926285999, "1623926285.999"),
        (0, "0.000"),
        (-1, "-0.001"),
        (253402300799999, "253402300799.999"),
    ],
)
def test_epoch_seconds_values(millis: int, expected: str) -> None:
    """testEpochSecondsValues: EPOCH_SECONDS prints seconds with three decimals."""
    schema = s.RecordSchema.of({"timestamp": s.TIMESTAMP})
    row = {"timestamp": dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=millis)}
    written = _write(schema, [row], timestamp_representation="EPOCH_SECONDS")
    assert written == f'[{{"timestamp":{expected}}}]'


def test_choice_array() -> None:
    """testChoiceArray: a CHOICE[ARRAY[STRING]] value is written as the JSON array."""
    schema = s.RecordSchema.of({"path": s.ChoiceType((s.ArrayType(s.STRING),))})
    assert _write(schema, [{"path": '["10.2.1.3"]'}]) == '[{"path":["10.2.1.3"]}]'


def test_choice_array_of_strings_or_array_of_records() -> None:
    """testChoiceArrayOfStringsOrArrayOfRecords: an inferred CHOICE of an array of strings and
    an array of records is written back as it was read."""
    text = '[{"items":[{"itemData":["test"]},{"itemData":[{"quantity":10}]}]}]'
    batches = list(read_json(io.BytesIO(text.encode())))
    out = io.BytesIO()
    write_json(batches, out)
    assert out.getvalue().decode() == text


_NAN, _INF = float("nan"), float("inf")
#: Where a NaN or infinity can sit: a FLOAT or DOUBLE column (written by Arrow kernels), or
#: inside an array, a map, a nested record or a CHOICE (written value by value).
_NON_FINITE = [
    ("float", s.FLOAT, _NAN, '"NaN"', "float NaN", "f"),
    ("double", s.DOUBLE, -_INF, '"-Infinity"', "double -Infinity", "f"),
    ("array", s.ArrayType(s.DOUBLE), [1.5, _INF], '[1.5,"Infinity"]', "double Infinity", "f"),
    ("map", s.MapType(s.FLOAT), {"k": _NAN}, '{"k":"NaN"}', "float NaN", "f.k"),
    (
        "record",
        s.RecordType(s.RecordSchema.of({"x": s.DOUBLE})),
        {"x": _NAN},
        '{"x":"NaN"}',
        "double NaN",
        "f.x",
    ),
    ("choice", s.ChoiceType([s.STRING, s.DOUBLE]), _INF, '"Infinity"', "double Infinity", "f"),
]


def _two_rows(dtype: s.DataType, bad: object) -> tuple[s.RecordSchema, pa.RecordBatch]:
    """A record set of a fine record (a null) then one holding *bad*, in field "f"."""
    schema = s.RecordSchema.of({"n": s.INT, "f": dtype})
    rows = [{"n": 1, "f": None}, {"n": 2, "f": bad}]
    if isinstance(dtype, s.ChoiceType):  # a CHOICE column holds each value's JSON text
        rows = [{"n": 1, "f": None}, {"n": 2, "f": "Infinity"}]
    return schema, pa.RecordBatch.from_pylist(rows, schema.to_arrow())


@pytest.mark.parametrize(
    ("dtype", "bad", "text", "what", "field"),
    [case[1:] for case in _NON_FINITE],
    ids=[case[0] for case in _NON_FINITE],
)
def test_nan_and_infinities_fail_without_scientific_notation(
    dtype: s.DataType, bad: object, text: str, what: str, field: str
) -> None:
    """NiFi's WriteJsonResult writes new BigDecimal(Double.toString(v)) by default: NaN and
    infinities throw, so the FlowFile fails; here a RecordError naming record, field, fix."""
    schema, batch = _two_rows(dtype, bad)
    writer = JsonRecordWriter(io.BytesIO(), schema)
    writer.write(batch.slice(0, 1))
    with pytest.raises(RecordError) as caught:
        writer.write(batch.slice(1))
    assert (caught.value.record, caught.value.field) == (2, field)
    assert str(caught.value).startswith(f"record 2, field '{field}': the {what} is no JSON number")
    assert "set it to true to write the string" in str(caught.value)


@pytest.mark.parametrize(
    ("dtype", "bad", "text"),
    [case[1:4] for case in _NON_FINITE],
    ids=[case[0] for case in _NON_FINITE],
)
def test_nan_and_infinities_are_jacksons_strings_with_scientific_notation(
    dtype: s.DataType, bad: object, text: str
) -> None:
    """With scientific notation NiFi calls writeNumber(double/float): Jackson's default
    QUOTE_NON_NUMERIC_NUMBERS writes them as the strings "NaN", "Infinity", "-Infinity"."""
    schema, batch = _two_rows(dtype, bad)
    out = io.BytesIO()
    write_json([batch], out, JsonWriterOptions(allow_scientific_notation=True), schema)
    assert out.getvalue().decode() == f'[{{"n":1,"f":null}},{{"n":2,"f":{text}}}]'


def test_the_viewers_option_quotes_them_without_scientific_notation() -> None:
    """quote_non_finite (the content viewer's, no NiFi property) writes Jackson's strings and
    keeps plain decimals for the other numbers."""
    schema = s.RecordSchema.of({"d": s.DOUBLE, "l": s.ArrayType(s.FLOAT)})
    batch = pa.RecordBatch.from_pylist(
        [{"d": 1e10, "l": [_NAN]}, {"d": -_INF, "l": [1e-5]}], schema.to_arrow()
    )
    out = io.BytesIO()
    write_json([batch], out, JsonWriterOptions(quote_non_finite=True), schema)
    assert out.getvalue() == (b'[{"d":10000000000,"l":["NaN"]},{"d":"-Infinity","l":[0.000010]}]')


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, '[{"t":1707238288351},{"t":-2}]'),
        ({"timestamp_representation": "EPOCH_SECONDS"}, '[{"t":1707238288.351},{"t":-0.002}]'),
        (
            {"timestamp_format": "yyyy-MM-dd HH:mm:ss.SSS"},
            '[{"t":"2024-02-06 16:51:28.351"},{"t":"1969-12-31 23:59:59.998"}]',
        ),
        (
            {"timestamp_format": "yyyy-MM-dd HH:mm:ss.SSSSSS"},
            '[{"t":"2024-02-06 16:51:28.351567"},{"t":"1969-12-31 23:59:59.998500"}]',
        ),
    ],
    ids=["epoch-millis", "epoch-seconds", "SSS", "SSSSSS"],
)
def test_microseconds_are_written_only_by_a_format_that_shows_them(options, expected) -> None:
    """A TIMESTAMP keeps microseconds: NiFi's writer prints them with a SSSSSS format and
    floors them away elsewhere (Timestamp.getTime(): 1.5 ms before 1970 is -2)."""
    rows = [
        {"t": dt.datetime(2024, 2, 6, 16, 51, 28, 351567)},
        {"t": dt.datetime(1969, 12, 31, 23, 59, 59, 998500)},
    ]
    assert _write(s.RecordSchema.of({"t": s.TIMESTAMP}), rows, **options) == expected
