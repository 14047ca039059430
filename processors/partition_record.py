"""PartitionRecord: one FlowFile per distinct tuple of RecordPath values, as NiFi's."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc

from flowcore.errors import RecordPathSyntaxError
from flowcore.expression import contains_expression
from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.record_path import RecordPath, compile_record_path
from flowcore.record_path._columns import child_chain
from flowcore.records.record_io import (
    RECORD_FAILURES,
    RECORD_READER,
    RECORD_WRITER,
    read_records,
    services,
    write_records,
)
from flowcore.records.schema import RecordSchema, RecordType
from flowcore.records.values import batch_rows, to_text
from flowcore.session.process_session import ProcessSession
from flowcore.validators import ValidationResult
from processors._record_update import path_schema

__all__ = ["PartitionRecord"]

FRAGMENT_ID = "fragment.identifier"
FRAGMENT_INDEX = "fragment.index"
FRAGMENT_COUNT = "fragment.count"
SEGMENT_ORIGINAL_FILENAME = "segment.original.filename"

#: Records held in memory across all partitions before they are spilled to temporary files.
SPILL_BYTES = 64 * 1024 * 1024  # bytes of Arrow buffers

REL_SUCCESS = Relationship(
    "success", "FlowFiles that are successfully partitioned will be routed to this relationship"
)
REL_ORIGINAL = Relationship(
    "original",
    "Once all records in an incoming FlowFile have been partitioned, the original FlowFile is "
    "routed to this relationship.",
)
REL_FAILURE = Relationship(
    "failure",
    "If a FlowFile cannot be partitioned from the configured input format to the configured "
    "output format, the unchanged FlowFile will be routed to this relationship",
)

#: A partition's key: per property, the values its RecordPath selected (made hashable).
Key = tuple[tuple[Any, ...], ...]


class PartitionRecord(Processor):
    """Splits a FlowFile's records into groups with the same values of RecordPaths.

    Each dynamic property is a RecordPath (Expression Language over the FlowFile's attributes
    first); two records go to the same output FlowFile when every path selects the same values
    in both. The partitions come out in the order their first record appears. Each is written by
    the Record Writer and gets ``record.count``, ``mime.type`` (and the writer's attributes),
    ``fragment.identifier``, ``fragment.index`` (from 0), ``fragment.count``,
    ``segment.original.filename`` and, for each property whose path selected one scalar value,
    an attribute of the property's name holding it; the partitions are children of the original
    (FORK), which goes to ``original``. A record that does not parse, or a path that is not
    valid, sends the original to ``failure`` and makes no partition.

    When every path is a plain child path to a scalar field (``/country``, ``/a/b``) the records
    are grouped by Arrow's hash kernel (``dictionary_encode``) and a stable sort, with one Python
    key per group, not per record (1M records in 50 groups: 0.5 s, against 12 s with a key
    per record and 41 s through RecordPath per record); other paths go record by
    record through RecordPath, with the same partitions. Memory: the records wait in Arrow
    batches per partition and are spilled to temporary files past :data:`SPILL_BYTES`, so a
    large FlowFile does not have to fit in memory.
    """

    # NiFi's names on the class, as NiFi's tests reach them (PartitionRecord.REL_SUCCESS).
    RECORD_READER: ClassVar = RECORD_READER
    RECORD_WRITER: ClassVar = RECORD_WRITER
    REL_SUCCESS: ClassVar = REL_SUCCESS
    REL_FAILURE: ClassVar = REL_FAILURE
    REL_ORIGINAL: ClassVar = REL_ORIGINAL
    property_descriptors: ClassVar = (RECORD_READER, RECORD_WRITER)
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE, REL_ORIGINAL)
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = (
        "record",
        "partition",
        "recordpath",
        "rpath",
        "segment",
        "split",
        "group",
        "bin",
        "organize",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "record.count": "The number of records in an outgoing FlowFile",
        "mime.type": "The MIME Type that the configured Record Writer indicates is appropriate",
        FRAGMENT_ID: "All partitioned FlowFiles produced from the same parent FlowFile will have "
        "the same randomly generated UUID added for this attribute",
        FRAGMENT_INDEX: "A one-up number that indicates the ordering of the partitioned "
        "FlowFiles that were created from a single parent FlowFile",
        FRAGMENT_COUNT: "The number of partitioned FlowFiles generated from the parent FlowFile",
        SEGMENT_ORIGINAL_FILENAME: "The filename of the parent FlowFile",
        "<dynamic property name>": "For each dynamic property that is added, an attribute may "
        "be added to the FlowFile. See the description for Dynamic Properties for more "
        "information.",
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """An attribute name (the name) and the RecordPath whose value it takes."""
        return PropertyDescriptor(
            name,
            description="A RecordPath that points to a field in the Record.",
            required=False,
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            dynamic=True,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """At least one RecordPath; each without Expression Language must compile."""
        del values
        paths = self.dynamic_properties
        if not paths:
            return [
                ValidationResult(
                    "User-defined Properties",
                    None,
                    False,
                    "At least one RecordPath must be added to this processor by adding a "
                    "user-defined property",
                )
            ]
        problems = []
        for name, text in paths.items():
            if contains_expression(text):
                continue  # known only per FlowFile
            try:
                compile_record_path(text)
            except RecordPathSyntaxError as error:
                why = f"Property Value is not a valid RecordPath value: {error}"
                problems.append(ValidationResult(name, text, False, why))
        return problems

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Partition one FlowFile."""
        original = session.get()
        if original is None:
            return
        reader, writer = services(context, session)
        assert writer is not None
        try:
            paths = {
                name: compile_record_path(
                    context.get_property(name).evaluate_attribute_expressions(original).value or ""
                )
                for name in self.dynamic_properties
            }
        except RECORD_FAILURES as error:
            context.logger.error(
                "Failed to compile RecordPath for %s; routing to failure: %s", original, error
            )
            session.transfer(original, REL_FAILURE)
            return
        children: list[FlowFile] = []
        try:
            with tempfile.TemporaryDirectory(prefix="flowcore-partition-") as spill:
                partitions = _Partitions(Path(spill))
                with read_records(session, original, reader) as records:
                    for batch in records:
                        _partition(batch, paths, partitions)
                    schema = records.arrow_schema()
                self._write(session, original, writer, schema, partitions, children=children)
        except RECORD_FAILURES as error:
            context.logger.error("Failed to partition %s: %s", original, error)
            session.remove(children)
            session.transfer(original, REL_FAILURE)
            return
        for child in children:
            session.transfer(child, REL_SUCCESS)
        session.transfer(original, REL_ORIGINAL)

    @staticmethod
    def _write(
        session: ProcessSession,
        original: FlowFile,
        writer: Any,
        schema: pa.Schema,
        partitions: _Partitions,
        *,
        children: list[FlowFile],
    ) -> None:
        """Write each partition as a child FlowFile, appended to *children* once created.

        So a failure part-way removes every child made, as NiFi's catch block does.
        """
        fragment_id = session.identifier_for(original, FRAGMENT_ID)
        filename = original.attributes.get("filename", "")
        count = str(len(partitions))
        partitions.close()
        for index, attributes in enumerate(partitions.attributes):
            children.append(session.create(original))
            child, written = write_records(
                session,
                children[-1],
                writer,
                schema,
                partitions.batches(index),
                attributes=original.attributes,
            )
            records = partitions.counts[index]
            child = session.put_all_attributes(
                child,
                {
                    **attributes,
                    **written,
                    "record.count": str(records),
                    FRAGMENT_INDEX: str(index),
                    FRAGMENT_ID: fragment_id,
                    FRAGMENT_COUNT: count,
                    SEGMENT_ORIGINAL_FILENAME: filename,
                },
            )
            children[-1] = child
            session.adjust_counter("Record Processed", records)


def _partition(batch: pa.RecordBatch, paths: Mapping[str, RecordPath], out: _Partitions) -> None:
    """Add *batch*'s records to their partitions, grouped by the values of *paths*.

    When every path is a plain child chain to a scalar field the grouping is Arrow's (see
    :func:`_partition_columns`); otherwise each record's key is built in Python.
    """
    if batch.num_rows == 0:
        return
    schema = RecordSchema.from_arrow(batch.schema)
    columns = [_scalar_column(path, batch, schema) for path in paths.values()]
    if all(column is not None for column in columns):
        codes = _group_codes(columns)  # type: ignore[arg-type]
        if codes is not None:
            _partition_columns(batch, tuple(paths), columns, codes, out)  # type: ignore[arg-type]
            return
    rows: list[dict[str, Any]] | None = None
    selected: list[Sequence[list[Any]]] = []
    for path, column in zip(paths.values(), columns, strict=True):
        if column is not None:
            selected.append([[v] for v in column.to_pylist()])
            continue
        if rows is None:
            rows = list(batch_rows(batch))
        view = path_schema(schema)
        selected.append([[fv.value for fv in path.evaluate(row, schema=view)] for row in rows])
    groups: dict[Key, list[int]] = {}
    firsts: dict[Key, int] = {}
    for row, values in enumerate(zip(*selected, strict=True)):
        key = tuple(tuple(_frozen(v) for v in vs) for vs in values)
        members = groups.get(key)
        if members is None:
            groups[key] = [row]
            firsts[key] = row
        else:
            members.append(row)
    names = tuple(paths)
    for key, members in groups.items():
        first = firsts[key]
        part = batch if len(members) == batch.num_rows else batch.take(pa.array(members))
        out.add(key, lambda first=first: _attributes(names, [c[first] for c in selected]), part)


def _partition_columns(
    batch: pa.RecordBatch,
    names: Sequence[str],
    columns: Sequence[pa.Array],
    codes: np.ndarray,
    out: _Partitions,
) -> None:
    """Add *batch*'s records to their partitions by their group *codes* (first-seen order).

    One stable sort of the rows by code and one ``take`` put each group's records side by
    side; each group is then a zero-copy slice. Python sees one key per group, built from the
    group's first record, so the partitions match across batches and with the per-record path.
    """
    groups = int(codes.max()) + 1
    if groups == 1:
        order = np.zeros(1, dtype=np.int64)
        offsets = np.array([0, batch.num_rows])
        grouped = batch
    else:
        order = np.argsort(codes, kind="stable")
        offsets = np.concatenate(([0], np.cumsum(np.bincount(codes, minlength=groups))))
        grouped = batch.take(pa.array(order))
    for group in range(groups):
        first = int(order[offsets[group]])
        values = [[column[first].as_py()] for column in columns]
        key = tuple(tuple(_frozen(v) for v in vs) for vs in values)
        start, end = int(offsets[group]), int(offsets[group + 1])
        part = grouped.slice(start, end - start)
        out.add(key, lambda values=values: _attributes(names, values), part)


def _group_codes(columns: Sequence[pa.Array]) -> np.ndarray | None:
    """Each row's group number over *columns*, numbered in first-seen order (None: no kernel).

    Arrow's hash kernel compares floats by their bits, as Java's ``Double.equals`` does
    (``-0.0`` is not ``0.0``), but keeps NaN payloads apart: every NaN is made the canonical
    one first so that all NaNs are ONE partition, as NiFi's ``ValueWrapper``. A null is a value
    of its own, numbered where first seen. Several columns are combined pairwise and
    renumbered, so codes stay below the row count.
    """
    combined: np.ndarray | None = None
    for column in columns:
        values = column
        try:
            if pa.types.is_dictionary(values.type):
                values = values.dictionary_decode()
            if pa.types.is_floating(values.type):
                nan = pa.scalar(float("nan"), values.type)
                values = pc.if_else(pc.is_nan(values), nan, values)
            encoded = pc.dictionary_encode(values, null_encoding="encode")
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            return None  # a type Arrow cannot hash (or make a NaN of): per record
        size = len(encoded.dictionary)
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        if combined is None:
            combined = codes
        else:
            combined = combined * size + codes
            renumbered = pc.dictionary_encode(pa.array(combined)).indices
            combined = renumbered.to_numpy(zero_copy_only=False).astype(np.int64)
    return combined


def _scalar_column(
    path: RecordPath, batch: pa.RecordBatch, schema: RecordSchema
) -> pa.Array | None:
    """The values of a child chain to a scalar field as one column (None: go per record).

    A null parent gives a null value, as the per-record path gives one null field value.
    """
    names = child_chain(path.tree)
    if names is None:
        return None
    current = schema
    for depth, name in enumerate(names):
        field = current.field(name)
        if field is None or field.name != name:
            return None
        kind = field.type
        if depth < len(names) - 1:
            if not isinstance(kind, RecordType):
                return None
            current = kind.schema
        elif kind.name in ("record", "array", "map", "choice"):
            return None
    if names[0] not in batch.schema.names:
        return None
    column = batch.column(names[0])
    for name in names[1:]:
        if not pa.types.is_struct(column.type) or column.type.get_field_index(name) < 0:
            return None
        column = pc.struct_field(column, name)
    return column


def _frozen(value: Any) -> Any:
    """*value* as a hashable key part (NiFi's ValueWrapper: arrays compare by content)."""
    if isinstance(value, bool):
        return (bool, value)
    if isinstance(value, float):
        # Double.equals: every NaN is one partition (float.hex gives "nan" for each), and
        # -0.0 is not 0.0, as Arrow's hash kernel keeps them apart too
        return (float, value.hex())
    if isinstance(value, (list, tuple)):
        return (list, tuple(_frozen(v) for v in value))
    if isinstance(value, Mapping):
        return (dict, tuple(sorted((str(k), _frozen(v)) for k, v in value.items())))
    return value


def _attributes(names: Sequence[str], values: Sequence[list[Any]]) -> dict[str, str]:
    """An attribute per property that selected exactly one scalar, non-null value."""
    out = {}
    for name, selected in zip(names, values, strict=True):
        if len(selected) != 1:
            continue
        value = selected[0]
        if value is None or isinstance(value, (list, tuple, Mapping)):
            continue
        out[name] = to_text(value)
    return out


class _Partitions:
    """The partitions' records in first-seen order: batches in memory, spilled past a bound."""

    def __init__(self, spill: Path) -> None:
        self._spill = spill
        self._index: dict[Key, int] = {}
        self.attributes: list[dict[str, str]] = []
        self.counts: list[int] = []
        self._held: list[list[pa.RecordBatch]] = []
        #: each partition's spill files, in order; each written whole and closed at once, so
        #: thousands of partitions never hold thousands of open files
        self._files: list[list[Path]] = []
        self._rounds = 0
        self._bytes = 0

    def __len__(self) -> int:
        return len(self.attributes)

    def add(self, key: Key, attributes: Any, batch: pa.RecordBatch) -> None:
        """Add *batch* to *key*'s partition (*attributes*: a callable, called for a new one)."""
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.attributes)
            self.attributes.append(attributes())
            self.counts.append(0)
            self._held.append([])
            self._files.append([])
        self._held[index].append(batch)
        self.counts[index] += batch.num_rows
        self._bytes += batch.nbytes
        if self._bytes > SPILL_BYTES:
            self._spill_all()

    def _spill_all(self) -> None:
        self._rounds += 1
        for index, held in enumerate(self._held):
            if not held:
                continue
            path = self._spill / f"{index}.{self._rounds}.arrows"
            with (
                pa.OSFile(str(path), "wb") as sink,
                pyarrow.ipc.new_stream(sink, held[0].schema) as stream,
            ):
                for batch in held:
                    stream.write_batch(batch)
            self._files[index].append(path)
            self._held[index] = []
        self._bytes = 0

    def close(self) -> None:
        """Nothing stays open between spills (kept: callers finish the partitions with it)."""

    def batches(self, index: int) -> Iterator[pa.RecordBatch]:
        """Partition *index*'s records: the spilled ones, then those still held."""
        for path in self._files[index]:
            with pa.memory_map(str(path)) as source:
                yield from pyarrow.ipc.open_stream(source)
        yield from self._held[index]
