"""Tests for Java's text forms of numbers and DateTimeFormatter patterns."""

from __future__ import annotations

import datetime as dt
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import ConfigurationError
from flowcore.records import formats


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (8.0, "8.0"),
        (0.000000451, "4.51E-7"),
        (1e10, "1.0E10"),
        (12345678.0, "1.2345678E7"),
        (1234567.0, "1234567.0"),
        (0.001, "0.001"),
        (-1.5, "-1.5"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (float("inf"), "Infinity"),
        (float("nan"), "NaN"),
    ],
)
def test_doubles_print_as_java_double_to_string(value: float, text: str) -> None:
    """Double.toString: plain between 10^-3 and 10^7, computerized scientific notation outside."""
    assert formats.java_double_str(value) == text


def test_floats_print_their_shortest_32_bit_digits() -> None:
    """Float.toString of NiFi's TestWriteJsonResult value -4.291032244F is -4.2910323."""
    assert formats.java_float_str(-4.291032244) == "-4.2910323"
    assert formats.java_float_str(8.0) == "8.0"


def test_plain_forms_are_big_decimal_to_plain_string() -> None:
    """Without scientific notation NiFi writes BigDecimal.valueOf(double).toPlainString()."""
    assert formats.java_plain_str(0.000000451) == "0.000000451"
    assert formats.java_plain_str(1e10) == "10000000000"
    assert formats.java_plain_str(8.0) == "8.0"


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_java_double_text_reads_back_to_the_same_double(value: float) -> None:
    """The Java text of any double parses back to that double (no digit is lost)."""
    assert float(formats.java_double_str(value).replace("E", "e")) == value


@settings(max_examples=60, deadline=None)
@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_java_float_text_reads_back_to_the_same_float(value: float) -> None:
    """The Java text of any 32-bit float rounds back to that float."""
    back = float(formats.java_float_str(value).replace("E", "e"))
    assert struct.pack("f", back) == struct.pack("f", value)


def test_patterns_format_and_parse_as_datetimeformatter() -> None:
    """The letters NiFi users write format and parse, literals in quotes."""
    stamp = formats.pattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
    value = dt.datetime(2019, 1, 7, 14, 59, 27, 817000)
    assert stamp.format(value) == "2019-01-07T14:59:27.817Z"
    assert stamp.parse_datetime("2019-01-07T14:59:27.817Z") == value
    assert formats.pattern("MM/dd/yyyy").parse_datetime("01/07/2019") == dt.datetime(2019, 1, 7)
    assert formats.pattern("EEE, d MMM yyyy hh:mm a").format(value) == "Mon, 7 Jan 2019 02:59 PM"
    assert formats.pattern("yyyy-MM-dd").parse_datetime("14:59:27") is None
    assert formats.pattern("yyyy-MM-dd HH:mm:ssZ").parse_datetime("2019-01-07 16:00:00+0200") == (
        dt.datetime(2019, 1, 7, 14)
    )


def test_unsupported_pattern_letters_are_named() -> None:
    """A letter the pattern engine does not know is refused by name."""
    with pytest.raises(ConfigurationError, match="'Q'"):
        formats.DateTimePattern("yyyy-QQ")
