"""Tests for the JsonPathReader service: properties, validation, reading through the service."""

from __future__ import annotations

import io

from flowcore.controller_service import ServiceContext
from flowcore.registry import BUILTIN_SERVICES
from flowcore.testing import TestRunner
from processors import ConvertRecord
from processors.record_services import JsonPathReader, JsonRecordSetWriter

SCHEMA = '{"type": "record", "name": "r", "fields": [{"name": "id", "type": "int"}, '
SCHEMA += '{"name": "city", "type": ["null", "string"]}]}'


def test_nifi_names_defaults_and_registry() -> None:
    """Infer Schema is the default; the service is registered under NiFi's name."""
    reader = JsonPathReader("r", id="$.id")
    assert reader.get_property("Schema Access Strategy").value == "infer-schema"
    assert reader.get_property("Max String Length").value == "20 MB"
    assert BUILTIN_SERVICES["JsonPathReader"] is JsonPathReader
    assert "org.apache.nifi.json.JsonPathReader" in JsonPathReader.nifi_types


def test_no_paths_is_invalid() -> None:
    """NiFi's customValidate: No JSON Paths were specified."""
    problems = JsonPathReader("r").validate()
    assert any("No JSON Paths were specified" in p.explanation for p in problems)
    assert not JsonPathReader("r", id="$.id").validate()


def test_an_invalid_path_is_named() -> None:
    """A dynamic property that is not a JsonPath fails validation naming it."""
    problems = JsonPathReader("r", id="$.[").validate()
    assert any("not a valid JsonPath" in p.explanation for p in problems)


def test_reads_the_path_fields_with_a_schema_text() -> None:
    """Schema Text gives the fields; each is filled by its path, coerced to its type."""
    definition = JsonPathReader(
        "r",
        schema_access_strategy="schema-text-property",
        schema_text=SCHEMA,
        id="$.ident",
        city="$.address.city",
    )
    reader = definition.enable(ServiceContext(definition))
    content = b'[{"ident": "7", "address": {"city": "Oslo"}}, {"ident": 8}]'
    rows = [r for b in reader.create_reader({}, io.BytesIO(content)) for r in b.to_pylist()]
    assert rows == [{"id": 7, "city": "Oslo"}, {"id": 8, "city": None}]


def test_convert_record_with_json_paths() -> None:
    """ConvertRecord with JsonPathReader: the path fields of each record, as JSON."""

    runner = TestRunner(ConvertRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(
        JsonPathReader(
            "reader",
            schema_access_strategy="schema-text-property",
            schema_text=SCHEMA,
            id="$.ident",
            city="$.address.city",
        )
    )
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.enqueue(b'{"ident": 1, "address": {"city": "Oslo"}}\n{"ident": 2}')
    runner.run()
    (out,) = runner.flowfiles_for("success")
    out.assert_content_equals('[{"id":1,"city":"Oslo"},{"id":2,"city":null}]')
