"""ConsumeKafka's RECORD strategy: a partition range's messages as record FlowFiles.

NiFi 2's ``RecordStreamKafkaMessageConverter`` (Output Strategy ``USE_VALUE``) and
``WrapperRecordStreamKafkaMessageConverter`` (``USE_WRAPPER``). Each message's value is parsed
with the Record Reader; its records join the group of their write schema (and, with
``USE_VALUE``, of the header values Header Name Pattern selects), and each group becomes one
FlowFile written by the Record Writer, with ``record.count``, ``kafka.count``, ``kafka.offset``
(the group's lowest offset), ``kafka.max.offset``, ``kafka.topic``, ``kafka.partition`` and the
writer's attributes. A message whose value does not parse becomes a FlowFile of its own, its
bytes unchanged and the message's attributes, on ``parse failure``.

Records stay columnar: a message's records are an Arrow batch; the wrapper's ``metadata``,
``headers`` and ``key`` are columns repeated over the batch beside the value as a struct
column, in NiFi's wrapper schema order (``metadata``, ``headers``, ``key``, ``value``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import pyarrow as pa

from flowcore.errors import ProcessException
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.records.record_io import RECORD_FAILURES
from flowcore.session.process_session import ProcessSession
from processors.kafka._record_calls import read_value, write_batches
from processors.record_services.json import JsonTreeReader

__all__ = [
    "KEY_FORMAT",
    "KEY_RECORD_READER",
    "OUTPUT_STRATEGY",
    "PARSE_FAILURE",
    "RECORD_READER",
    "RECORD_WRITER",
    "RecordOptions",
    "write_record_groups",
]

RECORD_READER = PropertyDescriptor(
    "Record Reader",
    description="The Record Reader to use for incoming Kafka messages",
    identifies_service="RecordReaderFactory",
    aliases=("record-reader",),
)
RECORD_WRITER = PropertyDescriptor(
    "Record Writer",
    description="The Record Writer to use in order to serialize the outgoing FlowFiles",
    identifies_service="RecordSetWriterFactory",
    aliases=("record-writer",),
)
OUTPUT_STRATEGY = PropertyDescriptor(
    "Output Strategy",
    description="The format used to output the Kafka Record into a FlowFile Record.",
    default="USE_VALUE",
    required=True,
    allowable_values=("USE_VALUE", "USE_WRAPPER"),
    aliases=("output-strategy",),
)
KEY_FORMAT = PropertyDescriptor(
    "Key Format",
    description="Specifies how to represent the Kafka Record Key in the output FlowFile",
    default="byte-array",
    required=True,
    allowable_values=("string", "byte-array", "record"),
    aliases=("key-format",),
)
KEY_RECORD_READER = PropertyDescriptor(
    "Key Record Reader",
    description="The Record Reader to use for parsing the Kafka Record Key into a Record",
    identifies_service="RecordReaderFactory",
    aliases=("key-record-reader",),
)

PARSE_FAILURE = Relationship(
    "parse failure",
    "If configured to use a Record Reader, a Kafka message that cannot be parsed using the "
    "configured Record Reader will be routed to this relationship",
)

_METADATA_TYPE = pa.struct(
    [
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us")),  # the record TIMESTAMP (millis from Kafka)
    ]
)
_HEADERS_TYPE = pa.map_(pa.string(), pa.string())


@attrs.frozen
class RecordOptions:
    """What the RECORD strategy needs, read once per range from the processor's properties.

    Attributes:
        reader: the Record Reader service.
        writer: the Record Writer service.
        wrapper: Output Strategy ``USE_WRAPPER``.
        key_format: ``string``, ``byte-array`` or ``record`` (the wrapper's key field).
        key_reader: the Key Record Reader (Key Format ``record``).
        header_pattern: Header Name Pattern, compiled (None: no header attributes).
        header_encoding: Header Encoding.
        attributes: a message's FlowFile attributes (``parse failure``'s, and what the reader
            and writer see), as FLOW_FILE's.
    """

    reader: Any
    writer: Any
    wrapper: bool
    key_format: str
    key_reader: Any
    header_pattern: re.Pattern[str] | None
    header_encoding: str
    attributes: Callable[[Any], dict[str, str]]


@attrs.define
class _Group:
    """The records of one write schema (and header values) of a range, with their offsets."""

    schema: pa.Schema
    extra: tuple[tuple[str, str], ...]
    first_attributes: Mapping[str, str]
    batches: list[pa.RecordBatch] = attrs.field(factory=list)
    min_offset: int = 0
    max_offset: int = 0
    count: int = 0


def write_record_groups(
    session: ProcessSession,
    messages: Sequence[Any],
    options: RecordOptions,
    transit: str,
    success: Relationship,
) -> None:
    """Make the FlowFiles of a range's *messages* under the RECORD strategy (module doc)."""
    groups: dict[tuple[Any, ...], _Group] = {}
    if _whole_range(options) and messages:
        group = _read_range(options, messages)
        if group is not None:
            _write_group(session, group, options, transit, success)
            return
    for message in messages:
        attributes = options.attributes(message)
        try:
            batches = read_value(options.reader, attributes, message.value() or b"")
            batches = [_wrapped(options, message, b, attributes) for b in batches]
        except RECORD_FAILURES:
            _parse_failure(session, message, attributes)
            continue
        extra = () if options.wrapper else _selected_headers(options, message)
        for batch in batches:
            if not batch.num_rows:
                continue
            key = (batch.schema, extra)
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(batch.schema, extra, attributes)
                group.min_offset = group.max_offset = message.offset()
            group.batches.append(batch)
            group.min_offset = min(group.min_offset, message.offset())
            group.max_offset = max(group.max_offset, message.offset())
            group.count += batch.num_rows
    for group in groups.values():
        _write_group(session, group, options, transit, success)


