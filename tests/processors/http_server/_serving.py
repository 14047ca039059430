"""Test helpers of the HTTP server processors: a free port, a readiness probe, and a
continuous flowcore run in a thread, until the test's block ends."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import httpx

from flowcore import Flow
from flowcore.driver.controller import RunResult, run_flow
from flowcore.settings import Settings

#: How long a run's server may take to start, seconds.
START_TIMEOUT_S = 30.0


def free_port() -> int:
    """A loopback port free now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answers(method: str, url: str, status: int | None = None) -> bool:
    """Whether *url* answers *method* now (with *status*, when given)."""
    try:
        response = httpx.request(method, url, timeout=1)
    except httpx.TransportError:
        return False
    return status is None or response.status_code == status


@attrs.define
class Serving:
    """A running flow's server: its URL, where PutFile writes, the run's result once stopped."""

    url: str
    out: Path
    result: RunResult | None = None

    def written(self) -> dict[str, bytes]:
        """The files PutFile wrote, by name.

        PutFile's hidden temporaries (renamed into place after the commit) are not written yet.
        """
        if not self.out.exists():
            return {}
        return {p.name: p.read_bytes() for p in self.out.iterdir() if not p.name.startswith(".")}


@contextlib.contextmanager
def serving(
    flow: Flow, repository: Path, state: Serving, ready: Callable[[], bool]
) -> Iterator[Serving]:
    """Run *flow* continuously (direct runner) in a thread until the block ends.

    The block starts once *ready* (its server takes requests); the run's result is in
    *state* after it. What the run raised is raised here, at the start or the end.
    """
    stop = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            state.result = run_flow(
                flow,
                "direct",
                repository=repository,
                settings=Settings(sync=False, poll_interval="20 millis"),
                continuous=True,
                should_stop=stop.is_set,
            )
        except BaseException as error:  # reported by the test thread
            failure.append(error)

    thread = threading.Thread(target=run, name=f"{flow.name}-run")
    thread.start()
    try:
        _wait_for(ready, state.url, failure)
        yield state
    finally:
        stop.set()
        thread.join(timeout=60)
    if failure:
        raise failure[0]


def _wait_for(ready: Callable[[], bool], url: str, failure: list[BaseException]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and not failure:
        if ready():
            return
        time.sleep(0.05)
    if failure:
        raise failure[0]
    msg = f"the server at {url} did not start"
    raise AssertionError(msg)
