r"""``sql.args.N.format``: how NiFi reads a parameter's text as a date, time, timestamp or bytes.

NiFi's JdbcCommon.setParameter: without a format, DATE, TIME and TIMESTAMP take epoch
milliseconds (``-?\\d{1,19}``) or their text form; with one, the text is parsed by a
``java.time.DateTimeFormatter``: a predefined one by name (``ISO_LOCAL_DATE``,
``ISO_LOCAL_DATE_TIME``, ``BASIC_ISO_DATE``, ...) or a pattern (``yyyyMMdd``, ``HHmmssSSS``).
BINARY, VARBINARY and LONGVARBINARY take ``ascii`` (the default), ``hex`` or ``base64``.
Epoch milliseconds are taken in UTC (flowcore's zone; NiFi's is the JVM's). With a format, an
offset in the text is dropped for DATE and TIME (NiFi's ``LocalDate.parse``/``LocalTime.parse``
keep the local fields) and applied for TIMESTAMP (NiFi's ``Instant.from``: the moment, in UTC);
a TIMESTAMP format without an offset is taken as UTC (NiFi refuses it). Without a format an
offset is refused, as NiFi's ``SimpleDateFormat`` refuses it. Fractions of a second past the
microsecond Python holds are rounded to it, as PostgreSQL rounds them.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
import email.utils
import re

from flowcore.errors import ConfigurationError
from flowcore.records.formats import pattern
from flowcore.records.values import JAVA_DOUBLE_TEXT, JAVA_SPACE

__all__ = ["binary_value", "number_value", "temporal_value"]

_LONG = re.compile(r"-?\d{1,19}")
#: ``new BigDecimal(text)``: a sign, digits with a point, an exponent; nothing else.
_BIG_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: Java's basic Base64 decoder: the alphabet, the padding optional but right when present.
_JAVA_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?")
_DATE = r"(?P<date>\d{4}-\d{2}-\d{2})"
_TIME = r"(?P<time>\d{2}:\d{2}(?::\d{2}(?:\.(?P<fraction>\d{1,9}))?)?)"
_OFFSET = r"(?P<offset>Z|[+-]\d{2}:\d{2}(?::\d{2})?)"
_ZONE = r"(?:\[[^\]]+\])"

#: java.time's predefined formatters (DateTimeFormatter.ISO_*), as regexes of their text.
_NAMED = {
    "ISO_LOCAL_DATE": _DATE,
    "ISO_OFFSET_DATE": _DATE + _OFFSET,
    "ISO_DATE": f"{_DATE}{_OFFSET}?",
    "ISO_LOCAL_TIME": _TIME,
    "ISO_OFFSET_TIME": _TIME + _OFFSET,
    "ISO_TIME": f"{_TIME}{_OFFSET}?",
    "ISO_LOCAL_DATE_TIME": f"{_DATE}T{_TIME}",
    "ISO_OFFSET_DATE_TIME": f"{_DATE}T{_TIME}{_OFFSET}",
    "ISO_ZONED_DATE_TIME": f"{_DATE}T{_TIME}{_OFFSET}{_ZONE}?",
    "ISO_DATE_TIME": f"{_DATE}T{_TIME}(?:{_OFFSET}{_ZONE}?)?",
    "BASIC_ISO_DATE": r"(?P<basic>\d{8})(?P<offset>Z|[+-]\d{4})?",
    "ISO_ORDINAL_DATE": rf"(?P<ordinal>\d{{4}}-\d{{3}}){_OFFSET}?",
    "ISO_WEEK_DATE": rf"(?P<week>\d{{4}}-W\d{{2}}-\d){_OFFSET}?",
}


def temporal_value(kind: str, text: str, fmt: str) -> dt.date | dt.time | dt.datetime:
    """The DATE, TIME or TIMESTAMP (*kind*) *text* gives in *fmt* ('' for none).

    Raises:
        ValueError: *text* does not parse, or *fmt* gives no value of *kind*.
    """
    if not fmt:
        return _unformatted(kind, text)
    date, time, offset = _parse(text, fmt)
    if kind == "TIME":
        if time is None:
            msg = f"the format {fmt!r} gives no time of day"
            raise ValueError(msg)
        return time
    if date is None:
        msg = f"the format {fmt!r} gives no date"
        raise ValueError(msg)
    if kind == "DATE":
        return date
    if time is None:
        msg = f"the format {fmt!r} gives no time of day"
        raise ValueError(msg)
    return dt.datetime.combine(date, time) - offset


def number_value(kind: str, text: str) -> float | decimal.Decimal:
    """The FLOAT/REAL/DOUBLE or NUMERIC/DECIMAL (*kind*) *text* gives, as Java parses it.

    Python's own parsers take more than Java's (``1_000``, ``inf``, a DECIMAL ``NaN``): what
    NiFi refuses is refused here too, rather than written.

    Raises:
        ValueError: *text* is no number of *kind* in Java's syntax.
    """
    if kind in ("NUMERIC", "DECIMAL"):
        if _BIG_DECIMAL.fullmatch(text) is None:
            msg = f"{text!r} is not a {kind} (digits, a point and an exponent: BigDecimal's form)"
            raise ValueError(msg)
        return decimal.Decimal(text)
    number = text.strip(JAVA_SPACE)  # Java's Double.parseDouble/Float.parseFloat trim
    if JAVA_DOUBLE_TEXT.fullmatch(number) is None:
        msg = f"For input string: {text!r} (not a {kind} in Java's syntax)"
        raise ValueError(msg)
    return float(number.rstrip("fFdD"))


def binary_value(text: str, fmt: str) -> bytes:
    """The bytes *text* gives in *fmt*: ``ascii`` (also ''), ``hex`` or ``base64``.

    Raises:
        ValueError: *text* is not in *fmt*, or *fmt* is none of those.
    """
    if fmt in ("", "ascii"):
        return text.encode("ascii", errors="replace")  # Java's getBytes(US_ASCII): '?'
    if fmt == "hex":
        if re.fullmatch(r"(?:[0-9A-Fa-f]{2})*", text) is None:
            msg = "Hexadecimal decoding failed: not an even number of hexadecimal digits"
            raise ValueError(msg)
        return bytes.fromhex(text)
    if fmt == "base64":
        if _JAVA_BASE64.fullmatch(text) is None:
            msg = (
                f"Base64 decoding failed: {text!r} is not Base64 (the alphabet A-Z a-z 0-9 + /, "
                "whole 4-character units or a 2-3 character end, padded right or not at all)"
            )
            raise ValueError(msg)
        try:  # Java's basic decoder: the alphabet only, the padding optional
            return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        except binascii.Error as error:
            msg = f"Base64 decoding failed: {error}"
            raise ValueError(msg) from None
    msg = f"Unable to parse binary data using the formatter `{fmt}` (use ascii, hex or base64)"
    raise ValueError(msg)


def _unformatted(kind: str, text: str) -> dt.date | dt.time | dt.datetime:
    """NiFi without a format: epoch milliseconds, else the type's text form."""
    if _LONG.fullmatch(text):
        moment = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=int(text))
        return {"DATE": moment.date(), "TIME": moment.time()}.get(kind, moment)
    if kind == "DATE":
        return dt.date.fromisoformat(text)
    value = dt.time.fromisoformat(text) if kind == "TIME" else dt.datetime.fromisoformat(text)
    if value.tzinfo is not None:
        msg = (
            f"{text!r} has an offset, which a {kind} without a format does not take "
            "(set sql.args.N.format, e.g. ISO_OFFSET_DATE_TIME)"
        )
        raise ValueError(msg)
    return value


