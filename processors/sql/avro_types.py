"""NiFi's JdbcCommon: result-set columns as Avro types, and rows as Avro datums.

Every field is a union ``["null", type]``. BIGINT is ``long``; INTEGER, SMALLINT and TINYINT
``int``; BOOLEAN/BIT ``boolean``; DOUBLE/FLOAT ``double``; REAL ``float``; binary types
``bytes``; character types ``string``; arrays (PostgreSQL's) JdbcCommon's
``["null", "bytes", {"type": "array", "items": "string"}]`` holding the array's text as bytes
(``{1,NULL,3}``: NiFi writes ``ResultSet.getBytes``). DECIMAL/NUMERIC, DATE, TIME and
TIMESTAMP are Avro logical types (decimal bytes, date, time-millis, timestamp-millis) when
Use Avro Logical Types is true, else strings in Java's ``toString`` forms
(``2024-01-02 03:04:05.0``). The column kind
comes from the driver's description (PostgreSQL's type OIDs) or, where the driver has none
(SQLite), from the first non-null value.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Callable, Sequence
from typing import Any

from processors.sql.pg_values import array_text

__all__ = ["ARRAY", "RECORD_NAME", "avro_schema", "column_kinds", "converters", "normalize_name"]

RECORD_NAME = "NiFi_ExecuteSQL_Record"

#: PostgreSQL type OIDs -> JDBC type names.
_PG_OIDS = {
    16: "BOOLEAN",
    17: "BINARY",
    18: "CHAR",
    19: "VARCHAR",
    20: "BIGINT",
    21: "SMALLINT",
    23: "INTEGER",
    25: "VARCHAR",
    26: "BIGINT",
    114: "VARCHAR",
    700: "REAL",
    701: "DOUBLE",
    790: "DOUBLE",  # money: pgjdbc's Types.DOUBLE (processors.sql.pg_values reads it so)
    1042: "CHAR",
    1043: "VARCHAR",
    1082: "DATE",
    1083: "TIME",
    1114: "TIMESTAMP",
    1184: "TIMESTAMP",
    1700: "NUMERIC",
    2950: "OTHER",
    3802: "VARCHAR",
}


#: PostgreSQL's array type OIDs -> the JDBC kind of their elements: a column of one is kind
#: ``ARRAY:<element kind>`` (Types.ARRAY; NiFi's record ARRAY of the element type).
_PG_ARRAY_OIDS = {
    1000: "BOOLEAN",
    1001: "BINARY",
    1002: "CHAR",
    1003: "VARCHAR",
    1005: "SMALLINT",
    1007: "INTEGER",
    1009: "VARCHAR",
    1014: "CHAR",
    1015: "VARCHAR",
    1016: "BIGINT",
    1021: "REAL",
    1022: "DOUBLE",
    1028: "BIGINT",
    1115: "TIMESTAMP",
    1182: "DATE",
    1183: "TIME",
    1185: "TIMESTAMP",
    1231: "NUMERIC",
    199: "VARCHAR",  # json[]: each element PostgreSQL's text
    3807: "VARCHAR",  # jsonb[]
    2951: "VARCHAR",  # uuid[]: the elements' text
    1187: "VARCHAR",  # interval[]: the elements' text
    1041: "VARCHAR",  # inet[]: the elements' text
    651: "VARCHAR",  # cidr[]: the elements' text
}
ARRAY = "ARRAY:"


def _kind_of_value(value: Any) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, decimal.Decimal):
        return "NUMERIC"
    if isinstance(value, dt.datetime):
        return "TIMESTAMP"
    if isinstance(value, dt.date):
        return "DATE"
    if isinstance(value, dt.time):
        return "TIME"
    if isinstance(value, bytes | bytearray | memoryview):
        return "BINARY"
    if isinstance(value, list):
        return ARRAY + "OTHER"  # an array type not named above: elements as they come
    return "VARCHAR"


def column_kinds(description: Sequence[Any], first_rows: Sequence[Sequence[Any]]) -> list[str]:
    """The JDBC type name of each column.

    From the description's type codes when they are PostgreSQL OIDs, else from the first
    non-null value (VARCHAR for an all-null column).
    """
    kinds = []
    for index, column in enumerate(description):
        code = column[1]
        kind = _PG_OIDS.get(code) if isinstance(code, int) else None
        if kind is None and isinstance(code, int) and code in _PG_ARRAY_OIDS:
            kind = ARRAY + _PG_ARRAY_OIDS[code]
        if kind is None:
            value = next((row[index] for row in first_rows if row[index] is not None), None)
            kind = "VARCHAR" if value is None else _kind_of_value(value)
        kinds.append(kind)
    return kinds


def normalize_name(name: str, normalize: bool) -> str:
    """NiFi's ``normalizeNameForAvro``: invalid characters to ``_``, a leading digit too."""
    if not normalize:
        return name
    text = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + text[1:] if text and text[0].isdigit() else text


