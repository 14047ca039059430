"""Tests for ``flowcore convert``, run as the real command in a subprocess."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from flowcore.cli._common import load_flow
from tests.flowcore.cli.conftest import run_flowcore
from tests.flowcore.cli.test_nifi import SAMPLES, TYPES
from tests.flowcore.nifi._nifi_json import missing_types
from tests.flowcore.nifi.nifi_schema import schema_problems

FLOW = """
from flowcore import Flow, RetrySettings
from processors import FileSplitter, PutFile, RouteOnAttribute, SplitText, UpdateAttribute
from processors.update_attribute import Rule

flow = Flow("web logs", parameters={"out": "out"})
blocks = flow.add(FileSplitter(input_directory="in"), name="blocks")
split = flow.add(SplitText(line_split_count=1), name="split", concurrent_tasks=2)
tag = flow.add(
    UpdateAttribute(rules=[Rule("big", ["${fileSize:gt(9)}"], {"size": "big"})], source="web"),
    name="tag",
    retry=RetrySettings(["success"], count=2),
)
route = flow.add(RouteOnAttribute(big="${size:equals('big')}"), name="route", disabled=True)
put = flow.add(PutFile(directory="#{out}"), name="put")
flow.connect(blocks, split, durable=True)
flow.connect(split, tag, "splits", prioritizers=["OldestFlowFileFirstPrioritizer"])
flow.connect(tag, route)
flow.connect(route, put, ["big", "unmatched"])
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""


@pytest.fixture
def flow_file(tmp_path: Path) -> Path:
    """A Python flow file with rules, settings, a flowcore-only processor and a durable queue."""
    path = tmp_path / "web_logs.py"
    path.write_text(FLOW)
    return path


def test_to_nifi_prints_a_flow_definition_and_notes(flow_file: Path) -> None:
    """The JSON fits NiFi's classes; what NiFi cannot hold is noted on stderr."""
    done = run_flowcore("convert", str(flow_file), "--to", "nifi", cwd=flow_file.parent)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert schema_problems(document) == []
    names = {p["name"] for p in document["flowContents"]["processors"]}
    assert names == {"blocks", "split", "tag", "route", "put"}
    assert "note: FileSplitter 'blocks' is flowcore's own processor" in done.stderr
    assert "durable=True" in done.stderr


def test_to_nifi_is_the_same_as_flow_to_nifi(flow_file: Path) -> None:
    """The command writes what ``flow.to_nifi()`` returns, to --output."""
    out = flow_file.parent / "web_logs.json"
    done = run_flowcore("convert", str(flow_file), "--to", "nifi", "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stderr
    written: dict[str, Any] = json.loads(out.read_text())
    assert written == load_flow(flow_file).to_nifi()  # type: ignore[attr-defined]


def test_to_python_writes_an_equal_flow_file(flow_file: Path) -> None:
    """The Python written is the same flow as a flow file; converting it again changes nothing."""
    out = flow_file.parent / "converted.py"
    done = run_flowcore("convert", str(flow_file), "--to", "python", "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert load_flow(out).same_as(load_flow(flow_file))
    again = run_flowcore("convert", str(out), "--to", "python")
    assert again.returncode == 0, again.stderr
    assert again.stdout.split("\n", 1)[1] == out.read_text().split("\n", 1)[1]  # docstring aside


def test_a_missing_flow_file_is_one_line_and_status_2(tmp_path: Path) -> None:
    """A user's mistake: one line on stderr, no traceback, exit status 2."""
    done = run_flowcore("convert", str(tmp_path / "nope.py"), "--to", "python")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "does not exist" in done.stderr


def test_to_is_required_and_checked(flow_file: Path) -> None:
    """--to takes nifi or python."""
    done = run_flowcore("convert", str(flow_file), "--to", "xml")
    assert done.returncode == 2
    assert "invalid choice" in done.stderr


def test_type_map_maps_a_nifi_type_flowcore_lacks(tmp_path: Path) -> None:
    """A NiFi flow with a type flowcore lacks fails in one error (exit 2) without --type-map,
    and converts with it, the mapped processor in the JSON written."""
    flow = tmp_path / "download-2x.json"
    shutil.copy(SAMPLES / "download-2x.json", flow)
    (tmp_path / "my_types.py").write_text(TYPES)
    refused = run_flowcore("convert", str(flow), "--to", "nifi", cwd=tmp_path)
    assert refused.returncode == 2
    assert "processor type com.example.nifi.SignContent" in refused.stderr
    assert "Traceback" not in refused.stderr
    args = ("convert", str(flow), "--to", "nifi", "--type-map", "my_types.py:TYPES")
    done = run_flowcore(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert schema_problems(document) == []
    sign = next(p for p in document["flowContents"]["processors"] if p["name"] == "Sign")
    assert sign["type"] == "io.flowcore.processors.SignContent"
    assert "note: process groups 'Ingest', 'Ingest/Tagging': flattened" in done.stderr


def test_a_bad_type_map_is_one_line_and_status_2(tmp_path: Path) -> None:
    """--type-map naming no dict is the user's mistake: one line, exit 2."""
    flow = tmp_path / "download-2x.json"
    shutil.copy(SAMPLES / "download-2x.json", flow)
    (tmp_path / "my_types.py").write_text(TYPES)
    args = ("convert", str(flow), "--to", "python", "--type-map", "my_types.py:NOPE")
    done = run_flowcore(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "--type-map: my_types.py has no dict named 'NOPE'" in done.stderr


def test_every_missing_type_is_one_block_and_status_2(tmp_path: Path) -> None:
    """A NiFi flow using processor and service types flowcore lacks: one error naming each
    type (a line each, after the count), exit 2, no traceback, nothing written."""
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps(missing_types()))
    out = tmp_path / "out.json"
    done = run_flowcore("convert", str(flow), "--to", "nifi", "--output", str(out))
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0] == f"error: NiFi flow 'Top' ({flow}) cannot run in flowcore (4 problems):"
    subjects = [line.partition(": ")[0] for line in lines[1:]]
    assert subjects == [
        "  - processor type org.apache.nifi.processors.standard.CountText",
        "  - processor type org.apache.nifi.processors.standard.ListDatabaseTables",
        "  - controller service type org.apache.nifi.cef.CEFReader",
        "  - controller service type org.apache.nifi.dbcp.HikariCPConnectionPool",
    ]
    assert not out.exists()
