"""NiFi's ``RecordTransformProxy``: what runs a NiFi Python ``RecordTransform`` in flowcore.

:class:`RecordTransformRunner` is the processor half of the adapter ``processor_class`` makes
for a ``RecordTransform`` (the other half, :class:`nifiapi._adapter._NiFiProcessor`, holds the
NiFi instance, its context and lifecycle). Per FlowFile, as NiFi's Java side does:

1. the records are read with the Record Reader, batch by batch, and each batch is written as
   NiFi's ``WriteJsonResult`` writes raw records (never suppressing nulls, temporal values as
   epoch milliseconds) and parsed back, so ``transform`` gets the dicts NiFi's gets;
2. each result with a record is keyed by its relationship and partition; the first record of a
   key makes a child FlowFile (FORK) whose records are written with the Record Writer under the
   schema the result gives or, when none, the one inferred from that first record (NiFi infers
   each record's; later records are read under the first one's, a field it lacks dropped);
3. each child gets the writer's attributes, ``record.count``, ``mime.type`` and the partition's
   values (Java's ``Objects.toString``: ``null``, ``true``, ``1.5``) and goes to its
   relationship; the original goes to ``original`` (auto-terminated by default);
4. an exception anywhere (a record that does not parse, ``transform`` raising, a record that
   does not fit) removes the children and sends the original to ``failure``, logged.

Records returned are buffered per key as Arrow batches in a spooled temporary file (memory up
to :data:`SPOOL_BYTES` per key, then disk) and written when the input is read, so memory stays
bounded by a batch whatever the number of records. Counters ``Records Read`` and
``Record Written`` (NiFi's spelling) count them.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from flowcore.errors import ProcessException
from flowcore.processor.base import Processor
from flowcore.records.formats import java_double_str
from flowcore.records.json_reader import JsonReaderOptions, read_json
from flowcore.records.json_writer import JsonWriterOptions, write_json
from flowcore.records.record_io import (
    RECORD_READER,
    RECORD_WRITER,
    RecordSetWriterFactory,
    read_records,
    services,
)
from flowcore.records.schema import RecordSchema
from flowcore.session.streams import WriteStream
from nifiapi.recordtransform import CachingAttributeMap

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from flowcore.processor.context import ProcessContext
    from flowcore.session.process_session import ProcessSession

__all__ = ["RECORD_PROPERTIES", "SPOOL_BYTES", "RecordTransformRunner"]

#: NiFi's ``RecordTransformProxy`` properties, before the processor's own.
RECORD_PROPERTIES = (RECORD_READER, RECORD_WRITER)
#: Bytes of one key's records kept in memory before they spill to a temporary file.
SPOOL_BYTES = 1 << 20
#: Records a key gathers (as JSON text) before they become one Arrow batch.
CHUNK_RECORDS = 4096
_RAW_JSON = JsonWriterOptions(output_grouping="output-array", suppress_nulls="never-suppress")


class _FlowFileAttributes:
    """NiFi's ``FlowFileAttributeMap`` over a FlowFile's attributes."""

    def __init__(self, attributes: Mapping[str, str]) -> None:
        self._attributes = attributes

    def getAttribute(self, name: str) -> str | None:
        return self._attributes.get(name)

    def getAttributes(self) -> dict[str, str]:
        return dict(self._attributes)


def java_text(value: Any) -> str:
    """Java's ``Objects.toString`` of a partition value NiFi got from Python."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    return str(value)


def record_dicts(batch: pa.RecordBatch) -> list[dict[str, Any]]:
    """*batch*'s records as the dicts NiFi's Python side gets (its raw JSON, parsed)."""
    out = io.BytesIO()
    write_json([batch], out, _RAW_JSON)
    return json.loads(out.getvalue() or b"[]")


