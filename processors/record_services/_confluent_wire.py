"""Confluent's wire format: a magic byte 0 and a 4-byte big-endian schema id before the data.

Readers with "Schema Access Strategy" ``confluent-encoded`` read the header and look the id up
in their Schema Registry (NiFi's ``ConfluentSchemaRegistryStrategy``); writers with "Schema
Write Strategy" ``confluent-encoded`` write it (NiFi's ``ConfluentSchemaRegistryWriter``). A
schema read so keeps its id in the Arrow schema's metadata (:data:`SCHEMA_ID_KEY`), so a writer
inheriting the record schema can write the same reference.
"""

from __future__ import annotations

import struct
from typing import IO, Any, Protocol

import attrs
import pyarrow as pa

from flowcore.errors import ConfigurationError, RecordError
from flowcore.records.schema import RecordSchema

__all__ = [
    "SCHEMA_ID_KEY",
    "SCHEMA_TEXT_KEY",
    "RegisteredRecordSchema",
    "RegisteredSchema",
    "confluent_header",
    "lookup_schema_id",
    "read_confluent_header",
    "read_confluent_id",
    "registered_schema_of",
    "schema_id_of",
    "with_schema_id",
]

#: The Arrow schema metadata key holding the registry id of the schema the records were read with.
SCHEMA_ID_KEY = b"schema.identifier.id"
#: ...and the key holding that schema's Avro text (an Avro writer writes with it, as NiFi does).
SCHEMA_TEXT_KEY = b"schema.text"
_MAGIC = 0
_HEADER = struct.Struct(">bI")


@attrs.frozen
class RegisteredSchema:
    """A schema as a registry holds it.

    Attributes:
        schema: the record schema.
        text: its Avro schema text (what the datums were written with).
        id: the registry's id.
        name: the subject (None when the registry did not say).
        version: the subject's version (None when not known).
    """

    schema: RecordSchema
    text: str
    id: int
    name: str | None = None
    version: int | None = None


class IdRegistry(Protocol):
    """A registry that finds schemas by id (ConfluentSchemaRegistry)."""

    def schema_by_id(self, schema_id: int) -> RegisteredSchema:
        """The schema registered under *schema_id*."""
        ...


def read_confluent_header(stream: IO[bytes], registry: Any) -> RegisteredSchema:
    """Read the 5-byte header from *stream* and look its id up in *registry*.

    Raises:
        RecordError: the content does not start with Confluent's header.
        ConfigurationError: the registry cannot look schemas up by id, or has no such id.
    """
    return lookup_schema_id(registry, read_confluent_id(stream))


def read_confluent_id(stream: IO[bytes]) -> int:
    """The schema id of the 5-byte header at the start of *stream*.

    Raises:
        RecordError: the content does not start with Confluent's header.
    """
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        msg = "the content is too short for a Confluent schema reference (5 bytes)"
        raise RecordError(msg, record=1)
    magic, schema_id = _HEADER.unpack(head)
    if magic != _MAGIC:
        msg = (
            f"Magic byte should be 0 for a Confluent schema reference, but it is {magic}: "
            "the content was not written with Confluent's wire format"
        )
        raise RecordError(msg, record=1)
    return schema_id


def lookup_schema_id(registry: Any, schema_id: int) -> RegisteredSchema:
    """The schema *registry* holds under *schema_id*.

    Raises:
        ConfigurationError: the registry cannot look schemas up by id, or has no such id.
    """
    lookup = getattr(registry, "schema_by_id", None)
    if lookup is None:
        msg = (
            f"the Schema Registry {getattr(registry, 'name', registry)!r} cannot look schemas up "
            "by id; a schema reference by id needs a ConfluentSchemaRegistry"
        )
        raise ConfigurationError(msg)
    return lookup(schema_id)


def confluent_header(schema_id: int) -> bytes:
    """The 5 bytes that reference *schema_id*."""
    return _HEADER.pack(_MAGIC, schema_id)


def with_schema_id(batch: pa.RecordBatch, registered: RegisteredSchema) -> pa.RecordBatch:
    """*batch* whose Arrow schema remembers the registry schema it was read with."""
    metadata = dict(batch.schema.metadata or {})
    metadata[SCHEMA_ID_KEY] = str(registered.id).encode()
    metadata[SCHEMA_TEXT_KEY] = registered.text.encode()
    return batch.replace_schema_metadata(metadata)


@attrs.frozen
class RegisteredRecordSchema(RecordSchema):
    """A record schema that came from a registry: its id and Avro text ride along."""

    schema_id: int | None = None
    avro_text: str | None = None


def registered_schema_of(schema: pa.Schema) -> RegisteredRecordSchema | None:
    """The registry schema an Arrow schema remembers (None: it remembers none)."""
    metadata = schema.metadata or {}
    if SCHEMA_ID_KEY not in metadata:
        return None
    plain = RecordSchema.from_arrow(schema)
    text = metadata.get(SCHEMA_TEXT_KEY)
    return RegisteredRecordSchema(
        plain.fields,
        schema_id=int(metadata[SCHEMA_ID_KEY]),
        avro_text=text.decode() if text is not None else None,
    )


def schema_id_of(schema: Any) -> int | None:
    """The registry id a schema remembers (a RegisteredRecordSchema, Arrow metadata), or None."""
    if isinstance(schema, RegisteredRecordSchema):
        return schema.schema_id
    metadata = getattr(schema, "metadata", None) or {}
    value = metadata.get(SCHEMA_ID_KEY)
    return int(value) if value is not None else None
