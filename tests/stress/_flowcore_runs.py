"""Helpers of the kill -9 tests: a real ``flowcore run`` in its own process, its commits as
seen from outside, and the moments to kill it at (:class:`Moments`)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path


def start_flowcore_run(workdir: Path, *options: str) -> subprocess.Popen:
    """``flowcore run flow.py --runner direct --json`` in *workdir*, its stderr piped, with
    *options* added (``--setting``, say)."""
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--json", *options],
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


def status_time(workdir: Path) -> int:
    """When ``status.json`` was last replaced (after each commit); 0 before the first."""
    try:
        return (workdir / ".flowcore" / "status.json").stat().st_mtime_ns
    except FileNotFoundError:
        return 0


def commits_of(process: subprocess.Popen, workdir: Path) -> list[float]:
    """Wait for *process*, just started in *workdir*, to end: the moments (seconds from now)
    its commits were seen, ``status.json`` being replaced after each."""
    started = time.monotonic()
    commits = []
    last = status_time(workdir)
    while process.poll() is None:
        assert time.monotonic() - started < 300, "still running after 300 s"
        if (now := status_time(workdir)) != last:
            commits.append(time.monotonic() - started)
            last = now
        time.sleep(0.01)
    return commits


class Moments:
    """When to kill each run: alternately at any moment from its start to a little past its
    first commit (start-up, recovery, the first tasks and commit), and a little after its first
    commit (later tasks, commits, indexing, publishing).

    The moments follow the runs, not the clock: the first commit is expected when the last run
    that was watched made it (at first, when the undisturbed run did), so a busy machine does
    not move the kills; a killed run gets little done, and a dozen kills never finish the work.

    Args:
        workdir: the work directory whose runs are killed.
        commits: the undisturbed run's commits (seconds from its start).
        early: whether to kill before the first commit too (not on Spark, whose start takes
            seconds).
        past: how long past a first commit a kill comes at most; by default a 24th of the
            undisturbed run's time from its first commit to its last.
    """

    def __init__(
        self,
        workdir: Path,
        commits: list[float],
        *,
        early: bool = True,
        past: float | None = None,
    ) -> None:
        self.workdir = workdir
        self.first = commits[0]
        if past is None:
            past = min(0.25 * commits[0], (commits[-1] - commits[0]) / 24)
        self.past = past
        self.early = early
        self.turns = 0

    def __call__(self, rng: random.Random, process: subprocess.Popen) -> None:
        """Return when *process* is to be killed (or has ended)."""
        self.turns += 1
        started = time.monotonic()
        if self.early and self.turns % 2:
            time.sleep(rng.uniform(0.3 * self.first, self.first + self.past))
            return
        before = status_time(self.workdir)
        while process.poll() is None and status_time(self.workdir) == before:
            assert time.monotonic() - started < 300, "no commit in 300 s"
            time.sleep(0.005)
        self.first = time.monotonic() - started
        time.sleep(rng.uniform(0, self.past))
