"""Tests for the JsonTreeReader codec (cases after NiFi's TestJsonTreeRowRecordReader)."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import ConfigurationError, RecordError
from flowcore.records import json_reader
from flowcore.records import schema as s
from flowcore.records.json_reader import JsonReaderOptions, _Cursor, json_records, read_json
from flowcore.records.json_writer import write_json
from tests.flowcore.records._strategies import records, schemas

ACCOUNTS = b"""[
    {"id": 1, "name": "John Doe", "balance": 4750.89, "address": "123 My Street",
     "city": "My City", "state": "MS", "zipCode": "11111", "country": "USA"},
    {"id": 2, "name": "Jane Doe", "balance": 4820.09, "address": "321 Your Street",
     "city": "Your City", "state": "NY", "zipCode": "33333", "country": "USA"}
]"""
ACCOUNT_SCHEMA = s.RecordSchema.of(
    {
        "id": s.INT,
        "name": s.STRING,
        "balance": s.DOUBLE,
        "address": s.STRING,
        "city": s.STRING,
        "state": s.STRING,
        "zipCode": s.STRING,
        "country": s.STRING,
    }
)


def _rows(data: bytes, options: JsonReaderOptions = JsonReaderOptions(), schema=None) -> list[dict]:  # noqa: B008
    return [
        row for batch in read_json(io.BytesIO(data), options, schema) for row in batch.to_pylist()
    ]


def test_an_array_lines_and_a_single_object_read_the_same_records() -> None:
    """testReadArray / testReadOneLinePerJSON / testSingleJsonElement: the three layouts."""
    array = _rows(ACCOUNTS, schema=ACCOUNT_SCHEMA)
    assert [r["name"] for r in array] == ["John Doe", "Jane Doe"]
    assert array[0]["balance"] == 4750.89
    lines = b'{"id": 1, "name": "John Doe"}\n{"id": 2, "name": "Jane Doe"}\n'
    assert _rows(lines) == [{"id": 1, "name": "John Doe"}, {"id": 2, "name": "Jane Doe"}]
    assert _rows(b'{"id": 1,\n "name": "x"}  {"id": 2}') == [
        {"id": 1, "name": "x"},
        {"id": 2, "name": None},
    ]
    assert _rows(b'\xef\xbb\xbf[{"id": 1}]') == [{"id": 1}]  # a byte order mark is dropped
    assert _rows(b"[]") == []
    assert _rows(b"  ") == []


def test_a_record_split_across_tiny_chunks_still_parses() -> None:
    """The streaming buffer reads on until a record is complete, whatever the chunk size."""
    options = JsonReaderOptions(chunk_size=3)
    assert _rows(ACCOUNTS, options, ACCOUNT_SCHEMA) == _rows(ACCOUNTS, schema=ACCOUNT_SCHEMA)


def test_a_nested_starting_field_reads_the_array_or_object_there() -> None:
    """testStartFromNestedArray / NestedObject / SimpleFieldReturnsEmptyJson."""
    doc = b"""{"name": "x", "skip": [1, {"deep": true}],
               "data": {"accounts": [{"id": 42, "balance": 4750.89},
                                     {"id": 43, "balance": 48212.38}]}}"""
    nested = JsonReaderOptions(
        starting_field_strategy="NESTED_FIELD", starting_field_name="accounts"
    )
    assert _rows(doc, nested) == [{"id": 42, "balance": 4750.89}, {"id": 43, "balance": 48212.38}]
    single = JsonReaderOptions(starting_field_strategy="NESTED_FIELD", starting_field_name="data")
    assert len(_rows(doc, single)) == 1
    simple = JsonReaderOptions(starting_field_strategy="NESTED_FIELD", starting_field_name="name")
    assert _rows(doc, simple) == []
    with pytest.raises(ConfigurationError, match="Starting Field Name"):
        JsonReaderOptions(starting_field_strategy="NESTED_FIELD")


def test_values_are_coerced_to_the_schema() -> None:
    """testDateCoercedFromString / testTimestampCoercedFromString and numbers in text."""
    schema = s.RecordSchema.of({"d": s.DATE, "t": s.TIMESTAMP, "n": s.INT})
    options = JsonReaderOptions(
        date_format="MM/dd/yyyy", timestamp_format="yyyy-MM-dd HH:mm:ss.SSS"
    )
    (row,) = _rows(
        b'{"d": "01/02/2017", "t": "2017-01-02 03:04:05.678", "n": "12"}', options, schema
    )
    assert str(row["d"]) == "2017-01-02"
    assert row["t"].microsecond == 678000
    assert row["n"] == 12


def test_an_inferred_choice_of_arrays_reads_the_records_it_was_inferred_from() -> None:
    """Issue 35: CHOICE[ARRAY[INT], ARRAY[STRING]] and CHOICE[ARRAY[RECORD], ARRAY[INT]] read."""
    assert _rows(b'[{"a":[1,2]},{"a":["x"]}]') == [{"a": "[1,2]"}, {"a": '["x"]'}]
    assert _rows(b'[{"a":[{"b":1}]},{"a":[1]}]') == [{"a": '[{"b":1}]'}, {"a": "[1]"}]


def test_a_value_that_does_not_fit_names_record_and_field_after_the_good_records() -> None:
    """testIncorrectSchema: the message names the nested field and the value; records before it
    are delivered first."""
    schema = s.RecordSchema.of(
        {"id": s.INT, "account": s.RecordType(s.RecordSchema.of({"balance": s.DOUBLE}))}
    )
    data = b'{"id": 1, "account": {"balance": 1.5}}\n{"id": 2, "account": {"balance": true}}\n'
    batches = read_json(io.BytesIO(data), JsonReaderOptions(batch_size=1), schema)
    assert next(batches).to_pylist() == [{"id": 1, "account": {"balance": 1.5}}]
    with pytest.raises(RecordError) as caught:
        next(batches)
    error = caught.value
    assert (error.record, error.field) == (2, "account.balance")
    assert "Cannot convert value [true] of type class java.lang.Boolean to Double" in str(error)


def test_an_object_where_a_number_belongs_is_named_as_nifis_map_record() -> None:
    """A JSON object for a DOUBLE prints as NiFi's MapRecord: its JSON text, class MapRecord."""
    schema = s.RecordSchema.of({"id": s.INT, "amount": s.DOUBLE})
    data = '{"id": 1, "amount": {"value": 1.5, "unit": "€"}}'.encode()
    with pytest.raises(RecordError) as caught:
        list(read_json(io.BytesIO(data), JsonReaderOptions(), schema))
    assert caught.value.field == "amount"
    assert (
        'Cannot convert value [{"value":1.5,"unit":"€"}] of type class '
        "org.apache.nifi.serialization.record.MapRecord to Double for field amount"
    ) in str(caught.value)


