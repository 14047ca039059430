"""Tests for schema inference with NiFi's rules (cases ported from NiFi's TestFieldTypeInference,
TestJsonSchemaInference and TestCSVSchemaInference)."""

from __future__ import annotations

import itertools

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.records import schema as s
from flowcore.records.inference import (
    FieldTypeInference,
    _infer_records_exact,
    infer_record_schema,
    infer_text_schema,
    infer_text_type,
)
from flowcore.records.values import TemporalFormats


def _infer(types: list[s.DataType]) -> s.DataType:
    inference = FieldTypeInference()
    for dtype in types:
        inference.add(dtype)
    return inference.to_type()


def _record(**fields: s.DataType) -> s.RecordType:
    return s.RecordType(s.RecordSchema.of(fields))


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        ([s.INT, s.DOUBLE], s.DOUBLE),  # testIntegerCombinedWithDouble
        ([s.INT, s.FLOAT], s.FLOAT),  # testIntegerCombinedWithFloat
        ([s.SHORT, s.INT, s.LONG], s.LONG),  # SHORT_INT_LONG -> LONG
        ([s.INT, s.STRING], s.ChoiceType([s.INT, s.STRING])),
        ([s.INT, s.FLOAT, s.STRING], s.ChoiceType([s.FLOAT, s.STRING])),
        (  # testToDataTypeWhenDecimal
            [
                s.DecimalType(10, 1),
                s.DecimalType(10, 3),
                s.DecimalType(7, 3),
                s.DecimalType(7, 5),
                s.DecimalType(7, 7),
                s.FLOAT,
                s.DOUBLE,
            ],
            s.DecimalType(10, 7),
        ),
        (  # testToDataTypeWithMultipleRecord
            [_record(f=s.INT), _record(f=s.FLOAT), _record(f=s.STRING), _record(f=s.FLOAT)],
            _record(f=s.ChoiceType([s.FLOAT, s.STRING])),
        ),
        (  # testToDataTypeWithMultipleComplexRecord
            [_record(a=s.INT, b=s.STRING), _record(a=s.INT, c=s.BOOLEAN)],
            _record(a=s.INT, b=s.STRING, c=s.BOOLEAN),
        ),
    ],
)
def test_field_types_merge_in_any_order_as_nifis_field_type_inference(
    types: list[s.DataType], expected: s.DataType
) -> None:
    """Every order of the same types infers NiFi's type (records: fields in first-seen order)."""
    orders = (
        [types]
        if any(isinstance(t, s.RecordType) for t in types)
        else itertools.permutations(types)
    )
    for order in orders:
        assert _infer(list(order)) == expected, order


def test_json_values_infer_nifis_types() -> None:
    """Integers by size, fractions as DOUBLE, text by the formats, nested records and arrays."""
    temporal = TemporalFormats("yyyy-MM-dd", "HH:mm:ss", "yyyy-MM-dd HH:mm:ss")
    schema = infer_record_schema(
        [
            {"i": 1, "l": 2**40, "b": 2**70, "d": 1.5, "t": True, "s": "x", "n": None},
            {"date": "2017-01-01", "time": "17:00:00", "ts": "2017-01-01 17:00:00", "e": []},
            {"r": {"a": 1}, "arr": [1, 2.5], "i": 3},
            {"r": {"b": "y"}, "e": ["z"]},
        ],
        temporal,
    )
    assert {f.name: f.type for f in schema} == {
        "i": s.INT,
        "l": s.LONG,
        "b": s.BIGINT,
        "d": s.DOUBLE,
        "t": s.BOOLEAN,
        "s": s.STRING,
        "n": s.STRING,
        "date": s.DATE,
        "time": s.TIME,
        "ts": s.TIMESTAMP,
        "e": s.ArrayType(s.STRING),
        "r": _record(a=s.INT, b=s.STRING),
        "arr": s.ArrayType(s.DOUBLE),
    }
    assert all(f.nullable for f in schema)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", None),
        ("1019405", s.INT),
        ("1546873167817", s.LONG),
        ("1.5", s.FLOAT),
        ("-1.5", s.DOUBLE),  # NiFi compares with Float.MIN_VALUE, the smallest positive float
        ("1e400.5", s.STRING),
        ("True", s.BOOLEAN),
        ("       16", s.STRING),
        ("99999999999999999999", s.STRING),
    ],
)
def test_csv_text_infers_nifis_types(text: str, expected: s.DataType | None) -> None:
    """SchemaInferenceUtil.getDataType's rules, quirks included."""
    assert infer_text_type(text) == expected


