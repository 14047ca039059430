"""PublishKafka with a Record Reader and Writer: one Kafka message per record.

NiFi 2's ``RecordStreamKafkaRecordConverter`` (Publish Strategy ``USE_VALUE``: each record
written alone by the Record Writer is a message's value; Message Key Field names the field whose
value is its key) and ``RecordWrapperStreamKafkaRecordConverter`` (``USE_WRAPPER``: each record
holds the message, ``key``, ``value``, ``headers`` and ``metadata``; Record Metadata Strategy
``FROM_RECORD`` takes the topic and partition from ``metadata``). NiFi 1.x's
``PublishKafkaRecord_2_6`` names (``record-reader``, ``message-key-field``...) are aliases.

Records are read batch by batch (memory bounded by a batch whatever the FlowFile's size); each
record is written by a fresh writer, as NiFi 1.x's publisher did, so a JSON value is the
record's object alone (``{"id":1}``, without the array a record set would have) and a CSV value
carries its header line when the writer includes one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import pyarrow as pa

from flowcore.errors import RecordError
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import NON_EMPTY_VALIDATOR
from processors.kafka._record_calls import write_alone

__all__ = [
    "MESSAGE_KEY_FIELD",
    "PUBLISH_STRATEGY",
    "RECORD_KEY_WRITER",
    "RECORD_METADATA_STRATEGY",
    "RECORD_READER",
    "RECORD_WRITER",
    "MessageColumns",
    "record_messages",
]

RECORD_READER = PropertyDescriptor(
    "Record Reader",
    description="The Record Reader to use for incoming FlowFiles",
    identifies_service="RecordReaderFactory",
    aliases=("record-reader",),
)
RECORD_WRITER = PropertyDescriptor(
    "Record Writer",
    description="The Record Writer to use in order to serialize the data before sending to Kafka",
    identifies_service="RecordSetWriterFactory",
    aliases=("record-writer",),
)
PUBLISH_STRATEGY = PropertyDescriptor(
    "Publish Strategy",
    description="The format used to publish the incoming FlowFile record to Kafka.",
    default="USE_VALUE",
    required=True,
    allowable_values=("USE_VALUE", "USE_WRAPPER"),
    aliases=("publish-strategy",),
)
MESSAGE_KEY_FIELD = PropertyDescriptor(
    "Message Key Field",
    description="The name of a field in the Input Records that should be used as the Key for "
    "the Kafka message.",
    validators=(NON_EMPTY_VALIDATOR,),
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    aliases=("message-key-field",),
)
RECORD_KEY_WRITER = PropertyDescriptor(
    "Record Key Writer",
    description="The Record Key Writer to use for outgoing FlowFiles",
    identifies_service="RecordSetWriterFactory",
    aliases=("record-key-writer",),
)
RECORD_METADATA_STRATEGY = PropertyDescriptor(
    "Record Metadata Strategy",
    description="Specifies whether the Record's metadata (topic and partition) should come from "
    "the Record's metadata field or if it should come from the configured Topic Name and "
    "Partition / Partitioner class properties",
    default="FROM_PROPERTIES",
    required=True,
    allowable_values=("FROM_PROPERTIES", "FROM_RECORD"),
)


class MessageColumns(NamedTuple):
    """A batch's messages column-wise: their values and, per message, what differs from the order.

    A named tuple of lists, one per batch (not one object per message: PublishKafka's hot path
    walks the lists). A column that is None takes the FlowFile's order's value for every
    message (its key, headers, topic, partition); a None in a column's list takes it for that
    message alone where the order says so (topic, partition).
    """

    values: list[bytes | None]
    keys: list[bytes | None] | None
    headers: list[list[tuple[str, bytes]] | None] | None
    topics: list[str | None] | None
    partitions: list[int | None] | None


def record_messages(
    flowfile_attributes: Mapping[str, str],
    raw: Any,
    *,
    reader: Any,
    writer: Any,
    key_writer: Any,
    wrapper: bool,
    key_field: str | None,
    from_record: bool,
) -> Iterator[MessageColumns]:
    """The messages of a FlowFile's records, read from *raw* batch by batch, a batch at a time.

    Raises:
        RecordError: a record does not parse, or a key or value cannot become bytes (NiFi's
            message for a record key without a Record Key Writer).
    """
    for batch in reader.create_reader(flowfile_attributes, raw):
        if wrapper:
            yield _wrapped(batch, flowfile_attributes, writer, key_writer, from_record)
            continue
        keys = (
            _field_bytes(batch, key_field, flowfile_attributes, key_writer) if key_field else None
        )
        yield MessageColumns(
            _write_each(writer, batch, flowfile_attributes), keys, None, None, None
        )


def _wrapped(
    batch: pa.RecordBatch,
    attributes: Mapping[str, str],
    writer: Any,
    key_writer: Any,
    from_record: bool,
) -> MessageColumns:
    names = batch.schema.names
    count = batch.num_rows
    keys = _field_bytes(batch, "key", attributes, key_writer) if "key" in names else None
    values = (
        _field_bytes(batch, "value", attributes, writer) if "value" in names else [None] * count
    )
    headers = (
        [_headers(pairs) for pairs in batch.column("headers").to_pylist()]
        if "headers" in names
        else None
    )
    topics = partitions = None
    if from_record and "metadata" in names:
        metadata = [m or {} for m in batch.column("metadata").to_pylist()]
        topics = [m.get("topic") for m in metadata]
        partitions = [None if m.get("partition") is None else int(m["partition"]) for m in metadata]
    return MessageColumns(values, keys, headers, topics, partitions)


def _headers(pairs: Any) -> list[tuple[str, bytes]] | None:
    """A wrapper's ``headers`` map (pairs or a dict) as Kafka headers, values as UTF-8 text."""
    if not pairs:
        return None
    items = pairs.items() if isinstance(pairs, dict) else pairs
    return [(str(name), str(value).encode()) for name, value in items]