def test_malformed_json_names_the_record_and_line() -> None:
    """A syntax error, a non-object record and a bad encoding each raise one RecordError."""
    with pytest.raises(RecordError, match=r"record 2 \(line 2\): not valid JSON"):
        _rows(b'{"a": 1}\n{"a": }\n{"a": 3}\n')
    with pytest.raises(RecordError, match=r"expected a JSON object but got a number$"):
        _rows(b"[1, 2]")
    with pytest.raises(RecordError, match="not UTF-8"):
        _rows(b'{"a": "\xff"}')


@settings(max_examples=25, deadline=None)
@given(schemas(depth=2).flatmap(lambda sc: records(sc).map(lambda r: (sc, r))))
def test_records_round_trip_through_the_json_writer(case: tuple[s.RecordSchema, dict]) -> None:
    """Whatever the writer writes, the reader reads back to the same values (ISO formats)."""
    schema, record = case
    batch = pa.RecordBatch.from_pylist([record], schema.to_arrow())
    out = io.BytesIO()
    from flowcore.records.json_writer import JsonWriterOptions

    formats = {
        "date_format": "yyyy-MM-dd",
        "time_format": "HH:mm:ss.SSS",
        "timestamp_format": "yyyy-MM-dd HH:mm:ss.SSS",
    }
    write_json([batch], out, JsonWriterOptions(**formats))
    back = _rows(out.getvalue(), JsonReaderOptions(**formats), schema)
    assert back == batch.to_pylist()


