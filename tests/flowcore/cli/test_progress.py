"""Tests for ``flowcore run``'s progress display and Ctrl-C, driven on a terminal (a pty)."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import sys
import time
from pathlib import Path

import pytest

from flowcore.cli._progress import ProgressView
from flowcore.driver.run_result import InputProgress, RunProgress, StageProgress

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
flow.connect(gen, tag, durable=True)
flow.connect(tag, end, durable=True)
flow.auto_terminate(end, "success")
"""

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """The ``flowcore`` command run on a pseudo-terminal, as a person at a shell runs it."""

    def __init__(self, *args: str, cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100", "TERM": "xterm"}
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: a session of its own, the pty its controlling terminal
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, "-m", "flowcore", *args], env)
        self.output = b""

    def text(self) -> str:
        """Everything shown so far, without terminal control sequences."""
        return ANSI.sub(b"", self.output).decode(errors="replace").replace("\r", "")

    def read_until(self, pattern: str, timeout: float) -> re.Match[str]:
        """Read until the screen shows *pattern* (a regex)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.text())
            if found:
                return found
            self._read(0.2)
        pytest.fail(f"{pattern!r} not shown within {timeout} s; shown:\n{self.text()[-3000:]}")

    def _read(self, wait: float) -> bool:
        # poll, not select: the worker may hold more than 1,024 descriptors by now
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        if not poller.poll(wait * 1000):
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.output += data
        return bool(data)

    def press(self, keys: bytes) -> None:
        """Type *keys* (``b"\\x03"`` is Ctrl-C: the terminal sends SIGINT)."""
        os.write(self.fd, keys)

    def wait(self, timeout: float) -> int:
        """Read to the end and return the exit status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(0.2):
            pass
        for _ in range(50):
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.1)
        os.kill(self.pid, 9)
        pytest.fail(f"still running after {timeout} s; shown:\n{self.text()[-3000:]}")


@pytest.fixture
def ticking(tmp_path: Path) -> Path:
    path = tmp_path / "ticking.py"
    path.write_text(TICKING)
    return path


def _ctrl_c_finishes_the_micro_batch(flow: Path, runner: str, start_timeout: float) -> str:
    terminal = Terminal("run", str(flow), "--runner", runner, "--continuous", cwd=flow.parent)
    terminal.read_until(r"stage-3\s+end\s+[1-9]", start_timeout)
    terminal.press(b"\x03")
    status = terminal.wait(120)
    shown = terminal.text()
    assert status == 0, shown[-3000:]
    assert "Traceback" not in shown
    assert "KeyboardInterrupt" not in shown
    assert re.search(r"ticking on .*" + runner, shown)
    assert "FlowFiles per relationship" in shown
    return shown


def test_the_display_shows_per_stage_counts_and_the_elapsed_time(ticking: Path) -> None:
    """On a terminal the display draws each stage's in/out and rate under an elapsed time, and
    Ctrl-C on a continuous run finishes the micro-batch, prints the summary and exits 0."""
    shown = _ctrl_c_finishes_the_micro_batch(ticking, "direct", 60)
    assert re.search(r"ticking \d+:\d\d:\d\d\s+micro-batch \d+", shown)
    assert re.search(r"stage-1\s+gen\s+\d+\s+[\d.]+\s+\d+\s+[\d.]+", shown)
    assert re.search(r"stage-2\s+tag\s+[1-9]", shown)
    assert "stopping after the current micro-batch" in shown


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime")
def test_ctrl_c_on_a_continuous_spark_run_ends_it_cleanly(ticking: Path) -> None:
    """PySpark's SparkContext replaces the SIGINT handler; the runner puts flowcore's back, so
    Ctrl-C finishes the micro-batch, prints the summary and exits 0, without a traceback."""
    _ctrl_c_finishes_the_micro_batch(ticking, "spark", 180)


SLOW = """
import time
from flowcore import Flow, Processor, Relationship
from processors import GenerateFlowFile


class Sleepy(Processor):
    relationships = (Relationship("success", "all"),)

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is not None:
            print("sleeping", flush=True)
            time.sleep(30)
            session.transfer(flowfile, "success")


flow = Flow("slow")
gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
sleepy = flow.add(Sleepy(), name="sleepy")
flow.connect(gen, sleepy, durable=True)
flow.auto_terminate(sleepy, "success")
"""


def test_a_second_ctrl_c_stops_at_once(tmp_path: Path) -> None:
    """A second Ctrl-C does not wait for the micro-batch in progress: one line, status 130."""
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW)
    terminal = Terminal("run", str(slow), "--runner", "direct", "--continuous", cwd=tmp_path)
    terminal.read_until("sleeping", 60)
    terminal.press(b"\x03")
    terminal.read_until("stopping after", 10)
    terminal.press(b"\x03")
    started = time.monotonic()
    assert terminal.wait(20) == 130
    assert time.monotonic() - started < 20
    assert "stopped at once" in terminal.text()
    assert "Traceback" not in terminal.text()


def test_the_view_shows_input_percentage_and_eta() -> None:
    """With the sources' pending work known, the view draws a percentage and an ETA."""
    view = ProgressView("files")
    view.started -= 10  # ten seconds in
    view.report(
        RunProgress(
            3,
            "stage-1",
            5,
            7,
            stages=(StageProgress("stage-1", "get+split", 5, 50, 3),),
            input=InputProgress(5, 500, 5, 500),
        )
    )
    from rich.console import Console

    console = Console(width=100, record=True, color_system=None)
    console.print(view)
    text = console.export_text()
    assert "50%" in text
    assert "ETA 0:00:10" in text
    assert "(500 of 1,000 bytes)" in text
    assert re.search(r"stage-1\s+get\+split\s+5\s+0\.5\s+50\s+5\.0", text)
