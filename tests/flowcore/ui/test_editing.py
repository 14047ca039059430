"""The flow definition editor: held edits, every problem at once, atomic saves, gzip kept."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from flowcore.ui.editing import EditError, FlowEditor, UnknownComponentError


@pytest.fixture
def gz_flow(nifi_flow, tmp_path) -> Path:
    """The NiFi flow definition, gzipped (as NiFi's flow.json.gz), in a directory of its own."""
    path = tmp_path / "flow.json.gz"
    path.write_bytes(gzip.compress(Path(nifi_flow.flow).read_bytes()))
    return path


def _processors(path: Path) -> dict[str, dict]:
    document = json.loads(gzip.decompress(path.read_bytes()))
    return {p["name"]: p for p in document["flowContents"]["processors"]}


def test_a_gzipped_definition_is_saved_gzipped_and_nothing_else_changes(gz_flow) -> None:
    """Rename and reschedule a processor: the file changes only there, still gzip, no temp file."""
    before = _processors(gz_flow)
    editor = FlowEditor(gz_flow)
    tag = before["tag"]["identifier"]
    editor.update_processor(tag, {"name": "tagger", "schedulingPeriod": "5 sec"})
    assert editor.dirty
    assert _processors(gz_flow) == before  # held until saved
    editor.save()
    after = _processors(gz_flow)
    assert after["tagger"] == {**before["tag"], "name": "tagger", "schedulingPeriod": "5 sec"}
    assert {k: v for k, v in after.items() if k != "tagger"} == {
        k: v for k, v in before.items() if k != "tag"
    }
    assert [p.name for p in gz_flow.parent.iterdir()] == ["flow.json.gz"]
    assert not editor.dirty


def test_problems_name_every_mistake_and_discard_forgets_them(gz_flow) -> None:
    """A required property removed and a bad allowable value: both problems; discard: none."""
    editor = FlowEditor(gz_flow)
    by_name = _processors(gz_flow)
    editor.update_processor(by_name["put"]["identifier"], {"properties": {"Directory": None}})
    editor.update_processor(
        by_name["tag"]["identifier"], {"properties": {"Store State": "Sometimes"}}
    )
    problems = editor.problems()
    assert len(problems) == 2
    assert editor.flow_document()["problems"] == problems
    editor.discard()
    assert editor.problems() == []
    assert not editor.dirty


def test_mistakes_name_the_culprit(gz_flow) -> None:
    """Unknown ids, fields, types and relationship-less connections raise one clear error."""
    editor = FlowEditor(gz_flow)
    with pytest.raises(UnknownComponentError, match="no controller service with id 'nope'"):
        editor.update_service("nope", {"name": "x"})
    with pytest.raises(UnknownComponentError, match="no connection"):
        editor.update_connection("nope", {})
    tag = _processors(gz_flow)["tag"]["identifier"]
    with pytest.raises(EditError, match="cannot set colour"):
        editor.update_processor(tag, {"colour": "red"})
    with pytest.raises(EditError, match="state 'ON'"):
        editor.update_processor(tag, {"state": "ON"})
    with pytest.raises(EditError, match="not an available processor"):
        editor.add_processor({"type": "NoSuchProcessor"})
    with pytest.raises(EditError, match="needs relationships"):
        editor.add_connection({"source": tag, "destination": tag, "relationships": []})
    assert not editor.dirty


def test_a_registry_snapshot_is_not_editable(tmp_path) -> None:
    """A JSON file without flowContents is refused with the reason."""
    path = tmp_path / "snapshot.json"
    path.write_text('{"snapshotMetadata": {}}')
    with pytest.raises(EditError, match=r"no NiFi 2\.x flow definition"):
        FlowEditor(path)


def test_a_connection_takes_nifi_prioritizer_class_names(gz_flow) -> None:
    """Prioritizers given by the canvas's short names are saved as NiFi's full class names."""
    editor = FlowEditor(gz_flow)
    document = json.loads(gzip.decompress(gz_flow.read_bytes()))
    connection = document["flowContents"]["connections"][0]["identifier"]
    editor.update_connection(
        connection,
        {"prioritizers": ["OldestFlowFileFirstPrioritizer"], "flowFileExpiration": "1 min"},
    )
    assert editor.problems() == []
    editor.save()
    saved = json.loads(gzip.decompress(gz_flow.read_bytes()))["flowContents"]["connections"][0]
    assert saved["prioritizers"] == ["org.apache.nifi.prioritizer.OldestFlowFileFirstPrioritizer"]
    assert saved["flowFileExpiration"] == "1 min"
    shown = next(c for c in editor.flow_document()["connections"] if c["id"] == connection)
    assert shown["prioritizers"] == ["OldestFlowFileFirstPrioritizer"]


def _bare_flow(tmp_path: Path) -> Path:
    """A definition whose service and processor lack descriptors (hand-written, or trimmed)."""
    root = {
        "identifier": "root",
        "name": "bare",
        "controllerServices": [
            {
                "identifier": "svc-1",
                "name": "pg",
                "type": "org.apache.nifi.dbcp.DBCPConnectionPool",
                "properties": {"Database Connection URL": "postgresql://h/db"},
            }
        ],
        "processors": [
            {
                "identifier": "p1",
                "name": "unpack",
                "type": "org.apache.nifi.processors.standard.UnpackContent",
                "position": {"x": 0.0, "y": 0.0},
                "properties": {"Packaging Format": "zip", "Password": "#{pw}"},
            }
        ],
        "connections": [
            {
                "identifier": "c1",
                "source": {"id": "p1", "name": "unpack"},
                "destination": {"id": "p1", "name": "unpack"},
                "selectedRelationships": ["failure"],
            }
        ],
    }
    path = tmp_path / "bare.json"
    path.write_text(json.dumps({"flowContents": root}))
    return path


def test_a_secret_set_without_its_descriptor_gets_flowcores_sensitive_one(tmp_path) -> None:
    """A Password typed for a service lacking descriptors is described sensitive (not dynamic),
    listed masked; sent back as 'Sensitive value set' it keeps its value (a processor's too)."""
    from flowcore.ui.flow_document import SENSITIVE_VALUE_SET
    from flowcore.ui.services import group_services

    editor = FlowEditor(_bare_flow(tmp_path))
    editor.update_service("svc-1", {"properties": {"Password": "s3cret"}})
    service = editor.root["controllerServices"][0]
    assert service["propertyDescriptors"]["Password"] == {
        "name": "Password",
        "displayName": "Password",
        "identifiesControllerService": False,
        "sensitive": True,
        "dynamic": False,
    }
    listed = {p["name"]: p["value"] for p in group_services(editor.root)[0]["properties"]}
    assert listed["Password"] == SENSITIVE_VALUE_SET
    editor.update_service("svc-1", {"properties": {"Password": SENSITIVE_VALUE_SET}})
    assert service["properties"]["Password"] == "s3cret"
    editor.update_processor("p1", {"properties": {"Password": SENSITIVE_VALUE_SET}})
    processor = editor.root["processors"][0]
    assert processor["properties"]["Password"] == "#{pw}"
    editor.update_processor("p1", {"properties": {"Password": "#{other}"}})
    assert processor["propertyDescriptors"]["Password"]["sensitive"] is True


def test_non_finite_positions_are_refused(tmp_path) -> None:
    """A move to "nan" or 1e999, or a new processor's position without x: one clear error."""
    editor = FlowEditor(_bare_flow(tmp_path))
    for where in ({"x": "nan", "y": 0}, {"x": 1, "y": "1e999"}, {"x": "-inf", "y": 1}):
        with pytest.raises(EditError, match="finite numbers x and y"):
            editor.move("p1", where)
    with pytest.raises(EditError, match="finite numbers x and y"):
        editor.add_processor({"type": "LogAttribute", "position": {"y": 3}})
    assert not editor.dirty


def test_a_connection_whose_queue_holds_flowfiles_is_not_deleted(tmp_path) -> None:
    """NiFi's 'Queue not empty' while the repository holds FlowFiles there; deleted once empty."""
    editor = FlowEditor(_bare_flow(tmp_path))
    with pytest.raises(EditError, match=r"Queue not empty for c1: .*unpack -\[failure\]-> unpack"):
        editor.delete_connection("c1", queued=lambda queue: (3, 12) if queue == "c1" else (0, 0))
    assert editor.root["connections"]
    assert not editor.dirty
    editor.delete_connection("c1", queued=lambda _queue: (0, 0))
    assert editor.root["connections"] == []


def test_a_dynamic_property_the_file_marks_sensitive_is_masked_on_the_canvas(gz_flow) -> None:
    """NiFi 2.x's sensitive dynamic property (flowcore's UpdateAttribute has none): masked."""
    from flowcore.ui.flow_document import SENSITIVE_VALUE_SET

    editor = FlowEditor(gz_flow)
    tag = next(p for p in editor.root["processors"] if p["name"] == "tag")
    tag["propertyDescriptors"]["kind"]["sensitive"] = True
    shown = next(c for c in editor.flow_document()["components"] if c["name"] == "tag")
    row = next(p for p in shown["properties"] if p["name"] == "kind")
    assert (row["value"], row["sensitive"]) == (SENSITIVE_VALUE_SET, True)
    assert "line" not in json.dumps(shown["properties"])