def test_a_50_mb_json_array_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """One ~50 MB JSON array document streams: the reader's peak RSS growth stays far below
    the document (measured in a fresh process, VmHWM)."""
    path = tmp_path / "big.json"
    row = b'{"id": %d, "name": "name number %d", "balance": %d.25, "tags": ["a", "b"]}'
    with path.open("wb") as out:
        out.write(b"[")
        for start in range(0, 600_000, 20_000):
            if start:
                out.write(b",\n")
            out.write(b",\n".join(row % (i, i, i) for i in range(start, start + 20_000)))
        out.write(b"]")
    size = path.stat().st_size
    assert size > 45_000_000
    code = textwrap.dedent(
        f"""
        import pyarrow, sys
        from flowcore.records.json_reader import read_json, JsonReaderOptions
        from flowcore.records import schema as s
        def hwm():
            for line in open("/proc/self/status"):
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) * 1024
        base = hwm()
        schema = s.RecordSchema.of({{"id": s.INT, "name": s.STRING, "balance": s.DOUBLE,
                                     "tags": s.ArrayType(s.STRING)}})
        n = 0
        with open({str(path)!r}, "rb") as f:
            for batch in read_json(f, JsonReaderOptions(), schema):
                n += batch.num_rows
        print(n, hwm() - base)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, growth = map(int, out.stdout.split())
    assert count == 600_000
    assert growth < 40_000_000, f"peak grew {growth / 1e6:.1f} MB reading {size / 1e6:.1f} MB"
    print(f"JSON array of {size / 1e6:.1f} MB: peak RSS grew {growth / 1e6:.1f} MB")


@pytest.mark.parametrize("chunk_size", [5, 1 << 20])
def test_every_layout_of_the_same_records_reads_the_same(chunk_size: int) -> None:
    """Pretty-printed, single-line (with a final newline), per-line arrays and JSON lines agree,
    whatever the chunk size (the bulk line path and the scanner hand over cleanly)."""
    rows = [{"id": i, "name": f"n{i}", "v": [i, None]} for i in range(50)]
    layouts = [
        json.dumps(rows, indent=2).encode(),
        json.dumps(rows).encode() + b"\n",
        b"[\n" + b",\n".join(json.dumps(r).encode() for r in rows) + b"\n]\n",
        b"\n".join(json.dumps(r).encode() for r in rows),
        b"  ".join(json.dumps(r, indent=1).encode() for r in rows),
    ]
    schema = s.RecordSchema.of({"id": s.INT, "name": s.STRING, "v": s.ArrayType(s.INT)})
    for data in layouts:
        assert _rows(data, JsonReaderOptions(chunk_size=chunk_size), schema) == rows


def test_a_boolean_in_an_array_of_doubles_is_refused() -> None:
    """Issue 35: [true] under ARRAY[DOUBLE] is NiFi's conversion error, not [1.0]."""
    schema = s.RecordSchema.of({"a": s.ArrayType(s.DOUBLE)})
    with pytest.raises(RecordError, match=r"Cannot convert value \[true\] .*Boolean to Double"):
        _rows(b'[{"a":[true]}]', schema=schema)


def test_a_record_that_is_not_an_object_names_its_json_type() -> None:
    """Issue 35: the message says "an array", "a string", "a boolean", "null" in JSON's words."""
    for data, kind in [
        (b"[[1]]", "an array"),
        (b'["x"]', "a string"),
        (b"[true]", "a boolean"),
        (b"[null]", "null"),
        (b"[1.5]", "a number"),
    ]:
        with pytest.raises(RecordError, match=f"expected a JSON object but got {kind}$"):
            _rows(data)


def test_timestamp_text_parses_by_column_and_odd_values_as_nifi_reads_them() -> None:
    """Timestamps and dates as text are parsed a column at a time; a batch with epoch millis,
    spaces or an invalid date (Arrow: March 1st) takes the exact path, naming the bad record."""
    schema = s.RecordSchema.of([("id", s.INT), ("at", s.TIMESTAMP), ("day", s.DATE)])
    plain = b'{"id":1,"at":"2024-02-28 10:00:00","day":"2024-02-28"}\n{"id":2,"at":null}'
    assert [r["at"] for r in _typed_rows(plain, schema)] == [dt.datetime(2024, 2, 28, 10), None]
    odd = b'{"id":1,"at":1700000000000,"day":" 2024-01-01"}\n{"id":2,"at":" 2024-02-28 10:00:00"}'
    assert _typed_rows(odd, schema) == [
        {"id": 1, "at": dt.datetime(2023, 11, 14, 22, 13, 20), "day": dt.date(2024, 1, 1)},
        {"id": 2, "at": dt.datetime(2024, 2, 28, 10), "day": None},
    ]
    bad = b'{"id":1,"at":"2024-02-28 10:00:00"}\n{"id":2,"at":"2024-02-30 10:00:00"}'
    with pytest.raises(RecordError) as error:
        _typed_rows(bad, schema)
    assert error.value.record == 2


def _typed_rows(content: bytes, schema: s.RecordSchema) -> list[dict[str, object]]:
    return [
        r
        for b in read_json(io.BytesIO(content), JsonReaderOptions(), schema)
        for r in b.to_pylist()
    ]


def test_arrays_and_objects_one_after_another_read_as_one_record_set() -> None:
    """testReadMultilineArrays / testReadMixedJSON: two arrays, or an array then objects on one
    line and over several lines, read four records in order."""
    more = ACCOUNTS.replace(b'"id": 1', b'"id": 3').replace(b'"id": 2', b'"id": 4')
    mixed = ACCOUNTS + b'\n{"id": 3, "name": "Maria Doe"}\n{\n  "id": 4,\n  "name": "Xi Doe"\n}'
    assert [r["id"] for r in _rows(ACCOUNTS + b"\n" + more, schema=ACCOUNT_SCHEMA)] == [1, 2, 3, 4]
    assert [r["name"] for r in _rows(mixed, schema=ACCOUNT_SCHEMA)] == [
        "John Doe",
        "Jane Doe",
        "Maria Doe",
        "Xi Doe",
    ]


def test_unicode_escapes_and_long_ids_read_exactly() -> None:
    """testReadUnicodeCharacters: \\u escapes decode, an 18-digit id stays an exact LONG."""
    doc = (
        b'{"created_at": "Thu Feb 16 01:19:42 +0000 2017", "id": 832036744985577473,'
        b' "unicode": "\\u3061\\u3083\\u6ce3\\u304d\\u305d\\u3046",'
        b' "from": {"id": 788946702264507903, "name": "john"}}'
    )
    origin = s.RecordType(s.RecordSchema.of({"id": s.LONG, "name": s.STRING}))
    schema = s.RecordSchema.of(
        {"created_at": s.STRING, "id": s.LONG, "unicode": s.STRING, "from": origin}
    )
    (row,) = _rows(doc, schema=schema)
    assert row["id"] == 832036744985577473
    assert row["unicode"] == "\u3061\u3083\u6ce3\u304d\u305d\u3046"
    assert row["from"] == {"id": 788946702264507903, "name": "john"}


def test_an_array_of_strings_read_as_a_string_prints_as_java() -> None:
    """testArrayOfStringsToString: an array in a STRING field reads "[first, second, third]"."""
    schema = s.RecordSchema.of({"labels": s.STRING})
    rows = _rows(b'[{"labels": ["first", "second", "third"]}]', schema=schema)
    assert rows == [{"labels": "[first, second, third]"}]


def test_a_number_read_into_a_string_field_is_its_text_and_unknown_fields_drop() -> None:
    """testReadRawRecordTypeCoercion (coerced): id 1 reads "1", fields outside the schema drop."""
    schema = s.RecordSchema.of({"id": s.STRING, "name": s.STRING})
    assert _rows(ACCOUNTS, schema=schema)[0] == {"id": "1", "name": "John Doe"}


def test_similar_records_under_a_nested_field_merge_into_one_inferred_schema() -> None:
    """testMergeOfSimilarRecords: fields from both records, a BOOLEAN/STRING field mixes."""
    doc = b"""{"dataCollection": [
        {"integer": 1, "boolean": true, "booleanOrString": true},
        {"integer": 2, "string": "stringValue2", "booleanOrString": "booleanOrStringValue2"}]}"""
    nested = JsonReaderOptions(
        starting_field_strategy="NESTED_FIELD", starting_field_name="dataCollection"
    )
    rows = _rows(doc, nested)
    assert [sorted(r) for r in rows] == [["boolean", "booleanOrString", "integer", "string"]] * 2
    assert (rows[0]["integer"], rows[0]["boolean"], rows[0]["string"]) == (1, True, None)
    assert (rows[1]["integer"], rows[1]["boolean"], rows[1]["string"]) == (2, None, "stringValue2")
    assert [r["booleanOrString"] in (True, "true") for r in rows] == [True, False]


def test_a_missing_or_deep_starting_field() -> None:
    """testStartFromNonExistentFieldWithDefinedSchema / testStartFromDeepNestedObject: a name
    not in the document reads no records; a name two levels down reads the object there."""
    doc = b"""{"rootInt": 100, "rootString": "root_string",
        "nestedLevel1Record": {"nestedLevel1Int": 110, "nestedLevel1String": "root.level1:string",
            "nestedLevel2Record": {"nestedLevel2Int": 111,
                                   "nestedLevel2String": "root.level1.level2:string"}}}"""
    missing = JsonReaderOptions(starting_field_strategy="NESTED_FIELD", starting_field_name="x")
    assert _rows(doc, missing, ACCOUNT_SCHEMA) == []
    deep = JsonReaderOptions(
        starting_field_strategy="NESTED_FIELD", starting_field_name="nestedLevel2Record"
    )
    assert _rows(doc, deep) == [
        {"nestedLevel2Int": 111, "nestedLevel2String": "root.level1.level2:string"}
    ]


def test_arrays_with_null_elements_infer_and_read() -> None:
    """testChoiceOfArrayTypesWithNullElements: arrays of records, of nulls and ints, of booleans
    and records infer a schema both records read with."""
    doc = (
        b'{"id":1,"changes":{"config": [{"db": {"host": "old"}}, {"db": {"host": "new"}}],'
        b' "status": [true, false]}}\n'
        b'{"id":2,"changes":{"config": [null, 42], "status": [null, {"code": 200}]}}\n'
    )
    first, second = _rows(doc)
    assert (first["id"], second["id"]) == (1, 2)
    # a CHOICE holds the JSON text of the option it took (see docs/records.md, Types)
    assert first["changes"] == {
        "config": '[{"db":{"host":"old"}},{"db":{"host":"new"}}]',
        "status": "[true,false]",
    }
    assert second["changes"] == {"config": "[null,42]", "status": '[null,{"code":200}]'}


_LINE_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)
_LINE = st.one_of(
    st.dictionaries(st.text(max_size=3), _LINE_VALUES, max_size=4).flatmap(
        lambda value: st.sampled_from(
            [
                json.dumps(value),
                json.dumps(value, ensure_ascii=False),
                " " + json.dumps(value, separators=(",", ":")) + " \r",
                json.dumps(value, indent=1),  # a record over several lines
            ]
        )
    ),
    st.sampled_from(["", "  ", "\x0c{}", "[1, 2]", "[{}, {}]", "7", "{", '{"a": 1}, {"b": 2}']),
)


