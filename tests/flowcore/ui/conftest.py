"""A repository a real run produced (direct runner), shared by the UI's tests.

The flow reads three files, splits them into lines, tags them and queues them before two
disabled processors (a PutFile and an UnpackContent whose sensitive Password references a
sensitive parameter), so after the run the durable queues hold FlowFiles to list, and
provenance holds RECEIVE, FORK, ATTRIBUTES_MODIFIED and DROP events with parents and children.
``nifi_flow`` is a NiFi 2.x flow definition (a Python flow converted) and its run's repository,
for configure-and-save.
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


def _python_flow(data: Path) -> str:
    return f"""
from flowcore import Flow
from flowcore.parameters import Parameter
from processors import GetFile, PutFile, UnpackContent, UpdateAttribute

flow = Flow("edit-test", parameters={{"pw": Parameter("pw", {EDIT_SECRET!r}, sensitive=True)}})
get = flow.add(GetFile(input_directory={str(data / "in")!r}, keep_source_file=True), name="get")
tag = flow.add(UpdateAttribute(**{{"kind": "line"}}), name="tag")
put = flow.add(
    PutFile(directory={str(data / "out")!r}, conflict_resolution_strategy="replace"), name="put"
)
unpack = flow.add(
    UnpackContent(packaging_format="zip", password="#{{pw}}"), name="unpack", disabled=True
)
flow.connect(get, tag)
flow.connect(tag, put)
flow.connect(tag, unpack)
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
    flow = root / "flow.json"
    flow.write_text(json.dumps(exported.document, indent=2))
    repository = root / "repository"
    assert main(["run", str(flow), "--runner", "direct", "--repository", str(repository)]) == 0
    return argparse.Namespace(
        flow=str(flow), repository=str(repository), host="127.0.0.1", port=0, token=None
    )


def args_for(ran: argparse.Namespace, **changes: object) -> argparse.Namespace:
    """The `flowcore ui` arguments of *ran* with *changes*."""
    return argparse.Namespace(**{**vars(ran), **changes})


def repository_of(ran: argparse.Namespace) -> Path:
    """The repository directory the run used."""
    return Path(ran.repository)
