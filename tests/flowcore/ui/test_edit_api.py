"""The UI's writing API: configure and save a NiFi flow definition, run control, replay."""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from flowcore.cli import main
from flowcore.cli.ui import prepare
from flowcore.ui.flow_document import SENSITIVE_VALUE_SET
from tests.flowcore.ui.conftest import EDIT_SECRET as SECRET

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette suggests httpx2; httpx is what is installed
    from starlette.testclient import TestClient


@pytest.fixture
def client(nifi_flow: argparse.Namespace) -> Iterator[TestClient]:
    """A UI over the NiFi flow, its file restored afterwards."""
    original = Path(nifi_flow.flow).read_bytes()
    app, _ = prepare(nifi_flow)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client
    Path(nifi_flow.flow).write_bytes(original)


def _by_name(client: TestClient) -> dict[str, dict]:
    return {c["name"]: c for c in client.get("/api/flow").json()["components"]}


def _nifi_processor(path: str, name: str) -> dict:
    document = json.loads(Path(path).read_text())
    return next(p for p in document["flowContents"]["processors"] if p["name"] == name)


def test_property_edit_saved_keeps_ids_positions_and_runs(client, nifi_flow, tmp_path) -> None:
    """PUT a property, save: NiFi's ids and positions kept, and the saved file runs edited."""
    before = _nifi_processor(nifi_flow.flow, "put")
    put = _by_name(client)["put"]
    assert client.get("/api/flow").json()["editable"] is True
    answer = client.put(
        f"/api/processors/{put['id']}", json={"properties": {"Directory": str(tmp_path / "new")}}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"problems": [], "dirty": True}
    shown = {p["name"]: p["value"] for p in _by_name(client)["put"]["properties"]}
    assert shown["Directory"] == str(tmp_path / "new")
    assert _nifi_processor(nifi_flow.flow, "put") == before  # held until saved
    saved = client.post("/api/flow/save", json={})
    assert saved.status_code == 200
    assert saved.json()["dirty"] is False
    after = _nifi_processor(nifi_flow.flow, "put")
    assert after["identifier"] == before["identifier"]
    assert after["position"] == before["position"]
    assert after["properties"]["Directory"] == str(tmp_path / "new")
    assert not [p for p in Path(nifi_flow.flow).parent.iterdir() if p.name.startswith(".flow")]
    repository = tmp_path / "repository"
    assert main(["run", nifi_flow.flow, "--runner", "direct", "--repository", str(repository)]) == 0
    assert (tmp_path / "new" / "a.txt").read_bytes() == b"one\n"


def test_untouched_sensitive_property_keeps_its_reference(client, nifi_flow) -> None:
    """An edit that sends 'Sensitive value set' back keeps the parameter reference; never sent."""
    unpack = _by_name(client)["unpack"]
    reference = _nifi_processor(nifi_flow.flow, "unpack")["properties"]["Password"]
    answer = client.put(
        f"/api/processors/{unpack['id']}",
        json={"properties": {"Password": SENSITIVE_VALUE_SET}, "comments": "checked"},
    )
    assert answer.status_code == 200, answer.text
    client.post("/api/flow/save", json={})
    saved = _nifi_processor(nifi_flow.flow, "unpack")
    assert saved["properties"]["Password"] == reference
    assert saved["comments"] == "checked"
    text = client.get("/api/flow").text
    assert SECRET not in text
    assert "#{pw}" not in text
    assert SECRET not in client.get("/api/flow/convert").text