def _records_of(content: bytes, chunk_size: int) -> list[Any]:
    """json_records' output, then its error's message as the last item, if any."""
    out: list[Any] = []
    try:
        out.extend(json_records(io.BytesIO(content), JsonReaderOptions(chunk_size=chunk_size)))
    except RecordError as exc:
        out.append(str(exc))
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINE, max_size=8), st.sampled_from([8, 64, 1 << 20]))
def test_json_lines_read_in_bulk_are_the_records_read_a_line_at_a_time(
    lines: list[str], chunk_size: int
) -> None:
    """The bulk JSON-lines path gives the per-line path's records, numbers, types and errors."""
    content = "\n".join(lines).encode()
    fast = _records_of(content, chunk_size)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_Cursor, "_whole_lines_bulk", lambda self, start: None)
        exact = _records_of(content, chunk_size)
    assert repr(fast) == repr(exact)  # repr: 1 and True, 1.0 and 1 differ


@pytest.mark.parametrize(
    "content",
    [
        b'{"a": 123456789012345678901234567890}\n{"a": 1}\n',  # JSON lines, bulk
        b'{"a": 1}\n{"a": 18446744073709551616}',  # the last line, one value
        b'[{"a": 123456789012345678901234567890},\n{"a": 2}\n]',  # an array, a record a line
    ],
)
def test_an_integer_past_64_bits_stays_exact_on_every_path(content: bytes) -> None:
    """A number past 64 bits is a BIGINT with every digit, also on the JSON-lines fast paths
    (orjson read it as a float: 1.2345678901234568e+29)."""
    batches = list(read_json(io.BytesIO(content), JsonReaderOptions()))
    values = [r["a"] for b in batches for r in b.to_pylist()]
    assert all(isinstance(v, Decimal) for v in values)
    assert max(values) in (
        Decimal("123456789012345678901234567890"),
        Decimal("18446744073709551616"),
    )


