"""Tests for LookupRecord's column path (processors/_lookup_columns.py)."""

from __future__ import annotations

import datetime

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.records.schema import (
    BOOLEAN,
    BYTE,
    DOUBLE,
    INT,
    LONG,
    SHORT,
    TIMESTAMP,
    DataType,
    RecordField,
    RecordSchema,
    arrow_type,
)
from flowcore.records.values import TemporalFormats, coerce, decoder
from processors._lookup_columns import _converted, conform
from processors._lookup_records import with_text

#: Each NiFi type the column path widens to a CHOICE with STRING, with values of it.
_VALUES: dict[DataType, st.SearchStrategy[object]] = {
    BYTE: st.integers(-(2**7), 2**7 - 1),
    SHORT: st.integers(-(2**15), 2**15 - 1),
    INT: st.integers(-(2**31), 2**31 - 1),
    LONG: st.integers(-(2**63), 2**63 - 1),
    BOOLEAN: st.booleans(),
    DOUBLE: st.floats(allow_nan=True, allow_infinity=True),
}


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(list(_VALUES)))
def test_a_column_widened_to_a_choice_holds_each_values_json_text(
    data: st.DataObject, dtype: DataType
) -> None:
    """A column widened to CHOICE[X, STRING] holds, for every value, the JSON text coerce()
    gives it (the cast and the once-per-distinct-value paths agree with it)."""
    values = data.draw(st.lists(st.none() | _VALUES[dtype], max_size=30))
    column = pa.array(values, arrow_type(dtype))
    want = with_text(dtype)
    decode = decoder(dtype)
    expected = [
        None if v is None else coerce(decode(v), want, TemporalFormats(), "")
        for v in column.to_pylist()
    ]
    assert _converted(column, dtype, want).to_pylist() == expected
    texts = pa.array([None if v is None else str(v) for v in values], pa.string())
    answers = [
        None if v is None else coerce(v, want, TemporalFormats(), "") for v in texts.to_pylist()
    ]
    assert _converted(texts, with_text(dtype).options[-1], want).to_pylist() == answers


def test_an_integer_column_into_a_timestamp_is_epoch_millis() -> None:
    """An integer column conformed to a TIMESTAMP field is epoch milliseconds, as NiFi reads
    a number as a timestamp (not Arrow's microseconds)."""
    batch = pa.record_batch({"t": pa.array([1_700_000_000_123, None], pa.int64())})
    out = conform(batch, RecordSchema((RecordField("t", TIMESTAMP),)))
    assert out.column(0).to_pylist() == [
        datetime.datetime(2023, 11, 14, 22, 13, 20, 123000),
        None,
    ]
