"""Tests for ``flowcore run``, through the real command in a subprocess."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile, PutFile

flow = Flow("tiny")
gen = flow.add(GenerateFlowFile(custom_text="hi"), name="gen")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(gen, put)
flow.auto_terminate(put, ["success", "failure"])
"""


def _run(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "flow.py").write_text(FLOW)
    return subprocess.run(
        [sys.executable, "-m", "flowcore", "run", "flow.py", *options],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("master", ["foo://x", "local[x]", "spark://host-without-port"])
def test_a_bad_master_url_is_one_line_naming_it_and_the_forms(tmp_path: Path, master: str) -> None:
    """A master Spark would refuse ends in one line, exit 2, before any JVM starts."""
    done = _run(tmp_path, "--master", master)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert master in lines[0]
    assert "local[*]" in lines[0]
    assert "spark://HOST:7077" in lines[0]
    assert not (tmp_path / "out").exists()


def test_an_unreachable_master_is_one_line_within_the_connect_timeout(tmp_path: Path) -> None:
    """Nothing listens on the master's port: one line naming it and the setting, exit 2, at
    once rather than after Spark's minute of retries."""
    started = time.monotonic()
    done = _run(
        tmp_path, "--master", "spark://127.0.0.1:1", "--setting", "spark_connect_timeout=2 sec"
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "cannot reach the Spark master spark://127.0.0.1:1" in lines[0]
    assert "spark_connect_timeout" in lines[0]
    assert time.monotonic() - started < 30


def test_a_bad_connect_timeout_is_refused_by_name(tmp_path: Path) -> None:
    """``--setting spark_connect_timeout=soon`` is refused in one line naming the setting."""
    done = _run(tmp_path, "--setting", "spark_connect_timeout=soon")
    assert done.returncode == 2
    assert "spark_connect_timeout" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime")
def test_a_master_that_never_answers_ends_after_the_connect_timeout(tmp_path: Path) -> None:
    """Something accepts connections on the master's port but is no Spark master: the run
    gives up after spark_connect_timeout with one line of its own (not Spark's minute of
    retries, then a trace), exit 2."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        held: list[socket.socket] = []
        accepting = threading.Thread(
            target=lambda: held.extend(server.accept()[0] for _ in range(8)), daemon=True
        )
        accepting.start()
        port = server.getsockname()[1]
        started = time.monotonic()
        done = _run(
            tmp_path,
            "--master",
            f"spark://127.0.0.1:{port}",
            "--setting",
            "spark_connect_timeout=3 sec",
        )
        elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert f"spark://127.0.0.1:{port} accepted a connection but did not start" in last
    assert "spark_connect_timeout" in last
    assert "Traceback" not in done.stderr
    assert elapsed < 45  # Spark alone retries for over a minute
