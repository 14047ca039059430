"""Tests that the web-logs example (make demo) draws its pictures and says where."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _demo(workdir: Path, path: str) -> subprocess.CompletedProcess:
    """The example on the direct runner, small, with *path* as the PATH (Graphviz or not)."""
    return subprocess.run(
        [
            sys.executable,
            "examples/web_logs.py",
            str(workdir),
            "--runner",
            "direct",
            "--files",
            "1",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PATH": path, "COLUMNS": "200"},
    )


def test_the_demo_prints_where_its_pictures_are(tmp_path: Path) -> None:
    """The flow (with the run's counts) and one merged file's lineage are written beside the
    output, as SVG with Graphviz and as DOT without it."""
    with_graphviz = _demo(tmp_path / "svg", os.environ.get("PATH", ""))
    assert with_graphviz.returncode == 0, with_graphviz.stderr
    written = {p.name for p in (tmp_path / "svg").iterdir() if p.suffix in (".svg", ".dot")}
    flow_picture = tmp_path / "svg" / f"web-logs.{'svg' if 'web-logs.svg' in written else 'dot'}"
    assert str(flow_picture) in with_graphviz.stdout
    assert "2,000 FlowFiles" in flow_picture.read_text()
    without = _demo(tmp_path / "dot", str(Path(sys.executable).parent))
    assert without.returncode == 0, without.stderr
    assert {p.name for p in (tmp_path / "dot").iterdir() if p.suffix == ".dot"} == {
        "web-logs.dot",
        "lineage.dot",
    }
    assert str(tmp_path / "dot" / "lineage.dot") in without.stdout