def test_edit_problems_listed_all_at_once_and_discard_reloads(client, nifi_flow) -> None:
    """Two bad values in two processors: both problems in the answer; discard goes back."""
    put, tag = _by_name(client)["put"], _by_name(client)["tag"]
    client.put(f"/api/processors/{put['id']}", json={"properties": {"Directory": None}})
    answer = client.put(
        f"/api/processors/{tag['id']}", json={"properties": {"Store State": "Sometimes"}}
    )
    assert answer.status_code == 200
    problems = answer.json()["problems"]
    assert len(problems) == 2, problems
    assert any("Directory" in p for p in problems)
    assert any("Store State" in p for p in problems)
    assert _by_name(client)["put"]["state"] == "INVALID"
    discarded = client.post("/api/flow/discard", json={})
    assert discarded.json() == {"problems": [], "dirty": False}
    assert _by_name(client)["put"]["validation_errors"] == []


def test_add_connect_and_delete_processor_and_connection(client) -> None:
    """POST a palette type and a connection to it, DELETE both; NiFi's refusal order kept."""
    assert "LogAttribute" in client.get("/api/palette").json()["types"]
    added = client.post("/api/processors", json={"type": "LogAttribute", "name": "log"})
    assert added.status_code == 200, added.text
    log = added.json()["id"]
    tag = _by_name(client)["tag"]["id"]
    connected = client.post(
        "/api/connections", json={"source": tag, "destination": log, "relationships": ["success"]}
    )
    assert connected.status_code == 200, connected.text
    connection = connected.json()["id"]
    flow = client.get("/api/flow").json()
    assert any(c["id"] == connection for c in flow["connections"])
    refused = client.delete(f"/api/processors/{log}", headers={"content-type": "application/json"})
    assert refused.status_code == 400
    assert "delete them first" in refused.json()["error"]
    queue = client.put(
        f"/api/connections/{connection}",
        json={"backPressureObjectThreshold": 5, "flowFileExpiration": "1 min"},
    )
    assert queue.status_code == 200
    settings = next(
        c for c in client.get("/api/flow").json()["connections"] if c["id"] == connection
    )
    assert settings["back_pressure_object_threshold"] == 5
    assert (
        client.delete(
            f"/api/connections/{connection}", headers={"content-type": "application/json"}
        ).status_code
        == 200
    )
    assert (
        client.delete(
            f"/api/processors/{log}", headers={"content-type": "application/json"}
        ).status_code
        == 200
    )
    assert "log" not in _by_name(client)


def test_mistakes_answer_one_line(client) -> None:
    """Unknown ids 404, unknown fields and types 400, a non-JSON write 415."""
    assert client.put("/api/processors/nope", json={"name": "x"}).status_code == 404
    tag = _by_name(client)["tag"]["id"]
    wrong = client.put(f"/api/processors/{tag}", json={"colour": "red"})
    assert wrong.status_code == 400
    assert "colour" in wrong.json()["error"]
    assert client.post("/api/processors", json={"type": "NoSuchThing"}).status_code == 400
    assert client.post("/api/flow/save", content=b"{}").status_code == 415


def test_python_flow_is_read_only_with_a_conversion(nifi_flow) -> None:
    """A Python flow's edits answer 409; /api/flow/convert gives its NiFi flow definition."""
    args = argparse.Namespace(
        **{
            **vars(nifi_flow),
            "flow": str(Path(nifi_flow.flow).with_suffix(".py")),
            "repository": str(Path(nifi_flow.repository).parent / "py-repository"),
        }
    )
    assert main(["run", args.flow, "--runner", "direct", "--repository", args.repository]) == 0
    app, _ = prepare(args)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/api/flow").json().get("editable") is not True
        refused = client.put("/api/processors/tag", json={"name": "x"})
        assert refused.status_code == 409
        assert "convert" in refused.json()["error"]
        converted = client.get("/api/flow/convert")
        assert converted.status_code == 200
        assert converted.json()["flowContents"]["name"] == "edit-test"
        assert "attachment" in converted.headers["content-disposition"]
        services = client.get("/api/services").json()
        assert services["editable"] is False
        assert [s["name"] for s in services["services"]] == ["aws"]