@pytest.mark.parametrize("chunk_size", [4, 1 << 20])
@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'[{"a":1},]', r"record 2 \(line 1\): not valid JSON: expected a record after ','"),
        (b'[\n{"a":1},\n]\n', r"record 2 \(line 3\): not valid JSON: expected a record after"),
        (b'[\n{"a":1},\n{"a":2},\n]', r"record 3 \(line 4\): not valid JSON: expected a record"),
        (b'{"a":1}\n[{"a":2},]\n', r"record 3 \(line 2\): not valid JSON"),
        (b'{"a":1}\n{"a":NaN}\n', r"record 2 \(line 2\): not valid JSON: non-standard token 'NaN'"),
        (b'[{"a":-Infinity}]', r"record 1 \(line 1\): not valid JSON: non-standard token"),
        (b'{"a":1}\n\x0c{"a":2}\n', r"record 2 \(line 2\): not valid JSON"),
        (b'{"a":1}\x0b\n{"a":2}\n', r"record 2 \(line 1\): not valid JSON"),
        (b'[\n{"a":1},\xc2\xa0\n{"a":2}\n]', r"record 2 \(line 2\): not valid JSON"),
    ],
)
def test_json_jackson_refuses_is_refused_naming_the_record(
    content: bytes, reason: str, chunk_size: int
) -> None:
    """A trailing comma in an array, NaN/Infinity and non-JSON whitespace (form feed, NBSP)
    are errors naming the record and line, as NiFi's Jackson parser refuses them."""
    with pytest.raises(RecordError, match=reason):
        list(json_records(io.BytesIO(content), JsonReaderOptions(chunk_size=chunk_size)))


