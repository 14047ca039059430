"""record_statements: NiFi's reading of epoch numbers for timestamp columns."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from processors.sql.record_statements import (
    YEAR_TEN_THOUSAND_MILLIS,
    YEAR_TEN_THOUSAND_SECONDS,
    epoch_instant,
)

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MAX_MICROS = int((dt.datetime(9999, 12, 31, tzinfo=dt.UTC) - _EPOCH).total_seconds()) * 10**6


@given(st.integers(min_value=0, max_value=YEAR_TEN_THOUSAND_MILLIS - 1), st.booleans())
def test_integer_is_milliseconds(millis: int, as_text: bool) -> None:
    """An integer (or its text) up to the year 10,000 in milliseconds is milliseconds."""
    value = str(millis) if as_text else millis
    assert epoch_instant(value) == _EPOCH + dt.timedelta(milliseconds=millis)


@given(st.integers(min_value=YEAR_TEN_THOUSAND_MILLIS + 1, max_value=_MAX_MICROS))
def test_large_integer_is_microseconds(micros: int) -> None:
    """An integer past the year 10,000 in milliseconds is microseconds (NiFi's bound)."""
    assert epoch_instant(f" {micros} ") == _EPOCH + dt.timedelta(microseconds=micros)


@given(
    st.integers(min_value=0, max_value=4_102_444_800),
    st.integers(min_value=0, max_value=999_999),
)
def test_decimal_is_seconds_to_the_microsecond(seconds: int, micros: int) -> None:
    """A decimal is seconds with its fraction rounded to the microsecond (the year 2100 and
    before: a double holds the microseconds exactly enough there)."""
    text = f"{seconds}.{micros:06d}"
    assert epoch_instant(text) == _EPOCH + dt.timedelta(seconds=seconds, microseconds=micros)
    assert seconds <= YEAR_TEN_THOUSAND_SECONDS


def test_decimal_past_year_ten_thousand_seconds_is_milliseconds() -> None:
    """A decimal whose integral part passes the year 10,000 in seconds is milliseconds."""
    assert epoch_instant(1707238288351.5) == _EPOCH + dt.timedelta(
        milliseconds=1707238288351, microseconds=500
    )


def test_not_a_number() -> None:
    """Text that is no number, booleans and other values are not instants (None)."""
    for value in ("2024-02-06 11:51:28", "", "12a", True, None, b"1"):
        assert epoch_instant(value) is None