def _whole_range(options: RecordOptions) -> bool:
    """Whether a range's values can be read as one JSON text (records one after another).

    USE_VALUE without header grouping, with a JsonTreeReader: the values joined by newlines
    are JSON records one after another, read in one pass instead of a reader per message.
    """
    return (
        not options.wrapper
        and options.header_pattern is None
        and isinstance(options.reader, JsonTreeReader)
    )


def _read_range(options: RecordOptions, messages: Sequence[Any]) -> _Group | None:
    """All of a range's records as one group, read at once.

    None when some value does not parse (the messages are then read one by one, to send the
    bad ones to ``parse failure``) or the records do not share one schema.
    """
    attributes = options.attributes(messages[0])
    joined = b"\n".join(v for v in (m.value() for m in messages) if v)
    try:
        batches = [b for b in read_value(options.reader, attributes, joined) if b.num_rows]
    except RECORD_FAILURES:
        return None
    if not batches:
        return None
    schema = batches[0].schema
    if any(not b.schema.equals(schema) for b in batches):
        return None
    offsets = [m.offset() for m in messages]
    return _Group(
        schema,
        (),
        attributes,
        batches,
        min(offsets),
        max(offsets),
        sum(b.num_rows for b in batches),
    )


def _selected_headers(options: RecordOptions, message: Any) -> tuple[tuple[str, str], ...]:
    """The headers Header Name Pattern selects: FlowFile attributes, and part of the group."""
    pattern = options.header_pattern
    if pattern is None or not message.headers():
        return ()
    return tuple(
        sorted(
            (name, (value or b"").decode(options.header_encoding, "replace"))
            for name, value in message.headers()
            if pattern.fullmatch(name)
        )
    )


def _wrapped(
    options: RecordOptions, message: Any, batch: pa.RecordBatch, attributes: Mapping[str, str]
) -> pa.RecordBatch:
    """*batch* as NiFi's wrapper records (USE_WRAPPER), else unchanged."""
    if not options.wrapper:
        return batch
    rows = batch.num_rows
    metadata = pa.array(
        [
            {
                "topic": message.topic(),
                "partition": message.partition(),
                "offset": message.offset(),
                "timestamp": message.timestamp()[1] * 1000,
            }
        ]
        * rows,
        _METADATA_TYPE,
    )
    headers = [
        (name, (value or b"").decode(options.header_encoding, "replace"))
        for name, value in message.headers() or ()
    ]
    columns = [metadata, pa.array([headers] * rows, _HEADERS_TYPE)]
    names = ["metadata", "headers"]
    key = _key_column(options, message.key(), attributes, rows)
    if key is not None:
        columns.append(key)
        names.append("key")
    columns.append(batch.to_struct_array())
    names.append("value")
    return pa.RecordBatch.from_arrays(columns, names=names)


def _key_column(
    options: RecordOptions, key: bytes | None, attributes: Mapping[str, str], rows: int
) -> pa.Array | None:
    """The wrapper's ``key`` column as Key Format says (None: no key field, a null key)."""
    if options.key_format == "string":
        return pa.array([None if key is None else key.decode("utf-8", "replace")] * rows)
    if options.key_format == "byte-array":
        return pa.array([key] * rows, pa.binary())
    if key is None:
        return None
    if not key:
        return pa.array([{}] * rows, pa.struct([]))
    if options.key_reader is None:
        msg = "Key Format 'record' needs a Key Record Reader"
        raise ProcessException(msg)
    parsed = [b for b in read_value(options.key_reader, attributes, key) if b.num_rows]
    if not parsed:
        return pa.nulls(rows, pa.struct([]))
    record = parsed[0].slice(0, 1).to_struct_array()
    return pa.concat_arrays([record] * rows) if rows else record.slice(0, 0)


def _parse_failure(session: ProcessSession, message: Any, attributes: Mapping[str, str]) -> None:
    """The message as it came, with its attributes, to ``parse failure`` (NiFi's way)."""
    flowfile = session.create()
    flowfile = session.put_all_attributes(flowfile, dict(attributes))
    flowfile = session.write(flowfile, message.value() or b"")
    session.transfer(flowfile, PARSE_FAILURE)


def _write_group(
    session: ProcessSession,
    group: _Group,
    options: RecordOptions,
    transit: str,
    success: Relationship,
) -> None:
    """One group's records as one FlowFile with NiFi's attributes and a RECEIVE event."""
    written: dict[str, str] = {}
    seen = dict(group.first_attributes)

    def produce(out: Any) -> None:
        written.update(write_batches(options.writer, group.schema, seen, group.batches, out))

    flowfile = session.create()
    flowfile = session.put_all_attributes(
        flowfile,
        {"kafka.topic": seen["kafka.topic"], "kafka.partition": seen["kafka.partition"]},
    )
    flowfile = session.write(flowfile, produce)
    attributes = {
        **written,
        "record.count": str(group.count),
        "kafka.count": str(group.count),
        "kafka.max.offset": str(group.max_offset),
        "kafka.offset": str(group.min_offset),
        **dict(group.extra),
    }
    flowfile = session.put_all_attributes(flowfile, attributes)
    session.provenance.receive(flowfile, transit)
    session.transfer(flowfile, success)
