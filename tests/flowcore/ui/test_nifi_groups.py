"""A NiFi flow definition's process groups as canvases: members, kinds, local positions, tree."""

from __future__ import annotations

import json
from pathlib import Path

from flowcore.ui.nifi_groups import read_nifi_groups


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
