"""The cast of records to a writer's schema, as NiFi's writers convert each value to it.

Every record writer service writes through :func:`conform` when the records' schema is not
its own (a schema from the Schema Text property or a registry): columns are matched by name,
missing ones are null, and each is cast to the writer's type. NiFi converts field by field
(AvroTypeUtil.convertToAvroObject, DataTypeUtils.convertType); this does it a column at a
time with Arrow, and reads text for a date, time or timestamp in NiFi's default formats.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import RecordError
from flowcore.records import formats

__all__ = ["conform"]


def conform(batch: pa.RecordBatch | pa.Table, target: pa.Schema, *, first: int = 1) -> Any:
    """*batch* with *target*'s columns (missing ones null), cast to its types.

    A TIMESTAMP keeps microseconds (NiFi's is a ``java.sql.Timestamp``); a TIME holds
    milliseconds (a ``java.sql.Time``), so finer times are cut as NiFi cuts them; any other
    cast that would lose data still fails. Text becomes a date, time or timestamp in NiFi's
    default formats (:func:`_temporal_from_text`); *first* is the number of the batch's first
    record, for the error naming a value that does not parse.
    """
    arrays = []
    for field in target:
        index = batch.schema.get_field_index(field.name)
        if index < 0:
            arrays.append(pa.nulls(batch.num_rows, field.type))
            continue
        column = batch.column(index)
        if column.type == field.type:
            arrays.append(column)
            continue
        if _is_text(column.type) and _default_format(field.type) is not None:
            column = _temporal_from_text(column, field, first)
        arrays.append(pc.cast(column, options=pc.CastOptions(field.type, allow_time_truncate=True)))
    if isinstance(batch, pa.Table):
        return pa.Table.from_arrays(arrays, schema=target)
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _is_text(dtype: pa.DataType) -> bool:
    return pa.types.is_string(dtype) or pa.types.is_large_string(dtype)


def _default_format(dtype: pa.DataType) -> str | None:
    """NiFi's default format (RecordFieldType's) of a date, time or timestamp *dtype*."""
    if pa.types.is_timestamp(dtype):
        return formats.DEFAULT_TIMESTAMP
    if pa.types.is_date(dtype):
        return formats.DEFAULT_DATE
    if pa.types.is_time(dtype):
        return formats.DEFAULT_TIME
    return None


def _temporal_from_text(column: Any, field: pa.Field, first: int) -> pa.Array:
    """*column*'s text as a ``timestamp[us]``, ``date32`` or ``time32[ms]`` for *field*.

    NiFi's AvroTypeUtil.convertToAvroObject parses a STRING value for a date, time-millis or
    timestamp-millis field with RecordFieldType's default format (``yyyy-MM-dd``,
    ``HH:mm:ss``, ``yyyy-MM-dd HH:mm:ss``), blank text being null. Values are read a column
    at a time (:meth:`formats.DateTimePattern.parse_column`); only the ones it leaves (spaces
    around, invalid dates) go through the exact parser, one at a time.

    Raises:
        RecordError: a value does not parse, naming its record number and the field.
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    pattern = formats.pattern(_default_format(field.type) or formats.DEFAULT_TIMESTAMP)
    parsed = pattern.parse_column(column)
    if parsed is None or parsed.null_count != column.null_count:
        parsed = _parse_each(column, pattern, field.name, first, parsed)
    if pa.types.is_date(field.type):
        return pc.cast(pc.floor_temporal(parsed, unit="day"), pa.date32())
    if pa.types.is_time(field.type):
        day = pc.floor_temporal(parsed, unit="day")
        micros = pc.subtract(parsed.cast(pa.int64()), day.cast(pa.int64()))
        return pc.divide(micros, 1000).cast(pa.int32()).cast(pa.time32("ms"))
    return parsed


def _parse_each(
    column: pa.Array,
    pattern: formats.DateTimePattern,
    name: str,
    first: int,
    parsed: pa.Array | None,
) -> pa.Array:
    """*parsed* with the values the vectorised parse left parsed one at a time."""
    fast = parsed.to_pylist() if parsed is not None else [None] * len(column)
    values = []
    for number, (text, quick) in enumerate(zip(column.to_pylist(), fast, strict=True), first):
        if quick is not None or text is None or not text.strip():
            values.append(quick)
            continue
        value = pattern.parse_datetime(text)
        if value is None:
            msg = (
                f"record {number}, field {name!r}: {text!r} does not match the format "
                f"{pattern.pattern!r} (NiFi's default for the writer's type): write it in "
                "that format or give the writer's schema a string field"
            )
            raise RecordError(msg, record=number, field=name)
        values.append(value)
    return pa.array(values, pa.timestamp("us"))
