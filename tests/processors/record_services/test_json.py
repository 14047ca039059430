"""Tests for JsonTreeReader and JsonRecordSetWriter's properties and validation."""

from __future__ import annotations

import io

from flowcore.controller_service import ServiceContext
from processors.record_services import JsonRecordSetWriter, JsonTreeReader


def test_nifi_property_names_and_defaults() -> None:
    """The reader infers by default; the writer writes an array, never suppressing nulls."""
    reader = JsonTreeReader("r")
    assert reader.get_property("Schema Access Strategy").value == "infer-schema"
    assert reader.get_property("Starting Field Strategy").value == "ROOT_NODE"
    writer = JsonRecordSetWriter("w")
    assert writer.get_property("Schema Access Strategy").value == "inherit-record-schema"
    assert writer.get_property("Output Grouping").value == "output-array"
    assert writer.get_property("Schema Write Strategy").value == "no-schema"
    assert writer.get_property("suppress-nulls").value == "never-suppress"


def test_pretty_print_one_line_per_object_is_invalid() -> None:
    """NiFi's check: Pretty Print JSON must be false with One Line Per Object."""
    problems = JsonRecordSetWriter(
        "w", pretty_print_json="true", output_grouping="output-oneline"
    ).validate()
    assert any("Pretty Print JSON must be false" in p.explanation for p in problems)


def test_nested_field_starting_point() -> None:
    """Starting Field Strategy NESTED_FIELD reads the records under the named field."""
    definition = JsonTreeReader(
        "r", starting_field_strategy="NESTED_FIELD", starting_field_name="items"
    )
    reader = definition.enable(ServiceContext(definition))
    content = b'{"meta": 1, "items": [{"a": 1}, {"a": 2}]}'
    (batch,) = reader.create_reader({}, io.BytesIO(content))
    assert batch.column("a").to_pylist() == [1, 2]