def test_batch_run_from_the_api_then_replay(client, nifi_flow) -> None:
    """POST /api/run runs the flow (counts appear); a second start while it runs is 409; replay."""
    (Path(nifi_flow.flow).parent / "data" / "in" / "b.txt").write_bytes(b"two\n")
    started = client.post("/api/run", json={})
    assert started.status_code == 200, started.text
    assert started.json()["mode"] == "batch"
    again = client.post("/api/run", json={})
    if client.get("/api/run").json()["running"]:
        assert again.status_code == 409
    deadline = time.monotonic() + 60
    while client.get("/api/run").json()["running"] and time.monotonic() < deadline:
        time.sleep(0.2)
    state = client.get("/api/run").json()
    assert state["exit_status"] == 0, state["output"]
    status = client.get("/api/status").json()
    assert status["run"]["pid"] == state["pid"]
    assert status["processors"][_by_name(client)["get"]["id"]]["out_count"] >= 1
    received = client.get("/api/provenance", params={"type": "RECEIVE"}).json()["events"][0]
    refused = client.post(f"/api/provenance/{received['event_id']}/replay", json={})
    assert refused.status_code == 400
    assert "Source FlowFile Queue" in refused.json()["error"]
    event = client.get("/api/provenance", params={"type": "SEND"}).json()["events"][-1]
    replayed = client.post(f"/api/provenance/{event['event_id']}/replay", json={})
    assert replayed.status_code == 200, replayed.text
    assert "replayed event" in replayed.json()["message"]


def test_a_converted_flow_loses_its_sensitive_values_not_its_references() -> None:
    """/api/flow/convert's scrub: a sensitive literal (nested too) becomes null; #{refs} stay."""
    from flowcore.ui.edit_api import _scrub

    def processor(value: str) -> dict:
        sensitive = {"name": "Password", "sensitive": True}
        return {
            "properties": {"Password": value, "Plain": value},
            "propertyDescriptors": {"Password": sensitive, "Plain": {"sensitive": False}},
        }

    group = {
        "processors": [processor("hunter2"), processor("#{pw}"), processor("#{u}hunter2}")],
        "processGroups": [{"controllerServices": [processor("s3cret")]}],
    }
    _scrub(group)
    assert [p["properties"] for p in group["processors"]] == [
        {"Password": None, "Plain": "hunter2"},
        {"Password": "#{pw}", "Plain": "#{pw}"},
        {"Password": None, "Plain": "#{u}hunter2}"},
    ]
    assert group["processGroups"][0]["controllerServices"][0]["properties"]["Password"] is None


@pytest.fixture
def nested_client(nested_flow: argparse.Namespace) -> Iterator[TestClient]:
    """A UI over the definition with a nested group (a file of the test's own)."""
    app, _ = prepare(nested_flow)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def _json_delete(client: TestClient, path: str) -> object:
    return client.delete(path, headers={"content-type": "application/json"})