def _parse(text: str, fmt: str) -> tuple[dt.date | None, dt.time | None, dt.timedelta]:
    """The local date, local time of day and offset from UTC *text* holds in *fmt*.

    *fmt* is a formatter's name or a pattern; the offset is zero when the text has none.
    """
    if fmt == "ISO_INSTANT":
        msg = "ISO_INSTANT gives an instant, no local date or time (java.time refuses it too)"
        raise ValueError(msg)
    if fmt == "RFC_1123_DATE_TIME":
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            msg = f"{text!r} is not an RFC 1123 date-time"
            raise ValueError(msg) from None
        return moment.date(), moment.time(), moment.utcoffset() or dt.timedelta()
    if fmt in _NAMED:
        return _named(text, fmt)
    try:
        compiled = pattern(fmt)
    except ConfigurationError as error:
        raise ValueError(str(error)) from None
    match = compiled.regex.match(text.strip())
    moment = compiled.parse_datetime(text)
    if match is None or moment is None:
        msg = f"{text!r} does not match the pattern {fmt!r}"
        raise ValueError(msg)
    fields = compiled.regex.groupindex
    groups = match.groupdict()
    fraction = groups.get("S")
    if fraction:
        moment = moment.replace(microsecond=0) + _fraction(fraction)
    zone = next((groups[z] for z in "ZXxz" if groups.get(z)), None)
    offset = _offset(zone)
    moment += offset  # parse_datetime gives UTC: back to the text's local fields
    has_date = "y" in fields and ("D" in fields or ("M" in fields and "d" in fields))
    has_time = "H" in fields or "h" in fields
    date = moment.date() if has_date else None
    return date, (moment.time() if has_time else None), offset


def _offset(zone: str | None) -> dt.timedelta:
    """The offset from UTC a zone's text gives (``Z``, ``UTC``, ``+02``, ``+0200``, ``-05:00``)."""
    if not zone or zone.upper() in ("Z", "UTC", "GMT"):
        return dt.timedelta()
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    return sign * dt.timedelta(
        hours=int(digits[:2]), minutes=int(digits[2:4] or 0), seconds=int(digits[4:6] or 0)
    )


def _named(text: str, fmt: str) -> tuple[dt.date | None, dt.time | None, dt.timedelta]:
    match = re.fullmatch(_NAMED[fmt], text)
    if match is None:
        msg = f"{text!r} is not in the form of {fmt}"
        raise ValueError(msg)
    groups = match.groupdict()
    date: dt.date | None = None
    if groups.get("date"):
        date = dt.date.fromisoformat(groups["date"])
    elif groups.get("basic"):
        date = dt.datetime.strptime(groups["basic"], "%Y%m%d").date()
    elif groups.get("ordinal"):
        date = dt.datetime.strptime(groups["ordinal"], "%Y-%j").date()
    elif groups.get("week"):
        year, week, day = re.findall(r"\d+", groups["week"])
        date = dt.date.fromisocalendar(int(year), int(week), int(day))
    time: dt.time | None = None
    if groups.get("time"):
        whole = dt.time.fromisoformat(groups["time"].split(".")[0])
        time = whole
        if groups.get("fraction"):
            time = _add(whole, _fraction(groups["fraction"]))
    return date, time, _offset(groups.get("offset"))


def _fraction(digits: str) -> dt.timedelta:
    """A fraction of a second (up to nanoseconds) rounded to microseconds, half up."""
    nanos = int(digits.ljust(9, "0")[:9])
    return dt.timedelta(microseconds=(nanos + 500) // 1000)


def _add(time: dt.time, delta: dt.timedelta) -> dt.time:
    """*time* plus *delta*, at most the day's last microsecond (PostgreSQL's 24:00 aside)."""
    moment = dt.datetime.combine(dt.date(2000, 1, 1), time) + delta
    return moment.time() if moment.day == 1 else dt.time.max
