"""Avro's binary encoding of flat record batches, a column at a time from Arrow (numpy).

Why: fastavro encodes one dict at a time, so a batch was first made into dicts and then written
record by record: the larger part of a JSON -> Avro conversion (issue 35's Spark row). A flat
record whose fields are ints, longs, floats, doubles, booleans and strings, each maybe a union
with null, is encoded here column by column (each field's bytes for every row: zigzag varints,
little-endian IEEE floats, length-prefixed UTF-8) and the parts interleaved into the rows'
order: the same bytes fastavro writes for those records. Anything else (nested records, arrays,
maps, logical types, an Arrow type the Avro type does not take as it is, a null where the Avro
type has none) returns None, and the caller writes the batch with fastavro.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pyarrow as pa

from flowcore.records.schema import NIFI_TYPE_KEY

__all__ = ["ColumnPlan", "block", "column_plan", "encode_rows"]

#: Avro primitive -> whether an Arrow type's values are written as they are.
_TAKES = {
    "int": lambda t: pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t),
    "long": pa.types.is_signed_integer,
    "float": pa.types.is_float32,
    "double": lambda t: pa.types.is_float64(t) or pa.types.is_float32(t),
    "boolean": pa.types.is_boolean,
    "string": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
}


@attrs.frozen
class _Field:
    column: int  # the Arrow column's index
    kind: str  # the Avro primitive
    value_branch: int | None  # the union's branch of the value, None when not a union
    null_branch: int | None  # the union's branch of null, None when the field takes none


@attrs.frozen
class ColumnPlan:
    """How to encode batches of one Arrow schema under one Avro record schema."""

    fields: tuple[_Field, ...]


def column_plan(avro: Any, arrow: pa.Schema) -> ColumnPlan | None:
    """The plan for batches of *arrow* under the Avro record schema *avro*; None when not flat.

    Every Avro field must be an Arrow column of a type it takes as it is, its Avro type a
    primitive or a union of one primitive with ``null``. A column whose field carries a NiFi
    type (``nifi.type`` metadata: a CHOICE's JSON text, a BIGINT...) is not taken: its values
    are not what the Arrow type says, and the record path decodes them.
    """
    if not isinstance(avro, dict) or avro.get("type") != "record":
        return None
    names = arrow.names
    fields = []
    for field in avro.get("fields", ()):
        if field.get("name") not in names or names.count(field["name"]) > 1:
            return None
        index = names.index(field["name"])
        if NIFI_TYPE_KEY in (arrow.field(index).metadata or {}):
            return None
        kind, value_branch, null_branch = _branches(field.get("type"))
        if kind is None or not _TAKES[kind](arrow.field(index).type):
            return None
        fields.append(_Field(index, kind, value_branch, null_branch))
    return ColumnPlan(tuple(fields))


def _branches(avro_type: Any) -> tuple[str | None, int | None, int | None]:
    """(primitive, its branch, null's branch) of a field's Avro type; None when not simple."""
    if isinstance(avro_type, dict) and set(avro_type) == {"type"}:
        avro_type = avro_type["type"]
    if isinstance(avro_type, str):
        return (avro_type if avro_type in _TAKES else None), None, None
    if isinstance(avro_type, list) and len(avro_type) == 2 and "null" in avro_type:
        null = avro_type.index("null")
        kind, _, _ = _branches(avro_type[1 - null])
        return kind, 1 - null, null
    return None, None, None


def encode_rows(batch: pa.RecordBatch, plan: ColumnPlan) -> tuple[np.ndarray, np.ndarray] | None:
    """Every row of *batch* encoded: (the rows' bytes one after another, each row's length).

    None when a column holds a null its Avro type does not take (fastavro's message says so).
    """
    rows = batch.num_rows
    parts: list[tuple[np.ndarray, np.ndarray]] = []  # (length per row, bytes) in row order
    for field in plan.fields:
        column = batch.column(field.column)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        valid = _valid(column)
        if valid is not None and field.null_branch is None:
            return None
        if field.value_branch is not None:
            branch = np.full(rows, field.value_branch * 2, np.uint8)  # zigzag of a small index
            if valid is not None:
                branch[~valid] = field.null_branch * 2
            parts.append((np.ones(rows, np.int64), branch))
        parts.extend(_values(column, field.kind, valid))
    return _interleave(parts, rows)


def _valid(column: pa.Array) -> np.ndarray | None:
    """Which rows hold a value; None when all do."""
    if column.null_count == 0:
        return None
    return np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _values(
    column: pa.Array, kind: str, valid: np.ndarray | None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The parts of one field's values (nothing for a null row)."""
    rows = len(column)
    if kind == "string":
        filled = column.fill_null("") if valid is not None else column
        offsets = np.frombuffer(
            filled.buffers()[1],
            dtype=np.int64 if pa.types.is_large_string(filled.type) else np.int32,
            count=rows + 1,
            offset=filled.offset * (8 if pa.types.is_large_string(filled.type) else 4),
        ).astype(np.int64)
        data = filled.buffers()[2]
        text = np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)
        sizes = np.diff(offsets)  # a null row's is 0: filled with ''
        if valid is None:
            prefix_sizes, prefixes = _varints(_zigzag(sizes))
        else:
            prefix_sizes, prefixes = _varints(_zigzag(sizes[valid]))
            prefix_sizes = _spread(prefix_sizes, valid)
        return [(prefix_sizes, prefixes), (sizes, text[offsets[0] : offsets[-1]])]
    values = column.to_numpy(zero_copy_only=False) if valid is None else _filled(column)
    if valid is not None:
        values = values[valid]
    if kind in ("int", "long"):
        sizes, data = _varints(_zigzag(values.astype(np.int64)))
    elif kind == "boolean":
        sizes, data = np.ones(len(values), np.int64), values.astype(np.uint8)
    else:
        width = np.dtype("<f4" if kind == "float" else "<f8")
        data = np.ascontiguousarray(values.astype(width)).view(np.uint8)
        sizes = np.full(len(values), width.itemsize, np.int64)
    if valid is not None:
        sizes = _spread(sizes, valid)
    return [(sizes, data)]


def _filled(column: pa.Array) -> np.ndarray:
    """A column with nulls as numpy values (their slots are dropped right after)."""
    fill = False if pa.types.is_boolean(column.type) else 0
    return column.fill_null(pa.scalar(fill, column.type)).to_numpy(zero_copy_only=False)


def _spread(sizes: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per-value sizes as per-row sizes: 0 for a null row."""
    out = np.zeros(len(valid), np.int64)
    out[valid] = sizes
    return out


def _zigzag(values: np.ndarray) -> np.ndarray:
    return ((values << 1) ^ (values >> 63)).view(np.uint64)


def _varints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Avro's base-128 varints of unsigned *values*: (bytes per value, the bytes)."""
    sizes = np.ones(len(values), np.int64)
    rest = values >> np.uint64(7)
    while rest.any():
        sizes += rest != 0
        rest >>= np.uint64(7)
    widest = int(sizes.max()) if len(sizes) else 1
    steps = np.arange(widest, dtype=np.uint64) * np.uint64(7)
    groups = ((values[:, None] >> steps) & np.uint64(0x7F)).astype(np.uint8)
    position = np.arange(widest)[None, :]
    groups |= np.where(position < sizes[:, None] - 1, 0x80, 0).astype(np.uint8)
    return sizes, groups[position < sizes[:, None]]


def _interleave(parts: list[tuple[np.ndarray, np.ndarray]], rows: int) -> tuple[np.ndarray, ...]:
    """The parts' bytes in row order: row 0's parts in field order, then row 1's..."""
    lengths = np.zeros(rows, np.int64)
    for sizes, _ in parts:
        lengths += sizes
    at = np.zeros(rows, np.int64)
    np.cumsum(lengths[:-1], out=at[1:])
    out = np.empty(int(lengths.sum()), np.uint8)
    for sizes, data in parts:
        if len(data) == rows and (sizes == 1).all():
            out[at] = data
        elif len(data):
            starts = np.zeros(rows, np.int64)
            np.cumsum(sizes[:-1], out=starts[1:])
            out[np.repeat(at - starts, sizes) + np.arange(len(data))] = data
        at += sizes
    return out, lengths


def block(lengths: np.ndarray, interval: int) -> list[tuple[int, int, int]]:
    """Data-file blocks of rows of *lengths* bytes: (first row, end row, bytes).

    Each block ends at the first row that brings it to *interval* bytes, as fastavro's writer
    cuts them.
    """
    ends = np.cumsum(lengths)
    blocks = []
    first, done = 0, 0
    while first < len(lengths):
        end = int(np.searchsorted(ends, done + interval, side="left")) + 1
        end = min(end, len(lengths))
        size = int(ends[end - 1]) - done
        blocks.append((first, end, size))
        first, done = end, done + size
    return blocks
