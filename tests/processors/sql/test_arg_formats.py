"""sql.args.N.format: java.time formatter names and patterns, binary encodings, epoch millis."""

from __future__ import annotations

import base64
import datetime as dt
import decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from processors.sql.arg_formats import binary_value, number_value, temporal_value

_NAMED = [
    ("DATE", "2002-03-04", "ISO_LOCAL_DATE", dt.date(2002, 3, 4)),
    ("DATE", "2002-03-04+01:00", "ISO_OFFSET_DATE", dt.date(2002, 3, 4)),
    ("DATE", "2002-03-04Z", "ISO_DATE", dt.date(2002, 3, 4)),
    ("DATE", "20020304", "BASIC_ISO_DATE", dt.date(2002, 3, 4)),
    ("DATE", "20020304-0500", "BASIC_ISO_DATE", dt.date(2002, 3, 4)),
    ("DATE", "2002-063", "ISO_ORDINAL_DATE", dt.date(2002, 3, 4)),
    ("DATE", "2002-W10-1", "ISO_WEEK_DATE", dt.date(2002, 3, 4)),
    ("DATE", "2002-03-04T05:06:07", "ISO_LOCAL_DATE_TIME", dt.date(2002, 3, 4)),
    ("TIME", "05:06", "ISO_LOCAL_TIME", dt.time(5, 6)),
    ("TIME", "05:06:07.5+02:00", "ISO_OFFSET_TIME", dt.time(5, 6, 7, 500000)),
    ("TIME", "05:06:07", "ISO_TIME", dt.time(5, 6, 7)),
    ("TIMESTAMP", "2002-03-04T05:06:07", "ISO_LOCAL_DATE_TIME", dt.datetime(2002, 3, 4, 5, 6, 7)),
    (
        "TIMESTAMP",
        "2002-03-04T05:06:07-05:00",
        "ISO_OFFSET_DATE_TIME",
        dt.datetime(2002, 3, 4, 10, 6, 7),
    ),
    (
        "TIMESTAMP",
        "2002-03-04T05:06:07+01:00[Europe/Paris]",
        "ISO_ZONED_DATE_TIME",
        dt.datetime(2002, 3, 4, 4, 6, 7),
    ),
    (
        "TIMESTAMP",
        "2002-03-04T05:06:07.000000001",
        "ISO_DATE_TIME",
        dt.datetime(2002, 3, 4, 5, 6, 7),
    ),
    (
        "TIMESTAMP",
        "Mon, 4 Mar 2002 05:06:07 GMT",
        "RFC_1123_DATE_TIME",
        dt.datetime(2002, 3, 4, 5, 6, 7),
    ),
    ("TIMESTAMP", "04/03/2002 5:06 PM", "dd/MM/yyyy h:mm a", dt.datetime(2002, 3, 4, 17, 6)),
    ("TIME", "23:59:59.9999996", "ISO_LOCAL_TIME", dt.time.max),
    (
        "TIMESTAMP",
        "2002-03-04 23:59:59.9999996",
        "yyyy-MM-dd HH:mm:ss.SSSSSSS",
        dt.datetime(2002, 3, 5),
    ),
]


@pytest.mark.parametrize(("kind", "text", "fmt", "expected"), _NAMED)
def test_named_formats_and_patterns(kind: str, text: str, fmt: str, expected: object) -> None:
    """java.time's predefined formatters and patterns give the value (sub-microsecond
    fractions rounded)."""
    assert temporal_value(kind, text, fmt) == expected


