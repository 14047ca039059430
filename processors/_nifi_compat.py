"""NiFi's ``DataTypeUtils.isCompatibleDataType`` over columns: which values a type takes.

ValidateRecord without Strict Type Checking calls a value valid when NiFi could convert it
to the field's type; NiFi decides that by the value's Java class and, for text, by its
characters, not by trying a conversion. Arrow's casts answer differently (true casts to 1,
1 to true, ``"0x1F"`` to 31, 1.5 to no int at all), so each pair of read type and wanted
type is answered here as NiFi answers it:

========================  ==========================================================
wanted type               values NiFi calls compatible
========================  ==========================================================
BOOLEAN                   a boolean; text ``true``/``false`` in any case
INT                       a number whose ``longValue()`` fits an int (1.5 fits: it
                          truncates); text of a sign and digits in the int's range
SHORT, BYTE               any number; sign-and-digits text in the type's range
LONG                      any number, a date or time; sign-and-digits text in range
BIGINT                    any number; sign-and-digits text
FLOAT, DOUBLE             any number; decimal text (``1.5``, ``-2e3``, ``NaN``,
                          ``Infinity``)
DECIMAL                   any number; decimal text without NaN or Infinity
STRING                    anything but a record (an array, a map, a number are fine)
CHAR                      text that is not empty
UUID                      text that is a UUID; 16 bytes
ENUM                      one of the symbols
ARRAY                     an array whose every element is compatible with the element
                          type; text for an array of bytes
MAP                       a map or a record
RECORD                    a record or a map
CHOICE                    a value compatible with one of the options
========================  ==========================================================

Dates, times and timestamps (text in the field's format) are judged by the caller.
A column of one read type is answered a column at a time where the answer is the same for
every value (a boolean column for an INT: all incompatible) or a vectorised test decides it
(numbers in range, text of digits); the rest value by value.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import uuid
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.records.schema import (
    INTEGRAL,
    ArrayType,
    ChoiceType,
    DataType,
    EnumType,
    MapType,
    RecordType,
    SimpleType,
)
from flowcore.records.values import JAVA_INTEGER_TEXT

__all__ = ["TEMPORAL", "compatible", "incompatible"]

#: Wanted types the caller judges (text in the field's date, time or timestamp format).
TEMPORAL = frozenset({"date", "time", "timestamp"})
#: isIntegral's ranges (Java's MIN_VALUE, MAX_VALUE), None: no range (BIGINT).
_RANGES: dict[str, tuple[int, int] | None] = {
    "byte": (-(2**7), 2**7 - 1),
    "short": (-(2**15), 2**15 - 1),
    "int": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
    "bigint": None,
}
#: DataTypeUtils' FLOATING_POINT_PATTERN and DECIMAL_PATTERN (Java's \d is ASCII).
_FLOATING = re.compile(
    r"[-+]?(Infinity|NaN|[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?|\.[0-9]+([eE][-+]?[0-9]+)?)"
)
_DECIMAL = re.compile(r"[-+]?([0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?|\.[0-9]+([eE][-+]?[0-9]+)?)")
_FLOAT_MAX = 3.4028234663852886e38


def incompatible(column: pa.Array, have: DataType, want: DataType) -> np.ndarray:
    """One boolean per value of *column* (read as NiFi type *have*): True: NiFi refuses it.

    NiFi's ``isCompatibleDataType(value, want)`` is false for it. Nulls are False (judged
    elsewhere, as missing values).

    Raises:
        ValueError: *want* is a date, time or timestamp (:data:`TEMPORAL`: the caller's).
    """
    if want.name in TEMPORAL:
        msg = f"{want.name} compatibility depends on the field's format: judge it apart"
        raise ValueError(msg)
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    present = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    verdict = _column_verdict(column, have, want)
    if verdict is not None:
        return present & ~np.asarray(verdict, dtype=bool)
    as_record = isinstance(have, RecordType)
    values = column.to_pylist()
    if isinstance(have, MapType):
        values = [None if v is None else dict(v) for v in values]
    return np.array(
        [v is not None and not compatible(v, want, mapping_is_record=as_record) for v in values],
        dtype=bool,
    )


def _column_verdict(column: pa.Array, have: DataType, want: DataType) -> np.ndarray | bool | None:
    """The answer for a whole column (True: compatible) or per value; None: value by value."""
    t = pa.types
    kind = column.type
    name = want.name
    if t.is_boolean(kind):
        return name in ("boolean", "string") or (
            isinstance(want, ChoiceType)
            and any(o.name in ("boolean", "string") for o in want.options)
        )
    numeric = t.is_integer(kind) or t.is_floating(kind) or t.is_decimal(kind)
    if numeric and isinstance(want, SimpleType):
        if name == "int":
            return _longs_fit_int(column)
        if name in INTEGRAL or name in ("float", "double", "string"):
            return True
        if name in ("boolean", "char", "uuid"):
            return False
    if (t.is_string(kind) or t.is_large_string(kind)) and isinstance(want, SimpleType):
        if name == "string":
            return True
        if name == "boolean":
            lower = pc.utf8_lower(column)
            ok = pc.or_(pc.equal(lower, "true"), pc.equal(lower, "false"))
            return np.asarray(pc.fill_null(ok, True).to_numpy(zero_copy_only=False), dtype=bool)
        if (
            name in _RANGES
            and pc.all(pc.match_substring_regex(column, r"^[+-]?[0-9]+$")).as_py() is not False
        ):
            limits = _RANGES[name]
            if limits is None:
                return True
            try:  # Arrow refuses a leading '+' and what overflows: those go value by value
                pc.cast(pc.replace_substring_regex(column, r"^\+", ""), _ARROW_INTS[name])
            except pa.ArrowInvalid:
                return None
            return True
    if isinstance(want, SimpleType) and name == "string" and not isinstance(have, RecordType):
        return True
    return None


_ARROW_INTS = {"byte": pa.int8(), "short": pa.int16(), "int": pa.int32(), "long": pa.int64()}


def _longs_fit_int(column: pa.Array) -> np.ndarray | bool:
    """Whether each number's Java ``longValue()`` fits an int (Math.toIntExact)."""
    t = pa.types
    if t.is_integer(column.type):
        low, high = pc.min_max(column).values()
        if low.as_py() is None or (low.as_py() >= -(2**31) and high.as_py() < 2**31):
            return True
    return np.array([v is None or _number_fits_int(v) for v in column.to_pylist()], dtype=bool)


def _long_value(number: Any) -> int:
    """Java's ``Number.longValue()``: toward zero, a double saturating (NaN is 0).

    A BigInteger or BigDecimal keeps its low 64 bits, as Java's does.
    """
    if isinstance(number, float):
        if math.isnan(number):
            return 0
        if math.isinf(number):
            return 2**63 - 1 if number > 0 else -(2**63)
        return max(-(2**63), min(2**63 - 1, int(number)))
    whole = int(number)
    return (whole + 2**63) % 2**64 - 2**63


def _number_fits_int(number: Any) -> bool:
    return -(2**31) <= _long_value(number) < 2**31


def compatible(value: Any, want: DataType | None, *, mapping_is_record: bool = True) -> bool:
    """NiFi's ``isCompatibleDataType(value, want)`` for one Python value.

    The Python type stands for the Java class NiFi's readers give: bool Boolean, int
    Integer/Long/BigInteger, float Double, Decimal BigDecimal, str String, bytes byte[],
    list Object[], a date or time Date, a dict a Record (*mapping_is_record*) or a Map.
    """
    if value is None:
        return False
    if want is None:
        return True
    name = want.name
    if isinstance(want, ChoiceType):
        return any(compatible(value, o, mapping_is_record=mapping_is_record) for o in want.options)
    if isinstance(want, ArrayType):
        if isinstance(value, list | tuple):
            return all(
                v is None or compatible(v, want.element, mapping_is_record=mapping_is_record)
                for v in value
            )
        return isinstance(value, str) and want.element is not None and want.element.name == "byte"
    if isinstance(want, MapType):
        return isinstance(value, dict)
    if isinstance(want, RecordType):
        return isinstance(value, dict)  # the fields are judged one by one
    if isinstance(want, EnumType):
        return value in want.symbols
    if name == "string":
        return not (isinstance(value, dict) and mapping_is_record)
    if name == "boolean":
        return isinstance(value, bool) or (
            isinstance(value, str) and value.lower() in ("true", "false")
        )
    if name == "char":
        return isinstance(value, str) and value != ""
    if name == "uuid":
        return _uuid_compatible(value)
    return _number_compatible(value, name)


def _number_compatible(value: Any, name: str) -> bool:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float | Decimal):
        return name != "int" or _number_fits_int(value)
    if isinstance(value, dt.date | dt.time):
        return name == "long"  # isLongTypeCompatible takes a java.util.Date
    if not isinstance(value, str):
        return False
    if name in _RANGES:
        if not JAVA_INTEGER_TEXT.fullmatch(value):
            return False
        limits = _RANGES[name]
        return limits is None or limits[0] <= int(value) <= limits[1]
    if name in ("float", "double"):
        return _FLOATING.fullmatch(value) is not None
    if name == "decimal":
        return _DECIMAL.fullmatch(value) is not None
    return False


def _uuid_compatible(value: Any) -> bool:
    if isinstance(value, bytes):
        return len(value) == 16
    if not isinstance(value, str) or not value.strip():
        return False
    try:
        uuid.UUID(value.strip())
    except ValueError:
        return False
    return True
