"""Tests for NiFi data sizes and time periods."""

from __future__ import annotations

import pytest

from flowcore import units


@pytest.mark.parametrize(
    ("text", "unit", "expected"),
    [
        ("10 KB", "B", 10240),
        ("1 MB", "KB", 1024),
        ("0 B", "B", 0),
        ("1.5 KB", "B", 1536),
        ("2gb", "MB", 2048),
        ("1 TB", "GB", 1024),
    ],
)
def test_data_sizes_are_binary_multiples(text: str, unit: str, expected: float) -> None:
    """Data sizes use 1024 multiples, as NiFi's DataUnit."""
    assert units.parse_data_size(text, unit) == expected


@pytest.mark.parametrize(
    ("text", "unit", "expected"),
    [
        ("5 secs", "s", 5),
        ("1 min", "s", 60),
        ("2 hours", "min", 120),
        ("1 day", "h", 24),
        ("30 sec", "ms", 30000),
        ("10 millis", "ms", 10),
        ("1.5 hours", "min", 90),
        ("1 week", "d", 7),
        ("250 ms", "s", 0.25),
    ],
)
def test_time_periods_accept_nifi_spellings(text: str, unit: str, expected: float) -> None:
    """Time periods accept NiFi's unit names and decimals."""
    assert units.parse_time_period(text, unit) == pytest.approx(expected)


def test_bad_values_explain_the_form() -> None:
    """Unparsable values raise ValueError showing an example of the right form."""
    with pytest.raises(ValueError, match="10 KB"):
        units.parse_data_size("ten")
    with pytest.raises(ValueError, match="5 mins"):
        units.parse_time_period("5")


def test_formatting() -> None:
    """Python numbers format back to NiFi strings."""
    assert units.format_time_period(60) == "60 secs"
    assert units.format_time_period(0.25) == "250 millis"
    assert units.format_data_size(2048) == "2048 B"
