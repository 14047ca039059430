"""Tests for turning parsed records into bounded Arrow batches."""

from __future__ import annotations

import pytest

from flowcore.errors import RecordError
from flowcore.records import schema as s
from flowcore.records._batches import batches_of
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
