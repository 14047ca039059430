"""Tests for flowcore.nifi.formats: the five shapes NiFi writes a flow in."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from flowcore.errors import NiFiFormatError
from flowcore.nifi import formats
from flowcore.nifi.formats import FlowShape, read_definition
from tests.flowcore.nifi.nifi_schema import schema_problems


def test_a_2x_download_is_read_with_its_contexts_by_name(samples: Path) -> None:
    """A downloaded flow definition gives its group, name and parameter contexts by name."""
    definition = read_definition(samples / "download-2x.json")
    assert definition.shape is FlowShape.DOWNLOAD
    assert definition.name == "Greetings"
    assert definition.root["name"] == "Greetings"
    assert set(definition.parameter_contexts) == {"greetings", "common"}
    assert definition.nifi_major == 2


def test_a_1x_download_says_its_version(samples: Path) -> None:
    """A 1.x download is the same shape; its bundles say 1."""
    definition = read_definition(samples / "download-1x.json")
    assert definition.shape is FlowShape.DOWNLOAD
    assert definition.nifi_major == 1


def test_a_registry_snapshot_takes_the_registered_flows_name(samples: Path) -> None:
    """A snapshot (snapshotMetadata, flow, bucket) is named as the registry names the flow."""
    definition = read_definition(samples / "registry-snapshot.json")
    assert definition.shape is FlowShape.REGISTRY_SNAPSHOT
    assert definition.name == "Audit trail"


def _registry_file(samples: Path) -> dict[str, Any]:
    return json.loads((samples / "registry-file.snapshot").read_text())


def test_a_registry_flow_file_is_read_through_its_header_and_content(samples: Path) -> None:
    """NiFi Registry's stored version ({"header", "content": {"flowSnapshot"}}, data model 3)
    gives the snapshot's group, its name and its parameter contexts."""
    document = _registry_file(samples)
    assert document["header"] == {"dataModelVersion": "3"}
    assert schema_problems(document["content"]["flowSnapshot"]) == []
    definition = read_definition(samples / "registry-file.snapshot")
    assert definition.shape is FlowShape.REGISTRY_FILE
    assert definition.name == "Orders"
    assert definition.root["processGroups"][0]["name"] == "Store"
    assert set(definition.parameter_contexts) == {"orders"}
    assert definition.nifi_major == 2


def test_a_data_model_2_registry_file_holds_the_group_itself(samples: Path) -> None:
    """Data model 2 (NiFi Registry before 0.5) keeps the bare process group as the content."""
    group = _registry_file(samples)["content"]["flowSnapshot"]["flowContents"]
    definition = read_definition({"header": {"dataModelVersion": "2"}, "content": group})
    assert definition.shape is FlowShape.REGISTRY_FILE
    assert definition.name == "Orders"
    assert definition.root is group
    assert definition.parameter_contexts == {}


@pytest.mark.parametrize(
    "content", [None, [], {"flowSnapshot": None}, {"flowSnapshot": {"flow": {}}}, {"other": 1}]
)
def test_a_registry_file_holding_no_flow_is_refused_in_one_line(content: Any) -> None:
    """A header and content that hold neither a snapshot nor a group: one line, naming the
    data model version and what to do."""
    with pytest.raises(NiFiFormatError) as raised:
        read_definition({"header": {"dataModelVersion": "4"}, "content": content})
    text = str(raised.value)
    assert text.startswith("<dict> is a NiFi Registry flow file (header, content; ")
    assert 'dataModelVersion "4"' in text
    assert "\n" not in text


def test_a_mistyped_field_in_a_registry_file_is_named_by_its_whole_path(samples: Path) -> None:
    """Field paths start at the file's top: content.flowSnapshot.flowContents..."""
    document = _registry_file(samples)
    document["content"]["flowSnapshot"]["flowContents"]["processors"][0]["properties"] = []
    with pytest.raises(NiFiFormatError) as raised:
        read_definition(document)
    assert "content.flowSnapshot.flowContents.processors[0].properties must be an object" in str(
        raised.value
    )


def test_an_instance_flow_is_gunzipped_and_its_context_list_read(samples: Path) -> None:
    """flow.json.gz: rootGroup, parameter contexts as a list, controller-level services."""
    definition = read_definition(samples / "flow.json.gz")
    assert definition.shape is FlowShape.INSTANCE_FLOW
    assert definition.root["name"] == "NiFi Flow"
    assert set(definition.parameter_contexts) == {"pipeline", "base"}
    assert [s["name"] for s in definition.controller_services] == ["Cache server"]


def test_gzip_is_told_by_its_bytes_not_its_name(tmp_path: Path, samples: Path) -> None:
    """A gzip file named .json is read, and a plain one named .gz too."""
    data = (samples / "download-1x.json").read_bytes()
    (tmp_path / "zipped.json").write_bytes(gzip.compress(data))
    (tmp_path / "plain.json.gz").write_bytes(data)
    assert read_definition(tmp_path / "zipped.json").name == "Plain lines"
    assert read_definition(tmp_path / "plain.json.gz").name == "Plain lines"


