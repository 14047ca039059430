"""A repository a real run produced (direct runner), shared by the UI's tests.

The flow reads three files, splits them into lines, tags them and queues them before two
disabled processors (a PutFile and an UnpackContent whose sensitive Password references a
sensitive parameter), so after the run the durable queues hold FlowFiles to list, and
provenance holds RECEIVE, FORK, ATTRIBUTES_MODIFIED and DROP events with parents and children.
``nifi_flow`` is a NiFi 2.x flow definition (a Python flow converted: with a controller service
whose sensitive keys hold values, used by a disabled FetchS3Object) and its run's
repository, for configure-and-save; ``nested_flow`` is the same definition with unpack moved into
a child process group behind an input port, as NiFi's canvas nests groups.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

SECRET = "s3cret-zip-password"

FLOW_FILE = """
from flowcore import Flow
from flowcore.parameters import Parameter
from processors import GetFile, PutFile, SplitText, UnpackContent, UpdateAttribute

DATA = %r
flow = Flow(
    "ui-test",
    parameters={"zip password": Parameter("zip password", %r, sensitive=True)},
)
get = flow.add(GetFile(input_directory=f"{DATA}/in", keep_source_file=True), name="get")
split = flow.add(SplitText(line_split_count=1), name="split")
tag = flow.add(UpdateAttribute(**{"kind": "line"}), name="tag")
put = flow.add(PutFile(directory=f"{DATA}/out"), name="put", disabled=True)
unpack = flow.add(
    UnpackContent(packaging_format="zip", password="#{zip password}"), name="unpack", disabled=True
)
flow.connect(get, split)
flow.connect(split, tag, "splits")
flow.connect(tag, put, back_pressure_object_threshold=100)
flow.connect(tag, unpack, durable=True)
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
flow.auto_terminate(unpack, ["success", "failure", "original"])
"""

#: What the run reads: lines of CSV, JSON and XML, and a binary line.
FILES = {
    "table.csv": b"name,size\na,1\nb,2\n",
    "doc.json": b'{"k": [1, 2]}\n',
    "page.xml": b"<a><b>x</b></a>\n",
    "blob.bin": b"\x00\x01\x02\xff\n",
}


@pytest.fixture(scope="session")
def ran(tmp_path_factory: pytest.TempPathFactory) -> argparse.Namespace:
    """The flow file and the repository its direct run left (FlowFiles queued)."""
    from flowcore.cli import main

    root = tmp_path_factory.mktemp("ui-run")
    (root / "data" / "in").mkdir(parents=True)
    for name, data in FILES.items():
        (root / "data" / "in" / name).write_bytes(data)
    flow = root / "flow.py"
    flow.write_text(FLOW_FILE % (str(root / "data"), SECRET))
    repository = root / "repository"
    status = main(["run", str(flow), "--runner", "direct", "--repository", str(repository)])
    assert status == 0
    return argparse.Namespace(
        flow=str(flow), repository=str(repository), host="127.0.0.1", port=0, token=None
    )


EDIT_SECRET = "hunter2-zip"
ACCESS_KEY = "AKIAFLOWCOREUITEST"


def _python_flow(data: Path) -> str:
    return f"""
from flowcore import Flow
from flowcore.parameters import Parameter
from processors import GetFile, PutFile, UnpackContent, UpdateAttribute
from processors.aws.credentials import AWSCredentialsProviderControllerService
from processors.aws.fetch_s3_object import FetchS3Object

