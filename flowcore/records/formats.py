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

import attrs
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
    (``new BigDecimal(Double.toString(v))``).

    Raises:
        ValueError: NaN or an infinity, which a BigDecimal cannot hold (Java throws
            NumberFormatException): a plain form of them would be no JSON number.
    """
    if isinstance(value, Decimal):
        return format(value, "f")
    text = java_float_str(value) if single else java_double_str(value)
    if not math.isfinite(value):
        msg = f"{text} has no plain decimal form (Java's BigDecimal refuses it)"
        raise ValueError(msg)
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
            if token.count > (4 if token.letter == "z" else 5) and token.letter in "zZXx":
                msg = (
                    f"date/time format {pattern!r}: too many pattern letters "
                    f"{token.letter * token.count!r} (java.time takes at most "
                    f"{4 if token.letter == 'z' else 5})"
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
        """Every value of *strings* that parses exactly as :meth:`parse_datetime` would.

        A ``timestamp[us]`` array: null for null values and for the values left to
        :meth:`parse_datetime` (other widths, surrounding spaces, invalid dates). None when
        this pattern has no vectorised form.

        Only patterns of ``yyyy``/``uuuu``, ``MM``, ``dd``, ``HH``, ``mm``, ``ss`` and
        punctuation have one (NiFi's defaults among them). Every such field and literal has a
        fixed width, so a value takes the vectorised form when it has exactly the pattern's
        length, its literals and ASCII digits at their places, and fields in the ranges
        ``datetime`` accepts (a ``02-30`` is left to the exact path, which refuses it).
        The digits are read from the string array's bytes with numpy (:class:`_FixedWidth`):
        Arrow's regex, ``strptime`` and a ``strftime`` round trip cost 1.2 s per million
        values, most of a CSV -> Parquet conversion's kernels; this costs a tenth of that.
        """
        plan = _vector_plan(self.pattern)
        if plan is None:
            return None
        if not (pa.types.is_string(strings.type) or pa.types.is_large_string(strings.type)):
            strings = strings.cast(pa.string())
        return plan.parse(strings)

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
    # values are UTC: the zero offset as java.time prints it for each pattern letter and width
    if letter == "X" or (letter == "Z" and width == 5):
        return "Z"
    if letter == "Z":
        return "GMT" if width == 4 else "+0000"
    if letter == "x":  # x +HH, xx +HHMM, xxx +HH:MM, xxxx +HHMMss, xxxxx +HH:MM:ss (no seconds)
        return {1: "+00", 3: "+00:00", 5: "+00:00"}.get(width, "+0000")
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


#: The fields a vectorised parse takes: (letter, width).
_VECTOR_FIELDS = frozenset({("y", 4), ("u", 4), ("M", 2), ("d", 2), ("H", 2), ("m", 2), ("s", 2)})
_VECTOR_LITERALS = frozenset(" -/:.T,_")
_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int32)


@attrs.frozen(eq=False)
class _FixedWidth:
    """A pattern whose every field and literal has a fixed width, parsed from a column's bytes.

    Attributes:
        length: characters (bytes: all ASCII) of a value in this pattern.
        fields: (first place, width, letter) of each field (``u`` read as ``y``).
        low: per place, the lowest byte allowed (``0`` for a digit, a literal itself).
        span: per place, how far above *low* a byte may be (9 for a digit, 0 for a literal).
    """

    length: int
    fields: tuple[tuple[int, int, str], ...]
    low: np.ndarray
    span: np.ndarray

    def parse(self, strings: pa.Array) -> pa.Array:
        """The ``timestamp[us]`` of each value in this pattern with valid fields; else null."""
        count = len(strings)
        offset_type = np.int64 if pa.types.is_large_string(strings.type) else np.int32
        buffers = strings.buffers()
        offsets = np.frombuffer(buffers[1], dtype=offset_type)[
            strings.offset : strings.offset + count + 1
        ].astype(np.int64)
        data = (
            np.frombuffer(buffers[2], dtype=np.uint8)
            if buffers[2] is not None
            else np.zeros(0, np.uint8)
        )
        ok = np.diff(offsets) == self.length
        if strings.null_count:
            ok &= strings.is_valid().to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(ok)
        if rows.size == count and count and offsets[-1] - offsets[0] == count * self.length:
            start = offsets[0]  # the common case: every value, back to back (a view, no copy)
            chars = data[start : start + count * self.length].reshape(count, self.length)
        else:
            chars = data[offsets[rows][:, None] + np.arange(self.length)]
        # literals equal, digits 0-9: byte - low <= span at every place (uint8 wraps below)
        good = ((chars - self.low) <= self.span).all(axis=1)
        numbers = {"y": 1970, "M": 1, "d": 1, "H": 0, "m": 0, "s": 0}
        for first, width, letter in self.fields:
            number = np.zeros(rows.size, dtype=np.int32)
            for place in range(first, first + width):
                number = number * 10 + chars[:, place] - 48
            numbers[letter] = number
        year, month, day, hour, minute, second = (
            np.broadcast_to(np.int32(numbers[k]), rows.shape) for k in "yMdHms"
        )
        if any(letter == "y" for _, _, letter in self.fields):
            good &= year >= 1000  # RE2's [1-9][0-9]{3}, as the exact path's regex allows
        good &= (month >= 1) & (month <= 12) & (hour <= 23) & (minute <= 59) & (second <= 59)
        leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
        month_days = _MONTH_DAYS[np.clip(month, 0, 12)] + ((month == 2) & leap)
        good &= (day >= 1) & (day <= month_days)
        days = _days_from_civil(year, month, day).astype(np.int64)
        micros = (days * 86_400 + (hour * 3600 + minute * 60 + second)) * 1_000_000
        values = np.zeros(count, dtype=np.int64)
        valid = np.zeros(count, dtype=bool)
        values[rows] = micros
        valid[rows] = good
        return pa.array(values, pa.timestamp("us"), mask=~valid)


def _days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (H. Hinnant's ``days_from_civil``)."""
    year = year - (month <= 2)
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * np.where(month > 2, month - 3, month + 9) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


@functools.lru_cache(maxsize=64)
def _vector_plan(text: str) -> _FixedWidth | None:
    """The fixed-width form of a Java pattern.

    None when the pattern has a letter or width not in :data:`_VECTOR_FIELDS`, a literal
    beyond plain punctuation, no literal at all (a digits-only timestamp is epoch millis), or a
    field given twice (``yyyy ... yyyy``: the exact parser keeps the first, as it always has).
    """
    literals: list[tuple[int, int]] = []
    fields: list[tuple[int, int, str]] = []
    at = 0
    for part in DateTimePattern(text)._parts:
        if isinstance(part, str):
            if not part or not set(part) <= _VECTOR_LITERALS:
                return None
            literals.extend((at + i, ord(char)) for i, char in enumerate(part))
            at += len(part)
        elif part in _VECTOR_FIELDS:
            letter, width = part
            letter = "y" if letter == "u" else letter
            if any(letter == seen for _, _, seen in fields):
                return None
            fields.append((at, width, letter))
            at += width
        else:
            return None
    if not literals:
        return None
    low = np.full(at, ord("0"), dtype=np.uint8)
    span = np.full(at, 9, dtype=np.uint8)
    for place, byte in literals:
        low[place], span[place] = byte, 0
    return _FixedWidth(at, tuple(fields), low, span)


@functools.lru_cache(maxsize=64)
def pattern(text: str) -> DateTimePattern:
    """The compiled :class:`DateTimePattern` for *text* (cached: patterns come from properties)."""
    return DateTimePattern(text)


#: NiFi's default formats of the temporal types (RecordFieldType.DATE/TIME/TIMESTAMP).
DEFAULT_DATE = "yyyy-MM-dd"
DEFAULT_TIME = "HH:mm:ss"
DEFAULT_TIMESTAMP = "yyyy-MM-dd HH:mm:ss"

Formatter = Callable[[object], str]
