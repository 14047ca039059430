"""Java's text forms, as NiFi's readers and writers produce and accept them.

NiFi formats numbers with Java's ``Double.toString``/``Float.toString``/``BigDecimal.toString``
and dates with ``java.time.DateTimeFormatter`` patterns (the Date Format, Time Format and
Timestamp Format properties). The writers must give NiFi's bytes, so this module turns those
rules into Python. Times are taken in UTC (NiFi uses the JVM's zone; flowcore's is UTC).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections.abc import Callable
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import ConfigurationError, ExpressionEvaluationError
from flowcore.expression._dates import DAYS, MONTHS, tokenize_cached

__all__ = [
    "DateTimePattern",
    "java_decimal_str",
    "java_double_str",
    "java_float_str",
    "java_plain_str",
]

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)


def java_double_str(value: float) -> str:
    """Java's ``Double.toString``: ``8.0``, ``1.0E10``, ``1.0E-4`` (shortest digits)."""
    return _java_str(value, repr(float(value)))


def java_float_str(value: float) -> str:
    """Java's ``Float.toString`` (the shortest digits that give the same 32-bit float)."""
    return _java_str(value, np.format_float_scientific(np.float32(value), unique=True, trim="-"))


def _java_str(value: float, shortest: str) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digits, exponent = Decimal(shortest).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + int(exponent)  # digits before the decimal point
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{text}"
        whole = text[:point].ljust(point, "0")
        return f"{prefix}{whole}.{text[point:] or '0'}"
    return f"{prefix}{text[0]}.{text[1:] or '0'}E{point - 1}"


def java_float_texts(array: pa.Array) -> list[str | None]:
    """``Float.toString`` of every value of a float32 Arrow array (None for null)."""
    return java_number_column(array, single=True).to_pylist()


def java_number_column(array: pa.Array, *, single: bool) -> pa.Array:
    """``Float.toString`` (*single*) or ``Double.toString`` of every value, as Arrow strings.

    Between 10^-3 and 10^7 (and for zero) Java prints the shortest digits plainly with at
    least one decimal: Arrow's cast prints the same shortest digits plainly, so only ``.0`` is
    added to whole numbers. Other values (scientific notation, NaN, infinities) take
    :func:`java_float_str` / :func:`java_double_str` one by one.
    """
    values = array.cast(pa.float32() if single else pa.float64())
    text = pc.cast(values, pa.string())
    magnitude = pc.abs(pc.cast(values, pa.float64()))
    plain = pc.or_(
        pc.and_(pc.greater_equal(magnitude, 1e-3), pc.less(magnitude, 1e7)),
        pc.equal(magnitude, 0),
    )
    whole = pc.invert(pc.match_substring(text, "."))
    text = pc.if_else(whole, pc.binary_join_element_wise(text, ".0", ""), text)
    other = pc.fill_null(pc.invert(plain), False)
    if not pc.any(other).as_py():
        return text
    rows = pc.indices_nonzero(other)
    show = java_float_str if single else java_double_str
    rest = [show(v) for v in values.take(rows).to_pylist()]
    return pc.replace_with_mask(text, other, pa.array(rest, pa.string()))


def java_decimal_str(value: Decimal) -> str:
    """Java's ``BigDecimal.toString`` (the same scientific-string rule as Python's)."""
    return str(value)


def java_plain_str(value: float | Decimal, *, single: bool = False) -> str:
    """``BigDecimal.toPlainString`` of a number.

    NiFi's JSON writer writes doubles and floats so when "Allow Scientific Notation" is false
    (``BigDecimal.valueOf(double)``).
    """
    if isinstance(value, Decimal):
        return format(value, "f")
    text = java_float_str(value) if single else java_double_str(value)
    if not math.isfinite(value):
        return text
    return format(Decimal(text.replace("E", "e")), "f")


# ---------------------------------------------------------------------------------------------
# DateTimeFormatter patterns


