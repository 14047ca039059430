"""Tests for the CSV reader's column cleaning and byte-level value ends (_csv_values)."""

from __future__ import annotations

import attrs
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.records import _csv_inference, _csv_values
from flowcore.records.csv_reader import CsvReaderOptions
from flowcore.records.schema import DOUBLE, INT, LONG, RecordField
from flowcore.records.values import TemporalFormats


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


def test_an_integral_column_refuses_hex_as_parse_int_does() -> None:
    """Arrow's cast reads 0x10 as 16; NiFi's Integer.parseInt refuses it, so the column goes
    value by value and names the hex value, alone or beside plain numbers; parseInt's '+'
    sign is taken."""
    for kind in (INT, LONG):
        field = RecordField("a", kind)
        for values in (["0x10"], ["2", "0X1f"]):
            with pytest.raises(_csv_values.BadValue) as caught:
                _csv_values.column(pa.array(values), field, TemporalFormats())
            assert (caught.value.row, caught.value.field) == (len(values) - 1, "a")
        plain = _csv_values.column(pa.array(["+1", "-2", None]), field, TemporalFormats())
        assert plain.to_pylist() == [1, -2, None]


def test_a_double_column_takes_only_javas_nan_and_infinity() -> None:
    """Arrow's cast reads inf and nan; NiFi's Double.parseDouble refuses them whatever the
    neighbouring values (it reads NaN, signed Infinity and too large numbers as infinite)."""
    field = RecordField("d", DOUBLE)
    for values in (["inf"], ["1.5", "nan"], ["1.5d", "INF"]):
        with pytest.raises(_csv_values.BadValue) as caught:
            _csv_values.column(pa.array(values), field, TemporalFormats())
        assert (caught.value.row, caught.value.field) == (len(values) - 1, "d")
    taken = _csv_values.column(
        pa.array(["NaN", "-Infinity", "+Infinity", "1e400", "2", None]), field, TemporalFormats()
    )
    got = taken.to_pylist()
    assert got[0] != got[0]
    assert got[1:] == [float("-inf"), float("inf"), float("inf"), 2.0, None]