def _refuse_constant(token: str) -> Any:
    raise ValueError(token)


_STRICT = json.JSONDecoder(parse_constant=_refuse_constant)
_JSON_SPACE = re.compile(r"[ \t\r\n]*")


def _strict_records(text: str) -> list[Any] | None:
    """The records of *text* by the standard library's scanner, strict (no NaN): its JSON
    values one after another, an array's elements in turn; None when it refuses the text or a
    record is not an object."""
    text = text.removeprefix("\ufeff")
    out: list[Any] = []
    pos = _JSON_SPACE.match(text).end()  # type: ignore[union-attr]
    while pos < len(text):
        try:
            value, pos = _STRICT.raw_decode(text, pos)
        except ValueError:
            return None
        out.extend(value if isinstance(value, list) else [value])
        pos = _JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
    return out if all(isinstance(value, dict) for value in out) else None


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=6,
)
_RECORDS = st.lists(st.dictionaries(st.sampled_from("abcd"), _VALUES, max_size=3), max_size=5)
#: What a hand-made or damaged JSON file holds where it goes wrong.
_DAMAGE = [",", ", ", "]", "[", "{", "}", ":", "\n", " ", "\x0c", "\xa0", "NaN", '"', "\\", "1"]


@st.composite
def _json_texts(draw: st.DrawFn) -> str:
    """Records as an array (one line, a record a line, pretty) or JSON lines, maybe damaged."""
    rows = draw(_RECORDS)
    ascii_only = draw(st.booleans())
    dumps = [json.dumps(row, ensure_ascii=ascii_only) for row in rows]
    layout = draw(st.sampled_from(["array", "per-line", "pretty", "lines"]))
    if layout == "array":
        text = "[" + ",".join(dumps) + "]"
    elif layout == "per-line":
        text = "[\n" + ",\n".join(dumps) + "\n]\n"
    elif layout == "pretty":
        text = json.dumps(rows, indent=2, ensure_ascii=ascii_only)
    else:
        text = "\n".join(dumps) + draw(st.sampled_from(["", "\n"]))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()) and at < len(text):
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + draw(st.sampled_from(_DAMAGE)) + text[at:]
    return text


