"""Tests that the harness demo (make demo) runs end to end."""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "harness_demo.py"


def test_demo_runs_the_web_logs_flow(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The demo flow delivers every valid line exactly once, grouped by status class."""
    spec = importlib.util.spec_from_file_location("harness_demo", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path / "demo")
    written = sorted(p.name for p in (tmp_path / "demo" / "out").iterdir())
    assert written == ["client_error.log", "redirect.log", "server_error.log", "success.log"]
    assert "JOIN" in capsys.readouterr().out
