"""Rows to bounded Arrow record batches, shared by the readers.

A reader parses records one at a time into dicts, coerces each to the schema, and hands them here;
every ``batch_size`` rows become one ``pyarrow.RecordBatch``. A record that does not fit raises one
:class:`~flowcore.errors.RecordError`, after the batch of the records before it was yielded (NiFi's
readers return the good records before the bad one, so nothing read is lost).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import RecordError
from flowcore.records import formats
from flowcore.records.inference import infer_record_schema
from flowcore.records.schema import (
    INTEGRAL,
    ArrayType,
    ChoiceType,
    DataType,
    EnumType,
    MapType,
    RecordSchema,
    RecordType,
    SimpleType,
)
from flowcore.records.values import FieldError, TemporalFormats, coerce_record

__all__ = ["Parsed", "RecordWriter", "batches_of", "record_error", "write_all"]

#: One parsed record: its number (1-based), its line (or None) and its value.
Parsed = tuple[int, int | None, Any]

_DICT = frozenset({dict})


class RecordWriter(Protocol):
    """What every codec's writer is: batches in, then NiFi's attributes."""

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Write every record of *batch*."""

    def finish(self) -> dict[str, str]:
        """End the record set; NiFi's attributes."""


def write_all(
    batches: Iterable[pa.RecordBatch],
    schema: RecordSchema | None,
    make: Callable[[RecordSchema], RecordWriter],
) -> dict[str, str]:
    """Write *batches* with the writer *make* builds, one record set; NiFi's attributes.

    The writer is made at the first batch, under *schema* or the NiFi schema of that batch's
    Arrow schema, or at the end when there is none (an empty record set still has its
    header, array brackets or file footer).
    """
    writer: RecordWriter | None = None
    for batch in batches:
        if writer is None:
            writer = make(schema or RecordSchema.from_arrow(batch.schema))
        writer.write(batch)
    if writer is None:
        writer = make(schema or RecordSchema(()))
    return writer.finish()


def record_error(number: int, line: int | None, field: str | None, reason: str) -> RecordError:
    """The one error of a bad record, naming it, its line and its field as NiFi's messages do."""
    where = f"record {number}" + (f" (line {line})" if line is not None else "")
    what = f", field {field!r}" if field else ""
    return RecordError(f"{where}{what}: {reason}", record=number, line=line, field=field)