@settings(max_examples=300, deadline=None)
@given(_json_texts(), st.sampled_from([3, 16, 1 << 20]))
def test_the_reader_accepts_exactly_what_strict_json_accepts(text: str, chunk_size: int) -> None:
    """Differential: text the reader accepts, the standard library's strict scanner accepts as
    the same records (arrays and JSON lines, damaged or not), and the other way round."""
    options = JsonReaderOptions(chunk_size=chunk_size)
    try:
        got = [value for _, _, value in json_records(io.BytesIO(text.encode()), options)]
    except RecordError:
        got = None
    assert got == _strict_records(text)


@given(
    st.lists(st.sampled_from(["1", "12345678", "x", '"', "\n", "é", "٣", " "]), max_size=3000),
    st.integers(0, 30),
)
@settings(max_examples=60, deadline=None)
def test_the_long_number_check_finds_nineteen_ascii_digits_in_short_and_long_text(
    pieces: list[str], digits: int
) -> None:
    """The buffer-wide check (bytes mapped to digit or not) answers as the regex does on
    short text: nineteen ASCII digits in a row, wherever the text is cut."""
    text = "".join(pieces) + "7" * digits + "".join(pieces[:50])
    long = text * (4096 // max(len(text), 1) + 1)  # past the regex's length: the byte map
    for checked in (text, long):
        expected = re.search(r"[0-9]{19}", checked) is not None
        assert json_reader._long_number(checked) == expected


def test_a_timestamp_format_with_micros_keeps_them() -> None:
    """A Timestamp Format of SSSSSS reads microseconds into the record, inferred or given."""
    content = b'{"t":"2024-02-06 11:51:28.351567"}\n{"t":"1969-12-31 23:59:59.000001"}'
    options = JsonReaderOptions(timestamp_format="yyyy-MM-dd HH:mm:ss.SSSSSS")
    expected = [
        dt.datetime(2024, 2, 6, 11, 51, 28, 351567),
        dt.datetime(1969, 12, 31, 23, 59, 59, 1),
    ]
    for schema in (None, s.RecordSchema.of({"t": s.TIMESTAMP})):
        batches = list(read_json(io.BytesIO(content), options, schema))
        assert batches[0].schema.field("t").type == pa.timestamp("us")
        assert [r["t"] for b in batches for r in b.to_pylist()] == expected
