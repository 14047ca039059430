"""The canvas's flow document: masked properties, NiFi's positions, the repository's record."""

from __future__ import annotations

import json

from flowcore import Flow
from flowcore.driver.identity import FlowRecord
from flowcore.parameters import Parameter
from flowcore.ui.flow_document import SENSITIVE_VALUE_SET, flow_document, recorded_document
from processors import UnpackContent, UpdateAttribute


def _flow() -> Flow:
    flow = Flow("doc", parameters={"pw": Parameter("pw", "hunter2", sensitive=True)})
    tag = flow.add(UpdateAttribute(**{"Group/x": "1"}), name="Ingest/tag")
    unpack = flow.add(UnpackContent(packaging_format="zip", password="#{pw}"), name="unpack")
    flow.connect(tag, unpack)
    flow.auto_terminate(unpack, ["success", "failure", "original"])
    return flow


def test_sensitive_values_are_masked_and_dynamic_properties_listed() -> None:
    """Password shows 'Sensitive value set'; the secret and its reference appear nowhere."""
    document = flow_document(_flow())
    text = json.dumps(document)
    assert "hunter2" not in text
    assert "#{pw}" not in text
    unpack = next(c for c in document["components"] if c["name"] == "unpack")
    password = next(p for p in unpack["properties"] if p["name"] == "Password")
    assert password["value"] == SENSITIVE_VALUE_SET
    tag = next(c for c in document["components"] if c["name"] == "Ingest/tag")
    assert {"name": "Group/x", "value": "1"}.items() <= next(
        p for p in tag["properties"] if p["dynamic"]
    ).items()
    assert tag["group"] == ""  # a Python flow is flat: one canvas
    assert document["process_groups"] == []


def test_given_positions_are_used_when_every_component_has_one() -> None:
    """Positions for every component win over Graphviz's layout."""
    flow = _flow()
    from flowcore.nifi.layout import Position

    placed = {c.id: Position(400.0 * n, 7.0) for n, c in enumerate(flow.components)}
    document = flow_document(flow, placed)
    assert [c["position"] for c in document["components"]] == [
        {"x": 0.0, "y": 7.0},
        {"x": 400.0, "y": 7.0},
    ]


def test_the_repository_record_gives_a_read_only_document() -> None:
    """Without a flow file the record's components and connections are shown read-only."""
    record = FlowRecord.of(_flow())
    document = recorded_document(record)
    assert document["read_only"] is True
    assert {c["name"] for c in document["components"]} == {"Ingest/tag", "unpack"}
    assert len(document["connections"]) == 1


def test_overlapping_positions_give_way_to_graphviz() -> None:
    """Positions that would put two boxes on one another are replaced by the layout."""
    flow = _flow()
    from flowcore.nifi.layout import Position

    placed = {c.id: Position(10.0 * n, 10.0 * n) for n, c in enumerate(flow.components)}
    document = flow_document(flow, placed)
    assert [c["position"] for c in document["components"]] != [
        {"x": 0.0, "y": 0.0},
        {"x": 10.0, "y": 10.0},
    ]


def test_a_nested_group_is_its_own_canvas_with_nifi_positions(nested_flow) -> None:
    """The nested definition: unpack and its port in group 'archive' at NiFi's local positions,
    the port drawn as a port, the group's box where NiFi put it, each connection in its group."""
    from flowcore.ui.editing import FlowEditor

    document = FlowEditor(nested_flow.flow).flow_document()
    by_name = {c["name"]: c for c in document["components"]}
    assert document["process_groups"] == [
        {
            "id": "group-archive",
            "name": "archive",
            "parent": "",
            "position": {"x": 1350.0, "y": 480.0},
            "size": {"width": 384.0, "height": 176.0},
        }
    ]
    assert by_name["archive/unpack"]["group"] == "group-archive"
    assert by_name["archive/unpack"]["position"] == {"x": 0.0, "y": 200.0}
    assert by_name["archive/to unpack"]["kind"] == "input_port"
    assert by_name["tag"]["group"] == ""
    groups = {c["id"]: c["group"] for c in document["connections"]}
    assert groups["connection-port-unpack"] == "group-archive"
    assert sorted(groups.values()).count("") == len(groups) - 1
