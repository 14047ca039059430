"""Tests for Java date patterns and zone ids."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import ExpressionEvaluationError
from flowcore.expression._dates import format_date, parse_date, resolve_zone

MOMENT = datetime(2014, 12, 31, 20, 36, 3, 264000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("yyyy/MM/dd HH:mm:ss.SSS", "2014/12/31 20:36:03.264"),
        ("yy-M-d", "14-12-31"),
        ("EEE, MMM d", "Wed, Dec 31"),
        ("EEEE MMMM", "Wednesday December"),
        ("h:mm a", "8:36 PM"),
        ("D", "365"),
        ("'T'HH'h'", "T20h"),
        ("'it''s' HH", "it's 20"),
        ("XXX", "Z"),
        ("Z", "+0000"),
    ],
)
def test_format_patterns(pattern: str, expected: str) -> None:
    """Pattern letters format as Java's DateTimeFormatter does."""
    assert format_date(MOMENT, pattern, "UTC") == expected


@pytest.mark.parametrize(
    ("pattern", "utc", "plus8", "plus530"),
    [
        ("X", "Z", "+08", "+0530"),
        ("XXXX", "Z", "+0800", "+0530"),
        ("XXXXX", "Z", "+08:00", "+05:30"),
        ("x", "+00", "+08", "+0530"),
        ("xx", "+0000", "+0800", "+0530"),
        ("xxx", "+00:00", "+08:00", "+05:30"),
        ("xxxx", "+0000", "+0800", "+0530"),
        ("xxxxx", "+00:00", "+08:00", "+05:30"),
        ("Z", "+0000", "+0800", "+0530"),
        ("ZZZZ", "GMT", "GMT+08:00", "GMT+05:30"),
        ("ZZZZZ", "Z", "+08:00", "+05:30"),
        ("O", "GMT", "GMT+8", "GMT+5:30"),
        ("OOOO", "GMT", "GMT+08:00", "GMT+05:30"),
    ],
)
def test_offset_letters_format_as_java_time(
    pattern: str, utc: str, plus8: str, plus530: str
) -> None:
    """DateTimeFormatter's offsets: 4 X/x letters are +HHMMss (no colon), one X/x letter adds the
    minutes only when not zero, O is GMT with an unpadded hour, a zero offset is GMT alone."""
    assert format_date(MOMENT, pattern, "UTC") == utc
    assert format_date(MOMENT, pattern, "GMT+08:00") == plus8
    assert format_date(MOMENT, pattern, "GMT+05:30") == plus530
    full = f"yyyy-MM-dd HH:mm {pattern}"
    for zone in ("UTC", "GMT+08:00", "GMT+05:30"):  # each reads back as the same instant
        stamp = format_date(MOMENT, full, zone)
        assert parse_date(stamp, full, None) == MOMENT.replace(second=0, microsecond=0)


def test_zones() -> None:
    """Java zone ids resolve: GMT, offsets, IANA names, Java's short ids."""
    assert MOMENT.astimezone(resolve_zone("GMT+02:00")).hour == 22
    assert MOMENT.astimezone(resolve_zone("America/New_York")).hour == 15
    assert resolve_zone("EST").utcoffset(None) == timedelta(hours=-5)
    with pytest.raises(ExpressionEvaluationError, match="not a known time zone"):
        resolve_zone("Mars/Olympus")


def test_unknown_pattern_letter_is_an_error() -> None:
    """A pattern letter Java does not know raises, naming it."""
    with pytest.raises(ExpressionEvaluationError, match="'J'"):
        format_date(MOMENT, "J", "UTC")


@given(
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2999, 12, 31)).map(
        lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=UTC)
    ),
    st.sampled_from(
        [
            "yyyy-MM-dd HH:mm:ss.SSS",
            "dd/MMM/yyyy:HH:mm:ss.SSS Z",
            "yyyyMMddHHmmssSSSXXX",
            "EEE MMM dd HH:mm:ss.SSS yyyy",
        ]
    ),
)
def test_format_then_parse_round_trips(moment: datetime, pattern: str) -> None:
    """Formatting a date and parsing it back with the same pattern gives the same instant."""
    text = format_date(moment, pattern, "UTC")
    assert parse_date(text, pattern, "UTC") == moment
