"""Tests for ``flowcore explain``, run as the real command in a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.flowcore.cli.conftest import run_flowcore

ROOT = Path(__file__).resolve().parents[3]

FLOW = """
from flowcore import Flow
from processors import GetFile, LogAttribute, PutFile, RouteOnAttribute, SplitText

flow = Flow("branches")
get = flow.add(GetFile(input_directory={inbox!r}, keep_source_file=True), name="get")
split = flow.add(SplitText(line_split_count=1), name="split")
route = flow.add(RouteOnAttribute(long="${{text.line.count:ge(0)}}"), name="route")
log = flow.add(LogAttribute(), name="log")
put = flow.add(PutFile(directory={outbox!r}, conflict_resolution_strategy="replace"), name="put")
flow.connect(get, split)
flow.connect(split, route, "splits", back_pressure_object_threshold=5000)
flow.connect(route, log, "unmatched")
flow.connect(route, put, "long")
flow.auto_terminate(split, ["original", "failure"])
flow.auto_terminate(log, "success")
flow.auto_terminate(put, ["success", "failure"])
"""


def flowcore(*args: str, cwd: Path, path: str | None = None) -> subprocess.CompletedProcess:
    """Run the flowcore command of this checkout (with *path* as its ``PATH``)."""
    return run_flowcore(*args, cwd=cwd, env={"PATH": path} if path is not None else None)


@pytest.fixture
def flow_file(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("one\ntwo\nthree\n")
    path = tmp_path / "flow.py"
    path.write_text(FLOW.format(inbox=str(tmp_path / "in"), outbox=str(tmp_path / "out")))
    return path


def test_text_shows_branches_exits_and_queue_settings(flow_file: Path) -> None:
    """Without a run: both of route's branches, every auto-terminated relationship and the
    queue's back pressure, no counts."""
    done = flowcore("explain", str(flow_file), cwd=flow_file.parent)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "    unmatched -> LogAttribute 'log'" in lines
    assert "    long -> PutFile 'put'" in lines
    assert "    original, failure: auto-terminated" in lines
    assert "      back pressure: 5,000 FlowFiles / 1 GB" in lines
    assert "FlowFiles," not in done.stdout


def test_after_a_run_the_edges_carry_its_counts(flow_file: Path) -> None:
    """The repository beside the flow gives each connection its FlowFiles and bytes."""
    ran = flowcore("run", str(flow_file), "--runner", "direct", cwd=flow_file.parent)
    assert ran.returncode == 0, ran.stderr
    done = flowcore("explain", str(flow_file), cwd=flow_file.parent)
    lines = done.stdout.splitlines()
    at = lines.index("    splits -> RouteOnAttribute 'route'")
    assert lines[at + 2 : at + 4] == [
        "      back pressure: 5,000 FlowFiles / 1 GB",
        "      3 FlowFiles, 11 B",
    ]
    document = json.loads(
        flowcore("explain", str(flow_file), "--format", "json", cwd=flow_file.parent).stdout
    )
    long = next(e for e in document["edges"] if e.get("relationships") == ["long"])
    assert (long["flowfiles"], long["bytes"]) == (3, 11)


def test_dot_mermaid_and_svg_to_a_file(flow_file: Path) -> None:
    """DOT and Mermaid print as text; --output writes the drawing and says where."""
    dot = flowcore("explain", str(flow_file), "--format", "dot", cwd=flow_file.parent)
    assert dot.stdout.startswith("digraph picture {")
    assert "subgraph cluster_1" in dot.stdout
    mermaid = flowcore("explain", str(flow_file), "--format", "mermaid", cwd=flow_file.parent)
    assert "flowchart TB" in mermaid.stdout
    if shutil.which("dot") is None:
        pytest.skip("Graphviz is not installed")
    svg = flow_file.parent / "flow.svg"
    done = flowcore(
        "explain", str(flow_file), "--format", "svg", "--output", str(svg), cwd=flow_file.parent
    )
    assert done.returncode == 0, done.stderr
    assert f"wrote {svg}" in done.stderr
    assert "<svg" in svg.read_text()


def test_svg_without_graphviz_is_one_line_and_exit_2(flow_file: Path) -> None:
    """With no dot program, SVG ends in one line saying how to install Graphviz."""
    done = flowcore(
        "explain", str(flow_file), "--format", "svg", cwd=flow_file.parent, path="/nonexistent"
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "apt-get install graphviz" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_invalid_flow_is_drawn_and_its_problems_follow(flow_file: Path) -> None:
    """A missing input directory leaves a flow that can be drawn: the picture on stdout, every
    problem on stderr, exit 2, and no traceback."""
    shutil.rmtree(flow_file.parent / "in")
    done = flowcore("explain", str(flow_file), cwd=flow_file.parent)
    assert done.returncode == 2, done.stderr
    for name in ("get", "split", "route", "put"):
        assert name in done.stdout
    assert "is invalid" in done.stderr
    assert str(flow_file.parent / "in") in done.stderr
    assert "Traceback" not in done.stderr


def test_the_queue_fed_stage_says_which_runs_go_to_the_driver_on_spark(flow_file: Path) -> None:
    """Spark (run's default runner): one line under the stage after the queue, quoting
    --setting values; --runner direct: no such line; an unknown setting: one line, exit 2."""
    done = flowcore("explain", str(flow_file), cwd=flow_file.parent)
    (note,) = [line for line in done.stdout.splitlines() if "in the driver" in line]
    assert note.startswith("  in the driver: runs taking at most 20,000 queued FlowFiles / 16 MB")
    assert "driver_run_max_flowfiles, driver_run_max_size" in note
    done = flowcore(
        "explain",
        str(flow_file),
        "--setting",
        "driver_run_max_flowfiles=500",
        "--setting",
        "driver_run_max_size=2 MB",
        cwd=flow_file.parent,
    )
    assert "in the driver: runs taking at most 500 queued FlowFiles / 2 MB" in done.stdout
    direct = flowcore("explain", str(flow_file), "--runner", "direct", cwd=flow_file.parent)
    assert direct.returncode == 0, direct.stderr
    assert "in the driver" not in direct.stdout
    wrong = flowcore(
        "explain", str(flow_file), "--setting", "driver_run_max=5", cwd=flow_file.parent
    )
    assert wrong.returncode == 2
    assert len(wrong.stderr.strip().splitlines()) == 1
    assert "did you mean 'driver_run_max_size'?" in wrong.stderr
