"""Tests for flowcore.nifi.schema: the fields the import reads, type-checked by JSON path."""

from __future__ import annotations

from typing import Any

import pytest

from flowcore.errors import NiFiFormatError
from flowcore.nifi.schema import MAX_DEPTH, check_flow, json_path


def _processor(**fields: Any) -> dict[str, Any]:
    return {"identifier": "p1", "name": "P", "type": "x.GenerateFlowFile", **fields}


def _flow(processor: dict[str, Any]) -> dict[str, Any]:
    return {"flowContents": {"processGroups": [{"processors": [processor]}]}}


@pytest.mark.parametrize(
    ("fields", "path", "expected", "got"),
    [
        ({"properties": []}, ".properties", "an object", "a list"),
        ({"properties": {"Batch Size": 10}}, '.properties["Batch Size"]', "a string", "number"),
        ({"concurrentlySchedulableTaskCount": "two"}, ".concurrent", "a whole number", "string"),
        ({"concurrentlySchedulableTaskCount": True}, ".concurrent", "a whole number", "true"),
        ({"autoTerminatedRelationships": "success"}, ".autoTerm", "a list", "a string"),
        ({"autoTerminatedRelationships": [None]}, ".autoTerminatedRelationships[0]", "", "null"),
        ({"propertyDescriptors": {"A": {"dynamic": "yes"}}}, ".A.dynamic", "true or", "str"),
        ({"identifier": ""}, ".identifier", "an identifier", "a string"),
    ],
)
def test_a_mistyped_field_is_named_by_its_json_path(
    fields: dict[str, Any], path: str, expected: str, got: str
) -> None:
    """The message names the field's path, the type NiFi writes and the type found."""
    with pytest.raises(NiFiFormatError) as raised:
        check_flow(_flow(_processor(**fields)), "RegisteredFlowSnapshot", "f.json")
    text = str(raised.value)
    assert text.startswith("NiFi flow f.json: flowContents.processGroups[0].processors[0]")
    assert path in text
    assert f"must be {expected}" in text
    assert got in text.partition(" got ")[2]
    assert "\n" not in text


def test_a_component_without_identifier_is_refused() -> None:
    """A processor with no identifier at all: named, as connections cannot find it."""
    processor = _processor()
    del processor["identifier"]
    with pytest.raises(NiFiFormatError, match=r"processors\[0\]\.identifier must be"):
        check_flow(_flow(processor), "RegisteredFlowSnapshot", "f.json")


def test_nulls_and_unread_fields_pass() -> None:
    """null where NiFi leaves a field out, and anything in fields flowcore does not read."""
    processor = _processor(properties=None, comments=None, position=[1, {"x": []}], style=7)
    check_flow(_flow(processor), "RegisteredFlowSnapshot", "f.json")


def test_parameter_contexts_are_a_map_or_a_list() -> None:
    """A download's map by name and an instance's list both pass; their items are checked."""
    context = {"name": "c", "parameters": [{"name": "a", "value": "1"}]}
    check_flow({"parameterContexts": {"c": context}}, "RegisteredFlowSnapshot", "f")
    check_flow({"parameterContexts": [context]}, "VersionedDataflow", "f")
    bad = {"name": "c", "parameters": [{"name": "a", "value": 1}]}
    with pytest.raises(NiFiFormatError, match=r"parameterContexts\[0\]\.parameters\[0\]\.value"):
        check_flow({"parameterContexts": [bad]}, "VersionedDataflow", "f")


def test_nesting_past_the_limit_is_refused_anywhere() -> None:
    """MAX_DEPTH levels pass, one more is refused, in a field flowcore does not read too."""
    nested: Any = []
    for _ in range(MAX_DEPTH - 2):  # the document and its "position" field are two levels
        nested = [nested]
    check_flow({"position": nested}, "VersionedProcessGroup", "f")
    with pytest.raises(NiFiFormatError, match=f"nested more than {MAX_DEPTH} levels deep"):
        check_flow({"position": [nested]}, "VersionedProcessGroup", "f")


def test_json_paths_spell_keys_that_are_not_names_quoted() -> None:
    """Names take a dot, indexes and other keys brackets."""
    assert json_path("", "flowContents") == "flowContents"
    assert json_path("a", 3) == "a[3]"
    assert json_path("a", "Batch Size") == 'a["Batch Size"]'
