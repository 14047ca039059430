"""Tests for turning parsed records into bounded Arrow batches."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import RecordError
from flowcore.records import schema as s
from flowcore.records._batches import _bool_finder, batches_of
from flowcore.records.values import TemporalFormats


def _parsed(values: list[object]) -> list[tuple[int, None, object]]:
    return [(i, None, v) for i, v in enumerate(values, start=1)]


def test_batches_are_bounded_and_a_schema_is_inferred_from_a_sample() -> None:
    """batch_size rows per batch; with no schema the sample infers it."""
    batches = list(batches_of(_parsed([{"a": i} for i in range(5)]), None, TemporalFormats(), 2, 3))
    assert [b.num_rows for b in batches] == [2, 2, 1]
    assert s.RecordSchema.from_arrow(batches[0].schema) == s.RecordSchema.of({"a": s.INT})


def test_records_before_a_bad_one_come_first_then_its_error() -> None:
    """A record that does not fit: the good ones of its batch, then a RecordError naming it."""
    schema = s.RecordSchema.of({"a": s.DOUBLE})
    source = batches_of(
        _parsed([{"a": 1.5}, {"a": 2}, {"a": True}]), schema, TemporalFormats(), 10, 10
    )
    assert next(source).to_pylist() == [{"a": 1.5}, {"a": 2.0}]
    with pytest.raises(RecordError, match="record 3, field 'a': Cannot convert value \\[true\\]"):
        next(source)


def test_a_boolean_in_a_double_array_or_nested_record_is_refused_not_read_as_one() -> None:
    """NiFi refuses true as a Double inside arrays and arrays of records; Arrow would read 1.0."""
    arrays = s.RecordSchema.of({"a": s.ArrayType(s.DOUBLE)})
    with pytest.raises(RecordError, match=r"java\.lang\.Boolean to Double"):
        list(batches_of(_parsed([{"a": [1.5, True]}]), arrays, TemporalFormats(), 10, 10))
    inner = s.RecordType(s.RecordSchema.of({"x": s.DOUBLE}))
    nested = s.RecordSchema.of({"a": s.ArrayType(s.ArrayType(inner))})
    with pytest.raises(RecordError, match=r"java\.lang\.Boolean to Double"):
        list(batches_of(_parsed([{"a": [[{"x": False}]]}]), nested, TemporalFormats(), 10, 10))
    (batch,) = batches_of(_parsed([{"a": [1, 2.5]}]), arrays, TemporalFormats(), 10, 10)
    assert batch.to_pylist() == [{"a": [1.0, 2.5]}]


_KEYS = st.sampled_from(["a", "b", "é"])
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)
_TYPES = st.recursive(
    st.sampled_from([s.DOUBLE, s.FLOAT, s.INT, s.STRING, s.BOOLEAN]),
    lambda inner: (
        st.builds(s.ArrayType, inner)
        | st.builds(s.MapType, inner)
        | st.dictionaries(_KEYS, inner, min_size=1, max_size=3).map(
            lambda fields: s.RecordType(s.RecordSchema.of(fields))
        )
    ),
    max_leaves=6,
)


def _exact_bool_finder(dtype: s.DataType) -> Callable[[Any], bool] | None:
    """The per-value walk the column-wise finder replaced: the reference it must agree with."""
    if dtype.name in ("float", "double"):
        return lambda value: value is True or value is False
    if isinstance(dtype, s.RecordType):
        checks = [
            (field.name, check)
            for field in dtype.schema.fields
            if (check := _exact_bool_finder(field.type)) is not None
        ]
        if not checks:
            return None
        return lambda value: (
            isinstance(value, dict) and any(check(value.get(name)) for name, check in checks)
        )
    if isinstance(dtype, s.ArrayType) and dtype.element is not None:
        element = _exact_bool_finder(dtype.element)
        if element is None:
            return None
        return lambda value: isinstance(value, list) and any(element(v) for v in value)
    if isinstance(dtype, s.MapType):
        entry = _exact_bool_finder(dtype.value)
        if entry is None:
            return None
        return lambda value: isinstance(value, dict) and any(entry(v) for v in value.values())
    return None


@settings(max_examples=300, deadline=None)
@given(_TYPES, st.lists(_JSON, max_size=6))
def test_the_column_wise_float_boolean_test_agrees_with_the_per_value_walk(
    dtype: s.DataType, values: list[Any]
) -> None:
    """Same verdict as walking each value: booleans vs numbers (1 == True), nesting, nulls."""
    fast, exact = _bool_finder(dtype), _exact_bool_finder(dtype)
    assert (fast is None) == (exact is None)
    if fast is not None and exact is not None:
        assert fast(values) == any(exact(value) for value in values)


def test_a_fraction_after_the_inference_sample_is_refused_not_truncated() -> None:
    """docs/records.md's promise: a record past the sample that does not fit the inferred type
    is a RecordError naming it; Arrow would truncate 1.5 into the inferred INT column."""
    ints = [{"a": 1}, {"a": 2}, {"a": 3}]
    source = batches_of(_parsed([*ints, {"a": 1.5}]), None, TemporalFormats(), 10, 3)
    with pytest.raises(RecordError, match=r"record 4, field 'a': .*inference sample"):
        list(source)
    later = batches_of(_parsed([*ints, {"a": 4}, {"a": 1.5}]), None, TemporalFormats(), 2, 2)
    assert next(later).to_pylist() == [{"a": 1}, {"a": 2}]  # the sample's batch
    with pytest.raises(RecordError, match=r"record 5, field 'a'"):
        list(later)
    nested = [{"a": [{"b": 1}]}] * 3 + [{"a": [{"b": 2.0}]}]
    with pytest.raises(RecordError, match=r"record 4, field 'a.b'"):
        list(batches_of(_parsed(nested), None, TemporalFormats(), 10, 3))
    explicit = batches_of(
        _parsed([*ints, {"a": 1.5}]), s.RecordSchema.of({"a": s.INT}), TemporalFormats(), 10, 3
    )
    assert [r["a"] for b in explicit for r in b.to_pylist()] == [1, 2, 3, 1]  # NiFi's toInteger
