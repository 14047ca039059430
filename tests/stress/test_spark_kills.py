"""The Spark JVM killed with SIGKILL in the middle of a run (real JVM, real flowcore run)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.stress,
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime"),
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the JVM under /proc"),
]

FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile, UpdateAttribute

flow = Flow("busy")
gen = flow.add(GenerateFlowFile(batch_size=2000, unique_flowfiles=True), name="gen")
tag = flow.add(UpdateAttribute(tag="${random()}"), name="tag")
flow.connect(gen, tag, durable=True)
flow.auto_terminate(tag, "success")
"""
ARGS = ("--runner", "spark", "--master", "local[2]", "--setting", "driver_run_max_flowfiles=0")


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def _jvm_of(pid: int) -> int | None:
    for child in _children(pid):
        try:
            if Path(f"/proc/{child}/comm").read_text().strip() == "java":
                return child
        except OSError:
            continue
    return None


def _error_lines(err: str) -> list[str]:
    """stderr's lines but the JVM's own start-up notice (every Spark run prints it)."""
    return [
        line
        for line in err.splitlines()
        if line.strip() and not line.startswith("WARNING: Using incubator modules")
    ]


def test_a_killed_jvm_is_one_line_and_the_next_run_completes(tmp_path: Path) -> None:
    """SIGKILL to the Spark JVM mid-run: exit 2 and one line saying the JVM died of SIGKILL
    and nothing committed is lost, no Py4J traceback and no PYSPARK_PYTHON advice; the next
    run finishes, with every FlowFile generated once tagged once."""
    (tmp_path / "flow.py").write_text(FLOW)
    script = Path(sys.executable).parent / "flowcore"
    run = subprocess.Popen(
        [str(script), "run", "flow.py", *ARGS, "--setting", "unbounded_source_batches=400"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        for _ in range(1200):  # the first commit: the run is under way on Spark
            if (tmp_path / ".flowcore" / "status.json").exists() or run.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(1.0)
        jvm = _jvm_of(run.pid)
        assert jvm is not None, "no JVM under the run"
        os.kill(jvm, signal.SIGKILL)
        run.wait(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.stderr is not None
    err = run.stderr.read().decode()
    assert run.returncode == 2, err
    assert "Traceback" not in err
    assert "PYSPARK_PYTHON" not in err
    (line,) = _error_lines(err)
    assert "the Spark JVM died (killed by signal 9, SIGKILL)" in line
    assert "nothing committed is lost" in line

    again = subprocess.run(
        [str(script), "run", "flow.py", *ARGS, "--json"],
        cwd=tmp_path, capture_output=True, timeout=600, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr.decode()
    from repositories.repository_set import RepositorySet

    repositories = RepositorySet.open(tmp_path / ".flowcore")
    try:
        wal = repositories.flowfiles
        queued = sum(wal.queue_size(q)[0] for q in wal.queue_ids())
    finally:
        repositories.close()
    assert queued == 0


def _workers_of(pid: int) -> list[int]:
    """Python workers forked by PySpark's daemon under the run's JVM."""
    jvm = _jvm_of(pid)
    daemons = [
        child
        for child in (_children(jvm) if jvm is not None else [])
        if b"pyspark.daemon" in Path(f"/proc/{child}/cmdline").read_bytes()
    ]
    return [worker for daemon in daemons for worker in _children(daemon)]


def test_a_killed_python_worker_is_one_line_and_the_next_run_completes(tmp_path: Path) -> None:
    """SIGKILL to Spark's Python workers mid-run, until one dies busy: exit 2 and one line
    saying a worker died and nothing committed is lost; the next run finishes the queues."""
    (tmp_path / "flow.py").write_text(FLOW)
    script = Path(sys.executable).parent / "flowcore"
    run = subprocess.Popen(
        [str(script), "run", "flow.py", *ARGS, "--setting", "unbounded_source_batches=400"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        for _ in range(1200):
            if (tmp_path / ".flowcore" / "status.json").exists() or run.poll() is not None:
                break
            time.sleep(0.1)
        while run.poll() is None:  # an idle worker killed is replaced: kill until a busy one
            for worker in _workers_of(run.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker, signal.SIGKILL)
            time.sleep(0.3)
        run.wait(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.stderr is not None
    err = run.stderr.read().decode()
    if run.returncode == 0:
        pytest.skip("every kill hit an idle worker, which Spark replaced")
    assert run.returncode == 2, err
    assert "Traceback" not in err
    (line,) = _error_lines(err)
    assert line.startswith("error: a Spark Python worker died")
    assert "nothing committed is lost" in line
    again = subprocess.run(
        [str(script), "run", "flow.py", *ARGS],
        cwd=tmp_path, capture_output=True, timeout=600, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr.decode()
