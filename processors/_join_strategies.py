"""JoinEnrichment's join strategies over the two FlowFiles' record batches.

- **Wrapper** (NiFi's WrapperJoinStrategy): records paired by index into ``{original,
  enrichment}``; the shorter side is null past its end; a side without records leaves its
  field out.
- **Insert Enrichment Fields** (InsertRecordFieldsJoinStrategy): the enrichment record's
  fields put into the original record at the Insertion Record Path, paired by index; past the
  original's last record the output ends, past the enrichment's the originals pass unchanged.
- **SQL** (SqlJoinStrategy): a SELECT over tables ``original`` and ``enrichment``, run by
  DuckDB (Calcite in NiFi); the enrichment is held as a table, the original streamed (or, when
  the query scans it more than once, spilled to an Arrow file and memory-mapped).

Wrapper and Insert at ``/`` are columnar (struct columns and column merges, two streams read
in step); Insert at another path updates records as mappings through RecordPath.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.ipc

from flowcore.record_path import RecordPath
from flowcore.records.schema import RecordSchema
from flowcore.records.values import batch_rows
from processors._calcite_duckdb import (
    run_query,
    sql_batches,
    sql_schema,
)
from processors._lookup_records import enriched_schema, rows_to_batch

__all__ = ["Side", "insert_fields", "sql_join", "wrapper"]

#: Rows per batch of a SQL join's result.
RESULT_BATCH_ROWS = 8192  # records

Side = Iterator[pa.RecordBatch]


def _peek(side: Side) -> tuple[pa.RecordBatch | None, Side]:
    """The first batch with records (None: none), and the side from there on."""
    for batch in side:
        if batch.num_rows:

            def rest(first: pa.RecordBatch = batch) -> Side:
                yield first
                yield from side

            return batch, rest()
    return None, iter(())


def _in_step(original: Side, enrichment: Side) -> Iterator[tuple[Any, Any]]:
    """Slices of equal length from both sides (a side past its end gives None)."""
    left: pa.RecordBatch | None = None
    right: pa.RecordBatch | None = None
    left_done = right_done = False
    while True:
        while not left_done and (left is None or left.num_rows == 0):
            left = next(original, None)
            left_done = left is None
        while not right_done and (right is None or right.num_rows == 0):
            right = next(enrichment, None)
            right_done = right is None
        if left_done and right_done:
            return
        if left_done:
            yield None, right
            right = None
            continue
        if right_done:
            yield left, None
            left = None
            continue
        assert left is not None
        assert right is not None
        count = min(left.num_rows, right.num_rows)
        yield left.slice(0, count), right.slice(0, count)
        left, right = left.slice(count), right.slice(count)


def _struct(batch: pa.RecordBatch) -> pa.StructArray:
    return pa.StructArray.from_arrays(batch.columns, fields=list(batch.schema))


def _struct_type(batch: pa.RecordBatch) -> pa.StructType:
    return pa.struct(list(batch.schema))


def wrapper(original: Side, enrichment: Side) -> tuple[RecordSchema, Iterator[pa.RecordBatch]]:
    """NiFi's Wrapper join: ``original`` and ``enrichment`` record fields, paired by index."""
    first_original, original = _peek(original)
    first_enrichment, enrichment = _peek(enrichment)
    fields = []  # (field, which side: 0 original, 1 enrichment)
    if first_original is not None:
        fields.append((pa.field("original", _struct_type(first_original)), 0))
    if first_enrichment is not None:
        fields.append((pa.field("enrichment", _struct_type(first_enrichment)), 1))
    schema = pa.schema([field for field, _ in fields])

    def batches() -> Iterator[pa.RecordBatch]:
        for pair in _in_step(original, enrichment):
            rows = next(side for side in pair if side is not None).num_rows
            columns = []
            for field, which in fields:
                side = pair[which]
                if side is None:
                    columns.append(pa.nulls(rows, field.type))
                else:
                    columns.append(_struct(side.cast(pa.schema(list(field.type)))))
            yield pa.RecordBatch.from_arrays(columns, schema=schema)

    return RecordSchema.from_arrow(schema), batches()


def insert_fields(
    original: Side, enrichment: Side, path: RecordPath
) -> tuple[RecordSchema, Iterator[pa.RecordBatch]]:
    """NiFi's Insert Enrichment Fields join: enrichment fields into the original at *path*."""
    first_original, original = _peek(original)
    first_enrichment, enrichment = _peek(enrichment)
    if first_original is None:
        return RecordSchema(()), iter(())
    if first_enrichment is None:
        return RecordSchema.from_arrow(first_original.schema), original
    if path.path.strip() == "/":
        return _insert_at_root(first_original, first_enrichment, original, enrichment)
    return _insert_at_path(first_original, first_enrichment, original, enrichment, path)


