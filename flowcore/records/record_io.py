"""The records SDK: read a FlowFile's records, write records, fail well, as record processors do.

ConvertRecord, SplitRecord, QueryRecord (and UpdateRecord, PartitionRecord, LookupRecord after
them) read a FlowFile's content with a Record Reader service and write records with a Record
Writer service, batch by batch, so memory stays bounded by a batch whatever the content's size.
The built-in processors, NiFi's Python ``RecordTransform`` adapter (``nifiapi``) and your own
processors share it; the services are NiFi's interfaces (:class:`RecordReaderFactory`,
:class:`RecordSetWriterFactory`), implemented by ``processors/record_services``.

API:

- ``RECORD_READER`` / ``RECORD_WRITER`` / ``INCLUDE_ZERO_RECORD_FLOWFILES``: NiFi's descriptors.
- ``services(context, session)`` -> ``(reader, writer)``: the enabled services the processor's
  Record Reader and Record Writer properties name.
- ``read_records(session, flowfile, reader)``: a context manager yielding a :class:`Records`
  (an iterator of ``pyarrow.RecordBatch``; ``.schema``: the reader's schema once known).
- ``write_records(session, flowfile, writer, schema, batches, attributes=None)`` -> ``(flowfile,
  write_attributes)``: the records as *flowfile*'s new content (streamed).
- ``convert(session, flowfile, reader, writer, transform=None)`` -> ``(flowfile,
  write_attributes)``: old content to new in one stream, each batch through *transform*.
- ``RECORD_FAILURES``: the errors that send a FlowFile to ``failure`` (a record that does not
  parse or fit, a schema not found, a value Arrow cannot cast); ``failure_message(error)`` is
  NiFi's ``record.error.message``; ``route_failure(context, session, flowfile, error)`` logs
  NiFi's message, sets that attribute and transfers to ``failure``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any, Protocol

import pyarrow as pa

from flowcore.errors import (
    ConfigurationError,
    ExpressionEvaluationError,
    RecordError,
    RecordPathError,
)
from flowcore.flowfile import FlowFile
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.records.schema import RecordSchema
from flowcore.session.process_session import ProcessSession
from flowcore.session.streams import WriteStream, buffered

__all__ = [
    "INCLUDE_ZERO_RECORD_FLOWFILES",
    "RECORD_FAILURES",
    "RECORD_READER",
    "RECORD_WRITER",
    "RecordReaderFactory",
    "RecordSetWriterFactory",
    "RecordWriter",
    "Records",
    "convert",
    "failure_message",
    "read_records",
    "route_failure",
    "services",
    "write_records",
]


class RecordWriter(Protocol):
    """What ``create_writer`` returns."""

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Write every record of *batch*."""
        ...

    def finish(self) -> dict[str, str]:
        """Finish the content; NiFi's write attributes."""
        ...


