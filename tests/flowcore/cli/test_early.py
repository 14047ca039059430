"""Tests for the Spark session a ``flowcore run`` begins before its own imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore.cli._early import start_spark_early
from flowcore.runners import sessions
from tests.flowcore.cli.conftest import run_flowcore


@pytest.fixture
def began(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """What start_spark_early asked the sessions module to begin (no JVM is started)."""
    asked: list[tuple] = []
    monkeypatch.setattr(sessions, "start_early", lambda m, c: asked.append((m, c)) or True)
    monkeypatch.delenv("FLOWCORE_SERVER", raising=False)
    return asked


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["explain", "flow.py"],
        ["run", "flow.py", "--runner", "direct"],
        ["run", "flow.py", "--server"],
        ["run", "flow.py", "--server", "/tmp/s.sock"],
        ["run", "--help"],
        ["run", "flow.py", "--conf", "no-equals-sign"],
    ],
)
def test_only_a_spark_run_begins_a_session(began: list[tuple], argv: list[str]) -> None:
    """Other commands, the direct runner, a server's run, help and a bad --conf begin none."""
    assert not start_spark_early(argv)
    assert began == []


def test_a_run_on_a_server_by_its_variable_begins_none(
    began: list[tuple], monkeypatch: pytest.MonkeyPatch
) -> None:
    """FLOWCORE_SERVER sends the run to a server: nothing starts here."""
    monkeypatch.setenv("FLOWCORE_SERVER", "default")
    assert not start_spark_early(["run", "flow.py"])
    assert began == []


def test_a_spark_run_begins_the_session_it_asks_for(began: list[tuple]) -> None:
    """The master and conf of the command line, as the run will ask for them."""
    argv = ["run", "flow.py", "--repository", "r", "--master", "local[1]", "--conf", "a.b= c "]
    assert start_spark_early(argv)
    assert began == [("local[1]", {"a.b": "c"})]
    assert start_spark_early(["run", "flow.py", "--json"])
    assert began[-1] == (None, {})


def test_a_mistake_found_while_the_session_starts_is_one_line(tmp_path: Path) -> None:
    """An invalid flow ends in its one error line and status 2, the JVM's start unheard."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from flowcore import Flow\nfrom processors import PutFile\n"
        "flow = Flow('bad')\nflow.add(PutFile(), name='put')\n"
    )
    done = run_flowcore("run", str(bad), "--master", "local[1]", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "error: flow 'bad' is invalid (4 problems):"
    assert "WARNING" not in done.stderr
    assert done.stdout == ""


def test_a_run_on_the_session_begun_early(tmp_path: Path) -> None:
    """A good flow runs on the session begun early: its output, and the JVM's noise left out."""
    flow = tmp_path / "flow.py"
    flow.write_text(
        "from flowcore import Flow\nfrom processors import GenerateFlowFile, PutFile\n"
        "flow = Flow('early')\n"
        "gen = flow.add(GenerateFlowFile(custom_text='hi', batch_size=3), name='gen')\n"
        f"put = flow.add(PutFile(directory={str(tmp_path / 'out')!r}), name='put')\n"
        "flow.connect(gen, put)\nflow.auto_terminate(put, ['success', 'failure'])\n"
    )
    done = run_flowcore("run", str(flow), "--master", "local[1]", cwd=tmp_path, columns=200)
    assert done.returncode == 0, done.stderr
    assert "early on spark (local[1]): session started in" in done.stdout
    assert "WARNING: Using incubator modules" not in done.stderr
    assert len(list((tmp_path / "out").iterdir())) == 3
