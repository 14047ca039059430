"""The canvas's flow document: masked properties, NiFi's positions, the repository's record."""

from __future__ import annotations

import json
from pathlib import Path

from flowcore import Flow
from flowcore.driver.identity import FlowRecord
from flowcore.parameters import Parameter
from flowcore.ui.flow_document import SENSITIVE_VALUE_SET, flow_document, recorded_document
from flowcore.ui.nifi_groups import read_nifi_groups
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


def test_nifi_groups_give_each_group_its_canvas_and_local_positions(tmp_path: Path) -> None:
    """Members, kinds and positions in their own group's coordinates; the groups' tree."""
    definition = {
        "flowContents": {
            "identifier": "root",
            "processors": [{"identifier": "p1", "position": {"x": 10.0, "y": 20.0}}],
            "connections": [{"identifier": "c1"}],
            "processGroups": [
                {
                    "identifier": "g1",
                    "name": "Ingest",
                    "position": {"x": 100.0, "y": 200.0},
                    "funnels": [{"identifier": "f1", "position": {"x": 1.0, "y": 2.0}}],
                    "inputPorts": [{"identifier": "i1", "position": {"x": 5.0, "y": 6.0}}],
                    "connections": [{"identifier": "c2"}],
                }
            ],
        }
    }
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(definition))
    groups = read_nifi_groups(path)
    assert groups is not None
    assert groups.root == "root"
    assert (groups.positions["p1"].x, groups.positions["p1"].y) == (10.0, 20.0)
    assert (groups.positions["f1"].x, groups.positions["f1"].y) == (1.0, 2.0)  # not offset
    assert groups.group_of == {"p1": "root", "c1": "root", "f1": "g1", "i1": "g1", "c2": "g1"}
    assert groups.kinds["i1"] == "INPUT_PORT"
    assert groups.groups == (
        {"id": "g1", "name": "Ingest", "parent": "root", "position": {"x": 100.0, "y": 200.0}},
    )
    assert read_nifi_groups(tmp_path / "missing.json") is None


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
