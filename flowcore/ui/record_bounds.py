"""The record viewer's bounds applied: records decoded only once checked, strings cut to a cell.

:mod:`flowcore.ui.decoded_size` tells how big the first records of Avro or Parquet content decode
(bytes, and values such as array items) before anything is decoded. This module wires those
checks in front of flowcore's readers, so the viewer reads the first records only when they fit,
and cuts the strings and binaries of what it read, however nested, to a table cell's length.
The bounds themselves are the viewer's (:mod:`flowcore.ui.reading` holds them) and are passed
in, so each call reads them as they are then.
"""

from __future__ import annotations

import io
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from flowcore.errors import RecordError
from flowcore.records.avro_codec import AvroReaderOptions, read_avro
from flowcore.records.parquet_codec import ParquetReaderOptions, read_parquet
from flowcore.ui.decoded_size import (
    check_avro,
    check_avro_values,
    check_parquet,
    check_parquet_values,
)

__all__ = ["FirstRecords", "cut_strings", "first_records", "one_line"]


@attrs.frozen
class FirstRecords:
    """The first records of some content, read within the viewer's bounds.

    Attributes:
        batch: the records read, None when none could be.
        total: the records the content holds, when known.
        damage: one line saying where the content breaks off, None when it does not.
    """

    batch: pa.RecordBatch | None
    total: int | None = None
    damage: str | None = None


def first_records(
    data: bytes,
    kind: str,
    *,
    whole: bool,
    schema: dict[str, Any] | None,
    count: int,
    max_decoded: int,
    max_values: int,
) -> FirstRecords:
    """The first *count* records of Avro or Parquet *data*, refused when they decode too big.

    Avro is read one record past *count*, which tells whether there are more.

    Args:
        data: the content, or (*whole* False) its first bytes only.
        kind: ``avro`` or ``parquet``.
        whole: *data* is all of the content.
        schema: the bare Avro datums' schema (parsed JSON), None for a data file or Parquet.
        count: the records read at most.
        max_decoded: the bytes those records may decode to.
        max_values: the values (array items, map entries, record fields) they may hold.

    Raises:
        TooBigToShowError: the first records decode past a bound (checked before decoding).
        RecordError: the content is not Avro, or is damaged from its first block; fastavro
            and pyarrow raise their own kinds on other bad bytes (a damaged Avro header, a
            Parquet footer).
    """
    if kind == "parquet":
        metadata = pq.read_metadata(pa.BufferReader(data))
        check_parquet(metadata, count, max_decoded)
        check_parquet_values(metadata, count, max_values)
        batches = read_parquet(io.BytesIO(data), ParquetReaderOptions(batch_size=count))
        return FirstRecords(next(iter(batches), None), metadata.num_rows)
    try:
        batch = _avro_batch(data, count + 1, schema, max_decoded, max_values)
    except RecordError as exc:
        before = exc.record - 1 if isinstance(exc.record, int) else 0
        if whole and not before:
            raise  # not Avro at all, or damaged from its first block
        batch = _avro_batch(data, before, schema, max_decoded, max_values) if before else None
        if not whole:  # the window ends inside a block: what precedes it is all there is to show
            return FirstRecords(batch)
        damage = f"the Avro content breaks off after {before:,} records: {one_line(exc)}"
        return FirstRecords(batch, None, damage)
    rows = 0 if batch is None else batch.num_rows
    return FirstRecords(batch, rows if whole and rows <= count else None)


def _avro_batch(
    data: bytes, count: int, schema: dict[str, Any] | None, max_decoded: int, max_values: int
) -> pa.RecordBatch | None:
    check_avro(data, count, max_decoded)
    check_avro_values(data, count, max_values, schema)
    batches = read_avro(io.BytesIO(data), AvroReaderOptions(batch_size=count), avro_schema=schema)
    return next(iter(batches), None)


def cut_strings(batch: pa.RecordBatch, cell: int) -> tuple[pa.RecordBatch, bool]:
    """*batch* with its strings and binaries cut to *cell* + 1, and whether any was.

    Cut before the JSON is written, so a 200 MB value costs 200 MB once, not again as JSON;
    strings nested in lists, structs and maps are cut as top-level cells are (else only the
    decode bound holds them). One past *cell* is kept, so the viewer can tell a cut value from
    one exactly *cell* long.
    """
    columns, cut = [], False
    for original in batch.columns:
        column, was_cut = _cut_array(original, cell)
        columns.append(column)
        cut = cut or was_cut
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema), cut


def _cut_array(array: pa.Array, cell: int) -> tuple[pa.Array, bool]:
    """*array* with every string and binary in it, however nested, cut to *cell* + 1."""
    kind = array.type
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if text or pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        lengths = pc.binary_length(array)  # bytes: at least the characters
        if (pc.max(lengths).as_py() or 0) <= cell:
            return array, False
        cutter = pc.utf8_slice_codeunits if text else pc.binary_slice
        return cutter(array, 0, cell + 1), True
    mask = array.is_null() if array.null_count else None
    if pa.types.is_map(kind):
        keys, key_cut = _cut_array(array.keys, cell)
        items, item_cut = _cut_array(array.items, cell)
        if not (key_cut or item_cut):
            return array, False
        rebuilt = pa.MapArray.from_arrays(array.offsets, keys, items, type=kind, mask=mask)
        return rebuilt, True
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        values, cut = _cut_array(array.values, cell)  # the offsets index the unsliced values
        if not cut:
            return array, False
        factory = pa.ListArray if pa.types.is_list(kind) else pa.LargeListArray
        return factory.from_arrays(array.offsets, values, type=kind, mask=mask), True
    if pa.types.is_struct(kind):
        children = [_cut_array(child, cell) for child in array.flatten()]
        if not any(cut for _, cut in children):
            return array, False
        fields = [kind.field(index) for index in range(kind.num_fields)]
        rebuilt = pa.StructArray.from_arrays([c for c, _ in children], fields=fields, mask=mask)
        return rebuilt, True
    return array, False


def one_line(exc: BaseException) -> str:
    """*exc*'s message on one line (the viewer shows one), or its type when it has none."""
    return " ".join(str(exc).split()) or type(exc).__name__