class DateTimePattern:
    """A ``java.time.DateTimeFormatter`` pattern (``yyyy-MM-dd HH:mm:ss.SSS``).

    It formats and parses Python dates, times and datetimes.

    The letters NiFi's users write are supported: ``y u M L d D H h k K m s S a E z Z X x`` and
    quoted text; any other letter is refused with a message naming it.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._parts: list[tuple[str, int] | str] = []
        try:
            tokens = tokenize_cached(pattern)  # the Expression Language's reading of patterns
        except ExpressionEvaluationError as exc:
            msg = f"date/time format {pattern!r}: {exc}"
            raise ConfigurationError(msg) from None
        for token in tokens:
            if isinstance(token, str):
                self._parts.append(token)
                continue
            if token.letter not in "yuMLdDHhkKmsSaEzZXx":
                msg = (
                    f"date/time format {pattern!r}: the letter {token.letter!r} is not "
                    "supported; use y M d H h m s S a E Z X"
                )
                raise ConfigurationError(msg)
            self._parts.append((token.letter, token.count))
        used: dict[str, int] = {}
        self._regex = re.compile(
            "".join(self._part_regex(p, used) for p in self._parts) + r"\Z", re.IGNORECASE
        )

    def __repr__(self) -> str:
        return f"DateTimePattern({self.pattern!r})"

    @property
    def regex(self) -> re.Pattern[str]:
        """The compiled regex :meth:`parse_datetime` matches the stripped text with."""
        return self._regex

    def format(self, value: dt.date | dt.time | dt.datetime) -> str:
        """*value* in this pattern (a time has no date fields, a date no time fields)."""
        return "".join(p if isinstance(p, str) else _format_field(p, value) for p in self._parts)

    def parse_datetime(self, text: str) -> dt.datetime | None:
        """The datetime *text* gives in this pattern, or None when it does not match."""
        match = self._regex.match(text.strip())
        if match is None:
            return None
        fields = {k: v for k, v in match.groupdict().items() if v is not None}
        try:
            return _build(fields)
        except ValueError:
            return None

    def parse_column(self, strings: pa.Array) -> pa.Array | None:
        """Every value of *strings* Arrow parses exactly as :meth:`parse_datetime` would.

        A ``timestamp[ms]`` array: null for null values and for the values left to
        :meth:`parse_datetime` (other widths, surrounding spaces, invalid dates). None when
        this pattern has no vectorised form.

        Only patterns of ``yyyy``/``uuuu``, ``MM``, ``dd``, ``HH``, ``mm``, ``ss`` and
        punctuation have one (NiFi's defaults among them). A value takes it when it has
        exactly the pattern's widths (RE2), and its parse formats back to the same text (so
        Arrow's normalising of ``02-30`` to ``03-01`` is left to the exact path).
        """
        plan = _vector_plan(self.pattern)
        if plan is None:
            return None
        regex, strptime, seconds = plan
        candidates = pc.if_else(pc.match_substring_regex(strings, regex), strings, None)
        parsed = pc.strptime(candidates, format=strptime, unit="ms", error_is_null=True)
        back = pc.strftime(pc.cast(parsed, pa.timestamp("s")), format=seconds)
        return pc.if_else(pc.equal(back, candidates), parsed, None)

    def matches(self, text: str) -> bool:
        """Whether *text* parses in this pattern (schema inference's date/time test)."""
        return self.parse_datetime(text) is not None

    @staticmethod
    def _part_regex(part: tuple[str, int] | str, used: dict[str, int]) -> str:
        if isinstance(part, str):
            return re.escape(part)
        letter, width = part
        group = {"u": "y", "L": "M", "k": "H", "K": "h"}.get(letter, letter)
        if letter in "yu":
            body = r"\d{2}" if width == 2 else r"-?\d{1,9}"
        elif (letter in "ML" and width >= 3) or letter == "E":
            body = "[A-Za-z]+"
        elif letter == "a":
            body = "AM|PM"
        elif letter == "S":
            body = rf"\d{{{width}}}"
        elif letter in "zZXx":
            body = r"Z|[+-]\d{2}:?(?:\d{2})?|UTC|GMT"
        elif width == 1:
            body = r"\d{1,3}" if letter == "D" else r"\d{1,2}"
        else:
            body = rf"\d{{{width}}}"
        # group names must be unique in a regex: a letter used twice gets a numbered group
        used[group] = used.get(group, 0) + 1
        suffix = "" if used[group] == 1 else f"__{used[group]}"
        return f"(?P<{group}{suffix}>{body})"


def _format_field(part: tuple[str, int], value: dt.date | dt.time | dt.datetime) -> str:
    letter, width = part
    if letter in "yu":
        year = value.year  # type: ignore[union-attr]
        return f"{year % 100:02d}" if width == 2 else str(year).zfill(width)
    if letter in "ML":
        month = value.month  # type: ignore[union-attr]
        if width == 3:
            return MONTHS[month - 1][:3]
        if width >= 4:
            return MONTHS[month - 1]
        return str(month).zfill(width)
    if letter == "d":
        return str(value.day).zfill(width)  # type: ignore[union-attr]
    if letter == "D":
        return str(value.timetuple().tm_yday).zfill(width)  # type: ignore[union-attr]
    if letter == "E":
        name = DAYS[value.weekday()]  # type: ignore[union-attr]
        return name if width >= 4 else name[:3]
    if letter == "H":
        return str(value.hour).zfill(width)  # type: ignore[union-attr]
    if letter == "k":
        return str(value.hour or 24).zfill(width)  # type: ignore[union-attr]
    if letter == "h":
        return str(value.hour % 12 or 12).zfill(width)  # type: ignore[union-attr]
    if letter == "K":
        return str(value.hour % 12).zfill(width)  # type: ignore[union-attr]
    if letter == "m":
        return str(value.minute).zfill(width)  # type: ignore[union-attr]
    if letter == "s":
        return str(value.second).zfill(width)  # type: ignore[union-attr]
    if letter == "S":
        return f"{value.microsecond:06d}"[:width].ljust(width, "0")  # type: ignore[union-attr]
    if letter == "a":
        return "AM" if value.hour < 12 else "PM"  # type: ignore[union-attr]
    if letter == "X":
        return "Z"
    if letter in {"x", "Z"}:
        return "+00:00" if width >= 3 and letter == "x" else "+0000"
    return "UTC"  # z


def _build(fields: dict[str, str]) -> dt.datetime:
    def get(name: str, default: int) -> int:
        return int(fields[name]) if name in fields else default

    year = get("y", 1970)
    if "y" in fields and len(fields["y"]) == 2:
        year += 2000
    month_text = fields.get("M", "1")
    month = int(month_text) if month_text.isdigit() else _month_number(month_text)
    if "D" in fields and "d" not in fields:
        base = dt.datetime(year, 1, 1) + dt.timedelta(days=int(fields["D"]) - 1)
        month, day = base.month, base.day
    else:
        day = get("d", 1)
    hour = get("H", 0)
    if "h" in fields:
        hour = int(fields["h"]) % 12
        if fields.get("a", "AM").upper() == "PM":
            hour += 12
    fraction = fields.get("S", "")
    micro = int((fraction + "000000")[:6]) if fraction else 0
    value = dt.datetime(year, month, day, hour, get("m", 0), get("s", 0), micro)
    zone = fields.get("Z") or fields.get("X") or fields.get("x") or fields.get("z")
    if zone and zone.upper() not in ("Z", "UTC", "GMT"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        value -= sign * offset
    return value


def _month_number(text: str) -> int:
    for index, name in enumerate(MONTHS, start=1):
        if name.lower().startswith(text.lower()[:3]):
            return index
    msg = f"not a month: {text!r}"
    raise ValueError(msg)


#: The pattern letters a vectorised parse takes: (letter, width) -> (RE2, strptime directive).
_VECTOR_FIELDS = {
    ("y", 4): ("[1-9][0-9]{3}", "%Y"),
    ("u", 4): ("[1-9][0-9]{3}", "%Y"),
    ("M", 2): ("[0-9]{2}", "%m"),
    ("d", 2): ("[0-9]{2}", "%d"),
    ("H", 2): ("[0-9]{2}", "%H"),
    ("m", 2): ("[0-9]{2}", "%M"),
    ("s", 2): ("[0-9]{2}", "%S"),
}
_VECTOR_LITERALS = frozenset(" -/:.T,_")


@functools.lru_cache(maxsize=64)
def _vector_plan(text: str) -> tuple[str, str, str] | None:
    """(RE2 regex, strptime format, the format to print seconds back) of a Java pattern.

    None when the pattern has a letter or width not in :data:`_VECTOR_FIELDS`, a literal
    beyond plain punctuation, or no literal at all (a digits-only timestamp is epoch millis).
    """
    regex, directives = ["^"], []
    literal = False
    for part in DateTimePattern(text)._parts:
        if isinstance(part, str):
            if not part or not set(part) <= _VECTOR_LITERALS:
                return None
            literal = True
            regex.append(r"\Q" + part + r"\E")
            directives.append(part)
        elif part in _VECTOR_FIELDS:
            body, directive = _VECTOR_FIELDS[part]
            regex.append(body)
            directives.append(directive)
        else:
            return None
    if not literal:
        return None
    strptime = "".join(directives)
    return "".join(regex) + "$", strptime, strptime


@functools.lru_cache(maxsize=64)
def pattern(text: str) -> DateTimePattern:
    """The compiled :class:`DateTimePattern` for *text* (cached: patterns come from properties)."""
    return DateTimePattern(text)


#: NiFi's default formats of the temporal types (RecordFieldType.DATE/TIME/TIMESTAMP).
DEFAULT_DATE = "yyyy-MM-dd"
DEFAULT_TIME = "HH:mm:ss"
DEFAULT_TIMESTAMP = "yyyy-MM-dd HH:mm:ss"

Formatter = Callable[[object], str]