_OFFSETS = [
    ("DATE", "2020-01-01+02:00", "ISO_OFFSET_DATE", dt.date(2020, 1, 1)),
    ("DATE", "2020-01-01-05:00", "ISO_DATE", dt.date(2020, 1, 1)),
    ("DATE", "20200101+0200", "BASIC_ISO_DATE", dt.date(2020, 1, 1)),
    ("DATE", "2020-001+02:00", "ISO_ORDINAL_DATE", dt.date(2020, 1, 1)),
    ("DATE", "2020-W01-3+02:00", "ISO_WEEK_DATE", dt.date(2020, 1, 1)),
    ("DATE", "2020-01-01T00:30:00+02:00", "ISO_OFFSET_DATE_TIME", dt.date(2020, 1, 1)),
    ("DATE", "2020-01-01 00:30 +0200", "yyyy-MM-dd HH:mm Z", dt.date(2020, 1, 1)),
    ("DATE", "2020-01-01 23:30 -05:00", "yyyy-MM-dd HH:mm XXX", dt.date(2020, 1, 1)),
    ("TIME", "10:00+02:00", "ISO_OFFSET_TIME", dt.time(10)),
    ("TIME", "10:00:00-05:00", "ISO_TIME", dt.time(10)),
    ("TIME", "10:00 +0200", "HH:mm Z", dt.time(10)),
    ("TIME", "10:00 +02:00", "HH:mm XXX", dt.time(10)),
    ("TIME", "2020-01-01T10:00:00+02:00", "ISO_OFFSET_DATE_TIME", dt.time(10)),
    ("TIMESTAMP", "2020-01-01T10:00:00+02:00", "ISO_OFFSET_DATE_TIME", dt.datetime(2020, 1, 1, 8)),
    ("TIMESTAMP", "2020-01-01T01:00:00+02:00", "ISO_DATE_TIME", dt.datetime(2019, 12, 31, 23)),
    (
        "TIMESTAMP",
        "2020-01-01T10:00:00-05:00[America/New_York]",
        "ISO_ZONED_DATE_TIME",
        dt.datetime(2020, 1, 1, 15),
    ),
    (
        "TIMESTAMP",
        "Wed, 1 Jan 2020 10:00:00 +0200",
        "RFC_1123_DATE_TIME",
        dt.datetime(2020, 1, 1, 8),
    ),
    (
        "TIMESTAMP",
        "2020-01-01 00:30 +0200",
        "yyyy-MM-dd HH:mm Z",
        dt.datetime(2019, 12, 31, 22, 30),
    ),
    ("TIMESTAMP", "2020-01-01 10:00 -05:00", "yyyy-MM-dd HH:mm XXX", dt.datetime(2020, 1, 1, 15)),
    ("TIMESTAMP", "2020-01-01 10:00 Z", "yyyy-MM-dd HH:mm X", dt.datetime(2020, 1, 1, 10)),
    ("TIMESTAMP", "2020-01-01 10:00", "yyyy-MM-dd HH:mm", dt.datetime(2020, 1, 1, 10)),
]


@pytest.mark.parametrize(("kind", "text", "fmt", "expected"), _OFFSETS)
def test_offsets_applied_to_timestamps_dropped_from_dates_and_times(
    kind: str, text: str, fmt: str, expected: object
) -> None:
    """As NiFi: TIMESTAMP is Instant.from (offset applied, UTC), DATE/TIME keep local fields."""
    assert temporal_value(kind, text, fmt) == expected


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("TIMESTAMP", "2020-01-01T10:00:00+02:00"),
        ("TIMESTAMP", "2020-01-01 10:00:00Z"),
        ("TIME", "10:00:00+02:00"),
    ],
)
def test_offsets_without_a_format_are_refused(kind: str, text: str) -> None:
    """Without a format NiFi's SimpleDateFormat refuses an offset: no tz-aware value."""
    with pytest.raises(ValueError, match="has an offset"):
        temporal_value(kind, text, "")


@pytest.mark.parametrize(
    ("kind", "text", "fmt", "reason"),
    [
        ("TIMESTAMP", "2002-03-04", "ISO_LOCAL_DATE", "no time of day"),
        ("DATE", "05:06:07", "ISO_LOCAL_TIME", "no date"),
        ("TIMESTAMP", "2002-03-04T05:06:07Z", "ISO_INSTANT", "ISO_INSTANT"),
        ("TIMESTAMP", "2002-03-04 05:06:07", "ISO_LOCAL_DATE_TIME", "not in the form"),
        ("DATE", "2002-02-30", "yyyy-MM-dd", "does not match"),
        ("DATE", "2002", "qqqq", "'q' is not supported"),
    ],
)
def test_values_not_in_their_format_are_refused(
    kind: str, text: str, fmt: str, reason: str
) -> None:
    """A value its format cannot give (java.time's refusals) raises ValueError saying why."""
    with pytest.raises(ValueError, match=reason):
        temporal_value(kind, text, fmt)


