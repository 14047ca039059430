"""Record validation against a schema, column by column (NiFi's StandardSchemaValidator).

For ValidateRecord: each batch gets a per-record verdict (valid or not) and the problems NiFi
names: missing fields (null in a field that is not nullable), extra fields (a field the schema
lacks holding a value, when extra fields are not allowed) and invalid fields (a value whose type
does not match: with strict type checking the value's own type must be the field's or widen to
it; without, NiFi's isCompatibleDataType must take it, :mod:`processors._nifi_compat`). Field
names are NiFi's paths (``/age``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.records.schema import (
    STRING,
    ArrayType,
    ChoiceType,
    DataType,
    MapType,
    RecordSchema,
    RecordType,
    SimpleType,
    arrow_type,
)
from flowcore.records.values import FieldError, TemporalFormats, coerce
from processors._nifi_compat import TEMPORAL, compatible, incompatible

__all__ = ["BatchVerdict", "convert_text", "decoded_choices", "json_mismatches", "validate_batch"]

#: Integral and floating widening NiFi's strict checking allows (narrow -> wider kinds).
_WIDER = {
    "byte": {"byte", "short", "int", "long", "bigint"},
    "short": {"short", "int", "long", "bigint"},
    "int": {"int", "long", "bigint"},
    "long": {"long", "bigint"},
    "bigint": {"bigint"},
    "float": {"float", "double"},
    "double": {"double"},
}

#: The types NiFi's raw JSON reading converts text to (with the reader's formats).
_TEMPORAL = frozenset({"date", "time", "timestamp"})


@attrs.frozen
class BatchVerdict:
    """What validating one batch found.

    Attributes:
        valid: one boolean per record.
        missing / extra / invalid: the field paths each kind of problem named.
    """

    valid: np.ndarray
    missing: frozenset[str]
    extra: frozenset[str]
    invalid: frozenset[str]


def convert_text(
    batch: pa.RecordBatch,
    schema: RecordSchema,
    formats: TemporalFormats,
    *,
    temporal_only: bool,
) -> tuple[pa.RecordBatch, dict[str, np.ndarray]]:
    """*batch*'s text columns converted to *schema*'s simple types where each value converts.

    NiFi's raw reading: CSV has no types, so a text value takes the schema's type when it
    converts and stays text (a type mismatch) when not (``convertSimpleIfPossible``); JSON
    converts only text in date, time and timestamp fields, with the reader's formats
    (*temporal_only*). A column at a time (Arrow's safe cast; dates and times value by value
    with the reader's Java patterns): a value that does not convert becomes null in the
    converted batch and is flagged in the returned masks (field name -> one boolean a record).
    """
    columns = list(batch.columns)
    fields = batch.schema  # the others keep their metadata (a choice's NiFi type)
    unconverted: dict[str, np.ndarray] = {}
    for field in schema.fields:
        index = batch.schema.get_field_index(field.name)
        want = field.type
        if index < 0 or not isinstance(want, SimpleType) or want.name == "string":
            continue
        temporal = want.name in _TEMPORAL
        column = batch.column(index)
        text = pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
        if not text or (temporal_only and not temporal):
            continue
        if temporal:
            column, bad = _parsed(column, want, formats, field.name)
        else:  # NiFi's convertSimpleIfPossible: trimmed text, converted when compatible
            column = pc.utf8_trim_whitespace(column)
            column = pc.if_else(pc.equal(column, ""), pa.scalar(None, column.type), column)
            bad = incompatible(column, STRING, want)
            if bad.any():
                column = pc.if_else(pa.array(bad), pa.scalar(None, column.type), column)
            column, failed = _compatible_text(column, want, field.name)
            bad |= failed
        if bad.any():
            unconverted[field.name] = bad
        columns[index] = column
        fields = fields.set(index, pa.field(field.name, column.type))
    return pa.RecordBatch.from_arrays(columns, schema=fields), unconverted


def decoded_choices(batch: pa.RecordBatch, schema: RecordSchema) -> pa.RecordBatch:
    """*batch* with its CHOICE columns (JSON text a value) as *schema*'s field types.

    A reader that inferred a CHOICE holds each value as its JSON text (``"a"`` with its
    quotes); a valid record's value converts to the validation schema's type, so it is decoded
    and converted before the writer sees it (else a STRING field would get the quotes).
    A value that does not convert (a record judged valid holds none) becomes null.
    """
    read = RecordSchema.from_arrow(batch.schema)
    columns = list(batch.columns)
    fields = batch.schema
    for index, have in enumerate(read.fields):
        want = schema.field(have.name)
        if not isinstance(have.type, ChoiceType) or want is None:
            continue
        if isinstance(want.type, ChoiceType):
            continue
        values = []
        for text in batch.column(index).to_pylist():
            try:
                value = None if text is None else json.loads(text)
                values.append(coerce(value, want.type, TemporalFormats(), have.name))
            except FieldError:
                values.append(None)
        columns[index] = pa.array(values, type=arrow_type(want.type))
        fields = fields.set(index, pa.field(have.name, columns[index].type))
    return pa.RecordBatch.from_arrays(columns, schema=fields)


def _compatible_text(column: pa.Array, want: DataType, name: str) -> tuple[pa.Array, np.ndarray]:
    """Text NiFi calls compatible with simple type *want*, converted to it.

    Also which values failed to convert all the same (a decimal past its precision): they
    are null and flagged, as type mismatches.
    """
    target = arrow_type(want)
    unflagged = np.zeros(len(column), dtype=bool)
    if want.name == "boolean":
        return pc.equal(pc.utf8_lower(column), "true"), unflagged
    if want.name == "char":
        return pc.utf8_slice_codeunits(column, 0, 1), unflagged
    if pa.types.is_integer(target):
        column = pc.replace_substring_regex(column, r"^\+", "")  # parseInt's sign; Arrow's not
    try:
        return column.cast(target, safe=True), unflagged
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    values = []
    for index, text in enumerate(column.to_pylist()):
        try:
            values.append(coerce(text, want, TemporalFormats(), name))
        except FieldError:
            values.append(None)
            unflagged[index] = True
    return pa.array(values, target), unflagged


def _parsed(
    column: pa.Array, want: DataType, formats: TemporalFormats, name: str
) -> tuple[pa.Array, np.ndarray]:
    """A text column parsed as dates, times or timestamps with the reader's patterns."""
    values = []
    bad = np.zeros(len(column), dtype=bool)
    for index, text in enumerate(column.to_pylist()):
        try:
            values.append(coerce(text, want, formats, name))
        except FieldError:
            values.append(None)
            bad[index] = True
    return pa.array(values, type=arrow_type(want)), bad


def validate_batch(
    batch: pa.RecordBatch,
    schema: RecordSchema,
    *,
    allow_extra: bool,
    strict: bool,
    unconverted: dict[str, np.ndarray] | None = None,
    mismatched: tuple[np.ndarray, set[str]] | None = None,
) -> BatchVerdict:
    """The verdict on each record of *batch* (read under its reader's schema) against *schema*.

    *unconverted* (from :func:`convert_text`) flags text values that did not convert: those
    records are invalid with their field named as a type mismatch, not as missing.
    *mismatched* (from :func:`json_mismatches`) flags the records whose raw JSON values strict
    type checking refuses, and names their fields.
    """
    rows = batch.num_rows
    valid = np.ones(rows, dtype=bool)
    missing: set[str] = set()
    extra: set[str] = set()
    invalid: set[str] = set()
    if mismatched is not None and mismatched[0].any():
        valid &= ~mismatched[0]
        invalid |= mismatched[1]
    read = RecordSchema.from_arrow(batch.schema)
    for field in schema.fields:
        path = f"/{field.name}"
        index = batch.schema.get_field_index(field.name)
        column = batch.column(index) if index >= 0 else pa.nulls(rows)
        nulls = np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        text = (unconverted or {}).get(field.name)
        if text is not None:
            valid &= ~text
            invalid.add(path)
            nulls &= ~text
        if not field.nullable and field.default is None and nulls.any():
            valid &= ~nulls
            missing.add(path)
        if index < 0:
            continue
        have = read.fields[index].type
        bad = _bad_values(column, have, field.type, strict=strict) & ~nulls
        if bad.any():
            valid &= ~bad
            invalid.add(path)
    if not allow_extra:
        names = set(schema.names)
        for index, name in enumerate(batch.schema.names):
            if name in names:
                continue
            present = ~np.asarray(
                batch.column(index).is_null().to_numpy(zero_copy_only=False), dtype=bool
            )
            if present.any():
                valid &= ~present
                extra.add(f"/{name}")
    return BatchVerdict(valid, frozenset(missing), frozenset(extra), frozenset(invalid))


def _bad_values(column: pa.Array, have: DataType, want: DataType, *, strict: bool) -> np.ndarray:
    """One boolean per value: True where the value does not fit *want*."""
    rows = len(column)
    if have == want:
        return np.zeros(rows, dtype=bool)
    if isinstance(have, ChoiceType):  # JSON text per value: judge each by its own type
        return np.array([_bad_json(text, want, strict=strict) for text in column.to_pylist()])
    if strict:
        fits = isinstance(have, SimpleType) and want.name in _WIDER.get(have.name, set())
        if fits or (have.name == want.name):
            return np.zeros(rows, dtype=bool)
        return np.ones(rows, dtype=bool)
    if want.name in TEMPORAL:
        return _uncastable(column, arrow_type(want))
    return incompatible(column, have, want)


def _uncastable(column: pa.Array, target: pa.DataType) -> np.ndarray:
    try:
        column.cast(target, safe=True)
        return np.zeros(len(column), dtype=bool)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        pass
    out = np.zeros(len(column), dtype=bool)
    for index, value in enumerate(column.to_pylist()):
        if value is None:
            continue
        try:
            pa.array([value], type=column.type).cast(target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            out[index] = True
    return out


def _json_kind(value: object) -> str:
    """NiFi's class of a raw JSON value (Jackson's ``numberValue``: Integer, Long, BigInteger)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return "int"
        return "long" if -(2**63) <= value < 2**63 else "bigint"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "record"


def _bad_json(text: str | None, want: DataType, *, strict: bool) -> bool:
    if text is None:
        return False
    value = json.loads(text)
    kind = _json_kind(value)
    if kind == want.name or want.name in _WIDER.get(kind, set()):
        return False
    if strict:
        return True
    if want.name not in TEMPORAL:
        return not compatible(value, want)
    if kind in ("array", "record"):
        return True
    try:
        pa.array([value]).cast(arrow_type(want), safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        try:
            pa.array([str(value)]).cast(arrow_type(want), safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return True
    return False


#: Field types a raw JSON value has no kind of its own for (NiFi's Jackson gives no Byte, Short,
#: Float, Character, enum, UUID or BigDecimal): their values are judged as read, not raw.
_UNJUDGED = frozenset({"byte", "short", "float", "char", "enum", "uuid", "decimal"})
#: The Python types of the raw JSON values a simple type takes, when all are of them.
_RAW_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset({str}),
    "boolean": frozenset({bool}),
    "double": frozenset({float}),
    "date": frozenset({str}),  # text the reader parsed with its format (else the read failed)
    "time": frozenset({str}),
    "timestamp": frozenset({str}),
}
_INT_RANGES = {"int": (-(2**31), 2**31), "long": (-(2**63), 2**63), "bigint": (None, None)}
_NONE = type(None)
_NO_FIELDS: dict[str, Any] = {}


def json_mismatches(
    values: list[Any], schema: RecordSchema, prefix: str = ""
) -> tuple[np.ndarray, set[str]]:
    """Which records' raw JSON values strict type checking refuses, and the fields named.

    NiFi's ValidateRecord reads JSON raw: a value keeps its JSON kind (``"4"`` a String, ``4``
    an Integer, an object a Map or a Record as the schema says) and strict checking wants the
    field's own type (``isTypeCorrect``, with the widening of :data:`_WIDER`). flowcore's
    reader coerces ``"4"`` to an INT, so the parsed values are judged here, a field at a time:
    one C-level pass over a column's Python types, value by value only when one is off.
    Nested records are judged field by field (``/parent/child``); null is judged elsewhere
    (missing fields).

    Args:
        values: the records as parsed (dicts; anything else has no fields).
        schema: the schema validated against.
        prefix: the path of the record holding these fields.

    Returns:
        One boolean per record (True: a value does not fit) and the paths of those fields.
    """
    bad = np.zeros(len(values), dtype=bool)
    paths: set[str] = set()
    records = [value if type(value) is dict else _NO_FIELDS for value in values]
    for field in schema.fields:
        path = f"{prefix}/{field.name}"
        column = list(map(dict.get, records, itertools.repeat(field.name)))
        wrong = _raw_misfits(column, field.type)
        if isinstance(field.type, RecordType):
            nested, nested_paths = json_mismatches(column, field.type.schema, path)
            bad |= nested
            paths |= nested_paths
        if wrong is not None:
            bad |= wrong
            paths.add(path)
    return bad, paths


def _raw_misfits(column: list[Any], dtype: DataType) -> np.ndarray | None:
    """One boolean per value (True: its raw JSON kind does not fit *dtype*); None: all fit."""
    kinds = set(map(type, column)) - {_NONE}
    if not kinds:
        return None
    if dtype.name in _RAW_TYPES and kinds <= _RAW_TYPES[dtype.name]:
        return None
    if dtype.name in _INT_RANGES and kinds == {int}:
        low, high = _INT_RANGES[dtype.name]
        present = [value for value in column if value is not None]
        if low is None or (min(present) >= low and max(present) < high):
            return None
    if isinstance(dtype, RecordType) and kinds == {dict}:
        return None  # its fields are judged one by one
    if isinstance(dtype, MapType) and kinds == {dict}:  # all the maps' values as one column
        entries = list(itertools.chain.from_iterable(map(dict.values, filter(None, column))))
        if _raw_misfits(entries, dtype.value) is None:
            return None
    if isinstance(dtype, ArrayType) and dtype.element is not None and kinds == {list}:
        items = list(itertools.chain.from_iterable(filter(None, column)))
        if _raw_misfits(items, dtype.element) is None:
            return None
    wrong = np.array([not _raw_fits(value, dtype) for value in column], dtype=bool)
    return wrong if wrong.any() else None


def _raw_fits(value: Any, dtype: DataType | None) -> bool:
    """Whether a raw JSON *value* is of *dtype* for NiFi's strict ``isTypeCorrect``."""
    if value is None or dtype is None or dtype.name in _UNJUDGED:
        return True
    if isinstance(dtype, ChoiceType):
        return any(_raw_fits(value, option) for option in dtype.options)
    if isinstance(dtype, ArrayType):
        return type(value) is list and all(_raw_fits(item, dtype.element) for item in value)
    if isinstance(dtype, MapType):
        return type(value) is dict and all(_raw_fits(item, dtype.value) for item in value.values())
    if isinstance(dtype, RecordType):
        return type(value) is dict and all(
            _raw_fits(value.get(field.name), field.type) for field in dtype.schema.fields
        )
    if dtype.name in _RAW_TYPES:
        return type(value) in _RAW_TYPES[dtype.name]
    if type(value) not in (int, float):
        return False
    return dtype.name in _WIDER.get(_json_kind(value), set())


def filtered(batches: Iterator[pa.RecordBatch], keep: list[np.ndarray]) -> Iterator[pa.RecordBatch]:
    """*batches* each filtered by its mask in *keep* (in order)."""
    for batch, mask in zip(batches, keep, strict=False):
        yield batch.filter(pa.array(mask))
