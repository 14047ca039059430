"""Tests for numbers in columns: read as ``to_number`` reads them, written as Java writes them."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flowcore.expression._columns_parse import parse_numbers, render_doubles
from flowcore.expression._values import java_double_to_string, to_number

#: Texts where readers part: blanks Java trims, hex, signs, suffixes, Unicode digits, lone
#: surrogates, numbers past a long or a double, NaN and Infinity spelt as Java and as C spell them.
ODD = [
    "1e3",
    " 12",
    "0x1F",
    "-0",
    "-0.0",
    "1.0",
    "NaN",
    "nan",
    "Infinity",
    "-Infinity",
    "inf",
    "",
    " ",
    "+7",
    "1.5d",
    "2f",
    ".5",
    "1.",
    "1_000",
    "\t3\n",
    "٣",
    "1٣",
    "\ud800",
    "0x",
    "1e400",
    "1e-400",
    "1e99999",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "123456789012345678",
    "12345678901234567890123",
    "9" * 400,
    "0x1p3",
    "abc",
    "1 2",
]
numberish = st.one_of(
    st.sampled_from(ODD),
    st.integers().map(str),
    st.floats().map(repr),
    st.floats().map(java_double_to_string),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.text(st.sampled_from(list("0123456789.-+eExX dfN")), max_size=8),
    st.text(max_size=4),
)


def _read(texts: list[str | None], *, decimals: bool) -> list[object]:
    numbers = parse_numbers(texts, decimals=decimals)
    return [
        None
        if numbers.null[i]
        else float(numbers.doubles[i])
        if numbers.decimal[i]
        else int(numbers.longs[i])
        for i in range(len(texts))
    ]


def _same(left: object, right: object) -> bool:
    """Equal, of the same type, NaN equal to NaN and -0.0 apart from 0.0."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        return (math.isnan(left) and math.isnan(right)) or (  # type: ignore[arg-type]
            left == right and math.copysign(1, left) == math.copysign(1, right)  # type: ignore[arg-type]
        )
    return left == right


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), numberish), max_size=30))
@example(ODD)
@example([t for t in ODD if t != "\ud800"])
def test_a_column_reads_as_to_number_reads_each_value(texts: list[str | None]) -> None:
    """Whole numbers stay longs, decimals doubles, the rest null, value for value."""
    expected = [None if t is None else to_number(t) for t in texts]
    assert all(map(_same, _read(texts, decimals=False), expected))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), numberish), max_size=30))
@example([t for t in ODD if t != "\ud800"])
def test_read_as_decimals_each_value_is_its_numbers_double(texts: list[str | None]) -> None:
    """For toDecimal only the double counts: "-0" is 0.0, as float(0) is."""
    read = _read(texts, decimals=True)
    expected = [None if t is None or to_number(t) is None else float(to_number(t)) for t in texts]
    assert all(
        _same(None if r is None else float(r), e)  # type: ignore[arg-type]
        for r, e in zip(read, expected, strict=True)
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(width=64), max_size=40))
@example([0.0, -0.0, 1e-3, 9.999999e6, 1e7, 1e16, 1e-5, 123456789.0, 1e300, 5e-324])
@example([math.nan, math.inf, -math.inf, 0.00012, -12345678.9])
def test_doubles_are_written_as_java_writes_them(values: list[float]) -> None:
    """Plain digits between 1e-3 and 1e7, d.dddE<n> outside, NaN and Infinity spelt out."""
    written = render_doubles(np.array(values, dtype=np.float64))
    assert written == [java_double_to_string(v) for v in values]
