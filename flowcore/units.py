"""NiFi's data sizes (``10 KB``) and time periods (``5 mins``), parsed exactly as NiFi does.

Sizes use binary multiples: ``1 KB`` = 1024 bytes, as NiFi's ``DataUnit``. Time periods accept
NiFi's unit spellings (``ms``, ``millis``, ``sec``, ``secs``, ``min``, ``hours``, ``days``,
``weeks`` ...) with an optional decimal value (``1.5 hours``).
"""

from __future__ import annotations

import re
from datetime import timedelta

__all__ = [
    "DATA_SIZE_PATTERN",
    "TIME_PERIOD_PATTERN",
    "format_data_size",
    "format_time_period",
    "parse_data_size",
    "parse_time_period",
]

_SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "KB": 1024,
    "MB": 1024**2,
    "GB": 1024**3,
    "TB": 1024**4,
    "PB": 1024**5,
}

DATA_SIZE_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|PB)\s*$", re.IGNORECASE)

_NANOS_PER: dict[str, int] = {}
for _names, _nanos in (
    (("ns", "nanos", "nano", "nanosecond", "nanoseconds"), 1),
    (("ms", "millis", "milli", "millisecond", "milliseconds"), 1_000_000),
    (("s", "sec", "secs", "second", "seconds"), 1_000_000_000),
    (("m", "min", "mins", "minute", "minutes"), 60 * 1_000_000_000),
    (("h", "hr", "hrs", "hour", "hours"), 3600 * 1_000_000_000),
    (("d", "day", "days"), 86400 * 1_000_000_000),
    (("w", "wk", "wks", "week", "weeks"), 7 * 86400 * 1_000_000_000),
):
    for _name in _names:
        _NANOS_PER[_name] = _nanos

TIME_PERIOD_PATTERN = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(" + "|".join(sorted(_NANOS_PER, key=len, reverse=True)) + r")\s*$",
    re.IGNORECASE,
)

_TIME_UNIT_NANOS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "min": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
    "d": 86400 * 1_000_000_000,
}


def parse_data_size(text: str, unit: str = "B") -> float:
    """Return *text* (e.g. ``"10 KB"``) in *unit* (``B``, ``KB``, ``MB``, ``GB``, ``TB``, ``PB``).

    Raises:
        ValueError: *text* is not a data size; the message shows the accepted form.
    """
    match = DATA_SIZE_PATTERN.match(text)
    if match is None:
        msg = f"{text!r} is not a data size; expected a number and a unit such as '10 KB' or '1 GB'"
        raise ValueError(msg)
    number, size_unit = match.groups()
    size_bytes = float(number) * _SIZE_UNITS[size_unit.upper()]
    return size_bytes / _SIZE_UNITS[unit.upper()]


def parse_time_period(text: str, unit: str = "s") -> float:
    """Return *text* (e.g. ``"5 mins"``) in *unit* (ns, us, ms, s, min, h or d).

    Raises:
        ValueError: *text* is not a time period; the message shows the accepted form.
    """
    match = TIME_PERIOD_PATTERN.match(text)
    if match is None:
        msg = (
            f"{text!r} is not a time period; expected a number and a unit such as '30 secs', "
            "'5 mins', '2 hours' or '1 day'"
        )
        raise ValueError(msg)
    number, period_unit = match.groups()
    nanos = float(number) * _NANOS_PER[period_unit.lower()]
    return nanos / _TIME_UNIT_NANOS[unit]


def format_data_size(value: float | int) -> str:
    """Render a byte count as a NiFi data size string (``1048576`` -> ``"1048576 B"``)."""
    return f"{int(value)} B" if float(value).is_integer() else f"{value} B"


def format_time_period(value: float | int | timedelta) -> str:
    """Render seconds (or a timedelta) as a NiFi time period string (``60`` -> ``"60 secs"``)."""
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds.is_integer():
        return f"{int(seconds)} secs"
    millis = seconds * 1000
    if millis.is_integer():
        return f"{int(millis)} millis"
    return f"{seconds} secs"
