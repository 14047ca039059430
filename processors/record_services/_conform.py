"""The cast of records to a writer's schema, as NiFi's writers convert each value to it.

Every record writer service writes through :func:`conform` when the records' schema is not
its own (a schema from the Schema Text property or a registry): columns are matched by name,
missing ones are null, and each is cast to the writer's type. NiFi converts field by field
(AvroTypeUtil.convertToAvroObject, DataTypeUtils.convertType); this does it a column at a
time: Arrow's cast where it provably gives NiFi's answer (:func:`_agrees`), NiFi's rules
value by value elsewhere (:func:`_converted`), and text for a date, time or timestamp read in
NiFi's default formats.

NiFi's rules (DataTypeUtils.toBoolean, toInteger, toLong, toDouble, toString), which Arrow's
casts break: a BOOLEAN takes a boolean or the text ``true``/``false`` in any case, never a
number (Arrow: ``"1"`` and ``2`` are true); an integer takes a number, truncated toward zero
(``1.5`` is 1; Arrow refuses it) within the type's range, or text ``Integer.parseInt`` reads
(an optional sign and digits: no hex, no spaces; blank text is null), never a boolean (Arrow:
true is 1); a FLOAT or DOUBLE takes a number or decimal text, never a boolean; a STRING takes
anything, a double in Java's form (``1.0``, ``1.0E10``). A value NiFi refuses is a RecordError
naming its record, field and value: the FlowFile goes to failure, as in NiFi.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import RecordError
from flowcore.records import formats
from flowcore.records.schema import (
    ChoiceType,
    DataType,
    RecordSchema,
    cast_column,
    nifi_type_of_arrow,
)
from flowcore.records.values import (
    JAVA_DECIMAL_PATTERN,
    JAVA_DOUBLE_TEXT,
    JAVA_INTEGER_PATTERN,
    JAVA_INTEGER_TEXT,
    JAVA_SPACE,
    FieldError,
    TemporalFormats,
    coerce,
    decoder,
    to_text,
)

__all__ = ["conform"]


def conform(
    batch: pa.RecordBatch | pa.Table,
    target: pa.Schema,
    *,
    first: int = 1,
    formats_: TemporalFormats | None = None,
) -> Any:
    """*batch* with *target*'s columns (missing ones null), cast to its types.

    A TIMESTAMP keeps microseconds (NiFi's is a ``java.sql.Timestamp``); a TIME holds
    milliseconds (a ``java.sql.Time``), so finer times are cut as NiFi cuts them; any other
    cast that would lose data still fails. Text becomes a date, time or timestamp in NiFi's
    default formats (:func:`_temporal_from_text`); *first* is the number of the batch's first
    record, for the error naming a value that does not parse. A date, time or timestamp
    written into a STRING field is text in the writer's *formats_* (NiFi's convertType to
    STRING formats it with them), each unset one NiFi's default.
    """
    arrays = []
    wanted = RecordSchema.from_arrow(target).fields  # the target's NiFi types, once a call
    for field, want in zip(target, wanted, strict=True):
        index = batch.schema.get_field_index(field.name)
        if index < 0:
            arrays.append(pa.nulls(batch.num_rows, field.type))
            continue
        column = batch.column(index)
        have = _nifi_type(batch.schema.field(index))
        if isinstance(have, ChoiceType) != isinstance(want.type, ChoiceType):
            if isinstance(want.type, ChoiceType):
                arrays.append(_to_choice(column, field.name, want.type, have, first))
            else:
                arrays.append(_from_choice(column, field, first))
            continue
        if column.type == field.type:
            arrays.append(column)
            continue
        if _is_text(field.type) and _default_format(column.type) is not None:
            arrays.append(_temporal_to_text(column, formats_ or TemporalFormats()))
            continue
        if _is_text(column.type) and _default_format(field.type) is not None:
            column = _temporal_from_text(column, field, first)
        elif not _agrees(column.type, field.type):
            arrays.append(_converted(column, field, first))
            continue
        try:
            cast = cast_column(column, field.type, allow_time_truncate=True)
        except pa.ArrowInvalid:
            if not _nifi_rules(field.type):
                raise
            cast = _converted(column, field, first)  # raises a RecordError naming the value
        arrays.append(cast)
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


def _temporal_to_text(column: Any, formats_: TemporalFormats) -> pa.Array:
    """A date, time or timestamp *column* as text in the writer's format for its type."""
    t = pa.types
    chosen = (
        formats_.timestamp
        if t.is_timestamp(column.type)
        else formats_.date
        if t.is_date(column.type)
        else formats_.time
    )
    pattern = formats.pattern(chosen or _default_format(column.type) or "")
    texts = [None if v is None else pattern.format(v) for v in column.to_pylist()]
    return pa.array(texts, pa.string())


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