def test_moves_and_canvas_connections_save_a_definition_flowcore_imports(
    nested_client, nested_flow
) -> None:
    """Move a box and the group, connect into the group's input port, delete a connection:
    the saved file keeps NiFi's places (positions in the group, connections in their
    group) and imports, strictly, without problems."""
    from flowcore.builder import Flow
    from flowcore.definition.validation import problems_of

    client = nested_client
    by_name = _by_name(client)
    put, tag, fetch = by_name["put"]["id"], by_name["tag"]["id"], by_name["fetch"]["id"]
    moved = client.put(f"/api/positions/{put}", json={"x": 12.5, "y": -40})
    assert moved.status_code == 200, moved.text
    assert _by_name(client)["put"]["position"] == {"x": 12.5, "y": -40.0}
    assert client.put("/api/positions/group-archive", json={"x": 1500, "y": 700}).is_success
    into = client.post(
        "/api/connections",
        json={"source": fetch, "destination": "port-to-unpack", "relationships": ["success"]},
    )
    assert into.status_code == 200, into.text
    unpack = by_name["archive/unpack"]["id"]
    apart = client.post(
        "/api/connections",
        json={"source": fetch, "destination": unpack, "relationships": ["failure"]},
    )
    assert apart.status_code == 400
    assert "ports" in apart.json()["error"]
    no_relationship = client.post("/api/connections", json={"source": tag, "destination": put})
    assert no_relationship.status_code == 400
    tag_to_put = next(
        c["id"] for c in client.get("/api/flow").json()["connections"] if c["destination"] == put
    )
    assert _json_delete(client, f"/api/connections/{tag_to_put}").status_code == 200
    added = client.post(
        "/api/processors",
        json={"type": "LogAttribute", "group": "group-archive", "position": {"x": 0, "y": 400}},
    )
    assert added.status_code == 200, added.text
    assert _by_name(client)["archive/LogAttribute"]["group"] == "group-archive"
    assert _json_delete(client, f"/api/processors/{added.json()['id']}").status_code == 200
    assert client.put("/api/positions/nope", json={"x": 1, "y": 2}).status_code == 404
    assert client.put(f"/api/positions/{put}", json={"x": "left"}).status_code == 400
    assert client.post("/api/flow/save", json={}).is_success
    saved = json.loads(Path(nested_flow.flow).read_text())
    root = saved["flowContents"]
    assert next(p for p in root["processors"] if p["name"] == "put")["position"] == {
        "x": 12.5,
        "y": -40.0,
    }
    (group,) = root["processGroups"]
    assert group["position"] == {"x": 1500.0, "y": 700.0}
    new = next(c for c in root["connections"] if c["identifier"] == into.json()["id"])
    assert new["destination"] == {**new["destination"], "type": "INPUT_PORT"}
    assert new["groupIdentifier"] == root["identifier"]
    assert tag_to_put not in {c["identifier"] for c in root["connections"]}
    flow = Flow.from_nifi(saved, strict=True)
    runnable = flow.runnable() if hasattr(flow, "runnable") else flow
    problems = [str(p) for p in problems_of(runnable)]
    assert len(problems) == 1  # put lost its only input, as NiFi would say
    assert problems[0].startswith("PutFile 'put': Upstream Connections is invalid")


