"""A listing written as records (NiFi's listers with a Record Writer): one FlowFile per work item.

NiFi's AbstractListProcessor and ListS3 write every listed entity as a record of the
processor's schema through the Record Writer, into one FlowFile per listing with the writer's
attributes (``mime.type``, schema attributes) and ``record.count``. flowcore's listers write
one per work item of a listing (ListFile and ListS3: up to 10,000 entities each; ListSFTP: the
whole listing), each committed with the state after it. The schemas here are NiFi's, field for
field: :data:`FILE_INFO_SCHEMA` is FileInfo's (ListFile, ListSFTP), :data:`S3_OBJECT_SCHEMA`
ListS3's RecordObjectWriter's.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import PropertyDescriptor
from flowcore.records.schema import (
    BOOLEAN,
    LONG,
    STRING,
    TIMESTAMP,
    MapType,
    RecordField,
    RecordSchema,
    cast_column,
)
from flowcore.session.process_session import ProcessSession

__all__ = ["FILE_INFO_SCHEMA", "S3_OBJECT_SCHEMA", "write_listing", "writer_set"]

#: NiFi's FileInfo.getRecordSchema(): ListFile's and ListSFTP's records.
FILE_INFO_SCHEMA = RecordSchema(
    [
        RecordField("filename", STRING, False),
        RecordField("path", STRING, False),
        RecordField("directory", BOOLEAN, False),
        RecordField("size", LONG, False),
        RecordField("lastModified", TIMESTAMP, False),
        RecordField("permissions", STRING, True),
        RecordField("owner", STRING, True),
        RecordField("group", STRING, True),
    ]
)
#: NiFi's ListS3.RecordObjectWriter.RECORD_SCHEMA.
S3_OBJECT_SCHEMA = RecordSchema(
    [
        RecordField("key", STRING, False),
        RecordField("bucket", STRING, False),
        RecordField("owner", STRING, True),
        RecordField("etag", STRING, False),
        RecordField("lastModified", TIMESTAMP, False),
        RecordField("size", LONG, False),
        RecordField("storageClass", STRING, False),
        RecordField("latest", BOOLEAN, False),
        RecordField("versionId", STRING, True),
        RecordField("tags", MapType(STRING), True),
        RecordField("userMetadata", MapType(STRING), True),
    ]
)


def writer_set(context: ProcessContext, writer: PropertyDescriptor) -> bool:
    """Whether the lister's Record Writer property names a writer."""
    return bool(context.get_property(writer).value)


def write_listing(
    context: ProcessContext,
    session: ProcessSession,
    writer: PropertyDescriptor,
    schema: RecordSchema,
    *,
    rows: Sequence[Mapping[str, Any]],
    attributes: Mapping[str, str] | None = None,
) -> None:
    """Write *rows* as records of *schema* into one FlowFile to success (none when no rows).

    A map field's value is a dict; a timestamp's epoch milliseconds. The FlowFile carries the
    writer's attributes, ``record.count`` and *attributes* (ListS3's ``s3.region``).
    """
    if not rows:
        return
    service: Any = session.controller_service(context.get_property(writer).value or "")
    arrow = schema.to_arrow()
    columns = {}
    for field in arrow:
        values = [row.get(field.name) for row in rows]
        if pa.types.is_map(field.type):
            values = [None if v is None else list(v.items()) for v in values]
        if pa.types.is_timestamp(field.type):  # epoch millis into the record's microseconds
            columns[field.name] = cast_column(pa.array(values, pa.int64()), field.type)
            continue
        columns[field.name] = pa.array(values, type=field.type)
    table = pa.Table.from_pydict(columns, schema=arrow)
    out = io.BytesIO()
    record_writer = service.create_writer(schema, {}, out)
    for batch in table.to_batches():
        record_writer.write(batch)
    written = dict(record_writer.finish())
    written["record.count"] = str(len(rows))
    written.update(attributes or {})
    flowfile = session.write(session.create(), out.getvalue())
    flowfile = session.put_all_attributes(flowfile, written)
    session.transfer(flowfile, SUCCESS)