flow = Flow("edit-test", parameters={{"pw": Parameter("pw", {EDIT_SECRET!r}, sensitive=True)}})
flow.add_service(AWSCredentialsProviderControllerService("aws"))
get = flow.add(GetFile(input_directory={str(data / "in")!r}, keep_source_file=True), name="get")
tag = flow.add(UpdateAttribute(**{{"kind": "line"}}), name="tag")
put = flow.add(
    PutFile(directory={str(data / "out")!r}, conflict_resolution_strategy="replace"), name="put"
)
unpack = flow.add(
    UnpackContent(packaging_format="zip", password="#{{pw}}"), name="unpack", disabled=True
)
fetch = flow.add(
    FetchS3Object(bucket="b", aws_credentials_provider_service="aws"), name="fetch", disabled=True
)
flow.connect(get, tag)
flow.connect(tag, put)
flow.connect(tag, unpack)
flow.connect(tag, fetch)
flow.auto_terminate(fetch, ["success", "failure"])
flow.auto_terminate(put, ["success", "failure"])
flow.auto_terminate(unpack, ["success", "failure", "original"])
"""


@pytest.fixture(scope="session")
def nifi_flow(tmp_path_factory: pytest.TempPathFactory) -> argparse.Namespace:
    """A NiFi 2.x flow definition (converted from a Python flow) and the repository it ran with."""
    from flowcore.cli import main
    from flowcore.cli._common import load_flow
    from flowcore.nifi.exporting import export_flow

    root = tmp_path_factory.mktemp("ui-edit")
    (root / "data" / "in").mkdir(parents=True)
    (root / "data" / "in" / "a.txt").write_bytes(b"one\n")
    (root / "flow.py").write_text(_python_flow(root / "data"))
    exported = export_flow(load_flow(root / "flow.py"))
    service = exported.document["flowContents"]["controllerServices"][0]
    service["properties"].update(
        {"Access Key ID": ACCESS_KEY, "Secret Access Key": EDIT_SECRET}  # as NiFi's flow.json.gz
    )
    flow = root / "flow.json"
    flow.write_text(json.dumps(exported.document, indent=2))
    repository = root / "repository"
    assert main(["run", str(flow), "--runner", "direct", "--repository", str(repository)]) == 0
    return argparse.Namespace(
        flow=str(flow), repository=str(repository), host="127.0.0.1", port=0, token=None
    )


def nest(document: dict) -> dict:
    """*document* with unpack moved into a child group "archive" behind input port "to unpack"."""
    root = document["flowContents"]
    unpack = next(p for p in root["processors"] if p["name"] == "unpack")
    root["processors"].remove(unpack)
    unpack["position"] = {"x": 0.0, "y": 200.0}
    group = {
        "identifier": "group-archive",
        "instanceIdentifier": "group-archive",
        "name": "archive",
        "comments": "",
        "position": {"x": 1350.0, "y": 480.0},
        "componentType": "PROCESS_GROUP",
        "groupIdentifier": root["identifier"],
        "processors": [{**unpack, "groupIdentifier": "group-archive"}],
        "inputPorts": [
            {
                "identifier": "port-to-unpack",
                "name": "to unpack",
                "position": {"x": 0.0, "y": 0.0},
                "type": "INPUT_PORT",
                "concurrentlySchedulableTaskCount": 1,
                "scheduledState": "ENABLED",
                "allowRemoteAccess": False,
                "componentType": "INPUT_PORT",
                "groupIdentifier": "group-archive",
            }
        ],
        "outputPorts": [],
        "funnels": [],
        "labels": [],
        "processGroups": [],
        "remoteProcessGroups": [],
        "controllerServices": [],
        "connections": [],
        "variables": {},
        "flowFileConcurrency": "UNBOUNDED",
        "flowFileOutboundPolicy": "STREAM_WHEN_AVAILABLE",
    }
    into = next(c for c in root["connections"] if c["destination"]["id"] == unpack["identifier"])
    port_end = {
        "id": "port-to-unpack",
        "type": "INPUT_PORT",
        "groupId": "group-archive",
        "name": "to unpack",
        "comments": "",
    }
    inner = {
        **into,
        "identifier": "connection-port-unpack",
        "source": port_end,
        "selectedRelationships": [],
        "groupIdentifier": "group-archive",
    }
    into["destination"] = port_end
    group["connections"].append(inner)
    root.setdefault("processGroups", []).append(group)
    return document


@pytest.fixture
def nested_flow(nifi_flow: argparse.Namespace, tmp_path: Path) -> argparse.Namespace:
    """nifi_flow's definition with a nested group (its own file), over the same repository."""
    document = nest(json.loads(Path(nifi_flow.flow).read_text()))
    path = tmp_path / "nested.json"
    path.write_text(json.dumps(document, indent=2))
    return args_for(nifi_flow, flow=str(path))


def args_for(ran: argparse.Namespace, **changes: object) -> argparse.Namespace:
    """The `flowcore ui` arguments of *ran* with *changes*."""
    return argparse.Namespace(**{**vars(ran), **changes})


def repository_of(ran: argparse.Namespace) -> Path:
    """The repository directory the run used."""
    return Path(ran.repository)
