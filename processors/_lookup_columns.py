"""LookupRecord's column path: a batch's lookups without a Python object per record.

The common LookupRecord configuration (coordinates that are plain fields, ``/name`` or
``/customer/id``; a ``Result RecordPath`` that is one top-level field or none; a service
answering strings) needs no record as a mapping: the coordinate columns are read with
:func:`~flowcore.record_path.evaluate_column`, each distinct combination of their values is
looked up once (NumPy's ``unique`` over the columns' dictionary codes), and the answers are
taken back to every row as one Arrow column. Anything else (a root path, nested or computed
result paths, record answers, in-place replacement) returns None here and goes through the
per-record path of :mod:`processors._lookup_records`; both give the same records.
"""

from __future__ import annotations

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import RecordPathEvaluationError
from flowcore.record_path._columns import child_chain, evaluate_column
from flowcore.records.schema import (
    STRING,
    ChoiceType,
    DataType,
    DecimalType,
    EnumType,
    RecordSchema,
    SimpleType,
    arrow_type,
    cast_column,
)
from flowcore.records.values import TemporalFormats, coerce, decoder
from processors._lookup_records import Lookups, RecordLookup, with_text

__all__ = ["columnar_lookup", "conform"]

#: NiFi's integer types whose Arrow values' text is their JSON text.
_INTEGERS = frozenset({"byte", "short", "int", "long"})

#: Past this many combinations of coordinate codes, the mixed-radix key could overflow.
_MAX_KEY = 2**62


def _plain(batch: pa.RecordBatch) -> set[str]:
    """The names of *batch*'s top-level fields of a simple NiFi type (not a CHOICE)."""
    schema = RecordSchema.from_arrow(batch.schema)
    return {
        f.name
        for f in schema.fields
        if isinstance(f.type, SimpleType | DecimalType | EnumType)
        and not isinstance(f.type, ChoiceType)
    }


def columnar_lookup(
    lookup: RecordLookup, batch: pa.RecordBatch, lookups: Lookups
) -> tuple[pa.RecordBatch, pa.BooleanArray] | None:
    """*batch* with the lookup results written, and which rows matched; None: not this path.

    Raises:
        LookupFailureError: the service failed.
        pyarrow.ArrowInvalid: a result does not convert to its field's type.
    """
    if lookup.in_place or lookup.root_path is not None or not lookup.paths:
        return None
    result_name: str | None = None
    if lookup.result_path is not None:
        chain = child_chain(lookup.result_path.tree)
        if chain is None or len(chain) != 1:
            return None
        result_name = chain[0]
    table = pa.Table.from_batches([batch])
    plain = _plain(batch)
    columns: dict[str, pa.Array] = {}
    for name, path in lookup.paths.items():
        chain = child_chain(path.tree)
        if chain is None or (len(chain) == 1 and chain[0] not in plain):
            return None
        try:
            column = evaluate_column(path.tree, table).combine_chunks()
        except RecordPathEvaluationError:
            return None  # a field the schema lacks: each record's null is unmatched
        if pa.types.is_nested(column.type):
            return None
        columns[name] = column
    found = _answers(columns, batch.num_rows, lookups)
    if found is None:
        return None
    answers, matched = found
    if result_name is None:
        return batch, matched
    return _written(batch, result_name, answers, matched), matched


