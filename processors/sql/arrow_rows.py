"""Driver rows as Arrow record batches, one column at a time (ExecuteSQLRecord, QDTR).

DB-API drivers hand out tuples; each fetch becomes one ``pyarrow.RecordBatch`` built column
by column with the type the column's JDBC kind names (:mod:`processors.sql.avro_types`), so
every batch of a result set has the first one's schema and record writers see Arrow only.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from typing import Any

import pyarrow as pa

from flowcore.errors import ProcessException
from processors.sql.avro_types import ARRAY, column_kinds, normalize_name

__all__ = ["arrow_batches", "arrow_type"]

#: Decimals are written at Arrow's widest decimal128 precision, the scale the column's.
_MAX_PRECISION = 38

_TYPES = {
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "SMALLINT": pa.int16(),
    "TINYINT": pa.int8(),
    "BOOLEAN": pa.bool_(),
    "BIT": pa.bool_(),
    "DOUBLE": pa.float64(),
    "FLOAT": pa.float64(),
    "REAL": pa.float32(),
    "DATE": pa.date32(),
    "TIME": pa.time64("us"),
    "TIMESTAMP": pa.timestamp("us"),
    "BINARY": pa.binary(),
}


def arrow_type(kind: str, column: Sequence[Any] = ()) -> pa.DataType | None:
    """The Arrow type of a JDBC kind; None where the values decide (DECIMAL's scale).

    A DECIMAL column whose description gives its precision (``numeric(12, 2)``: the
    DB-API description's precision and scale, NiFi's ResultSetMetaData) is a decimal of that
    scale whatever its values; an unconstrained one (no precision) is left to the values.

    An ARRAY is a list of its elements' type (NiFi's record ARRAY of the element type): of
    strings for elements psycopg loads as objects of no Arrow type (uuid, inet: their text),
    the values deciding for decimals, timestamps (aware or not) and unknown element types.
    """
    if kind in ("NUMERIC", "DECIMAL"):
        precision = column[4] if len(column) > 4 else None
        scale = column[5] if len(column) > 5 else None
        if precision and precision > 0 and scale is not None and 0 <= scale <= _MAX_PRECISION:
            return pa.decimal128(_MAX_PRECISION, scale)
        return None
    if kind.startswith(ARRAY):
        element = kind.removeprefix(ARRAY)
        if element in ("NUMERIC", "TIMESTAMP", "OTHER"):
            return None
        return pa.list_(_TYPES.get(element, pa.string()))
    return _TYPES.get(kind, pa.string())


def _column(values: Sequence[Any], atype: pa.DataType | None) -> pa.Array:
    if atype is None:
        return pa.array(values)
    if atype == pa.string():
        try:
            return pa.array(values, type=atype)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # UUIDs, inet...: their text
            values = [v if v is None or isinstance(v, str) else str(v) for v in values]
    if pa.types.is_list(atype):
        try:
            return pa.array(values, type=atype)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            if atype.value_type == pa.string():  # arrays of UUIDs, inet...: their text
                values = [_texts(v) for v in values]
            else:  # a multidimensional array: lists of lists, the values decide
                return pa.array(values)
    if pa.types.is_timestamp(atype):
        values = [
            v.astimezone(__import__("datetime").UTC).replace(tzinfo=None)
            if v is not None and v.tzinfo is not None
            else v
            for v in values
        ]
    return pa.array(values, type=atype)


def _texts(value: Any) -> Any:
    """An array's elements as text (nested arrays kept), for a list of strings."""
    if isinstance(value, list):
        return [_texts(v) for v in value]
    return value if value is None or isinstance(value, str) else str(value)


def _named_column(name: str, values: Sequence[Any], atype: pa.DataType | None) -> pa.Array:
    """:func:`_column`, a value it cannot take named with its column (not the database's)."""
    try:
        return _column(values, atype)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as error:
        kind = "its first fetch's type" if atype is None else str(atype)
        fix = ""
        if atype is not None and pa.types.is_decimal(atype):
            fix = (
                f"; the column has no declared scale and its first values had scale "
                f"{atype.scale}: give it one in the query (CAST({name} AS NUMERIC(38, 10)))"
            )
        msg = (
            f"cannot write the result: column {name!r} holds a value that is not {kind} "
            f"({type(error).__name__}: {error}){fix}"
        )
        raise ProcessException(msg) from error


