"""Tests for EL value coercion and Java-style rendering."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.expression._values import (
    java_double_to_string,
    to_boolean,
    to_number,
    wrap_long,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2.5, "2.5"),
        (3.0, "3.0"),
        (1e10, "1.0E10"),
        (1234567.0, "1234567.0"),
        (12345678.0, "1.2345678E7"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (-2.5e-5, "-2.5E-5"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
        (100.5, "100.5"),
    ],
)
def test_java_double_rendering(value: float, expected: str) -> None:
    """Decimals render exactly as Java's Double.toString."""
    assert java_double_to_string(value) == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_java_double_rendering_round_trips(value: float) -> None:
    """The rendered text parses back to the same double."""
    text = java_double_to_string(value).replace("E", "e")
    assert float(text) == value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12", 12),
        (" 12 ", 12),
        ("-3", -3),
        ("+4", 4),
        ("0x1F", 31),
        ("007", 7),
        ("2.5", 2.5),
        ("1e3", 1000.0),
        ("NaN", None),
        ("abc", None),
        ("", None),
        ("99999999999999999999", 1e20),
    ],
)
def test_number_coercion(text: str, expected: float | None) -> None:
    """Strings coerce to Java longs, then Java doubles, else null."""
    result = to_number(text)
    if text == "NaN":
        assert result is not None
        assert math.isnan(result)
        return
    assert result == expected


def test_boolean_coercion_is_java_boolean_value_of() -> None:
    """Only 'true' (any case, trimmed) is true; null stays null."""
    assert to_boolean(" TRUE ") is True
    assert to_boolean("yes") is False
    assert to_boolean(None) is None


def test_long_wraps_like_java() -> None:
    """Whole-number overflow wraps around 64 bits."""
    assert wrap_long(2**63) == -(2**63)
    assert wrap_long(-(2**63) - 1) == 2**63 - 1
