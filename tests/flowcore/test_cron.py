"""Tests for CRON driven Run Schedules: NiFi 2.x's cron syntax, read through croniter."""

from __future__ import annotations

import datetime as dt

import pytest

from flowcore.cron import parse_cron


def _ms(*when: int) -> int:
    return int(dt.datetime(*when).astimezone().timestamp() * 1000)  # type: ignore[misc]


def _next(expression: str, *after: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(parse_cron(expression).next_after(_ms(*after)) / 1000)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("0 0 12 * * ?", dt.datetime(2026, 1, 1, 12)),
        ("0 20 14 ? * MON-FRI", dt.datetime(2026, 1, 1, 14, 20)),  # a Thursday
        ("*/15 * * * * ?", dt.datetime(2026, 1, 1, 0, 0, 15)),
        ("0 0 12 L * ?", dt.datetime(2026, 1, 31, 12)),  # the last day of the month
        ("0 0 12 15W * ?", dt.datetime(2026, 1, 15, 12)),  # the weekday nearest the 15th
        ("0 0 12 ? * 5L", dt.datetime(2026, 1, 30, 12)),  # the last Friday
        ("0 0 12 ? * FRIL", dt.datetime(2026, 1, 30, 12)),
        ("0 0 12 ? * 1#1", dt.datetime(2026, 1, 5, 12)),  # the first Monday (1: NiFi 2.x's)
        ("0 0 12 ? * 0", dt.datetime(2026, 1, 4, 12)),  # Sunday is 0 ...
        ("0 0 12 ? * 7", dt.datetime(2026, 1, 4, 12)),  # ... and 7
        ("0 0 12 10 * MON", dt.datetime(2026, 8, 10, 12)),  # both day fields must match
        ("0 0 12 * * ? 2027", dt.datetime(2027, 1, 1, 12)),  # NiFi 1.x's optional year
    ],
)
def test_nifis_cron_forms_fire_when_nifi_would(expression: str, expected: dt.datetime) -> None:
    """Seconds first, ?, L, W, nL, #, both day-of-week numberings' Sunday, AND of day fields."""
    assert _next(expression, 2026, 1, 1) == expected


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("0 0 12 * *", "has 5 fields; NiFi's has 6"),
        ("0 0 25 * * ?", "is not valid"),
        ("0 0 12 LW * ?", "'LW', 'L-n') is not supported"),
        ("0 0 12 L-3 * ?", "is not supported"),
        ("every day", "has 2 fields"),
    ],
)
def test_an_expression_nifi_or_flowcore_cannot_read_is_one_line(expression: str, why: str) -> None:
    """Each refusal names the expression and why, on one line."""
    with pytest.raises(ValueError, match="cron expression") as caught:
        parse_cron(expression)
    assert why in str(caught.value)
    assert repr(expression) in str(caught.value)
    assert "\n" not in str(caught.value)
