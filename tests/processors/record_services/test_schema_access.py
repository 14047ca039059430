"""Tests for the shared schema access properties of the record services."""

from __future__ import annotations

import io
import json

import pytest

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError
from processors.record_services import AvroSchemaRegistry, JsonRecordSetWriter, JsonTreeReader

SCHEMA = json.dumps({"type": "record", "name": "r", "fields": [{"name": "id", "type": "int"}]})


def test_nifi_1_internal_names_are_accepted() -> None:
    """NiFi 1's internal names (schema-access-strategy, schema-text) set the NiFi 2 properties."""
    reader = JsonTreeReader(
        "r", **{"schema-access-strategy": "schema-text-property", "schema-text": SCHEMA}
    )
    assert reader.get_property("Schema Access Strategy").value == "schema-text-property"
    assert reader.validate() == ()


def test_schema_reference_reader_needs_its_services() -> None:
    """NiFi's check: the Schema Reference Reader strategy needs that service and a registry."""
    reader = JsonTreeReader("r", schema_access_strategy="schema-reference-reader")
    assert sorted(p.subject for p in reader.validate()) == [
        "Schema Reference Reader",
        "Schema Registry",
    ]


def test_schema_name_needs_a_registry() -> None:
    """Use 'Schema Name' Property without a Schema Registry is NiFi's validation problem."""
    problems = JsonTreeReader("r", schema_access_strategy="schema-name").validate()
    assert [p.subject for p in problems] == ["Schema Registry"]


def test_schema_from_a_registry_by_name() -> None:
    """A reader finds its schema by ${schema.name} in an AvroSchemaRegistry."""
    registry = AvroSchemaRegistry("reg", people=SCHEMA).enable(
        ServiceContext(AvroSchemaRegistry("reg", people=SCHEMA))
    )
    definition = JsonTreeReader("r", schema_access_strategy="schema-name", schema_registry="reg")
    reader = definition.enable(ServiceContext(definition, {"reg": registry}))
    batches = list(
        reader.create_reader({"schema.name": "people"}, io.BytesIO(b'{"id": 3, "x": 1}'))
    )
    assert batches[0].schema.names == ["id"]
    with pytest.raises(ConfigurationError, match="Unable to find schema with name 'other'"):
        reader.create_reader({"schema.name": "other"}, io.BytesIO(b"{}"))


def test_a_registry_refuses_a_bad_schema() -> None:
    """AvroSchemaRegistry validates each schema it holds."""
    problems = AvroSchemaRegistry("reg", people="{not json").validate()
    assert [p.subject for p in problems] == ["people"]


def test_writer_write_strategies() -> None:
    """schema-name sets schema.name, full-schema-attribute avro.schema, no-schema nothing."""
    for strategy, key in (("schema-name", "schema.name"), ("full-schema-attribute", "avro.schema")):
        definition = JsonRecordSetWriter("w", schema_write_strategy=strategy)
        writer = definition.enable(ServiceContext(definition))
        reader = JsonTreeReader("r").enable(ServiceContext(JsonTreeReader("r")))
        (batch,) = reader.create_reader({}, io.BytesIO(b'{"id": 1}'))
        out = io.BytesIO()
        records = writer.create_writer(batch.schema, {"schema.name": "people"}, out)
        records.write(batch)
        attributes = records.finish()
        assert key in attributes
        assert out.getvalue() == b'[{"id":1}]'


def test_unsupported_write_strategy_is_named() -> None:
    """Schema Write Strategy hwx-content-encoded-schema is not built yet: a problem says so."""
    problems = JsonRecordSetWriter(
        "w", schema_write_strategy="hwx-content-encoded-schema"
    ).validate()
    assert any("Schema Write Strategy" in p.explanation for p in problems)


def test_inferring_readers_share_the_schema_inference_cache_descriptor() -> None:
    """JsonTreeReader and XMLReader take NiFi's Schema Inference Cache from schema_access,
    shown only when their Schema Access Strategy infers."""
    from processors.record_services import JsonTreeReader, XMLReader
    from processors.record_services.schema_access import INFER_SCHEMA, schema_inference_cache

    for reader in (JsonTreeReader, XMLReader):
        access = next(d for d in reader.property_descriptors if d.name == "Schema Access Strategy")
        cache = next(d for d in reader.property_descriptors if d.name == "Schema Inference Cache")
        assert cache == schema_inference_cache(access)
        assert cache.aliases == ("schema-inference-cache",)
        assert [(dep.values) for dep in cache.dependencies] == [(INFER_SCHEMA.value,)]