def test_services_are_listed_configured_and_never_sent(client, nifi_flow) -> None:
    """GET /api/services: the credentials service, its referencing FetchS3Object, its keys
    masked; a PUT changes a plain property and keeps the untouched secrets; save writes it."""
    from tests.flowcore.ui.conftest import ACCESS_KEY

    listed = client.get("/api/services")
    assert listed.status_code == 200, listed.text
    assert listed.json()["editable"] is True
    (service,) = listed.json()["services"]
    assert (service["name"], service["type"]) == ("aws", "AWSCredentialsProviderControllerService")
    assert [c["name"] for c in service["referencing_components"]] == ["fetch"]
    values = {p["name"]: p["value"] for p in service["properties"]}
    assert values["Secret Access Key"] == SENSITIVE_VALUE_SET
    assert SECRET not in listed.text
    assert ACCESS_KEY not in listed.text
    answer = client.put(
        f"/api/services/{service['id']}",
        json={
            "properties": {
                "Assume Role STS Region": "eu-west-1",
                "Secret Access Key": SENSITIVE_VALUE_SET,
            }
        },
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["problems"] == []
    assert client.post("/api/flow/save", json={}).is_success
    saved = json.loads(Path(nifi_flow.flow).read_text())["flowContents"]["controllerServices"][0]
    assert saved["properties"]["Assume Role STS Region"] == "eu-west-1"
    assert saved["properties"]["Secret Access Key"] == SECRET
    assert client.get("/api/services", params={"group": "nope"}).status_code == 404
    assert SECRET not in client.get("/api/services").text


def test_non_finite_numbers_and_positions_answer_400(client, nifi_flow) -> None:
    """ "nan", 1e999, NaN and a position without x are refused in one line; the file stays JSON."""
    put = _by_name(client)["put"]["id"]
    for body in ({"x": "nan", "y": 0}, {"x": 1, "y": "1e999"}):
        refused = client.put(f"/api/positions/{put}", json=body)
        assert refused.status_code == 400
        assert "finite" in refused.json()["error"]
    for raw in (b'{"x": NaN, "y": 1}', b'{"x": 1e999, "y": 1}'):
        refused = client.put(
            f"/api/positions/{put}", content=raw, headers={"content-type": "application/json"}
        )
        assert refused.status_code == 400
        assert "finite numbers" in refused.json()["error"]
    added = client.post("/api/processors", json={"type": "LogAttribute", "position": {"y": 3}})
    assert added.status_code == 400
    assert "x and y" in added.json()["error"]
    assert client.post("/api/flow/save", json={}).is_success
    json.loads(Path(nifi_flow.flow).read_text(), parse_constant=pytest.fail)


def test_a_connection_whose_queue_holds_flowfiles_is_not_deleted(client) -> None:
    """tag -> unpack holds FlowFiles in the repository: DELETE answers NiFi's refusal, keeps it."""
    unpack = _by_name(client)["unpack"]["id"]
    queue = next(
        c["id"] for c in client.get("/api/flow").json()["connections"] if c["destination"] == unpack
    )
    queued = client.get(f"/api/connections/{queue}/flowfiles").json()["total_flowfiles"]
    assert queued >= 1  # one per run (another test runs the flow again)
    refused = _json_delete(client, f"/api/connections/{queue}")
    assert refused.status_code == 400
    assert refused.json()["error"].startswith(f"Queue not empty for {queue}: ")
    assert f"tag -[success]-> unpack holds {queued} FlowFile(s)" in refused.json()["error"]
    flow = client.get("/api/flow").json()
    assert queue in {c["id"] for c in flow["connections"]}
    assert flow["dirty"] is False


def test_secrets_without_descriptors_stay_masked_and_kept(nifi_flow, tmp_path) -> None:
    """The definition's service and processor lose their descriptors: GET /api/services still
    masks the keys (flowcore's class says sensitive); a PUT of a new secret is described
    sensitive; 'Sensitive value set' sent back keeps the processor's parameter reference."""
    from tests.flowcore.ui.conftest import ACCESS_KEY, args_for

    document = json.loads(Path(nifi_flow.flow).read_text())
    root = document["flowContents"]
    for item in [*root["controllerServices"], *root["processors"]]:
        item.pop("propertyDescriptors", None)
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(document))
    app, _ = prepare(args_for(nifi_flow, flow=str(path)))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        listed = client.get("/api/services")
        assert listed.status_code == 200, listed.text
        assert SECRET not in listed.text
        assert ACCESS_KEY not in listed.text
        (service,) = listed.json()["services"]
        rows = {p["name"]: p for p in service["properties"]}
        assert rows["Secret Access Key"]["value"] == SENSITIVE_VALUE_SET
        assert rows["Secret Access Key"]["sensitive"] is True
        answer = client.put(
            f"/api/services/{service['id']}", json={"properties": {"Secret Access Key": "n3w"}}
        )
        assert answer.status_code == 200, answer.text
        assert "n3w" not in client.get("/api/services").text
        unpack = _by_name(client)["unpack"]["id"]
        kept = client.put(
            f"/api/processors/{unpack}", json={"properties": {"Password": SENSITIVE_VALUE_SET}}
        )
        assert kept.status_code == 200, kept.text
        assert client.post("/api/flow/save", json={}).is_success
    saved = json.loads(path.read_text())["flowContents"]
    descriptor = saved["controllerServices"][0]["propertyDescriptors"]["Secret Access Key"]
    assert (descriptor["sensitive"], descriptor["dynamic"]) == (True, False)
    unpack_saved = next(p for p in saved["processors"] if p["name"] == "unpack")
    assert unpack_saved["properties"]["Password"] == "#{pw}"