def _decimal_type(column: Any, precision: int, scale: int) -> dict[str, Any]:
    col_precision = column[4] if len(column) > 4 and column[4] else 0
    col_scale = column[5] if len(column) > 5 and column[5] is not None else None
    if col_precision and col_precision > 0:
        precision = col_precision
        scale = col_scale if col_scale is not None and col_scale >= 0 else scale
    return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}


def avro_schema(
    description: Sequence[Any],
    kinds: Sequence[str],
    *,
    logical: bool,
    normalize: bool,
    precision: int = 10,
    scale: int = 0,
    record_name: str = RECORD_NAME,
) -> dict[str, Any]:
    """The Avro schema NiFi's ``JdbcCommon.createSchema`` writes for a result set."""
    fields = []
    for column, kind in zip(description, kinds, strict=True):
        avro: Any
        if kind in ("BIGINT",):
            avro = "long"
        elif kind in ("INTEGER", "SMALLINT", "TINYINT"):
            avro = "int"
        elif kind in ("BOOLEAN", "BIT"):
            avro = "boolean"
        elif kind in ("DOUBLE", "FLOAT"):
            avro = "double"
        elif kind == "REAL":
            avro = "float"
        elif kind in ("NUMERIC", "DECIMAL"):
            avro = _decimal_type(column, precision, scale) if logical else "string"
        elif kind == "DATE":
            avro = {"type": "int", "logicalType": "date"} if logical else "string"
        elif kind == "TIME":
            avro = {"type": "int", "logicalType": "time-millis"} if logical else "string"
        elif kind == "TIMESTAMP":
            avro = {"type": "long", "logicalType": "timestamp-millis"} if logical else "string"
        elif kind == "BINARY":
            avro = "bytes"
        elif kind.startswith(ARRAY):  # JdbcCommon's ARRAY: the value is getBytes's, its text
            fields.append(_array_field(normalize_name(column[0], normalize)))
            continue
        else:
            avro = "string"
        name = normalize_name(column[0], normalize)
        fields.append({"name": name, "type": ["null", avro], "default": None})
    return {
        "type": "record",
        "name": normalize_name(record_name, normalize),
        "namespace": "any.data",
        "fields": fields,
    }


def _array_field(name: str) -> dict[str, Any]:
    """JdbcCommon's field of a Types.ARRAY column: ``[null, bytes, array of string]``."""
    items = {"type": "array", "items": "string"}
    return {"name": name, "type": ["null", "bytes", items], "default": None}


def _array_bytes(value: Any) -> Any:
    """An array's PostgreSQL text as bytes (NiFi's ``rs.getBytes`` of an ARRAY column)."""
    if isinstance(value, list):
        return array_text(value).encode()
    return value.encode() if isinstance(value, str) else bytes(value)


def _java_timestamp(value: dt.datetime) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    fraction = f"{value.microsecond:06d}".rstrip("0") or "0"
    return f"{text}.{fraction}"


def _java_decimal(value: decimal.Decimal) -> str:
    return str(value)


def _text(value: Any) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _identity(value: Any) -> Any:
    return value


def converters(kinds: Sequence[str], *, logical: bool) -> list[Callable[[Any], Any]]:
    """Per column, what turns a driver value into the datum the schema above expects."""
    out: list[Callable[[Any], Any]] = []
    for kind in kinds:
        if kind == "TIMESTAMP" and not logical:
            out.append(lambda v: _java_timestamp(v) if isinstance(v, dt.datetime) else str(v))
        elif kind in ("DATE", "TIME") and not logical:
            out.append(str)
        elif kind in ("NUMERIC", "DECIMAL") and not logical:
            out.append(_java_decimal)
        elif kind == "TIMESTAMP":
            out.append(lambda v: v.replace(tzinfo=dt.UTC) if v.tzinfo is None else v)
        elif kind == "BINARY":
            out.append(bytes)
        elif kind.startswith(ARRAY):
            out.append(_array_bytes)
        elif kind in ("BIGINT", "INTEGER", "SMALLINT", "TINYINT"):
            out.append(int)
        elif kind in ("DOUBLE", "FLOAT", "REAL"):
            out.append(float)
        elif kind in ("VARCHAR", "CHAR", "OTHER"):
            out.append(_text)
        else:
            out.append(_identity)
    return out