def test_a_dict_is_read_as_it_is() -> None:
    """Parsed JSON is taken directly; a bare process group is a shape too."""
    definition = read_definition({"name": "G", "processors": [], "connections": []})
    assert definition.shape is FlowShape.PROCESS_GROUP
    assert definition.name == "G"
    assert definition.source == "<dict>"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"<beans><bean/></beans>", "XML whose root is <beans>"),
        (b"<template><name>t</name></template>", "NiFi template .* has no <snippet>"),
        (b"{not json", "not valid JSON"),
        (b'{"flows": []}', "not a NiFi flow definition: it has flows"),
        (b"[1, 2]", "must be a JSON object"),
        (b"\x1f\x8b\x08\x00broken", "not a whole gzip file"),
    ],
)
def test_what_is_not_a_flow_is_refused_naming_the_file(
    tmp_path: Path, content: bytes, message: str
) -> None:
    """Other XML, an empty template, broken JSON or gzip and other documents fail in one line
    naming the file."""
    path = tmp_path / "flow.json"
    path.write_bytes(content)
    with pytest.raises(NiFiFormatError, match=message) as raised:
        read_definition(path)
    assert str(path) in str(raised.value)


def test_a_missing_file_is_named() -> None:
    """A path that does not exist says so."""
    with pytest.raises(NiFiFormatError, match="cannot be read"):
        read_definition("/nonexistent/flow.json")


def test_parameter_contexts_must_be_a_map_or_a_list() -> None:
    """Anything else in parameterContexts is refused."""
    with pytest.raises(NiFiFormatError, match="parameterContexts must be an object or a list"):
        read_definition({"flowContents": {"name": "x"}, "parameterContexts": "oops"})


def test_samples_hold_nifis_field_names(samples: Path) -> None:
    """The samples use the JSON names of NiFi's getters (flowFileConcurrency, zIndex, ...)."""
    root = json.loads((samples / "download-2x.json").read_text())["flowContents"]
    assert {"flowFileConcurrency", "flowFileOutboundPolicy", "parameterContextName"} <= set(root)
    assert "zIndex" in root["connections"][0]


def test_a_gzip_file_past_the_limit_is_refused_as_it_inflates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inflating stops at MAX_DEFINITION_BYTES (scaled down here); the message names it."""
    monkeypatch.setattr(formats, "MAX_DEFINITION_BYTES", 1000)
    path = tmp_path / "flow.json.gz"
    path.write_bytes(gzip.compress(b'{"processors": []}' + b" " * 1000))
    with pytest.raises(NiFiFormatError, match="inflates to more than 0 MiB"):
        read_definition(path)
    path.write_bytes(gzip.compress(b'{"processors": []}' + b" " * 900))
    assert read_definition(path).shape is FlowShape.PROCESS_GROUP


def test_a_plain_file_past_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .json holding more than MAX_DEFINITION_BYTES is refused without being parsed."""
    monkeypatch.setattr(formats, "MAX_DEFINITION_BYTES", 100)
    path = tmp_path / "flow.json"
    path.write_text('{"processors": []}' + " " * 100)
    with pytest.raises(NiFiFormatError, match="holds more than 0 MiB"):
        read_definition(path)


def test_too_many_values_are_refused_before_the_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More values than MAX_DEFINITION_VALUES (counted from the text) are refused."""
    monkeypatch.setattr(formats, "MAX_DEFINITION_VALUES", 10)
    path = tmp_path / "flow.json"
    path.write_text('{"processors": [' + "{}," * 10 + "{}]}")
    with pytest.raises(NiFiFormatError, match="more than 10 JSON values"):
        read_definition(path)


def test_concatenated_gzip_members_are_read_as_one(tmp_path: Path) -> None:
    """gzip files made of several members read as gzip.decompress reads them."""
    path = tmp_path / "flow.json.gz"
    path.write_bytes(gzip.compress(b'{"processors": ') + gzip.compress(b'[], "name": "G"}'))
    assert read_definition(path).name == "G"


def test_a_truncated_gzip_file_is_refused(tmp_path: Path) -> None:
    """A gzip stream cut short says the file is not whole."""
    path = tmp_path / "flow.json.gz"
    path.write_bytes(gzip.compress(b'{"processors": []}' * 100)[:-20])
    with pytest.raises(NiFiFormatError, match="not a whole gzip file"):
        read_definition(path)


def test_json_nested_past_the_parser_is_refused_in_one_line(tmp_path: Path) -> None:
    """200,000 nested lists (past Python's parser): one line naming the limit."""
    path = tmp_path / "flow.json"
    path.write_text('{"processors": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(NiFiFormatError, match="nested more than 128 levels deep") as raised:
        read_definition(path)
    assert "\n" not in str(raised.value)


def test_a_null_external_service_entry_references_nothing(samples: Path, tmp_path: Path) -> None:
    """A null entry in externalControllerServices is absent, as null is for the schema check
    (it was refused naming the map, not the entry: found by the NiFi fuzz test)."""
    data = json.loads((samples / "download-2x.json").read_text())
    data["externalControllerServices"] = {"": None, "kept": {"identifier": "kept", "name": "x"}}
    file = tmp_path / "flow.json"
    file.write_text(json.dumps(data))
    assert list(read_definition(file).external_services) == ["kept"]
