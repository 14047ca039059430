"""Tests for AvroReader, AvroRecordSetWriter and AvroSchemaRegistry."""

from __future__ import annotations

import io
import json

from flowcore.controller_service import ServiceContext
from processors.record_services import AvroReader, AvroRecordSetWriter, JsonTreeReader

SCHEMA = json.dumps({"type": "record", "name": "r", "fields": [{"name": "id", "type": "int"}]})


def enabled(service):
    """The enabled runtime copy of *service*."""
    return service.enable(ServiceContext(service))


def _batch():
    (batch,) = enabled(JsonTreeReader("j")).create_reader({}, io.BytesIO(b'[{"id":1},{"id":2}]'))
    return batch


def test_embedded_schema_round_trip() -> None:
    """The writer embeds the schema by default; the reader reads it back."""
    out = io.BytesIO()
    writer = enabled(AvroRecordSetWriter("w")).create_writer(_batch().schema, {}, out)
    writer.write(_batch())
    attributes = writer.finish()
    assert attributes == {"record.count": "2", "mime.type": "application/avro-binary"}
    assert out.getvalue().startswith(b"Obj\x01")
    (batch,) = enabled(AvroReader("r")).create_reader({}, io.BytesIO(out.getvalue()))
    assert batch.column("id").to_pylist() == [1, 2]


def test_bare_datums_with_schema_text() -> None:
    """Without an embedded schema the datums are read with the Schema Text."""
    out = io.BytesIO()
    writer = enabled(
        AvroRecordSetWriter(
            "w",
            schema_write_strategy="full-schema-attribute",
            schema_access_strategy="schema-text-property",
            schema_text=SCHEMA,
        )
    ).create_writer(_batch().schema, {}, out)
    writer.write(_batch())
    attributes = writer.finish()
    assert json.loads(attributes["avro.schema"])["fields"][0]["name"] == "id"
    reader = enabled(AvroReader("r", schema_access_strategy="schema-text-property"))
    (batch,) = reader.create_reader({"avro.schema": SCHEMA}, io.BytesIO(out.getvalue()))
    assert batch.column("id").to_pylist() == [1, 2]


def test_lzo_is_refused() -> None:
    """LZO compression is a validation problem (no maintained Python codec)."""
    problems = AvroRecordSetWriter("w", compression_format="LZO").validate()
    assert [p.subject for p in problems] == ["Compression Format"]
