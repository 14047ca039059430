"""Record validation against a schema, column by column (NiFi's StandardSchemaValidator).

For ValidateRecord: each batch gets a per-record verdict (valid or not) and the problems NiFi
names: missing fields (null in a field that is not nullable), extra fields (a field the schema
lacks holding a value, when extra fields are not allowed) and invalid fields (a value whose type
does not match: with strict type checking the value's own type must be the field's or widen to
it; without, it must convert). Field names are NiFi's paths (``/age``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.records.schema import ChoiceType, DataType, RecordSchema, SimpleType, arrow_type
from flowcore.records.values import FieldError, TemporalFormats, coerce

__all__ = ["BatchVerdict", "convert_text", "validate_batch"]

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
        else:
            bad = _uncastable(column, arrow_type(want))
            if bad.any():
                column = pc.if_else(pa.array(bad), pa.scalar(None, column.type), column)
            column = column.cast(arrow_type(want), safe=True)
        if bad.any():
            unconverted[field.name] = bad
        columns[index] = column
        fields = fields.set(index, pa.field(field.name, column.type))
    return pa.RecordBatch.from_arrays(columns, schema=fields), unconverted


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
) -> BatchVerdict:
    """The verdict on each record of *batch* (read under its reader's schema) against *schema*.

    *unconverted* (from :func:`convert_text`) flags text values that did not convert: those
    records are invalid with their field named as a type mismatch, not as missing.
    """
    rows = batch.num_rows
    valid = np.ones(rows, dtype=bool)
    missing: set[str] = set()
    extra: set[str] = set()
    invalid: set[str] = set()
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
    return _uncastable(column, arrow_type(want))


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
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int" if -(2**31) <= value < 2**31 else "long"
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
    if strict or kind in ("array", "record"):
        return True
    try:
        pa.array([value]).cast(arrow_type(want), safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        try:
            pa.array([str(value)]).cast(arrow_type(want), safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return True
    return False


def filtered(batches: Iterator[pa.RecordBatch], keep: list[np.ndarray]) -> Iterator[pa.RecordBatch]:
    """*batches* each filtered by its mask in *keep* (in order)."""
    for batch, mask in zip(batches, keep, strict=False):
        yield batch.filter(pa.array(mask))
