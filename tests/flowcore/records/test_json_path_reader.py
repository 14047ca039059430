"""Tests for the JsonPathReader codec (cases after NiFi's TestJsonPathRowRecordReader)."""

from __future__ import annotations

import io

import pytest

from flowcore.errors import RecordError
from flowcore.records import schema as s
from flowcore.records.json_path_reader import JsonPathReaderOptions, read_json_path
from processors.record_services.json_path import _Path

FIELDS = ("id", "name", "balance", "address", "city", "state", "zipCode", "country")
PATHS = {name: _Path(f"$.{name}") for name in FIELDS}
DEFAULT = {
    "id": s.INT,
    "name": s.STRING,
    "balance": s.DOUBLE,
    "address": s.STRING,
    "city": s.STRING,
    "state": s.STRING,
    "zipCode": s.STRING,
    "country": s.STRING,
}
JOHN = b"""{"id": 1, "name": "John Doe", "balance": 4750.89, "address": "123 My Street",
 "city": "My City", "state": "MS", "zipCode": "11111", "country": "USA"}"""
JANE = b"""{"id": 2, "name": "Jane Doe", "balance": 4820.09, "address": "321 Your Street",
 "city": "Your City", "state": "NY", "zipCode": "33333", "country": "USA"}"""
JOHN_VALUES = [1, "John Doe", 4750.89, "123 My Street", "My City", "MS", "11111", "USA"]
JANE_VALUES = [2, "Jane Doe", 4820.09, "321 Your Street", "Your City", "NY", "33333", "USA"]
NESTED_HEAD = b"""{"id": 1, "name": "John Doe", "address": "123 My Street", "city": "My City",
 "state": "MS", "zipCode": "11111", "country": "USA", """
ACCOUNT = s.RecordType(s.RecordSchema.of({"id": s.INT, "balance": s.DOUBLE}))


def _values(data: bytes, paths=PATHS, schema=None, options=JsonPathReaderOptions()) -> list:  # noqa: B008
    schema = schema if schema is not None else s.RecordSchema.of(DEFAULT)
    return [
        list(row.values())
        for batch in read_json_path(io.BytesIO(data), paths, options, schema)
        for row in batch.to_pylist()
    ]


def test_read_array() -> None:
    """testReadArray: each element of an array is a record."""
    assert _values(b"[" + JOHN + b",\n" + JANE + b"]") == [JOHN_VALUES, JANE_VALUES]


def test_read_one_line() -> None:
    """testReadOneLine: one object per line."""
    one_line = JOHN.replace(b"\n", b"") + b"\n" + JANE.replace(b"\n", b"")
    assert _values(one_line) == [JOHN_VALUES, JANE_VALUES]


def test_single_json_element() -> None:
    """testSingleJsonElement: one object is one record."""
    assert _values(JOHN) == [JOHN_VALUES]


def test_element_with_nested_data() -> None:
    """testElementWithNestedData: an object found by a path becomes a RECORD."""
    schema = s.RecordSchema.of({**DEFAULT, "account": ACCOUNT})
    paths = {**PATHS, "account": _Path("$.account")}
    data = NESTED_HEAD + b'"account": {"id": 42, "balance": 4750.89}}'
    (row,) = _values(data, paths, schema)
    assert row[:-1] == [1, "John Doe", None, "123 My Street", "My City", "MS", "11111", "USA"]
    assert row[-1] == {"id": 42, "balance": 4750.89}


def test_element_with_nested_array() -> None:
    """testElementWithNestedArray: an array of objects becomes an ARRAY of RECORDs."""
    schema = s.RecordSchema.of({**DEFAULT, "accounts": s.ArrayType(ACCOUNT)})
    paths = {**PATHS, "accounts": _Path("$.accounts")}
    data = NESTED_HEAD + (
        b'"accounts": [{"id": 42, "balance": 4750.89}, {"id": 43, "balance": 48212.38}]}'
    )
    (row,) = _values(data, paths, schema)
    assert row[2] is None
    assert row[-1] == [{"id": 42, "balance": 4750.89}, {"id": 43, "balance": 48212.38}]


