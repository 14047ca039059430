"""PostgreSQL values as NiFi's JDBC driver (pgjdbc) hands them to its SQL processors.

psycopg turns many PostgreSQL types into Python objects whose ``str`` is not the text NiFi
writes: a jsonb ``{"k": [1, 2.50, null]}`` becomes a dict (``{'k': [1, 2.5, None]}``), an
interval a ``timedelta`` (``428 days, 4:05:06.5``: months lost), a range a ``Range``
(``[1, 10)``). pgjdbc gives json, jsonb and ranges as PostgreSQL's own text (Types.OTHER, a
``PGobject``), an interval as ``PGInterval``'s text (``1 years 2 mons 3 days 4 hours 5 mins
6.5 secs``) and money as a double (Types.DOUBLE). :func:`nifi_loaders` makes a pooled psycopg
connection load those types so (the DBCPConnectionPool registers it on each connection it
opens); :func:`array_text` is PostgreSQL's text of an array, what NiFi's ExecuteSQL and
QueryDatabaseTable write for an ARRAY column (``ResultSet.getBytes``: ``{1,NULL,3}``).

Types left as psycopg loads them, their text being NiFi's already: uuid (canonical text),
inet and cidr (``10.0.0.1``, ``192.168.1.5/24``, ``10.0.0.0/8``), bytea (bytes), xml, enums,
geometric types and bit strings (PostgreSQL's text: no psycopg loader), hstore (PostgreSQL's
text ``"a"=>"1"``: flowcore's pool turns SQLAlchemy's native hstore off; pgjdbc makes a
``Map``, whose record conversion NiFi leaves to the writer).
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import re
import struct
from typing import Any

__all__ = [
    "INTERVAL_OID",
    "MONEY_OID",
    "array_text",
    "binary_interval_text",
    "interval_text",
    "money",
    "nifi_loaders",
]

INTERVAL_OID = 1186
MONEY_OID = 790
#: Range and multirange types: PostgreSQL's text (pgjdbc's PGobject value).
RANGE_OIDS = (3904, 3906, 3908, 3910, 3912, 3926, 4451, 4532, 4533, 4534, 4535, 4536)

_INTERVAL_PART = re.compile(
    r"\s*(?P<number>[+-]?\d+)\s+(?P<unit>years?|mons?|days?)"
    r"|\s*(?P<sign>[+-])?(?P<h>\d+):(?P<m>\d\d):(?P<s>\d\d(?:\.\d+)?)"
)


def interval_text(text: str) -> str:
    """PostgreSQL's interval text (IntervalStyle postgres) as pgjdbc's ``PGInterval`` writes it.

    ``1 year 2 mons 3 days 04:05:06.5`` -> ``1 years 2 mons 3 days 4 hours 5 mins 6.5 secs``
    (seconds as Java's ``0.0#####``). Text of another IntervalStyle is kept as it is.
    Binary results: :func:`binary_interval_text`.
    """
    fields = {"year": 0, "mon": 0, "day": 0}
    hours = minutes = 0
    seconds = decimal.Decimal(0)
    position = 0
    for match in _INTERVAL_PART.finditer(text):
        if match.start() != position:
            return text
        position = match.end()
        if match["unit"]:
            fields[match["unit"].rstrip("s")] = int(match["number"])
            continue
        sign = -1 if match["sign"] == "-" else 1
        hours, minutes = sign * int(match["h"]), sign * int(match["m"])
        seconds = sign * decimal.Decimal(match["s"])
    if position != len(text) or not text.strip():
        return text
    return _pgjdbc_interval(fields["year"], fields["mon"], fields["day"], hours, minutes, seconds)


def _pgjdbc_interval(  # noqa: PLR0917
    years: int, months: int, days: int, hours: int, minutes: int, seconds: decimal.Decimal
) -> str:
    """``PGInterval.getValue``: every field, seconds as Java's ``0.0#####``."""
    secs = seconds.quantize(decimal.Decimal("0.000001"), rounding=decimal.ROUND_HALF_EVEN)
    shown = "0.0" if secs == 0 else format(secs.normalize(), "f")
    if "." not in shown:
        shown += ".0"
    return f"{years} years {months} mons {days} days {hours} hours {minutes} mins {shown} secs"


def binary_interval_text(data: bytes) -> str:
    """An interval's binary form (microseconds, days, months) as pgjdbc's text.

    The fields split as PostgreSQL's text splits them (each toward zero with the value's
    sign): ``-1 hour`` is ``-1 hours``, 14 months ``1 years 2 mons``.
    """
    micros, days, months = struct.unpack(">qii", bytes(data))
    sign = -1 if months < 0 else 1
    years, months = sign * (abs(months) // 12), sign * (abs(months) % 12)
    sign, micros = (-1 if micros < 0 else 1), abs(micros)
    hours, minutes = micros // 3_600_000_000, micros // 60_000_000 % 60
    seconds = decimal.Decimal(micros % 60_000_000).scaleb(-6)
    return _pgjdbc_interval(years, months, days, sign * hours, sign * minutes, sign * seconds)


def money(text: str) -> float:
    """A money value's text as pgjdbc's ``getDouble`` reads it (``-$1,234.50`` -> -1234.5).

    pgjdbc drops the currency symbol and group separators and reads ``(1.00)`` as negative.
    """
    negative = text.startswith("(") or "-" in text
    digits = re.sub(r"[^0-9.]", "", text)
    value = float(digits) if digits else 0.0
    return -value if negative else value


def nifi_loaders(connection: Any) -> None:
    """Make psycopg *connection* load json, jsonb, intervals, ranges and money as NiFi's.

    json and jsonb in text and binary results (psycopg strips jsonb's version byte before
    ``loads``); intervals, ranges and money come in text (flowcore asks binary results
    only for types whose binary load is the text's: processors.sql.query_base).
    """
    from psycopg.types.json import set_json_loads  # noqa: PLC0415 (psycopg is at hand)

    set_json_loads(_utf8, connection)
    text, interval, binary_interval, money_loader = _loaders()
    adapters = connection.adapters
    for oid in RANGE_OIDS:
        adapters.register_loader(oid, text)
    adapters.register_loader(INTERVAL_OID, interval)
    adapters.register_loader(INTERVAL_OID, binary_interval)
    adapters.register_loader(MONEY_OID, money_loader)


def _utf8(data: bytes | str) -> str:
    return data if isinstance(data, str) else bytes(data).decode("utf-8")


@functools.cache
def _loaders() -> tuple[type, type, type, type]:
    """The loaders: a value's text, an interval's pgjdbc text (text, binary), money's double.

    Made on first use: psycopg is an optional dependency, imported where a pool uses it.
    """
    from psycopg.adapt import Loader  # noqa: PLC0415
    from psycopg.pq import Format  # noqa: PLC0415

    class TextLoader(Loader):
        def load(self, data: Any) -> str:
            return _utf8(data)

    class IntervalLoader(Loader):
        def load(self, data: Any) -> str:
            return interval_text(_utf8(data))

    class BinaryIntervalLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> str:
            return binary_interval_text(data)

    class MoneyLoader(Loader):
        def load(self, data: Any) -> float:
            return money(_utf8(data))

    return TextLoader, IntervalLoader, BinaryIntervalLoader, MoneyLoader


_QUOTED = re.compile(r'[{}",\\\s]')


def _element_text(value: Any) -> str:
    """An array element as PostgreSQL's output function writes it (the common types)."""
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, float):
        if value != value:  # noqa: PLR0124 (NaN)
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value).removesuffix(".0")
    if isinstance(value, dt.datetime):
        text = value.isoformat(sep=" ")
        if value.microsecond:
            head, _, rest = text.partition(".")
            fraction, offset = rest[:6].rstrip("0"), rest[6:]
            text = f"{head}.{fraction}{offset}"
        return re.sub(r"([+-]\d\d):00$", r"\1", text)
    if isinstance(value, dt.time):
        text = value.isoformat()
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")  # PostgreSQL writes no exponent
    return str(value)


def _quoted(text: str) -> str:
    if text == "" or text.upper() == "NULL" or _QUOTED.search(text):
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    return text


def array_text(value: list[Any]) -> str:
    """PostgreSQL's text of an array psycopg loaded as a list: ``[1, None, 3]`` -> ``{1,NULL,3}``.

    Elements are written as PostgreSQL's output functions write the common element types
    (numbers, booleans, text, dates, times, timestamps, uuid, bytea), quoted where PostgreSQL
    quotes them (empty, ``NULL``, braces, quotes, commas, backslashes, white space).
    """
    parts = []
    for element in value:
        if element is None:
            parts.append("NULL")
        elif isinstance(element, list):
            parts.append(array_text(element))
        else:
            parts.append(_quoted(_element_text(element)))
    return "{" + ",".join(parts) + "}"