class RecordReaderFactory(Protocol):
    """A Record Reader service, as the SDK uses it (NiFi's ``RecordReaderFactory``)."""

    def configured_schema(self, attributes: Mapping[str, str]) -> RecordSchema | None:
        """The schema the properties give for a FlowFile with *attributes* (None: none given)."""
        ...

    def create_reader(
        self, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> Iterator[pa.RecordBatch]:
        """Record batches of *stream*'s records (NiFi's ``createRecordReader``)."""
        ...


class RecordSetWriterFactory(Protocol):
    """A Record Writer service, as the SDK uses it (NiFi's ``RecordSetWriterFactory``)."""

    def create_writer(
        self, schema: RecordSchema | pa.Schema, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> RecordWriter:
        """A writer of records of *schema* to *stream* (NiFi's ``createWriter``)."""
        ...


RECORD_READER = PropertyDescriptor(
    "Record Reader",
    description="Specifies the Controller Service to use for reading incoming data",
    required=True,
    identifies_service="RecordReaderFactory",
    aliases=("record-reader",),
)
RECORD_WRITER = PropertyDescriptor(
    "Record Writer",
    description="Specifies the Controller Service to use for writing out the records",
    required=True,
    identifies_service="RecordSetWriterFactory",
    aliases=("record-writer",),
)
INCLUDE_ZERO_RECORD_FLOWFILES = PropertyDescriptor(
    "Include Zero Record FlowFiles",
    description="When converting an incoming FlowFile, if the conversion results in no data, "
    "this property specifies whether or not a FlowFile will be sent to the corresponding "
    "relationship",
    default="true",
    required=True,
    allowable_values=("true", "false"),
    aliases=("include-zero-record-flowfiles",),
)

#: What sends a FlowFile to failure rather than rolling the session back.
RECORD_FAILURES: tuple[type[BaseException], ...] = (
    RecordError,
    RecordPathError,
    ConfigurationError,
    ExpressionEvaluationError,
    pa.ArrowException,
    UnicodeDecodeError,
)

RECORD_ERROR_MESSAGE = "record.error.message"


def services(
    context: ProcessContext,
    session: ProcessSession,
    reader: PropertyDescriptor = RECORD_READER,
    writer: PropertyDescriptor | None = RECORD_WRITER,
) -> tuple[RecordReaderFactory, RecordSetWriterFactory | None]:
    """The enabled reader and writer the processor's properties name."""
    found_reader = session.controller_service(context.get_property(reader).value or "")
    found_writer = (
        session.controller_service(context.get_property(writer).value or "")
        if writer is not None
        else None
    )
    return found_reader, found_writer  # type: ignore[return-value]


class Records:
    """A FlowFile's record batches as its reader yields them; ``schema`` once known."""

    def __init__(self, batches: Iterator[pa.RecordBatch], schema: RecordSchema | None) -> None:
        self._batches = batches
        self.schema = schema
        self.count = 0

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for index, batch in enumerate(self._batches):
            if self.schema is None:
                self.schema = RecordSchema.from_arrow(batch.schema)
            self.count += batch.num_rows
            yield batch
            if index:  # a content of one batch frees nothing the next content's would not reuse
                release_unused()

    def arrow_schema(self) -> pa.Schema:
        """The schema as Arrow (an empty one when no record came and none was configured)."""
        return (self.schema or RecordSchema(())).to_arrow()


def release_unused() -> None:
    """Hand the memory Arrow's pool freed for the last batch back to the system.

    Arrow's default pool (mimalloc) keeps freed pages for a while: a reader's string kernels
    free a few batch-sized buffers per column per batch, so without this a 100 MB CSV through
    ConvertRecord peaked about 20 MB higher (measured in ``tests/stress/test_record_memory.py``)
    than the records held at once. It costs about half a millisecond a batch (a third of a
    small FlowFile's conversion), so a reader's first batch goes without it: the next batch
    reuses those pages.
    """
    pa.default_memory_pool().release_unused()


def _records(reader: RecordReaderFactory, attributes: Mapping[str, str], raw: IO[bytes]) -> Records:
    configured = reader.configured_schema(attributes)
    batches = reader.create_reader(attributes, buffered(raw))
    return Records(iter(batches), configured)


@contextmanager
def read_records(
    session: ProcessSession, flowfile: FlowFile, reader: RecordReaderFactory
) -> Iterator[Records]:
    """The records of *flowfile*, streamed from its content while the block runs.

    Raises:
        RecordError, ConfigurationError...: see :data:`RECORD_FAILURES`.
    """
    with session.read(flowfile) as raw:
        yield _records(reader, flowfile.attributes, raw)


def write_records(
    session: ProcessSession,
    flowfile: FlowFile,
    writer: RecordSetWriterFactory,
    schema: RecordSchema | pa.Schema,
    batches: Iterable[pa.RecordBatch | pa.Table],
    *,
    attributes: Mapping[str, str] | None = None,
) -> tuple[FlowFile, dict[str, str]]:
    """Write *batches* as *flowfile*'s new content; the writer's attributes.

    *attributes* are those the writer sees (its Expression Language, schema name); default
    the FlowFile's.
    """
    written: dict[str, str] = {}
    seen = dict(flowfile.attributes if attributes is None else attributes)

    def produce(out: Any) -> None:
        record_writer = writer.create_writer(schema, seen, WriteStream(out))
        for batch in batches:
            record_writer.write(batch)
            release_unused()
        written.update(record_writer.finish())

    updated = session.write(flowfile, produce)
    return updated, written


def convert(
    session: ProcessSession,
    flowfile: FlowFile,
    reader: RecordReaderFactory,
    writer: RecordSetWriterFactory,
    transform: Callable[[pa.RecordBatch], pa.RecordBatch | pa.Table] | None = None,
) -> tuple[FlowFile, dict[str, str], int]:
    """Read *flowfile*'s records and write them back as its new content, one stream.

    The writer is made at the first batch (its schema is the records'), or at the end when
    there is none. Returns the new FlowFile, the writer's attributes and the record count.
    """
    written: dict[str, str] = {}
    attributes = flowfile.attributes

    def callback(source: Any, out: Any) -> None:
        records = _records(reader, attributes, source)
        record_writer: RecordWriter | None = None
        target = WriteStream(out)
        for batch in records:
            piece = transform(batch) if transform is not None else batch
            if record_writer is None:
                record_writer = writer.create_writer(piece.schema, attributes, target)
            record_writer.write(piece)
        if record_writer is None:
            record_writer = writer.create_writer(
                records.schema or RecordSchema(()), attributes, target
            )
        written.update(record_writer.finish())
        written.setdefault("record.count", str(records.count))

    updated = session.rewrite(flowfile, callback)
    return updated, written, int(written.get("record.count", "0"))


def failure_message(error: BaseException) -> str:
    """NiFi's ``record.error.message``: the cause's message, or its class."""
    return str(error) or f"{type(error).__name__} Thrown"


def route_failure(
    context: ProcessContext,
    session: ProcessSession,
    flowfile: FlowFile,
    error: BaseException,
    failure: Relationship,
) -> None:
    """NiFi's AbstractRecordProcessor failure: log, ``record.error.message``, to *failure*."""
    context.logger.error("Failed to process %s; will route to failure: %s", flowfile, error)
    flowfile = session.put_attribute(flowfile, RECORD_ERROR_MESSAGE, failure_message(error))
    session.transfer(flowfile, failure)
