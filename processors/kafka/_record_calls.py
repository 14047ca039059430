"""The Record Reader and Writer calls the Kafka record strategies share.

ConsumeKafka's RECORD strategy parses each message's value whole and writes groups of batches
into a FlowFile; PublishKafka with a Record Writer writes records alone into message values.
Both go through these three calls, so a reader or writer is driven one way: a fresh writer
per output, every batch written, ``finish`` giving the writer's attributes (``mime.type``,
``record.count``...).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any, BinaryIO

import pyarrow as pa

__all__ = ["read_value", "write_alone", "write_batches"]


def read_value(reader: Any, attributes: Mapping[str, str], value: bytes) -> list[pa.RecordBatch]:
    """Every record batch of one value, read whole (so a bad record fails the whole value)."""
    return list(reader.create_reader(attributes, io.BytesIO(value)))


def write_batches(
    writer: Any,
    schema: pa.Schema,
    attributes: Mapping[str, str],
    batches: Iterable[pa.RecordBatch],
    out: BinaryIO,
) -> dict[str, str]:
    """Write *batches* of *schema* to *out* with a fresh writer; the writer's attributes."""
    record_writer = writer.create_writer(schema, attributes, out)
    for batch in batches:
        record_writer.write(batch)
    return dict(record_writer.finish())


def write_alone(
    writer: Any, batch: pa.RecordBatch, attributes: Mapping[str, str]
) -> tuple[bytes, dict[str, str]]:
    """*batch* written by a fresh writer as bytes of their own, and the writer's attributes."""
    out = io.BytesIO()
    written = write_batches(writer, batch.schema, attributes, (batch,), out)
    return out.getvalue(), written