def _answers(
    columns: dict[str, pa.Array], rows: int, lookups: Lookups
) -> tuple[pa.Array, pa.BooleanArray] | None:
    """Each row's answer (null: none) and whether it matched; None when not all are text."""
    valid = np.ones(rows, dtype=bool)
    key = np.zeros(rows, dtype=np.int64)
    radix = 1
    dictionaries = []
    for column in columns.values():
        encoded = pc.dictionary_encode(column)
        codes = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        valid &= column.is_valid().to_numpy(zero_copy_only=False)
        key += codes * radix
        radix *= max(len(encoded.dictionary), 1)
        if radix > _MAX_KEY:
            return None
        dictionaries.append((encoded.dictionary, codes))
    rows_valid = np.flatnonzero(valid)
    distinct, first, inverse = np.unique(key[rows_valid], return_index=True, return_inverse=True)
    values: list[str | None] = []
    for position in first:
        row = rows_valid[position]
        coordinates = {
            name: dictionary[int(codes[row])].as_py()
            for name, (dictionary, codes) in zip(columns, dictionaries, strict=True)
        }
        answer = lookups.get(coordinates)
        if answer is not None and not isinstance(answer, str):
            return None  # records, numbers: the per-record path types them as NiFi does
        values.append(answer)
    del distinct
    index = np.full(rows, -1, dtype=np.int64)
    index[rows_valid] = inverse.reshape(-1)
    hit = np.array([v is not None for v in values], dtype=bool)
    matched = (index >= 0) & hit[np.clip(index, 0, None)] if values else index >= 0
    taken = pa.array(np.clip(index, 0, None), mask=~matched)
    answers = (
        pc.take(pa.array(values, type=pa.string()), taken)
        if values
        else pa.nulls(rows, pa.string())
    )
    return answers, pa.array(matched, type=pa.bool_())


def _written(
    batch: pa.RecordBatch, name: str, answers: pa.Array, matched: pa.BooleanArray
) -> pa.RecordBatch:
    """*batch* with *answers* in field *name* where *matched* (other rows keep theirs)."""
    position = batch.schema.get_field_index(name)
    if position < 0:
        field = pa.field(name, pa.string())
        return pa.RecordBatch.from_arrays(
            [*batch.columns, answers], schema=batch.schema.append(field)
        )
    field = batch.schema.field(position)
    have = RecordSchema.from_arrow(pa.schema([field])).fields[0]
    wider = with_text(have.type)
    if wider != have.type:  # NiFi's merged type: STRING, or a CHOICE with STRING
        field = RecordSchema((attrs.evolve(have, type=wider),)).to_arrow().field(0)
        existing = _converted(batch.column(position), have.type, wider)
        answers = _converted(answers, STRING, wider)
        column = pc.if_else(matched, answers, existing)
    else:
        column = pc.if_else(matched, cast_column(answers, field.type), batch.column(position))
    columns = list(batch.columns)
    columns[position] = column
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema.set(position, field))


def _converted(column: pa.Array, have: DataType, want: DataType) -> pa.Array:
    """*column* (of NiFi type *have*) as *want*: a CHOICE's JSON text a value, else a cast.

    An integer or boolean's JSON text is Arrow's text of it (``7``, ``true``), one cast for
    the column; any other value's is :func:`coerce`'s, once for each distinct value.
    """
    if have == want or not isinstance(want, ChoiceType):
        return cast_column(column, arrow_type(want))
    if (have.name in _INTEGERS and pa.types.is_integer(column.type)) or (
        have.name == "boolean" and pa.types.is_boolean(column.type)
    ):
        return pc.cast(column, pa.string())
    formats = TemporalFormats()
    decode = decoder(have)
    try:
        encoded = pc.dictionary_encode(column)
    except pa.ArrowNotImplementedError:  # a type Arrow does not hash (nested): each value
        values, indices = column, None
    else:
        values, indices = encoded.dictionary, encoded.indices
    texts = pa.array(
        [None if v is None else coerce(decode(v), want, formats, "") for v in values.to_pylist()],
        pa.string(),
    )
    return texts if indices is None else pc.take(texts, indices)


def conform(batch: pa.RecordBatch, schema: RecordSchema) -> pa.RecordBatch:
    """*batch* as *schema*'s fields, in order (nulls for a field it lacks), cast to them."""
    target = schema.to_arrow()
    columns = []
    for field in target:
        position = batch.schema.get_field_index(field.name)
        if position < 0:
            columns.append(pa.nulls(batch.num_rows, field.type))
            continue
        have = RecordSchema.from_arrow(pa.schema([batch.schema.field(position)])).fields[0].type
        want = schema.fields[len(columns)].type
        columns.append(cast_column(_converted(batch.column(position), have, want), field.type))
    return pa.RecordBatch.from_arrays(columns, schema=target)
