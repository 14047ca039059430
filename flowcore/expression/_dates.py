"""Java date patterns (``yyyy/MM/dd HH:mm:ss.SSS'Z'``) for ``format`` and ``toDate``.

NiFi formats and parses dates with Java's DateTimeFormatter. Users copy patterns from NiFi flows,
so flowcore reads the same pattern letters rather than Python's ``%Y`` codes. A pattern is
tokenized once (cached) into literal text and fields; formatting renders each field, parsing
builds a regular expression with one group per field.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import attrs

from flowcore.errors import ExpressionEvaluationError, quoted

__all__ = [
    "DAYS",
    "MONTHS",
    "Field",
    "format_date",
    "parse_date",
    "resolve_zone",
    "tokenize_cached",
]

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_PATTERN_LETTERS = set("GuyYDMLdQqwWEeFaBhKkHmsSAnNVvzOXxZ")

# Java's ZoneId.SHORT_IDS: the three-letter ids Java accepts that IANA does not define the same way.
_SHORT_IDS = {
    "EST": "-05:00",
    "MST": "-07:00",
    "HST": "-10:00",
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo",
    "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare",
    "CNT": "America/St_Johns",
    "CST": "America/Chicago",
    "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia",
    "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
}
_OFFSET = re.compile(r"^(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?$")


@functools.lru_cache(maxsize=256)
def resolve_zone(name: str | None) -> tzinfo:
    """Return the zone for a Java zone id (``GMT``, ``America/New_York``, ``GMT+02:00``, ``EST``).

    ``None`` or ``""`` means the local zone, as the JVM's default zone.

    Raises:
        ExpressionEvaluationError: the id is not a zone Java or IANA knows.
    """
    if not name:
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else UTC
    text = _SHORT_IDS.get(name, name)
    if text in ("Z", "UTC", "GMT", "UT"):
        return UTC if text != "GMT" else timezone(timedelta(0), "GMT")
    match = _OFFSET.match(text)
    if match:
        sign, hours, minutes = match.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes or 0))
        return timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        msg = f"{name!r} is not a known time zone; use an id such as 'GMT', 'UTC' or 'Europe/Paris'"
        raise ExpressionEvaluationError(msg) from None


@attrs.frozen
class Field:
    """One pattern letter repeated *count* times (``yyyy`` is ``Field("y", 4)``)."""

    letter: str
    count: int


def _tokenize(pattern: str) -> tuple[str | Field, ...]:
    tokens: list[str | Field] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            end = i + 1
            text = []
            while end < len(pattern):
                if pattern[end] == "'":
                    if end + 1 < len(pattern) and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            else:
                msg = f"date pattern {pattern!r} has an unterminated quote at position {i}"
                raise ExpressionEvaluationError(msg)
            tokens.append("'" if end == i + 1 else "".join(text))
            i = end + 1
        elif ch.isascii() and ch.isalpha():
            if ch not in _PATTERN_LETTERS:
                msg = f"date pattern {pattern!r} uses unknown pattern letter {ch!r} at {i}"
                raise ExpressionEvaluationError(msg)
            run = i
            while run < len(pattern) and pattern[run] == ch:
                run += 1
            tokens.append(Field(ch, run - i))
            i = run
        else:
            tokens.append(ch)
            i += 1
    return tuple(tokens)


#: A pattern's literal texts and fields, cached (patterns come from properties).
tokenize_cached = functools.lru_cache(maxsize=512)(_tokenize)


def _offset_text(moment: datetime, colon: bool, z_for_zero: bool) -> str:
    offset = moment.utcoffset() or timedelta(0)
    if z_for_zero and not offset:
        return "Z"
    total = int(offset.total_seconds() // 60)
    sign = "+" if total >= 0 else "-"
    hours, minutes = divmod(abs(total), 60)
    return f"{sign}{hours:02d}:{minutes:02d}" if colon else f"{sign}{hours:02d}{minutes:02d}"


def _format_field(field: Field, moment: datetime) -> str:
    letter, count = field.letter, field.count
    if letter in "yuY":
        return f"{moment.year % 100:02d}" if count == 2 else str(moment.year).zfill(count)
    if letter in "ML":
        if count >= 4:
            return MONTHS[moment.month - 1]
        if count == 3:
            return MONTHS[moment.month - 1][:3]
        return str(moment.month).zfill(count)
    if letter == "d":
        return str(moment.day).zfill(count)
    if letter == "D":
        return str(moment.timetuple().tm_yday).zfill(count)
    if letter in "Ee":
        name = DAYS[moment.weekday()]
        return name if count >= 4 else name[:3]
    if letter == "a":
        return "AM" if moment.hour < 12 else "PM"
    if letter == "H":
        return str(moment.hour).zfill(count)
    if letter == "k":
        return str(moment.hour or 24).zfill(count)
    if letter == "K":
        return str(moment.hour % 12).zfill(count)
    if letter == "h":
        return str(moment.hour % 12 or 12).zfill(count)
    if letter == "m":
        return str(moment.minute).zfill(count)
    if letter == "s":
        return str(moment.second).zfill(count)
    if letter == "S":
        return f"{moment.microsecond:06d}000"[:count].ljust(count, "0")
    if letter == "n":
        return str(moment.microsecond * 1000).zfill(count)
    if letter == "A":
        millis = ((moment.hour * 60 + moment.minute) * 60 + moment.second) * 1000
        return str(millis + moment.microsecond // 1000).zfill(count)
    if letter == "G":
        return "AD"
    if letter in {"z", "v"}:
        return moment.tzname() or _offset_text(moment, colon=True, z_for_zero=False)
    if letter == "V":
        zone = moment.tzinfo
        return getattr(zone, "key", None) or moment.tzname() or "Z"
    if letter == "Z":
        if count == 4:
            return "GMT" + (
                _offset_text(moment, colon=True, z_for_zero=False) if moment.utcoffset() else ""
            )
        return _offset_text(moment, colon=count == 5, z_for_zero=count == 5)
    if letter in "Xx":
        # java.time: X/x +HHmm, XX +HHMM, XXX +HH:MM, XXXX +HHMMss, XXXXX +HH:MM:ss
        text = _offset_text(moment, colon=count in (3, 5), z_for_zero=letter == "X")
        return text[:3] if count == 1 and text.endswith("00") else text
    if letter == "O":  # localized offset: GMT alone for zero, O's hour unpadded (GMT+8, GMT+5:30)
        if not moment.utcoffset():
            return "GMT"
        text = _offset_text(moment, colon=True, z_for_zero=False)
        if count == 1:
            hours, minutes = text[1:3], text[4:6]
            text = text[0] + str(int(hours)) + ("" if minutes == "00" else ":" + minutes)
        return "GMT" + text
    return str(moment.isoweekday())  # Q, q, w, W, F, B: rarely used; best effort


def format_date(moment: datetime, pattern: str, zone: str | None) -> str:
    """Format *moment* with a Java date *pattern* in *zone* (local when ``None``)."""
    local = moment.astimezone(resolve_zone(zone))
    parts = []
    for token in tokenize_cached(pattern):
        parts.append(token if isinstance(token, str) else _format_field(token, local))
    return "".join(parts)


def _field_regex(field: Field, group: str) -> str:
    letter, count = field.letter, field.count
    if letter in "yuY":
        body = r"\d{2}" if count == 2 else r"[-+]?\d{4,9}" if count >= 4 else r"[-+]?\d{1,9}"
    elif letter in "ML" and count >= 3:
        body = "|".join(m if count >= 4 else m[:3] for m in MONTHS)
    elif letter in "Ee":
        body = "|".join(d if count >= 4 else d[:3] for d in DAYS)
    elif letter == "a":
        body = "AM|PM|am|pm"
    elif letter == "G":
        body = "AD|BC"
    elif letter in "zvV":
        body = r"[A-Za-z][A-Za-z0-9_/+\-:]*"
    elif letter in "ZXxO":
        body = r"Z|(?:GMT)?[+-]\d{1,2}(?::?\d{2})?|GMT"
    elif letter in "Sn":
        body = rf"\d{{{count}}}" if letter == "S" else r"\d+"
    else:
        body = r"\d{1,9}" if count == 1 else rf"\d{{{count}}}"
    return f"(?P<{group}>{body})"


@functools.lru_cache(maxsize=512)
def _parser(pattern: str) -> tuple[re.Pattern[str], tuple[tuple[str, Field], ...]]:
    regex = []
    groups: list[tuple[str, Field]] = []
    for token in _tokenize(pattern):
        if isinstance(token, str):
            regex.append(re.escape(token))
        else:
            name = f"g{len(groups)}"
            groups.append((name, token))
            regex.append(_field_regex(token, name))
    return re.compile("".join(regex), re.IGNORECASE), tuple(groups)


def _zone_from_text(text: str) -> tzinfo:
    if text.upper() == "Z":
        return UTC
    return resolve_zone(text)


def parse_date(text: str, pattern: str, zone: str | None) -> datetime:
    """Parse *text* with a Java date *pattern*; fields missing from it default as Java's do.

    Raises:
        ExpressionEvaluationError: *text* does not match *pattern*.
    """
    regex, groups = _parser(pattern)
    match = regex.fullmatch(text)
    if match is None:
        msg = f"cannot parse {quoted(text)} as a date with the pattern {pattern!r}"
        raise ExpressionEvaluationError(msg)
    values = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "micro": 0}
    pm: bool | None = None
    hour12: int | None = None
    parsed_zone: tzinfo | None = None
    for name, field in groups:
        raw = match.group(name)
        letter = field.letter
        if letter in "yuY":
            year = int(raw)
            values["year"] = 2000 + year if field.count == 2 else year
        elif letter in "ML":
            values["month"] = (
                [m.lower()[: len(raw)] for m in MONTHS].index(raw.lower()) + 1
                if field.count >= 3
                else int(raw)
            )
        elif letter == "d":
            values["day"] = int(raw)
        elif letter in "Hk":
            values["hour"] = int(raw) % 24
        elif letter in "hK":
            hour12 = int(raw) % 12
        elif letter == "a":
            pm = raw.upper() == "PM"
        elif letter == "m":
            values["minute"] = int(raw)
        elif letter == "s":
            values["second"] = int(raw)
        elif letter == "S":
            values["micro"] = int((raw + "000000")[:6])
        elif letter in "zvVZXxO":
            parsed_zone = _zone_from_text(raw)
    if hour12 is not None:
        values["hour"] = hour12 + (12 if pm else 0)
    elif pm is not None and values["hour"] < 12 and pm:
        values["hour"] += 12
    try:
        naive = datetime(
            values["year"],
            values["month"],
            values["day"],
            values["hour"],
            values["minute"],
            values["second"],
            values["micro"],
        )
    except ValueError as ex:
        msg = f"cannot parse {quoted(text)} as a date with the pattern {pattern!r}: {ex}"
        raise ExpressionEvaluationError(msg) from None
    return naive.replace(tzinfo=parsed_zone or resolve_zone(zone))
