"""NiFi's RecordPath SQL functions (``RPATH``, ``RPATH_STRING``...) for QueryRecord's DuckDB.

NiFi's QueryRecord gives Calcite ``RPATH(field, 'path')``, the value a RecordPath selects in a
RECORD, an ARRAY of records or a MAP, and ``RPATH_STRING``, ``RPATH_INT``, ``RPATH_LONG``,
``RPATH_FLOAT``, ``RPATH_DOUBLE`` and ``RPATH_DATE``, the same value as one SQL type
(NiFi's ``RecordPathFunctions``). Here each is a DuckDB macro (see ``_calcite_duckdb``) that
hands a Python function the argument as its JSON (DuckDB's ``to_json``, which keeps the
fields' order) and its DuckDB type (a MAP is told from a RECORD by it); the function
evaluates the path with flowcore's RecordPath.

As NiFi: a null argument or nothing selected gives null; a typed function takes the non-null
values selected and fails when there is more than one ("must be further constrained").
Unlike NiFi, ``RPATH`` gives text (a value's text, or the JSON of a record, map or of several
values): DuckDB's functions have one result type, Calcite's ``RPATH`` an ``OTHER``. Dates and
timestamps reach the path as their ISO text (JSON has no dates), which ``RPATH_DATE`` reads.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from typing import Any

from flowcore.expression._values import to_epoch_millis
from flowcore.record_path import compile_record_path
from flowcore.record_path._values import FieldValue, RecordField, to_string

__all__ = ["RPATH_FUNCTIONS", "rpath_object", "selected_values"]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def selected_values(value_json: str, path: str, duck_type: str) -> list[Any]:
    """The values *path* selects in the argument (*value_json*, of DuckDB type *duck_type*).

    A RECORD is the path's root record; each record of an ARRAY is, its selections joined; a
    MAP is the context a relative path (``.['key']``) starts at, as in NiFi.

    Raises:
        ValueError: the argument is not a record, an array of records or a map.
    """
    compiled = compile_record_path(path)
    value = json.loads(value_json)
    if duck_type.startswith("MAP(") and isinstance(value, Mapping):
        holder = {"root": value}
        context = FieldValue(value, RecordField("root"), parent=FieldValue(holder))
        return [fv.value for fv in compiled.evaluate(holder, context=context)]
    if isinstance(value, Mapping):
        return [fv.value for fv in compiled.evaluate(value)]
    if isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
        return [fv.value for record in value for fv in compiled.evaluate(record)]
    msg = (
        f"Cannot evaluate RecordPath {path} against given argument because the argument is "
        f"of type {duck_type} instead of Record"
    )
    raise ValueError(msg)


def _text(value: Any) -> str | None:
    """A selected value as ``RPATH`` gives it: a scalar's text, JSON for the rest."""
    if isinstance(value, (Mapping, list)):
        return json.dumps(value, separators=(",", ":"))
    return to_string(value)


def rpath_object(value_json: str, path: str, duck_type: str) -> str | None:
    """``RPATH``: the one value selected (as text), several as a JSON array, none as null."""
    values = selected_values(value_json, path, duck_type)
    if not values:
        return None
    return _text(values[0]) if len(values) == 1 else _text(values)


def _typed(name: str, convert: Callable[[Any, str], Any]) -> Callable[[str, str, str], Any]:
    """A typed RPATH function: the one non-null value selected, converted by *convert*."""

    def rpath_typed(value_json: str, path: str, duck_type: str) -> Any:
        values = [v for v in selected_values(value_json, path, duck_type) if v is not None]
        if len(values) > 1:
            msg = (
                f"RecordPath {path} resulted in more than one return value. The RecordPath "
                "must be further constrained."
            )
            raise ValueError(msg)
        return convert(values[0], path) if values else None

    rpath_typed.__name__ = rpath_typed.__qualname__ = name
    return rpath_typed


def _not_as(kind: str, value: Any, path: str) -> ValueError:
    """NiFi's error for a value the function cannot convert to *kind*."""
    msg = (
        f"Cannot evaluate RecordPath {path} as {kind} because the value returned is of type "
        f"{type(value).__name__}"
    )
    return ValueError(msg)


def _number(kind: str, to: Callable[[Any], Any]) -> Callable[[Any, str], Any]:
    """Number or numeric text to *to*; a date or timestamp to its epoch milliseconds."""

    def convert(value: Any, path: str) -> Any:
        if isinstance(value, bool):
            raise _not_as(kind, value, path)
        if isinstance(value, (int, float)):
            return to(value)
        if isinstance(value, datetime.date):
            return to(_millis(value))
        if isinstance(value, str):
            try:
                return to(int(value) if to is int else float(value))
            except ValueError:
                msg = f"Cannot evaluate RecordPath {path} as {kind}: {value!r} is not a number"
                raise ValueError(msg) from None
        raise _not_as(kind, value, path)

    return convert


def _millis(value: datetime.date) -> int:
    """Epoch milliseconds of a date (UTC midnight) or a timestamp (UTC when naive)."""
    if not isinstance(value, datetime.datetime):
        value = datetime.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return to_epoch_millis(value)


def _date(value: Any, path: str) -> datetime.date:
    """A date, a timestamp's date (UTC), epoch milliseconds, or a DATE/TIMESTAMP's ISO text."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC)
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # not from_epoch_millis: it truncates a float's fraction (-0.5 is 1970-01-01 there,
        # 1969-12-31 here) and says another error for a date out of range
        return (_EPOCH + datetime.timedelta(milliseconds=value)).date()
    if isinstance(value, str):
        try:
            return _date(datetime.datetime.fromisoformat(value), path)
        except ValueError:
            msg = (
                f"Cannot evaluate RecordPath {path} as Date because the value returned is of "
                "type String. To parse a String value as a Date, please use the toDate "
                "function. For example, SELECT RPATH_DATE( record, 'toDate( /event/timestamp, "
                '"yyyy-MM-dd" )\' ) AS eventDate FROM FLOWFILE'
            )
            raise ValueError(msg) from None
    kind = "Date"
    raise _not_as(kind, value, path)


def _string(value: Any, path: str) -> str | None:
    """RPATH_STRING: the value's text (JSON for a record, map or array)."""
    del path
    return _text(value)


#: SQL name -> (its Python function, DuckDB result type), NiFi's RecordPathFunctions.
RPATH_FUNCTIONS: Mapping[str, tuple[Callable[[str, str, str], Any], str]] = {
    "rpath": (rpath_object, "VARCHAR"),
    "rpath_string": (_typed("rpath_string", _string), "VARCHAR"),
    "rpath_int": (_typed("rpath_int", _number("Integer", int)), "INTEGER"),
    "rpath_long": (_typed("rpath_long", _number("Long", int)), "BIGINT"),
    "rpath_float": (_typed("rpath_float", _number("Float", float)), "FLOAT"),
    "rpath_double": (_typed("rpath_double", _number("Double", float)), "DOUBLE"),
    "rpath_date": (_typed("rpath_date", _date), "DATE"),
}
