"""Kill -9 a process doing heavy commits at random moments; nothing is lost or duplicated."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repositories.content import FileContentRepository
from repositories.flowfile_wal import WriteAheadFlowFileRepository, iter_queue

pytestmark = pytest.mark.stress

WORKER = Path(__file__).with_name("_wal_worker.py")
ROOT = Path(__file__).resolve().parents[2]


def run_and_kill(directory: Path, seed: int, delay: float) -> list[str]:
    """Start the worker, let it commit for *delay* seconds, SIGKILL it, return its output."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, str(WORKER), str(directory), str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None
    ready = process.stdout.readline()
    assert ready == b"READY\n", process.stderr.read().decode() if process.stderr else ready
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    # Not communicate(): it reads the pipes' file descriptors and would lose the lines
    # readline() above had already buffered past READY (the first commits, at times).
    out = process.stdout.read()
    err = process.stderr.read() if process.stderr else b""
    process.wait()
    assert process.returncode == -signal.SIGKILL, err.decode()
    return out.decode().splitlines()


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """After each of 24 SIGKILLs and restarts: every committed FlowFile is queued exactly once,
    its content is readable, uncommitted content is swept, and check() finds nothing."""
    rng = random.Random(20261122)
    committed: set[int] = set()
    for round_number in range(24):
        lines = run_and_kill(tmp_path, seed=round_number, delay=rng.uniform(0.05, 0.4))
        in_flight: set[int] = set()
        for line in lines:
            if line.startswith("BEGIN E "):
                in_flight = {int(i) for i in line.removeprefix("BEGIN E ").split(",")}
            elif line.startswith("BEGIN M"):
                in_flight = set()
            elif line == "DONE":
                committed |= in_flight
                in_flight = set()
        repo = WriteAheadFlowFileRepository(tmp_path / "flowfiles")
        content = FileContentRepository(tmp_path / "content")
        queued = [f for q in repo.queue_ids() for f in iter_queue(repo, q)]
        ids = [f.id for f in queued]
        assert len(ids) == len(set(ids)), f"round {round_number}: a FlowFile is queued twice"
        assert committed <= set(ids), f"round {round_number}: committed FlowFiles were lost"
        extra = set(ids) - committed
        assert extra <= in_flight, f"round {round_number}: unknown FlowFiles appeared"
        committed |= extra  # the in-flight commit reached the disk before the kill
        missing = [f for f in content.recover(repo.referenced_claims()) if not f.fixed]
        assert missing == [], f"round {round_number}: {missing}"
        for flowfile in queued:
            assert content.read(flowfile.content) == f"ff-{flowfile.id}".encode()
        assert repo.check() == []
        assert content.check() == []
        repo.close()
    assert len(committed) > 100