DIFFERENT = b"""[
 {"id": 1, "name": "John Doe", "balance": 4750.89, "address": "123 My Street",
  "city": "My City", "state": "MS", "zipCode": "11111", "country": "USA"},
 {"id": 2, "name": "Jane Doe", "balance": 4820.09, "address": "321 Your Street",
  "city": "Your City", "state": "NY", "zipCode": "33333"},
 {"id": 3, "name": "Jake Doe", "balance": 4751.89, "address": "124 My Street",
  "address2": "Apt. #12", "city": "My City", "state": "MS", "zipCode": "11111",
  "country": "USA"}
]"""


def test_read_array_different_schemas() -> None:
    """testReadArrayDifferentSchemas: a path that finds nothing gives null."""
    assert _values(DIFFERENT) == [
        JOHN_VALUES,
        [2, "Jane Doe", 4820.09, "321 Your Street", "Your City", "NY", "33333", None],
        [3, "Jake Doe", 4751.89, "124 My Street", "My City", "MS", "11111", "USA"],
    ]


def test_read_array_different_schemas_with_override() -> None:
    """testReadArrayDifferentSchemasWithOverride: an extra path field, null where absent."""
    schema = s.RecordSchema.of({**DEFAULT, "address2": s.STRING})
    paths = {**PATHS, "address2": _Path("$.address2")}
    rows = _values(DIFFERENT, paths, schema)
    assert rows[0][-1] is None
    assert rows[1][-2:] == [None, None]
    assert rows[2][-1] == "Apt. #12"


def test_primitive_type_arrays() -> None:
    """testPrimitiveTypeArrays: an array of numbers becomes an ARRAY of INT."""
    schema = s.RecordSchema.of({**DEFAULT, "accountIds": s.ArrayType(s.INT)})
    paths = {**PATHS, "accountIds": _Path("$.accountIds")}
    data = JOHN[:-1] + b', "accountIds": [1, 2, 3]}'
    (row,) = _values(data, paths, schema)
    assert row[-1] == [1, 2, 3]


def test_values_are_coerced_and_paths_reach_anywhere() -> None:
    """NiFi's convertType: text to numbers; a deep path fills a top-level field."""
    schema = s.RecordSchema.of({"n": s.LONG, "deep": s.STRING, "first": s.DOUBLE})
    paths = {
        "n": _Path("$.n"),
        "deep": _Path("$.a.b.c"),
        "first": _Path("$.xs[0]"),
        "dropped": _Path("$.n"),
    }
    data = b'{"n": "12", "a": {"b": {"c": "x"}}, "xs": [1.5, 2]}'
    assert _values(data, paths, schema) == [[12, "x", 1.5]]


def test_a_missing_value_takes_the_field_default() -> None:
    """NiFi's convert of a null: the schema field's default value."""
    schema = s.RecordSchema([s.RecordField("n", s.INT, default=7)])
    assert _values(b'{"m": 1}', {"n": _Path("$.n")}, schema) == [[7]]


def test_inferred_schema_is_the_whole_records() -> None:
    """NiFi infers from the JSON records: their fields, extracted ones filled by the paths."""
    paths = {"name": _Path("$.name"), "id": _Path("$.id")}
    batches = list(read_json_path(io.BytesIO(b"[" + JOHN + b"," + JANE + b"]"), paths))
    assert batches[0].schema.names == list(FIELDS)
    rows = batches[0].to_pylist()
    assert rows[1]["name"] == "Jane Doe"
    assert rows[1]["id"] == 2
    assert rows[1]["city"] is None  # no path extracts it


def test_a_value_that_does_not_fit_names_the_record_and_field() -> None:
    """A path value the schema's type refuses: a RecordError naming record and field."""
    schema = s.RecordSchema.of({"n": s.INT})
    data = b'{"n": 1}\n{"n": "abc"}'
    with pytest.raises(RecordError, match=r"record 2.*'n'"):
        _values(data, {"n": _Path("$.n")}, schema)
