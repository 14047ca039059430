"""Tests for Java's text forms of numbers and DateTimeFormatter patterns."""

from __future__ import annotations

import datetime as dt
import struct

import pyarrow as pa
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


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("single", [False, True])
def test_nan_and_infinities_have_no_plain_form(value: float, single: bool) -> None:
    """new BigDecimal("NaN") throws in Java: no plain text (it would be no JSON number)."""
    with pytest.raises(ValueError, match="has no plain decimal form"):
        formats.java_plain_str(value, single=single)


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


@pytest.mark.parametrize("java", ["HH:mm xxxxxx", "HH:mm XXXXXX", "HH:mm ZZZZZZ", "HH:mm zzzzz"])
def test_too_many_offset_letters_are_refused_as_java_time_does(java: str) -> None:
    """DateTimeFormatter refuses six offset letters (five zone names): no silent +00:00."""
    with pytest.raises(ConfigurationError, match="too many pattern letters"):
        formats.DateTimePattern(java)


_TRICKY_STAMPS = [
    "2024-02-28 10:00:00",
    "2024-02-30 10:00:00",  # Arrow would make it March 1st
    "2024-2-28 1:00:00",  # other widths
    " 2024-02-28 10:00:00",
    "0999-01-01 00:00:00",
    "2024-12-31 23:59:60",
    "2024-13-01 00:00:00",
    "1700000000000",
    "2024-02-28T10:00:00",
    "",
    None,
]


@pytest.mark.parametrize(
    "java", ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd", "MM/dd/yyyy", "dd.MM.uuuu HH:mm"]
)
def test_a_vectorised_parse_gives_parse_datetimes_values_or_leaves_the_value(java: str) -> None:
    """parse_column parses a value exactly as parse_datetime does, or leaves it null."""
    pattern = formats.pattern(java)
    samples = [
        *_TRICKY_STAMPS,
        pattern.format(dt.datetime(2023, 7, 4, 5, 6, 7)),
        pattern.format(dt.datetime(2024, 2, 29)),
    ]
    parsed = pattern.parse_column(pa.array(samples, pa.string()))
    assert parsed is not None
    fast = parsed.to_pylist()
    for text, value in zip(samples, fast, strict=True):
        if value is not None:
            assert value == pattern.parse_datetime(text), text
    assert fast[-1] == dt.datetime(2024, 2, 29)
    assert fast[1:4] == [None, None, None]


@given(st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9999, 12, 31)))
@settings(max_examples=60, deadline=None)
def test_every_date_the_pattern_prints_parses_vectorised(moment: dt.datetime) -> None:
    """A timestamp printed in NiFi's default pattern comes back, to the second, vectorised."""
    pattern = formats.pattern("yyyy-MM-dd HH:mm:ss")
    text = pattern.format(moment)
    parsed = pattern.parse_column(pa.array([text]))
    assert parsed is not None
    assert parsed.to_pylist() == [pattern.parse_datetime(text)]


_STAMP_CHARS = st.sampled_from("0123456789012345678901234567890123456789-: T/.x\u00e9")
_MOMENTS = st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9999, 12, 31))


@given(
    st.sampled_from(["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd", "MM/dd/yyyy", "dd.MM.uuuu HH:mm"]),
    st.lists(
        st.one_of(st.none(), st.text(_STAMP_CHARS, min_size=8, max_size=21), _MOMENTS),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 3),
)
@settings(max_examples=300, deadline=None)
def test_the_vectorised_parse_never_disagrees_with_parse_datetime(
    java: str, items: list[str | dt.datetime | None], skip: int
) -> None:
    """A vectorised value is parse_datetime's; a moment's own text always takes that path."""
    pattern = formats.pattern(java)
    texts = [pattern.format(i) if isinstance(i, dt.datetime) else i for i in items]
    column = pa.array([None] * skip + texts, pa.string()).slice(skip)
    parsed = pattern.parse_column(column)
    assert parsed is not None
    for item, text, value in zip(items, texts, parsed.to_pylist(), strict=True):
        if value is not None:
            assert text is not None
            assert value == pattern.parse_datetime(text), text
        assert value is not None or not isinstance(item, dt.datetime), text


def test_patterns_without_a_vectorised_form_say_so() -> None:
    """Letters beyond y M d H m s, other widths, digits-only patterns and a field given twice
    (where the exact parser keeps the first) keep the exact path."""
    for java in (
        "yyyyMMddHHmmss",
        "yyyy-MM-dd HH:mm:ss.SSS",
        "MMM d, yyyy",
        "yy-MM-dd",
        "yyyy-MM-dd HH:mm:ss yyyy",
        "dd.MM.uuuu yyyy",
    ):
        assert formats.pattern(java).parse_column(pa.array(["x"])) is None


@pytest.mark.parametrize(
    ("java", "text"),
    [
        ("X", "Z"),
        ("XXX", "Z"),
        ("Z", "+0000"),
        ("ZZZZ", "GMT"),
        ("ZZZZZ", "Z"),
        ("x", "+00"),
        ("xx", "+0000"),
        ("xxx", "+00:00"),
        ("xxxx", "+0000"),
        ("xxxxx", "+00:00"),
        ("XX", "Z"),
        ("XXXX", "Z"),
        ("XXXXX", "Z"),
        ("ZZ", "+0000"),
        ("ZZZ", "+0000"),
    ],
)
def test_the_zero_offset_prints_as_java_time(java: str, text: str) -> None:
    """A UTC value's offset as DateTimeFormatter prints each letter and width (ZZZZZ is "Z", as
    NiFi's testValidateCsvTimestampZoneOffset writes in a UTC JVM; xxxx is +HHMMss, +0000)."""
    assert formats.pattern(java).format(dt.datetime(2020, 1, 1, 12)) == text