class _Destination:
    """The records of one (relationship, partition): a child FlowFile and its spooled batches."""

    def __init__(self, child: FlowFile, relationship: str, partition: Mapping[str, Any] | None):
        self.child = child
        self.relationship = relationship
        self.partition = partition
        self.schema: RecordSchema | None = None
        self._pending: list[str] = []
        self._spool: Any = None
        self._ipc: Any = None
        self.count = 0

    def add(self, record: Mapping[str, Any], schema: Any) -> None:
        """Take one returned record (its schema fixes this key's when it is the first)."""
        text = json.dumps(record)
        if self.schema is None:
            self.schema = schema if isinstance(schema, RecordSchema) else _inferred(text)
        self._pending.append(text)
        self.count += 1
        if len(self._pending) >= CHUNK_RECORDS:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        assert self.schema is not None
        lines = "\n".join(self._pending).encode()
        self._pending = []
        for batch in read_json(io.BytesIO(lines), JsonReaderOptions(), self.schema):
            if self._ipc is None:
                self._spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed in batches()
                self._ipc = pa.ipc.new_stream(pa.PythonFile(self._spool, mode="w"), batch.schema)
            self._ipc.write_batch(batch)

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Every record taken, as Arrow batches, then the spool is gone."""
        self._flush()
        if self._ipc is None:
            return
        self._ipc.close()
        self._spool.seek(0)
        try:
            yield from pa.ipc.open_stream(pa.PythonFile(self._spool, mode="r"))
        finally:
            self.discard()

    def discard(self) -> None:
        """Drop what is spooled."""
        if self._spool is not None:
            self._spool.close()
        self._spool = self._ipc = None
        self._pending = []

    def write(
        self, session: ProcessSession, writer: RecordSetWriterFactory, attributes: Mapping[str, str]
    ) -> FlowFile:
        """The child with its records written and NiFi's attributes set."""
        written: dict[str, str] = {}
        schema = self.schema or RecordSchema(())

        def produce(out: Any) -> None:
            record_writer = writer.create_writer(schema, attributes, WriteStream(out))
            for batch in self.batches():
                record_writer.write(batch)
            written.update(record_writer.finish())

        child = session.write(self.child, produce)
        written.setdefault("record.count", str(self.count))
        for key, value in (self.partition or {}).items():
            written[str(key)] = java_text(value)
        return session.put_all_attributes(child, written)


def _inferred(text: str) -> RecordSchema:
    """The schema NiFi's ``JsonSchemaInference`` gives one record's JSON."""
    for batch in read_json(io.BytesIO(text.encode()), JsonReaderOptions()):
        return RecordSchema.from_arrow(batch.schema)
    return RecordSchema(())


def _partition_key(partition: Mapping[str, Any] | None) -> str | None:
    if partition is None:
        return None
    return json.dumps(dict(partition), sort_keys=True, default=str)


class RecordTransformRunner(Processor):
    """The processor half of a NiFi ``RecordTransform``'s adapter (see the module)."""

    #: Set by ``_NiFiProcessor``: the NiFi instance and its context maker.
    nifi: Any

    def _nifi_context(self, context: ProcessContext) -> Any:  # pragma: no cover - the mixin's
        raise NotImplementedError

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """One FlowFile, as NiFi's ``RecordTransformProxy.onTrigger``."""
        flowfile = session.get()
        if flowfile is None:
            return
        reader, writer = services(context, session)
        assert writer is not None
        nifi_context = self._nifi_context(context)
        attribute_map = CachingAttributeMap(_FlowFileAttributes(flowfile.attributes))
        destinations: dict[tuple[str, str | None], _Destination] = {}
        read = written = 0
        try:
            with read_records(session, flowfile, reader) as records:
                for batch in records:
                    read += batch.num_rows
                    for record in record_dicts(batch):
                        result = self.nifi.transform(
                            nifi_context, record, records.schema, attribute_map
                        )
                        returned = _record_of(result, type(self).__name__, flowfile)
                        if returned is None:
                            continue
                        relationship = str(result.getRelationship())
                        partition = result.getPartition()
                        key = (relationship, _partition_key(partition))
                        destination = destinations.get(key)
                        if destination is None:
                            destination = _Destination(
                                session.create(flowfile), relationship, partition
                            )
                            destinations[key] = destination
                        destination.add(returned, result.getSchema())
                        written += 1
            children = [
                (d.relationship, d.write(session, writer, flowfile.attributes))
                for d in destinations.values()
            ]
        except Exception as error:  # NiFi: any failure sends the original to failure
            context.logger.error("Failed to transform %s; routing to failure: %s", flowfile, error)
            for destination in destinations.values():
                destination.discard()
                session.remove(destination.child)
            session.transfer(flowfile, "failure")
            return
        for relationship, child in children:
            session.transfer(child, relationship)
        session.transfer(flowfile, "original")
        session.adjust_counter("Records Read", read)
        session.adjust_counter("Record Written", written)


def _record_of(result: Any, name: str, flowfile: FlowFile) -> Mapping[str, Any] | None:
    """The record a ``transform`` result holds (None: dropped).

    Raises:
        ProcessException: ``transform`` returned something else (names the processor).
    """
    if not hasattr(result, "getRecord"):
        msg = (
            f"{name}.transform must return a RecordTransformResult, but it returned "
            f"{type(result).__name__} {result!r}"
        )
        raise ProcessException(msg, flowfile_uuid=flowfile.uuid)
    return result.getRecord()