def test_csv_columns_infer_as_nifis_prov_events_case() -> None:
    """TestCSVSchemaInference.testInferenceIncludesAllRecords: temporal types by the formats, a
    CHOICE when text mixes."""
    temporal = TemporalFormats("yyyy-MM-dd", "HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
    names = [
        "eventOrdinal",
        "timestampMillis",
        "timestamp",
        "eventTime",
        "maybeTime",
        "maybeDate",
        "parentIds",
    ]
    rows = [
        [
            "1019405",
            "1546873167817",
            "2019-01-07T14:59:27.817Z",
            "14:59:27",
            "14:59:27",
            "2019-01-07",
            None,
        ],
        [
            "1019406",
            "1546873167817",
            '"2019-01-07T14:59:27.817Z"',
            "14:59:27",
            "hello",
            "2019-04-07",
            "5",
        ],
    ]
    schema = infer_text_schema(names, rows, temporal)
    assert [f.type for f in schema] == [
        s.INT,
        s.LONG,
        s.TIMESTAMP,
        s.TIME,
        s.ChoiceType([s.TIME, s.STRING]),
        s.DATE,
        s.INT,
    ]


def _nested_test_array(records: list[dict]) -> s.DataType:
    """The inferred type of test_record.array_test_record.test_array in *records*."""
    schema = infer_record_schema(records)
    (record,) = schema.fields
    assert isinstance(record.type, s.RecordType)
    (child,) = record.type.schema.fields
    assert isinstance(child.type, s.RecordType)
    (array,) = child.type.schema.fields
    return array.type


def test_nested_choice_of_array_types() -> None:
    """TestJsonSchemaInference.testNestedChoiceOfArrayTypes: an array of records and an array of
    strings at the same nested field give a CHOICE of the two arrays."""
    records = [
        {"test_record": {"array_test_record": {"test_array": [{"greeting": "hello"}]}}},
        {"test_record": {"array_test_record": {"test_array": ["test"]}}},
    ]
    greeting = s.RecordType(s.RecordSchema.of({"greeting": s.STRING}))
    assert _nested_test_array(records) == s.ChoiceType(
        (s.ArrayType(greeting), s.ArrayType(s.STRING))
    )


def test_nested_choice_of_empty_or_string_array() -> None:
    """TestJsonSchemaInference.testNestedChoiceOfEmptyOrStringArray: an empty array merges into
    the array of strings, no CHOICE."""
    records = [
        {"test_record": {"array_test_record": {"test_array": []}}},
        {"test_record": {"array_test_record": {"test_array": ["test"]}}},
    ]
    assert _nested_test_array(records) == s.ArrayType(s.STRING)


def test_nested_array_of_records_and_empty_arrays() -> None:
    """TestJsonSchemaInference.testNestedArrayOfRecords / testEmptyArrays: an empty array then
    one of records infers ARRAY[RECORD]; arrays only ever empty are stored as strings."""
    records = [
        {"data": {"items": [{"itemId": "10", "itemSchedules": []}]}},
        {"data": {"items": [{"itemId": "20", "itemSchedules": [{"scheduleItem": "10"}]}]}},
    ]
    schema = infer_record_schema(records)
    data = schema.fields[0].type
    assert isinstance(data, s.RecordType)
    items = data.schema.fields[0].type
    assert isinstance(items, s.ArrayType)
    assert isinstance(items.element, s.RecordType)
    schedules = items.element.schema.fields[1].type
    assert schedules == s.ArrayType(s.RecordType(s.RecordSchema.of({"scheduleItem": s.STRING})))
    empty = infer_record_schema([{"items": [{"itemData": [], "test": 1}]}])
    assert empty.to_arrow().field("items").type.value_type.field("itemData").type == pa.list_(
        pa.string()
    )


_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**65), 2**65)
    | st.integers(-3, 3)
    | st.floats(allow_nan=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=6,
)


#: Whole numbers at the edges of INT and LONG (and a few nulls among them).
_EDGES = st.none() | st.sampled_from([0, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63, 2**64])


@st.composite
def _record_sets(draw: st.DrawFn) -> list[dict[str, object]]:
    """Records mostly with one field order (the column-wise path), sometimes not."""
    names = draw(st.lists(st.sampled_from(["a", "b", "ü", "c"]), unique=True, max_size=4))
    kinds = {name: draw(st.sampled_from([_VALUES, _EDGES])) for name in names}
    records = draw(st.lists(st.fixed_dictionaries({n: kinds[n] for n in names}), max_size=6))
    if draw(st.booleans()) and records:
        records[-1] = dict(reversed(records[-1].items()))
    return records


@settings(max_examples=300, deadline=None)
@given(_record_sets(), st.sampled_from([TemporalFormats(), TemporalFormats("yyyy-MM-dd")]))
def test_column_wise_inference_gives_the_record_by_record_schema(
    records: list[dict[str, object]], temporal: TemporalFormats
) -> None:
    """Types, nulls, booleans vs numbers, int ranges and nesting infer as the exact walk does."""
    assert infer_record_schema(records, temporal) == _infer_records_exact(records, temporal)
