"""Tests for batch columns: values, cuts, takes, concatenation, masks and the stored form."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from flowcore.flowfile_batch.columns import (
    IntColumn,
    TextColumn,
    column_from_wire,
    column_of,
    concat_columns,
    constant_column,
)

_VALUES = st.lists(
    st.one_of(st.none(), st.sampled_from(["a", "b", "", "007"]), st.integers(-9, 9).map(str)),
    max_size=30,
)


@given(_VALUES)
def test_a_column_holds_the_values_it_was_made_of(values: list) -> None:
    """column_of keeps every value (None: absent); canonical whole numbers become ints."""
    column = column_of(values)
    assert column.values() == values
    assert [column.value(i) for i in range(len(values))] == values
    if values and all(
        v is not None and v.lstrip("-").isdigit() and v == str(int(v)) for v in values
    ):
        assert isinstance(column, IntColumn)


@given(_VALUES, st.data())
def test_cut_take_and_wire_keep_the_values(values: list, data: st.DataObject) -> None:
    """A cut, a take by index and a stored-and-read column give the same values."""
    column = column_of(values)
    start = data.draw(st.integers(0, len(values)))
    stop = data.draw(st.integers(start, len(values)))
    assert column.cut(start, stop).values() == values[start:stop]
    picks = data.draw(st.lists(st.integers(0, max(0, len(values) - 1)), max_size=10))
    if values:
        assert column.take(np.array(picks, dtype=np.int64)).values() == [values[i] for i in picks]
    assert column_from_wire(column.to_wire()).values() == values


@given(st.lists(_VALUES, min_size=1, max_size=4))
def test_concatenated_columns_hold_each_value_in_order(parts: list) -> None:
    """Columns of any kinds concatenate into one with every value in order."""
    joined = concat_columns([column_of(p) for p in parts])
    assert joined.values() == [v for p in parts for v in p]


@given(_VALUES, _VALUES)
def test_equals_compares_values_across_kinds_and_dictionaries(left: list, right: list) -> None:
    """equals is per FlowFile, whatever the columns' kinds or dictionaries."""
    size = min(len(left), len(right))
    left, right = left[:size], right[:size]
    mask = column_of(left).equals(column_of(right))
    assert mask.tolist() == [a == b for a, b in zip(left, right, strict=True)]


def test_encoded_gives_codes_into_distinct_values() -> None:
    """An int column encodes to its distinct values' texts; a constant to one value."""
    codes, values = IntColumn(np.array([5, 3, 5])).encoded()
    assert [values[c] for c in codes] == ["5", "3", "5"]
    assert constant_column("x", 3).values() == ["x", "x", "x"]
    assert TextColumn(np.array([1, 0]), ("a", None)).values() == [None, "a"]


@given(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), max_size=6), st.integers(0, 40))
def test_whole_numbers_are_stored_exactly_in_steps_or_bytes(numbers: list, repeat: int) -> None:
    """A stored int column reads back the same numbers, equal steps (kept as first, step,
    count) and overflowing steps included."""
    for values in (
        numbers,
        numbers[:1] * repeat,
        [numbers[0] + i for i in range(repeat)] if numbers and numbers[0] < (1 << 62) else [],
    ):
        column = IntColumn(np.array(values, dtype=np.int64))
        assert column_from_wire(column.to_wire()).numbers.tolist() == values


def test_a_cut_of_distinct_values_is_stored_with_only_its_own() -> None:
    """A cut of a column of many distinct values stores only the values its rows use."""
    column = column_of([f"name-{n}" for n in range(1000)]).cut(10, 13)
    wire = column.to_wire()
    assert wire[2] == ["name-10", "name-11", "name-12"]
    assert column_from_wire(wire).values() == ["name-10", "name-11", "name-12"]
    assert IntColumn(np.arange(5, 50, 5)).to_wire() == ["r", 5, 5, 9]
