"""Helpers of the ``flowcore serve`` tests: a real server in its own process, and clients of it."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.flowcore.cli.conftest import ROOT

#: Seconds a server has to start its session (a cold JVM and warm-up on a busy 2-core VM).
START_TIMEOUT = 120.0


def environment(**extra: str) -> dict[str, str]:
    """The environment a test's flowcore process runs in: this checkout's code, 100 columns."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    env.pop("FLOWCORE_SERVER", None)  # a developer's own server is not the test's
    return {**env, **extra}


class Server:
    """``python -m flowcore serve --master local[1] --socket SOCKET`` until :meth:`stop`.

    Its stdout's first line (the ready line) is read at start; its stderr goes to a file.
    """

    def __init__(self, socket: Path, log: Path, *args: str) -> None:
        self.socket = socket
        self.log = log
        with log.open("wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "flowcore", "serve", "--master", "local[1]",
                 "--socket", str(socket), *args],
                stdout=subprocess.PIPE, stderr=err, env=environment(), cwd=socket.parent,
            )  # fmt: skip
        try:
            self.ready = self._ready_line()
        except BaseException:
            self.process.kill()  # never a server left behind by a test that failed to start it
            self.process.wait()
            raise

    def _ready_line(self) -> str:
        stdout = self.process.stdout
        assert stdout is not None
        deadline = time.monotonic() + START_TIMEOUT
        # a selector, not select(): a test process late in a long run may hold descriptors
        # numbered past select()'s limit of 1024
        waiting = selectors.DefaultSelector()
        waiting.register(stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            ready = waiting.select(1.0)
            if ready:
                line = stdout.readline().decode()
                if line:
                    return line.strip()
            if self.process.poll() is not None:
                break
        self.process.kill()
        msg = f"the server did not start: {self.log.read_text()[-2000:]}"
        raise AssertionError(msg)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        """Signal the server and wait for it; its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)
            raise


def client(cwd: Path, *args: str, **extra: str) -> subprocess.Popen:
    """``python -m flowcore run ARGS`` in *cwd*, started, its output piped as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "flowcore", "run", *args],
        cwd=cwd, env=environment(**extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def run(cwd: Path, *args: str, timeout: float = 180.0, **extra: str) -> subprocess.CompletedProcess:
    """``python -m flowcore run ARGS`` in *cwd*, finished."""
    return subprocess.run(
        [sys.executable, "-m", "flowcore", "run", *args],
        cwd=cwd, env=environment(**extra), capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip


def serve(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """``python -m flowcore serve ARGS``, finished (for the ones refused before Spark starts)."""
    return subprocess.run(
        [sys.executable, "-m", "flowcore", "serve", *args],
        env=environment(), capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def error_lines(err: str) -> list[str]:
    """stderr's lines but blank ones."""
    return [line for line in err.splitlines() if line.strip()]