# --- NiFi's conversions where Arrow's casts differ -------------------------------------------

#: Text Java's Integer.parseInt and Long.parseLong read, for Arrow's regexes (ASCII digits).
_INTEGRAL_TEXT = f"^{JAVA_INTEGER_PATTERN}$"
#: Decimal text Java's Double.parseDouble reads the same as Arrow's cast (no NaN, Infinity,
#: spaces, hex or d/f suffix: those go value by value).
_DECIMAL_TEXT = f"^{JAVA_DECIMAL_PATTERN}$"
_LONG = (-(2**63), 2**63 - 1)


def _agrees(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether Arrow's cast of *source* values to *target* gives NiFi's value for each.

    Integers to a wider or narrower integer (both refuse what overflows), integers or floats
    to a wider float, and integers or booleans to text (Arrow prints them as Java does).
    Temporal, decimal and nested targets, and dates or decimals to text, keep Arrow's cast
    (a number to a date, time or timestamp read as epoch millis: :func:`cast_column`).
    """
    t = pa.types
    if t.is_null(source):
        return True
    if t.is_boolean(target) or t.is_integer(target):
        return t.is_integer(source) and t.is_integer(target)
    if t.is_floating(target):
        return t.is_integer(source) or (t.is_float32(source) and t.is_float64(target))
    if _is_text(target):  # a double or an array as text: Java's forms, not Arrow's
        return not (t.is_floating(source) or t.is_nested(source))
    return True


def _nifi_type(field: pa.Field) -> DataType:
    """*field*'s NiFi type (a CHOICE's values are JSON text, one a value)."""
    return RecordSchema.from_arrow(pa.schema([field])).fields[0].type


def _to_choice(
    column: Any, name: str, choice: ChoiceType, source: DataType, first: int
) -> pa.Array:
    """A column's values (of NiFi type *source*) as *choice*'s JSON text, NiFi's option each.

    Raises:
        RecordError: a value fits none of the options, naming its record and field.
    """
    decode = decoder(source)
    texts = []
    for number, value in enumerate(column.to_pylist(), first):
        try:
            texts.append(coerce(decode(value), choice, TemporalFormats(), name))
        except FieldError as exc:
            msg = f"record {number}, field {name!r}: {exc}"
            raise RecordError(msg, record=number, field=name) from None
    return pa.array(texts, pa.string())


def _from_choice(column: Any, field: pa.Field, first: int) -> pa.Array:
    """A CHOICE column's values (JSON text) decoded, then converted by NiFi's rules.

    A reader that inferred a CHOICE holds each value as its JSON text (whatever its options);
    the writer's field takes the value itself (``"1"`` is the text 1, not the quoted text).
    """
    values = [None if text is None else json.loads(text) for text in column.to_pylist()]
    target = field.type
    if _nifi_rules(target) or _is_text(target) or _coerced(target):
        values = [
            _nifi_value(value, target, field.name, number)
            for number, value in enumerate(values, first)
        ]
        return pa.array(values, target)
    return pa.array(values).cast(target)


def _coerced(target: pa.DataType) -> bool:
    """Whether :func:`_nifi_value` converts to *target* with :func:`values.coerce`.

    A date, time, timestamp or decimal: a number is epoch millis, text is in NiFi's default
    format, as DataTypeUtils.convertType reads them.
    """
    t = pa.types
    return t.is_timestamp(target) or t.is_date(target) or t.is_time(target) or t.is_decimal(target)


def _nifi_rules(target: pa.DataType) -> bool:
    """Whether :func:`_nifi_value` knows NiFi's conversion to *target*."""
    t = pa.types
    return t.is_boolean(target) or t.is_integer(target) or t.is_floating(target)