def batches_of(
    parsed: Iterable[Parsed],
    schema: RecordSchema | None,
    temporal: TemporalFormats,
    batch_size: int,
    sample: int,
    *,
    infer: Callable[[list[Any]], RecordSchema] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Record batches of *parsed* records under *schema*, inferring it first when None.

    Inference reads the first *sample* records (held in memory, bounded) with *infer* (JSON
    inference by default) and then streams the rest under that schema.
    """
    source = iter(parsed)
    inferred = schema is None
    sampled = 0  # the first records, which the schema was inferred from
    if schema is None:
        head: list[Parsed] = []
        for item in source:
            head.append(item)
            if len(head) >= sample:
                break
        schema = (infer or (lambda values: infer_record_schema(values, temporal)))(
            [value for _, _, value in head if isinstance(value, dict)]
        )
        sampled = len(head)
        source = _chain(head, source)
    arrow_schema = schema.to_arrow()
    fast = _plain(schema)
    texts = None if fast else _temporal_texts(schema, temporal)
    fast = fast or texts is not None
    bools = _bool_finder(RecordType(schema)) if fast else None
    # Arrow truncates a float into an integer column (1.5 -> 1); an inferred whole-number field
    # refuses it instead (values.coerce), so a batch past the sample holding one takes that
    # path (the sample's records fit: a float among them would have made the field a DOUBLE)
    past_sample = (
        _bool_finder(RecordType(schema), culprits=_BOOLS_OR_FLOATS) if fast and inferred else bools
    )
    read = 0
    while pending := list(itertools.islice(source, batch_size)):
        read += len(pending)
        yield from _flush(
            pending,
            schema,
            arrow_schema,
            temporal,
            fast,
            bools=past_sample if read > sampled else bools,
            texts=texts,
            inferred=inferred,
        )


def _temporal_texts(schema: RecordSchema, temporal: TemporalFormats) -> dict[str, str] | None:
    """Top-level DATE/TIMESTAMP fields to read as text and parse a column at a time.

    Field name -> its Java pattern; None when another field needs coercion or a pattern has no
    vectorised form (:meth:`formats.DateTimePattern.parse_column`).
    """
    texts: dict[str, str] = {}
    for field in schema.fields:
        kind = field.type.name
        if kind in ("date", "timestamp") and isinstance(field.type, SimpleType):
            if field.default is not None or field.aliases or not field.nullable:
                return None
            java = (
                (temporal.timestamp or formats.DEFAULT_TIMESTAMP)
                if kind == "timestamp"
                else (temporal.date or formats.DEFAULT_DATE)
            )
            if formats.pattern(java).parse_column(pa.array([], pa.string())) is None:
                return None
            texts[field.name] = java
        elif not _plain(RecordSchema([field])):
            return None
    return texts or None


def _parse_texts(
    batch: pa.RecordBatch, texts: dict[str, str], arrow_schema: pa.Schema
) -> pa.RecordBatch | None:
    """*batch* with its temporal text columns parsed; None when a value needs the exact path."""
    arrays = []
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        if name in texts:
            parsed = formats.pattern(texts[name]).parse_column(column)
            if parsed is None or parsed.null_count != column.null_count:
                return None  # a value Arrow does not parse exactly: coerce the batch
            target = arrow_schema.field(name).type
            if pa.types.is_date(target):
                parsed = pc.cast(pc.floor_temporal(parsed, unit="day"), pa.date32())
            arrays.append(parsed.cast(target))
        else:
            arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


def _chain(head: list[Parsed], rest: Iterator[Parsed]) -> Iterator[Parsed]:
    """*head*, emptied once read (the inference sample is not held to the end), then *rest*.

    Chained C-level: *rest*'s records pass through no generator of this module.
    """
    return itertools.chain(_drained(head), rest)


def _drained(head: list[Parsed]) -> Iterator[Parsed]:
    yield from head
    head.clear()


def _flush(
    pending: list[Parsed],
    schema: RecordSchema,
    arrow_schema: pa.Schema,
    temporal: TemporalFormats,
    fast: bool,
    *,
    bools: Callable[[Any], bool] | None = None,
    texts: dict[str, str] | None = None,
    inferred: bool = False,
) -> Iterator[pa.RecordBatch]:
    """One batch of *pending*.

    *bools*: a test for values Arrow would take but NiFi's coercion refuses (then the batch is
    coerced record by record); *inferred*: *schema* was inferred from a sample.
    When a record does not fit: the batch of the records before it, then the error.
    """
    values = [value for _, _, value in pending]
    if (
        fast
        and (set(map(type, values)) <= _DICT or all(isinstance(value, dict) for value in values))
        and not (bools is not None and bools(values))
    ):
        read = arrow_schema
        if texts:
            read = pa.schema(
                [f.with_type(pa.string()) if f.name in texts else f for f in arrow_schema]
            )
        try:
            batch = pa.RecordBatch.from_pylist(values, read)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
            batch = None  # Arrow refused a value: coerce each record, to convert it or name it
        if batch is not None and texts:
            batch = _parse_texts(batch, texts, arrow_schema)
        if batch is not None:
            yield batch
            return
    rows = []
    for number, line, value in pending:
        try:
            rows.append(coerce_record(value, schema, temporal, inferred=inferred))
        except FieldError as exc:
            if rows:
                yield pa.RecordBatch.from_pylist(rows, arrow_schema)
            raise record_error(number, line, exc.field or None, str(exc)) from None
    yield pa.RecordBatch.from_pylist(rows, arrow_schema)


#: Values of a Python type Arrow takes into a column of a NiFi type where NiFi's coercion does not:
#: a boolean as a FLOAT/DOUBLE (1.0), and, for a field inferred from a sample, a float as a whole
#: number (Arrow truncates 1.5 to 1).
_BOOLS = {"float": bool, "double": bool}
_BOOLS_OR_FLOATS = {**_BOOLS, **dict.fromkeys(INTEGRAL, float)}


def _bool_finder(
    dtype: DataType, *, culprits: Mapping[str, type] = _BOOLS
) -> Callable[[list[Any]], bool] | None:
    """A test for a boolean where *dtype* has a FLOAT/DOUBLE in any of a list of values.

    (Or, with *culprits*, for a value of the Python type it maps a NiFi type name to, where
    *dtype* has that type: :data:`_BOOLS_OR_FLOATS`.) None: *dtype* has none. Arrow would
    take such a boolean as 1.0, NiFi refuses it, so a batch holding one takes the coercing
    path. The test walks nested records, array elements and map
    values, and only the parts of a value whose type holds a float; it works a column at a
    time (a record field's values, an array's elements), C-level where it can, as a per-record
    walk cost a fifth of the read. ``type(v) is bool`` is an identity test (``bool`` has no
    subclasses): ``1 == True`` must not count.
    """
    culprit = culprits.get(dtype.name)
    if culprit is not None:
        return lambda values: culprit in set(map(type, values))
    if isinstance(dtype, RecordType):
        checks = [
            (field.name, check)
            for field in dtype.schema.fields
            if (check := _bool_finder(field.type, culprits=culprits)) is not None
        ]
        if not checks:
            return None

        def records(values: list[Any]) -> bool:
            dicts = values if set(map(type, values)) <= _DICT else _of(values, dict)
            return any(
                check(list(map(dict.get, dicts, itertools.repeat(name)))) for name, check in checks
            )

        return records
    if isinstance(dtype, ArrayType) and dtype.element is not None:
        element = _bool_finder(dtype.element, culprits=culprits)
        if element is None:
            return None
        return lambda values: element(list(itertools.chain.from_iterable(_of(values, list))))
    if isinstance(dtype, MapType):
        entry = _bool_finder(dtype.value, culprits=culprits)
        if entry is None:
            return None
        return lambda values: entry(
            list(itertools.chain.from_iterable(map(dict.values, _of(values, dict))))
        )
    return None


def _of(values: list[Any], kind: type) -> list[Any]:
    """The items of *values* that are instances of *kind* (others hold no float's boolean)."""
    return [value for value in values if isinstance(value, kind)]


def _plain(schema: RecordSchema) -> bool:
    """Whether Arrow can take *schema*'s records as they are parsed.

    Not with defaults, aliases, non-nullable fields or types that need coercion; Arrow's errors
    send a batch to the coercing path anyway.
    """
    return all(
        field.default is None and not field.aliases and field.nullable and _plain_type(field.type)
        for field in schema.fields
    )


def _plain_type(dtype: DataType | None) -> bool:
    if dtype is None or isinstance(dtype, (ChoiceType, EnumType, MapType)):
        return False
    if dtype.name in ("date", "time", "timestamp", "decimal", "bigint", "char", "byte"):
        return False
    if isinstance(dtype, ArrayType):
        return _plain_type(dtype.element)
    if isinstance(dtype, RecordType):
        return _plain(dtype.schema)
    return True