def _transposed(chunk: Sequence[tuple], width: int) -> list[list[Any]]:
    """The chunk's values column by column.

    ``zip(*chunk)`` would do it with an iterator per row: 10,000 objects the garbage collector
    tracks per fetch, which survive into its oldest generation and made full collections take
    most of a 200,000-row read (0.6-0.9 s of 1.0-1.5 s); ``itemgetter`` makes none.
    """
    widths = set(map(len, chunk))
    if widths - {width}:
        msg = f"rows of {sorted(widths)} values for {width} columns"
        raise ValueError(msg)
    return [list(map(itemgetter(index), chunk)) for index in range(width)]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, when it is on.

    A fetch makes a tuple per row, each a new object the collector visits in its next young
    collection (one per 700 allocations) before the tuple dies with its chunk: a tenth of a
    200,000-row read in the harness. Driver tuples, their values and Arrow arrays make no
    cycles, so nothing waits for the collector but garbage of other threads, for one chunk at
    most. A flowcore task already runs with the collector paused (flowcore.engine.task): there
    this does nothing.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def arrow_batches(
    description: Sequence[Any],
    rows: Iterator[list[tuple]],
    *,
    normalize: bool = False,
    schema: pa.Schema | None = None,
) -> Iterator[pa.RecordBatch]:
    """Each list of rows as a record batch; all with the first batch's schema, or *schema*.

    Column types come from the description (NiFi takes them from the ResultSetMetaData,
    never from values), so a column all NULL in the first fetch has its real type. Only
    those the description leaves open (an unconstrained NUMERIC's scale, drivers without
    type codes) are decided by the first fetch: a caller writing one result set in several
    FlowFiles passes the first FlowFile's schema as *schema*, so every FlowFile has it.

    The collector is paused while a chunk is fetched and converted (:func:`_collector_paused`),
    never while the batch is with the caller.
    """
    names = [normalize_name(column[0], normalize) for column in description]
    rowwise: bool | None = None  # decided by the first batch; False once a chunk needs columns
    while True:
        with _collector_paused():
            chunk = next(rows, None)
            if chunk is None:
                return
            batch = _rowwise(chunk, schema) if rowwise and schema is not None else None
            if batch is None:
                rowwise = rowwise is None
                batch, schema = _batch(description, chunk, names, schema)
                rowwise = rowwise and _rowwise_types(schema)
            del chunk
        yield batch


#: Arrow types a struct conversion of the rows builds as the column path does (the same
#: converter, given the same type): not timestamps (the column path makes aware values UTC),
#: not strings of other values (the column path writes their text, a struct conversion fails).
_ROWWISE = (
    pa.types.is_integer,
    pa.types.is_floating,
    pa.types.is_boolean,
    pa.types.is_string,
    pa.types.is_binary,
    pa.types.is_decimal,
    pa.types.is_date32,
    pa.types.is_time64,
)


def _rowwise_types(schema: pa.Schema) -> bool:
    return all(any(test(t) for test in _ROWWISE) for t in schema.types)


def _rowwise(chunk: Sequence[tuple], schema: pa.Schema) -> pa.RecordBatch | None:
    """A later chunk as a batch of *schema* by one struct conversion of its rows.

    No column lists: a quarter less time than :func:`_batch`. None where a value needs the
    column path (which then raises its error or writes its text).
    """
    widths = set(map(len, chunk))
    if widths - {len(schema)}:
        return None  # the column path names the widths
    try:
        array = pa.array(chunk, type=pa.struct(schema))
    except (pa.ArrowException, TypeError, ValueError, OverflowError):  # the column path decides
        return None
    return pa.RecordBatch.from_struct_array(array)


def _batch(
    description: Sequence[Any],
    chunk: Sequence[tuple],
    names: list[str],
    schema: pa.Schema | None,
) -> tuple[pa.RecordBatch, pa.Schema]:
    """One chunk as a record batch: the first makes the schema, later ones follow it."""
    kinds: list[str] = []
    if schema is None:
        kinds = column_kinds(description, chunk)
        types = [arrow_type(kind, column) for kind, column in zip(kinds, description, strict=True)]
    else:
        types = list(schema.types)
    columns = _transposed(chunk, len(names))
    arrays = [_named_column(n, col, t) for n, col, t in zip(names, columns, types, strict=True)]
    if schema is None:
        arrays = [_settled(a, kind) for a, kind in zip(arrays, kinds, strict=True)]
        schema = pa.schema([pa.field(n, a.type) for n, a in zip(names, arrays, strict=True)])
    else:
        arrays = [
            a.cast(f.type) if a.type != f.type else a for a, f in zip(arrays, schema, strict=True)
        ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema), schema


def _settled(array: pa.Array, kind: str) -> pa.Array:
    """A column whose values decided its type, at the type the schema keeps.

    A decimal at the widest precision; a column of NULLs only (no type from its values) at
    the type :func:`empty_schema` gives it, never Arrow's null type, which no later value
    fits.
    """
    if pa.types.is_decimal(array.type):
        return array.cast(pa.decimal128(_MAX_PRECISION, array.type.scale))
    if pa.types.is_null(array.type):
        return array.cast(arrow_type(kind) or _undecided(kind))
    return array


def empty_schema(description: Sequence[Any], *, normalize: bool = False) -> pa.Schema:
    """The schema of a result set with no rows (types from the description alone)."""
    kinds = column_kinds(description, [])
    return pa.schema(
        [
            pa.field(normalize_name(c[0], normalize), arrow_type(k, c) or _undecided(k))
            for c, k in zip(description, kinds, strict=True)
        ]
    )


def _undecided(kind: str) -> pa.DataType:
    """The type of a column whose values would decide it, when there are none."""
    return pa.list_(pa.string()) if kind.startswith(ARRAY) else pa.decimal128(_MAX_PRECISION, 0)