def _field_bytes(
    batch: pa.RecordBatch, field: str, attributes: Mapping[str, str], writer: Any
) -> list[bytes | None]:
    """Each record's *field* as bytes (NiFi's RecordFieldConverter).

    Text as UTF-8, bytes as they are, a record written by *writer*; a missing field is None.
    """
    index = batch.schema.get_field_index(field)
    if index < 0:
        return [None] * batch.num_rows
    column = batch.column(index)
    kind = column.type
    if pa.types.is_struct(kind):
        if writer is None:
            msg = (
                "Record has a key that is itself a record, but the 'Record Key Writer' of the "
                "processor was not configured. If Records are expected to have a Record as the "
                "key, the 'Record Key Writer' property must be set."
            )
            raise RecordError(msg)
        valid = column.is_valid()
        records = pa.RecordBatch.from_struct_array(column).filter(valid)
        written = iter(_write_each(writer, records, attributes))
        return [next(written) if ok else None for ok in valid.to_pylist()]
    values = column.to_pylist()
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return values
    if pa.types.is_list(kind):
        return [None if v is None else bytes(b & 0xFF for b in v) for v in values]
    return [None if v is None else _text(v).encode() for v in values]


def _text(value: Any) -> str:
    """A scalar key as NiFi 1.x's ``getAsString`` gives it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _write_each(writer: Any, batch: pa.RecordBatch, attributes: Mapping[str, str]) -> list[bytes]:
    """Each record of *batch* written alone (see :func:`_write_one`), in one write if it can.

    A JSON writer writes the whole batch once and its array is cut at its top-level objects
    (the same bytes as one writer per record, at a fraction of the cost); other writers, or an
    array that does not cut into one object per record, write record by record.
    """
    if batch.num_rows > 1:
        data, written = write_alone(writer, batch, attributes)
        if written.get("mime.type") == "application/json":
            cut = _json_objects(data, batch.num_rows)
            if cut is not None and len(cut) == batch.num_rows:
                return cut
    return [_write_one(writer, batch.slice(row, 1), attributes) for row in range(batch.num_rows)]


#: A JSON string (escapes included) or a brace: what cutting an array into objects looks at.
_JSON_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}]')


def _json_objects(data: bytes, count: int) -> list[bytes] | None:
    """The top-level objects of a JSON array of *count* objects (None: not one).

    Compact output separates its records by ``},{``, and any other ``},{`` (in a string, or
    between the records of a nested array) only adds pieces: when splitting there gives exactly
    *count* pieces, they are the records. Otherwise the strings and braces are followed.
    """
    stripped = data.strip()
    if not (stripped.startswith(b"[") and stripped.endswith(b"]")):
        return None
    if stripped.startswith(b"[{") and stripped.endswith(b"}]"):
        parts = stripped[2:-2].split(b"},{")
        if len(parts) == count:
            return [b"{" + part + b"}" for part in parts]
    objects: list[bytes] = []
    depth = 0
    start = 0
    for token in _JSON_TOKENS.finditer(stripped):
        mark = token.group()
        if mark == b"{":
            if depth == 0:
                start = token.start()
            depth += 1
        elif mark == b"}":
            depth -= 1
            if depth == 0:
                objects.append(stripped[start : token.end()])
            elif depth < 0:
                return None
    return objects if depth == 0 else None


def _write_one(writer: Any, one: pa.RecordBatch, attributes: Mapping[str, str]) -> bytes:
    """One record written alone; a JSON writer's array of one is the record's object."""
    data, written = write_alone(writer, one, attributes)
    if written.get("mime.type") == "application/json":
        stripped = data.strip()
        if stripped.startswith(b"[") and stripped.endswith(b"]"):
            data = stripped[1:-1].strip()
    return data
