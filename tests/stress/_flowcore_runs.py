"""Helpers of the kill -9 tests: a real ``flowcore run`` in its own process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path


def start_flowcore_run(workdir: Path) -> subprocess.Popen:
    """``flowcore run flow.py --runner direct --json`` in *workdir*, its stderr piped."""
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--json"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def start_continuous_run(
    workdir: Path, env: Mapping[str, str], ready: Callable[[], bool]
) -> subprocess.Popen:
    """A continuous ``flowcore run flow.py --runner direct`` in *workdir*, once *ready*.

    In a process group of its own (:func:`kill_run` kills its children too), with *env* added
    to the environment and a 20 ms poll interval; *ready* says when its servers take requests.
    """
    script = Path(sys.executable).parent / "flowcore"
    process = subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--continuous",
         "--setting", "poll_interval=20 millis"],
        cwd=workdir,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        if ready():
            return process
        time.sleep(0.05)
    _, err = process.communicate(timeout=30)
    msg = f"the run did not get ready: {err.decode()}"
    raise AssertionError(msg)


def kill_run(process: subprocess.Popen) -> None:
    """SIGKILL the run and its process group; wait for it."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def stop_run(process: subprocess.Popen) -> None:
    """Stop a continuous run as Ctrl-C does; it must end cleanly."""
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err.decode()
