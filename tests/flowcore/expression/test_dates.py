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
