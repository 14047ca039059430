"""Tests for ``flowcore status`` (and the read-only commands) beside a live run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.flowcore.cli.conftest import run_flowcore

ROOT = Path(__file__).resolve().parents[3]

TICKING = """
from flowcore import Flow
from processors import GenerateFlowFile, UpdateAttribute

flow = Flow("ticking")
gen = flow.add(
    GenerateFlowFile(custom_text="x", batch_size=5), name="gen", run_schedule="100 millis"
)
tag = flow.add(UpdateAttribute(), name="tag")
end = flow.add(UpdateAttribute(), name="end")
flow.connect(gen, tag, durable=True, back_pressure_object_threshold=1000)
flow.connect(tag, end)
flow.auto_terminate(end, "success")
"""


def flowcore(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real ``flowcore`` command, on this checkout's code."""
    return run_flowcore(*args, cwd=cwd, timeout=120, columns=200)


def status_json(repository: Path) -> dict[str, Any]:
    done = flowcore("status", "--json", "--repository", str(repository), cwd=repository.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def wait_for(check: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    pytest.fail(f"not within {timeout} s")


@pytest.fixture
def live_run(tmp_path: Path) -> Any:
    """A continuous run of the ticking flow in a subprocess; stopped with SIGTERM at the end."""
    flow = tmp_path / "ticking.py"
    flow.write_text(TICKING)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "flowcore", "run", str(flow), "--runner", "direct", "--continuous"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    repository = tmp_path / ".flowcore"
    try:
        yield process, repository
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _micro_batch(repository: Path) -> int:
    if not (repository / "status.json").exists():
        return 0
    return status_json(repository).get("micro_batch", {}).get("number", 0)


def test_status_and_provenance_show_a_live_run(live_run: Any) -> None:
    """While a continuous run holds the repository, status shows it live (micro-batches
    growing, every connection listed, zeros included, each processor's task time growing),
    provenance search and check read beside it, check --fix is refused in one line; SIGTERM
    then ends the run with its summary and 0."""
    process, repository = live_run
    first = wait_for(lambda: _micro_batch(repository) >= 2 and status_json(repository))
    assert first["live"] is True
    assert first["holder"] == process.pid
    assert first["run"]["pid"] == process.pid
    assert first["run"]["continuous"] is True
    assert first["run"]["ended"] is None
    connections = {c["label"]: c for c in first["connections"]}
    assert set(connections) == {"gen -[success]-> tag", "tag -[success]-> end"}
    pipelined = connections["tag -[success]-> end"]
    assert (pipelined["durable"], pipelined["flowfiles"], pipelined["bytes"]) == (False, 0, 0)
    assert connections["gen -[success]-> tag"]["back_pressure"]["object_threshold"] == 1000
    later = wait_for(
        lambda: (
            (s := status_json(repository))["micro_batch"]["number"] > first["micro_batch"]["number"]
            and s
        )
    )
    assert later["stages"]["stage-2"]["flowfiles_in"] >= first["stages"]["stage-2"]["flowfiles_in"]
    spent, grown = first["tasks_duration_nanos"], later["tasks_duration_nanos"]
    assert set(spent) == {"gen", "tag", "end"}
    assert all(grown[name] >= spent[name] > 0 for name in spent)

    text = flowcore("status", "--repository", str(repository), cwd=repository.parent)
    assert text.returncode == 0, text.stderr
    assert f"live: run pid {process.pid} on direct (continuous)" in text.stdout
    assert "tag -[success]-> end (pipelined)" in text.stdout
    assert "micro-batch" in text.stdout
    assert "task time" in text.stdout

    search = flowcore(
        "provenance", "search", "--type", "CREATE", "--repository", str(repository), cwd=ROOT
    )
    assert search.returncode == 0, search.stderr
    assert "CREATE" in search.stdout  # events the live run indexed

    check = flowcore("check", "--repository", str(repository), cwd=ROOT)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"a run (pid {process.pid}) holds" in check.stdout
    refused = flowcore("check", "--fix", "--repository", str(repository), cwd=ROOT)
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "while a run" in refused.stderr

    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "ticking on direct" in out
    assert "Traceback" not in err
    ended = status_json(repository)
    assert ended["live"] is False
    assert ended["run"]["ended"] is not None
    text = flowcore("status", "--repository", str(repository), cwd=repository.parent)
    assert "not running: the last run" in text.stdout
    assert "ended" in text.stdout


def test_status_of_a_repository_no_run_used_is_one_line(tmp_path: Path) -> None:
    """No status.json and no run: one line on stderr, status 2."""
    (tmp_path / "empty").mkdir()
    done = flowcore("status", "--repository", str(tmp_path / "empty"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "no flowcore run has used repository" in done.stderr


def test_status_shows_each_processors_task_time_as_nifi_does(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The table per processor has its task time, HH:MM:SS.mmm on its first row; a processor
    that sent nothing (a sink) has a row of its own for it."""
    from flowcore.cli import main

    repository = tmp_path / "repository"
    repository.mkdir()
    status = {
        "version": 2,
        "flow": "timed",
        "updated": 1_700_000_000_000,
        "run": {"pid": 1, "runner": "direct", "started": 1, "ended": 2, "elapsed_seconds": 1},
        "transfers": {"split": {"splits": [6, 47], "original": [4, 53]}},
        "tasks_duration_nanos": {"split": 3_723_456_789_000, "put": 345_000_000},
    }
    (repository / "status.json").write_text(json.dumps(status))
    assert main(["status", "--repository", str(repository)]) == 0
    out = capsys.readouterr().out
    assert "task time" in out
    rows = [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in out.splitlines()
        if "split" in line or "put" in line
    ]
    assert rows == [
        ["split", "original", "4", "53", "01:02:03.456"],  # the milliseconds cut
        ["split", "splits", "6", "47", ""],
        ["put", "", "", "", "00:00:00.345"],
    ]


def test_a_status_without_its_runs_runner_still_describes_the_run() -> None:
    """A status.json written before its run recorded a runner is described, not a KeyError."""
    from flowcore.cli.status import describe_run

    ended = {"flow": "f", "updated": 1.0, "run": {"pid": 7, "ended": 2.0, "elapsed_seconds": 1}}
    assert "on an unknown runner ended" in describe_run(ended, None, live=False)
    assert "not running (last commit" in describe_run({"flow": "f", "updated": 1.0}, None, False)