def _converted(column: Any, field: pa.Field, first: int) -> pa.Array:
    """*column* as *field*'s type by NiFi's rules (DataTypeUtils.convertType).

    Text that is plainly a number or a boolean is checked and cast a column at a time; any
    other column goes value by value.

    Raises:
        RecordError: NiFi refuses a value, naming its record number, field and value.
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    target = field.type
    t = pa.types
    if _is_text(column.type):
        if t.is_boolean(target):
            lower = pc.utf8_lower(column)
            true = pc.equal(lower, "true")
            if pc.all(pc.or_(true, pc.equal(lower, "false"))).as_py() is not False:
                return true
        elif t.is_integer(target) and _all_match(column, _INTEGRAL_TEXT):
            try:  # Arrow refuses a leading '+' that parseInt takes
                return pc.cast(pc.replace_substring_regex(column, r"^\+", ""), target)
            except pa.ArrowInvalid:
                pass  # out of range: the values name it
        elif t.is_floating(target) and _all_match(column, _DECIMAL_TEXT):
            return pc.cast(column, target)
    values = [
        _nifi_value(value, target, field.name, number)
        for number, value in enumerate(column.to_pylist(), first)
    ]
    return pa.array(values, target)


def _all_match(column: pa.Array, pattern: str) -> bool:
    return pc.all(pc.match_substring_regex(column, pattern)).as_py() is not False


def _nifi_value(value: Any, target: pa.DataType, name: str, number: int) -> Any:
    """*value* as NiFi's DataTypeUtils converts it to *target* (None stays None).

    Raises:
        RecordError: NiFi refuses the value.
    """
    if value is None:
        return None
    t = pa.types
    converted: Any = _REFUSED
    if t.is_boolean(target):
        if isinstance(value, bool):
            converted = value
        elif isinstance(value, str) and value.lower() in ("true", "false"):
            converted = value.lower() == "true"
    elif t.is_integer(target):
        converted = _integral(value, target)
    elif t.is_floating(target):
        converted = _floating(value)
    elif _is_text(target):
        converted = to_text(value)
    elif _coerced(target):
        try:
            return coerce(value, nifi_type_of_arrow(target), TemporalFormats(), name)
        except FieldError as exc:
            msg = f"record {number}, field {name!r}: {exc}"
            raise RecordError(msg, record=number, field=name) from None
    else:  # a nested target from one of the types NiFi and Arrow agree on
        return pa.array([value]).cast(target)[0].as_py()
    if converted is _REFUSED:
        type_name = nifi_type_of_arrow(target).name.upper()
        msg = (
            f"record {number}, field {name!r}: NiFi does not convert {value!r} to the "
            f"writer's type {type_name} (DataTypeUtils.convertType): correct the value or "
            "give the writer's schema a type that takes it"
        )
        raise RecordError(msg, record=number, field=name)
    return converted


_REFUSED = object()


def _integral(value: Any, target: pa.DataType) -> Any:
    """NiFi's toInteger/toLong/toShort/toByte of *value*, or _REFUSED."""
    number: int
    if isinstance(value, bool):
        return _REFUSED
    if isinstance(value, str):
        if not value.strip():
            return None
        if not JAVA_INTEGER_TEXT.fullmatch(value):
            return _REFUSED
        number = int(value)
    elif isinstance(value, float):
        # Java's Number.longValue(): toward zero, NaN is 0, infinities clamp to Long's range
        if math.isnan(value):
            number = 0
        elif math.isinf(value):
            number = _LONG[1] if value > 0 else _LONG[0]
        else:
            number = int(value)
    elif isinstance(value, (int, Decimal)):
        number = int(value)
    else:
        return _REFUSED
    bits = target.bit_width
    if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        return _REFUSED  # Math.toIntExact; Short/Byte.parseX refuse too
    return number


def _floating(value: Any) -> Any:
    """NiFi's toDouble/toFloat of *value*, or _REFUSED."""
    if isinstance(value, bool):
        return _REFUSED
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    if isinstance(value, str):
        text = value.strip(JAVA_SPACE)
        if not text:
            return None
        if not JAVA_DOUBLE_TEXT.fullmatch(text):
            return _REFUSED
        return float(text.rstrip("fFdD"))
    return _REFUSED