@given(st.datetimes(min_value=dt.datetime(1000, 1, 1)))
def test_patterns_round_trip(moment: dt.datetime) -> None:
    """A datetime written in a pattern, or in ISO form, reads back the same."""
    text = moment.strftime("%Y-%m-%dT%H:%M:%S.%f")
    assert temporal_value("TIMESTAMP", text, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS") == moment
    assert temporal_value("TIMESTAMP", text, "ISO_LOCAL_DATE_TIME") == moment
    assert temporal_value("TIME", text[11:], "HH:mm:ss.SSSSSS") == moment.time()
    assert temporal_value("DATE", text[:10], "ISO_LOCAL_DATE") == moment.date()


@given(st.integers(min_value=-(10**13), max_value=10**14))
def test_epoch_millis_without_format(millis: int) -> None:
    """Without a format, -?\\d{1,19} is epoch milliseconds (UTC), before 1970 too."""
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=millis)
    assert temporal_value("TIMESTAMP", str(millis), "") == moment
    assert temporal_value("DATE", str(millis), "") == moment.date()
    assert temporal_value("TIME", str(millis), "") == moment.time()


@given(st.binary(max_size=64))
def test_binary_formats_round_trip(data: bytes) -> None:
    """hex and base64 (padded or not, as Java's decoder) give back the bytes they encode."""
    assert binary_value(data.hex(), "hex") == data
    assert binary_value(data.hex().upper(), "hex") == data
    encoded = base64.b64encode(data).decode()
    assert binary_value(encoded, "base64") == data
    assert binary_value(encoded.rstrip("="), "base64") == data


def test_ascii_and_bad_binary_formats() -> None:
    """ascii (the default) writes '?' for what ASCII lacks, as Java's getBytes(US_ASCII);
    an unknown format, odd hex or base64 outside its alphabet is refused."""
    assert binary_value("AB\u00e9", "") == b"AB?"
    assert binary_value("AB", "ascii") == b"AB"
    for text, fmt, reason in [
        ("AB", "utf-8", "formatter `utf-8`"),
        ("ABC", "hex", "Hexadecimal"),
        ("A*==", "base64", "Base64"),
    ]:
        with pytest.raises(ValueError, match=reason):
            binary_value(text, fmt)


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("DOUBLE", "1.5", 1.5),
        ("DOUBLE", " -2e3 ", -2000.0),
        ("FLOAT", "1.5f", 1.5),
        ("REAL", ".5D", 0.5),
        ("DOUBLE", "Infinity", float("inf")),
        ("DECIMAL", "1.50", decimal.Decimal("1.50")),
        ("NUMERIC", "-1E+3", decimal.Decimal("-1E+3")),
    ],
)
def test_numbers_in_javas_syntax(kind: str, text: str, expected: object) -> None:
    """Double.parseDouble / new BigDecimal forms are taken (a suffix, spaces for doubles)."""
    assert number_value(kind, text) == expected


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("FLOAT", "1_0"),
        ("DOUBLE", "inf"),
        ("DOUBLE", "nan"),
        ("DOUBLE", "1,5"),
        ("DECIMAL", "NaN"),
        ("DECIMAL", "Infinity"),
        ("DECIMAL", "1_000"),
        ("NUMERIC", " 1"),
        ("NUMERIC", "١٢"),  # Arabic-Indic digits: Python's Decimal takes them
    ],
)
def test_numbers_java_refuses_are_refused(kind: str, text: str) -> None:
    """What Python parses but Java does not (underscores, inf/nan, a DECIMAL NaN) is refused."""
    with pytest.raises(ValueError, match=repr(text)):
        number_value(kind, text)


@pytest.mark.parametrize("text", ["YQ=", "YQ===", "Y", "YQ==YQ==", "YWJj=", "Y Q=="])
def test_base64_padding_as_javas_basic_decoder(text: str) -> None:
    """Wrong padding, a lone last character, data after padding: Java's decoder refuses."""
    with pytest.raises(ValueError, match="Base64 decoding failed"):
        binary_value(text, "base64")
    assert binary_value("YQ", "base64") == binary_value("YQ==", "base64") == b"a"
