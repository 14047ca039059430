"""`flowcore ui` beside a live run: a continuous run in another process holds the repository,
and the UI's event stream follows it (live, running, the micro-batch number growing)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import warnings

import pytest

from flowcore.cli.ui import prepare
from tests.flowcore.cli.conftest import ROOT
from tests.flowcore.ui.conftest import ran  # noqa: F401  (the fixture: the flow and a run)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette suggests httpx2; httpx is what is installed
    from starlette.testclient import TestClient

pytestmark = pytest.mark.stress


@pytest.mark.slow
def test_the_event_stream_follows_a_live_run(ran, tmp_path) -> None:  # noqa: F811
    """Beside a continuous run in another process, the stream says live and the micro-batch
    number grows from one event to the next."""
    repository = tmp_path / "live"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen(
        [sys.executable, "-m", "flowcore", "run", ran.flow, "--runner", "direct",
         "--continuous", "--repository", str(repository)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (repository / "status.json").exists():
            assert time.monotonic() < deadline, "the continuous run wrote no status.json"
            time.sleep(0.1)
        app, _ = prepare(argparse.Namespace(**{**vars(ran), "repository": str(repository)}))
        live = TestClient(app, base_url="http://127.0.0.1")  # a loopback UI checks Host
        with live, live.stream("GET", "/api/events") as stream:
            numbers: list[int] = []
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    status = json.loads(line.removeprefix("data: "))
                    assert status["live"] is True
                    assert status["processors"]["split"]["state"] == "RUNNING"
                    numbers.append(status["micro_batch"]["number"])
                if len(numbers) == 2:
                    break
        assert numbers[1] > numbers[0]
    finally:
        run.send_signal(signal.SIGINT)
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            run.kill()
