"""Fixtures of the command-line tests: the real ``flowcore`` command, in a subprocess."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import flowcore

#: The checkout whose code the subprocess runs (this worktree's, not an installed copy).
ROOT = Path(flowcore.__file__).resolve().parent.parent

Flowcore = Callable[..., subprocess.CompletedProcess[str]]


def run_flowcore(
    *args: str,
    cwd: Path | None = None,
    timeout: float = 300,
    env: dict[str, str] | None = None,
    unset: tuple[str, ...] = (),
    columns: int = 100,
    text: bool = True,
    **options: object,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m flowcore ARGS`` with this checkout's code; capture its output as text.

    *env* adds variables (``PATH`` to hide a program), *unset* removes inherited ones, and
    *columns* is the terminal width rich lays tables out for; with *text* false the output
    is bytes.
    """
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns)}
    for name in unset:
        environment.pop(name, None)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "flowcore", *args],
        capture_output=True,
        text=text,
        check=False,
        cwd=cwd,
        env=environment,
        timeout=timeout,
        **options,  # type: ignore[arg-type]
    )


def piped_to_head(scratch: Path, *args: str, head: str = "-c 100") -> tuple[bytes, str, int]:
    """``flowcore ARGS | head HEAD`` in bash: what head printed, flowcore's stderr and status.

    *scratch* is a directory for flowcore's stderr and status, which the pipeline hides.
    """
    command = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "flowcore", *args))
    err, status = scratch / "flowcore.err", scratch / "flowcore.status"
    pipeline = (
        f"{command} 2>{shlex.quote(str(err))} | head {head}; "
        f"echo ${{PIPESTATUS[0]}} >{shlex.quote(str(status))}"
    )
    done = subprocess.run(
        ["/bin/bash", "-c", pipeline],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"},
        timeout=300,
    )
    return done.stdout, err.read_text(), int(status.read_text())


def into_closed_pipe(*args: str) -> tuple[str, int]:
    """Run ``flowcore ARGS`` with its stdout a pipe nobody reads any more: stderr and status."""
    process = subprocess.Popen(
        [sys.executable, "-m", "flowcore", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"},
    )
    assert process.stdout is not None
    process.stdout.close()  # before the command has even started: every write fails
    _, err = process.communicate(timeout=300)
    return err.decode(), process.returncode


@pytest.fixture
def flowcore_cmd() -> Flowcore:
    """``flowcore_cmd("run", path, ...)`` runs the real command and returns the finished process."""
    return run_flowcore