def _insert_at_root(
    first_original: pa.RecordBatch,
    first_enrichment: pa.RecordBatch,
    original: Side,
    enrichment: Side,
) -> tuple[RecordSchema, Iterator[pa.RecordBatch]]:
    """Columns: the original's (an enrichment field of the same name wins), then the new ones."""
    added = {f.name: f for f in first_enrichment.schema}
    fields = [added.get(f.name, f) for f in first_original.schema]
    fields += [f for f in first_enrichment.schema if f.name not in first_original.schema.names]
    schema = pa.schema(fields)

    def batches() -> Iterator[pa.RecordBatch]:
        for left, right in _in_step(original, enrichment):
            if left is None:
                return  # NiFi's record set ends with the original's records
            columns = []
            for field in schema:
                mine = left.column(field.name) if field.name in left.schema.names else None
                theirs = (
                    right.column(field.name)
                    if right is not None and field.name in right.schema.names
                    else None
                )
                if theirs is not None:  # an enrichment record on every row of this slice
                    columns.append(theirs.cast(field.type))
                elif mine is not None:
                    columns.append(mine.cast(field.type))
                else:
                    columns.append(pa.nulls(left.num_rows, field.type))
            yield pa.RecordBatch.from_arrays(columns, schema=schema)

    return RecordSchema.from_arrow(schema), batches()


def _insert_at_path(
    first_original: pa.RecordBatch,
    first_enrichment: pa.RecordBatch,
    original: Side,
    enrichment: Side,
    path: RecordPath,
) -> tuple[RecordSchema, Iterator[pa.RecordBatch]]:
    """Records as mappings: the enrichment's fields set on each record *path* selects."""

    def combine(row: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
        if extra is None:
            return row
        for field in path.evaluate(row):
            if isinstance(field.value, dict):
                field.value.update(extra)
        return row

    probe = combine(
        next(batch_rows(first_original.slice(0, 1))),
        next(batch_rows(first_enrichment.slice(0, 1))),
    )
    schema = enriched_schema(
        RecordSchema.from_arrow(first_original.schema),
        probe,
        RecordSchema.from_arrow(first_enrichment.schema),
    )

    def batches() -> Iterator[pa.RecordBatch]:
        for left, right in _in_step(original, enrichment):
            if left is None:
                return
            extras = batch_rows(right) if right is not None else iter(())
            rows = [combine(row, next(extras, None)) for row in batch_rows(left)]
            yield rows_to_batch(rows, schema)

    return schema, batches()


def _unique_names(names: list[str]) -> list[str]:
    """Calcite's names for repeated columns: the second ``id`` is ``id0``, then ``id1``..."""
    seen: set[str] = set()
    out = []
    for name in names:
        candidate, number = name, 0
        while candidate in seen:
            candidate = f"{name}{number}"
            number += 1
        seen.add(candidate)
        out.append(candidate)
    return out


def _scans_of_original(connection: duckdb.DuckDBPyConnection, sql: str) -> int | None:
    """How many times *sql* names the table ``original`` (None: DuckDB cannot parse it)."""
    ((tree,),) = connection.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()
    compact = tree.replace(" ", "").lower()
    if '"error":true' in compact:
        return None
    return compact.count('"table_name":"original"')


def _spilled(original: Side, schema: pa.Schema, folder: str) -> pa.Table:
    """*original*'s batches written to an Arrow IPC file, read back memory-mapped.

    A self-join scans ``original`` twice, and a stream can be read once: the file can be
    scanned any number of times, and its pages are the OS's, not the heap's.
    """
    path = f"{folder}/original.arrow"
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema) as out:
        for batch in original:
            out.write_batch(batch)
    return pa.ipc.open_file(pa.memory_map(path)).read_all()


def sql_join(
    connection: duckdb.DuckDBPyConnection,
    original: Side,
    original_schema: pa.Schema,
    enrichment: pa.Table,
    sql: str,
) -> Iterator[pa.RecordBatch]:
    """Run *sql* over ``original`` and ``enrichment`` (a table) on *connection* (Calcite's).

    Both tables are unregistered when the result ends or is closed (the connection is the
    thread's, kept across joins).

    ``original`` is streamed when the query names it once; when it names it more than once
    (a self-join: ``FROM original o1 JOIN original o2``) it is spilled to a temporary Arrow
    file first, since a stream can be scanned only once.

    Raises:
        duckdb.Error: the SQL is invalid or fails on the data.
    """
    enrichment_schema = enrichment.schema
    spill = tempfile.TemporaryDirectory(prefix="flowcore-join-")
    try:
        as_sql = sql_schema(original_schema)
        same = sql_batches(original, as_sql)
        scans = _scans_of_original(connection, sql)
        if scans is not None and scans > 1:
            connection.register("original", _spilled(same, as_sql, spill.name))
        else:
            reader = pa.RecordBatchReader.from_batches(as_sql, same)
            connection.register("original", reader)
        enrichment_sql = sql_schema(enrichment.schema)
        if enrichment_sql is not enrichment.schema:  # it has CHOICE fields
            enrichment = enrichment.cast(enrichment_sql)
        connection.register("enrichment", enrichment)
        with run_query(
            connection,
            sql,
            [original_schema, enrichment_schema],
            RESULT_BATCH_ROWS,
            not_select=f"the SQL is not a SELECT statement: {sql}",
            rename=_unique_names,
        ) as (_, batches):
            yield from batches
    finally:  # after the result closes: DuckDB refuses to unregister under an open one
        connection.unregister("original")
        connection.unregister("enrichment")
        spill.cleanup()
