"""Expression Language values: their types, coercions and NiFi's string rendering.

EL values are ``None`` (null), ``str``, ``bool``, ``int`` (a Java long), ``float`` (a Java double)
and ``datetime`` (a Java Date, always timezone-aware). Numbers render as Java renders them
(``Double.toString``), dates as ``Date.toString()`` in the local zone, because NiFi users compare
our output with NiFi's.
"""

from __future__ import annotations

import decimal
import math
import re
from datetime import UTC, datetime
from typing import Any

from flowcore.errors import ExpressionLimitError, quoted
from flowcore.expression._dates import format_date, parse_date

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "Value",
    "check_length",
    "int_arg",
    "is_number",
    "java_double_to_string",
    "java_trim",
    "max_length",
    "render",
    "set_max_length",
    "shown",
    "to_boolean",
    "to_date",
    "to_number",
    "to_string",
    "wrap_long",
]

Value = Any  # None | str | bool | int | float | datetime

DEFAULT_MAX_LENGTH = 64 * 1024 * 1024  # characters an Expression Language result may hold
_max_length = DEFAULT_MAX_LENGTH


def set_max_length(chars: int) -> None:
    """Set the longest string an expression may make in this process (expression_max_length)."""
    global _max_length  # noqa: PLW0603 - one limit per process, set by each task
    _max_length = chars


def max_length() -> int:
    """The longest string an expression may make in this process."""
    return _max_length


def check_length(length: int, function: str) -> None:
    """Refuse, before building it, a result of *length* characters over the limit.

    ``${x:repeat(2000000000)}`` would otherwise allocate gigabytes and take the process down
    with it; the error names the function and the limit instead.

    Raises:
        ExpressionLimitError: *length* is over the limit.
    """
    if length > _max_length:
        msg = (
            f"{function}() would make a string of {length:,} characters, over the limit of "
            f"{_max_length:,} (setting expression_max_length)"
        )
        raise ExpressionLimitError(msg)


_WHOLE = re.compile(r"^[-+]?(?:\d+|0[xX][0-9a-fA-F]+)$")
_DECIMAL = re.compile(
    r"^[-+]?(?:NaN|Infinity|(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)[fFdD]?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][-+]?\d+[fFdD]?)$"
)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def shown(value: Value) -> str:
    """*value* for an error message: quoted, and cut short when long (values come from data)."""
    return quoted(to_string(value))


def wrap_long(value: int) -> int:
    """Wrap *value* into a signed 64-bit long, as Java arithmetic overflows silently."""
    return ((value - _LONG_MIN) % 2**64) + _LONG_MIN


def int_arg(value: Value, function: str) -> int:
    """Coerce a function argument to a whole number, or fail naming the function.

    Raises:
        ExpressionEvaluationError: the argument is not numeric.
    """
    number = to_number(value)
    if number is None:
        from flowcore.errors import ExpressionEvaluationError  # noqa: PLC0415

        msg = f"{function}() needs a whole number argument, got {shown(value)}"
        raise ExpressionEvaluationError(msg)
    return int(number)


def java_trim(text: str) -> str:
    """Strip leading and trailing characters <= U+0020, as Java's ``String.trim``."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def is_number(value: Value) -> bool:
    """Whether *value* is an EL number (``bool`` is not, although Python thinks so)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parse_whole(text: str) -> int | None:
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if len(digits.lstrip("0xX")) > 20:  # past a long's 19 digits (16 hex): not a long, and
        return None  # Python's int() refuses strings of over 4,300 digits anyway
    number = int(digits[2:], 16) if digits[:2].lower() == "0x" else int(digits, 10)
    number *= sign
    return number if _LONG_MIN <= number <= _LONG_MAX else None


def _parse_decimal(text: str) -> float:
    body = text.rstrip("fFdD") if not text.endswith(("NaN", "Infinity")) else text
    if "x" in body.lower() and "p" in body.lower():
        return float.fromhex(body)
    return float(body)


def to_number(value: Value) -> int | float | None:
    """Coerce *value* to a whole number or a decimal; ``None`` when it is not numeric.

    Strings are trimmed and parsed as a Java long (decimal or ``0x`` hex), else as a Java
    floating-point literal. Dates become epoch milliseconds. Booleans are not numbers.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, datetime):
        return to_epoch_millis(value)
    text = java_trim(str(value))
    if _WHOLE.match(text):
        whole = _parse_whole(text)
        if whole is not None:
            return whole
    if _DECIMAL.match(text):
        return _parse_decimal(text)
    return None


def to_boolean(value: Value) -> bool | None:
    """Coerce *value* to a boolean as Java's ``Boolean.valueOf(s.trim())``; ``None`` stays null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    return java_trim(to_string(value) or "").lower() == "true"


def to_epoch_millis(value: datetime) -> int:
    """Return the epoch milliseconds of an aware datetime."""
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def from_epoch_millis(millis: int) -> datetime:
    """Return the UTC datetime for epoch milliseconds."""
    seconds, ms = divmod(int(millis), 1000)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=ms * 1000)


def to_date(value: Value) -> datetime | None:
    """Coerce *value* to a date: numbers are epoch ms, strings numbers or ``Date.toString()``."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        return value
    if isinstance(value, int | float):
        return from_epoch_millis(int(value))
    number = to_number(value)
    if isinstance(number, int):
        return from_epoch_millis(number)

    return parse_date(java_trim(str(value)), "EEE MMM dd HH:mm:ss zzz yyyy", None)


def java_double_to_string(number: float) -> str:
    """Render a float exactly as Java's ``Double.toString`` does.

    Java prints the shortest digits that round-trip (as Python's ``repr``), in plain notation for
    magnitudes in [1e-3, 1e7) and as ``d.dddE<exp>`` otherwise, always with a fractional digit.
    """
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "-0.0" if math.copysign(1.0, number) < 0 else "0.0"
    magnitude = abs(number)
    sign = "-" if number < 0 else ""
    digits_tuple = decimal.Decimal(repr(magnitude)).normalize().as_tuple()
    digits = "".join(map(str, digits_tuple.digits))
    exponent = len(digits) + int(digits_tuple.exponent) - 1  # scientific exponent
    if 1e-3 <= magnitude < 1e7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            frac = digits[exponent + 1 :] or "0"
        else:
            whole = "0"
            frac = "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{frac}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exponent}"


def format_java_date(value: datetime) -> str:
    """Render a date as Java's ``Date.toString()`` in the local time zone."""
    return format_date(value, "EEE MMM dd HH:mm:ss zzz yyyy", None)


def to_string(value: Value) -> str | None:
    """Render *value* as NiFi's ``String.valueOf`` would; null stays ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double_to_string(value)
    if isinstance(value, datetime):
        return format_java_date(value)
    return str(value)


def render(value: Value) -> str:
    """Render *value* for a property value: like :func:`to_string`, with null as ``""``."""
    text = to_string(value)
    return "" if text is None else text
