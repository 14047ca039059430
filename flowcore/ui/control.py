"""Run control and replay: ``flowcore run`` and ``flowcore provenance replay`` as child processes.

The UI starts the same commands a user types, as children of the UI server, so a run from the
page behaves exactly as one from a shell (its lock, its ``status.json`` the canvas follows, its
exit status). One run at a time: a start is refused while a run, this server's or any other
process's, holds the repository. A stop sends SIGINT, which ``flowcore run`` answers by stopping
after the current micro-batch (exit 130 for a batch run cut short, 0 for a continuous run), and
SIGTERM after :data:`GRACE` seconds if it is still running; a replay is refused the same way,
because ``flowcore provenance replay`` needs the repository to itself.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from flowcore.errors import FlowcoreError
from repositories.repository_set import live_run

__all__ = ["GRACE", "ReplayError", "RunConflictError", "RunControl"]

#: Seconds a stopping run has after SIGINT before SIGTERM.
GRACE = 30.0
#: Lines of a run's output ``GET /api/run`` keeps.
TAIL = 40


class RunConflictError(FlowcoreError, RuntimeError):
    """A run or a replay asked for while a run holds the repository (HTTP 409)."""


class ReplayError(FlowcoreError, ValueError):
    """``flowcore provenance replay`` refused the event (HTTP 400): its one line."""


def _command(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "flowcore", *arguments]


def _environment() -> dict[str, str]:
    """The server's environment, with the ``flowcore`` this server imports first on the path."""
    environment = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    path = environment.get("PYTHONPATH", "")
    environment["PYTHONPATH"] = package_root + (os.pathsep + path if path else "")
    environment.setdefault("NO_COLOR", "1")
    return environment


class RunControl:
    """The UI server's one child run, its state and the last lines of its output."""

    def __init__(self, flow: str | Path | None, repository: str | Path) -> None:
        self.flow = None if flow is None else Path(flow)
        self.repository = Path(repository)
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._lines: collections.deque[str] = collections.deque(maxlen=TAIL)
        self._mode = ""
        self._started = 0.0
        self._stopping = False

    def _held(self) -> int | None:
        """The pid of a process holding the repository (0: held, pid unknown), or None."""
        return live_run(self.repository)

    def _running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, *, continuous: bool, runner: str = "direct") -> dict[str, Any]:
        """Start ``flowcore run FLOW --repository DIR`` (``--continuous`` when asked).

        Raises:
            RunConflictError: a run holds the repository, or the UI knows no flow file.
        """
        if self.flow is None:
            msg = "this UI shows a recorded flow without its file: start it as flowcore ui FLOW"
            raise RunConflictError(msg)
        with self._lock:
            if self._running():
                pid = self._process.pid  # type: ignore[union-attr]
                msg = f"a run this UI started (pid {pid}) is still running: stop it first"
                raise RunConflictError(msg)
            holder = self._held()
            if holder is not None:
                msg = f"a run (pid {holder}) holds repository {self.repository}: wait or stop it"
                raise RunConflictError(msg)
            arguments = ["run", str(self.flow), "--repository", str(self.repository)]
            arguments += ["--runner", runner]
            if continuous:
                arguments.append("--continuous")
            self._lines.clear()
            self._process = subprocess.Popen(
                _command(*arguments),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                env=_environment(),
            )
            self._mode = "continuous" if continuous else "batch"
            self._started = time.time()
            self._stopping = False
            threading.Thread(target=self._read, args=(self._process,), daemon=True).start()
        return self.state()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            text = line.rstrip("\n").rsplit("\r", 1)[-1]
            if text.strip():
                self._lines.append(text)
        process.stdout.close()

    def stop(self, grace: float = GRACE) -> dict[str, Any]:
        """SIGINT the child run (it stops after the micro-batch), SIGTERM after *grace* s."""
        with self._lock:
            process = self._process
            if process is None or process.poll() is not None:
                return self.state()
            self._stopping = True
            process.send_signal(signal.SIGINT)

        def escalate() -> None:
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                process.terminate()

        threading.Thread(target=escalate, daemon=True).start()
        return self.state()

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the child run to end; its exit status (None when none was started)."""
        process = self._process
        return None if process is None else process.wait(timeout)

    def state(self) -> dict[str, Any]:
        """``GET /api/run``: running, mode, pid, exit status, the output's last lines."""
        process = self._process
        return {
            "running": self._running(),
            "stopping": self._stopping and self._running(),
            "mode": self._mode or None,
            "pid": None if process is None else process.pid,
            "started": self._started or None,
            "exit_status": None if process is None else process.poll(),
            "holder": self._held(),
            "output": list(self._lines),
        }

    def replay(self, event_id: int) -> str:
        """``flowcore provenance replay EVENT FLOW``: its one line of output.

        Raises:
            RunConflictError: a run holds the repository.
            ReplayError: the replay refused the event (its one line).
        """
        if self.flow is None:
            msg = "replay needs the flow file: start the UI as flowcore ui FLOW"
            raise RunConflictError(msg)
        with self._lock:
            if self._running() or self._held() is not None:
                msg = "a run holds the repository: replay once it has stopped"
                raise RunConflictError(msg)
            arguments = ["provenance", "replay", str(event_id), str(self.flow)]
            done = subprocess.run(
                _command(*arguments, "--repository", str(self.repository)),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                env=_environment(),
                check=False,
            )
        lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
        if done.returncode != 0:
            last = lines[-1] if lines else f"replay ended with exit status {done.returncode}"
            raise ReplayError(last.removeprefix("error: "))
        return lines[-1] if lines else ""

    def close(self, grace: float = 5.0) -> None:
        """Stop a child run when the UI server stops (SIGINT, SIGTERM after *grace*)."""
        process = self._process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                process.terminate()
                process.wait()
