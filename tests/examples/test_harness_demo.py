"""Tests that the harness demo (make demo) runs end to end."""

from __future__ import annotations

import runpy
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "harness_demo.py"


def test_demo_runs_and_tags_every_parsed_line(capsys) -> None:
    """The demo flow parses, routes and tags every valid line (its own asserts check counts)."""
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    output = capsys.readouterr().out
    assert "server_error" in output
    assert "ROUTE" in output
