"""Test helper: a continuous flowcore run of ListenHTTP -> PutFile in a thread, on loopback."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx

from flowcore import Flow
from flowcore.driver.controller import RunResult, run_flow
from flowcore.settings import Settings
from processors import ListenHTTP, PutFile


def free_port() -> int:
    """A loopback port free now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@attrs.define
class Listening:
    """A running listener: its URL, where PutFile writes, and the run's result once stopped."""

    url: str
    out: Path
    result: RunResult | None = None

    def written(self) -> dict[str, bytes]:
        """The files PutFile wrote, by name."""
        if not self.out.exists():
            return {}
        # PutFile's hidden temporaries are renamed into place after the commit: not written yet.
        return {p.name: p.read_bytes() for p in self.out.iterdir() if not p.name.startswith(".")}


@contextlib.contextmanager
def listening(
    tmp_path: Path, *, threshold: int | None = None, **properties: Any
) -> Iterator[Listening]:
    """Run ListenHTTP (with *properties*) -> PutFile continuously until the block ends.

    *threshold* puts
    an object back pressure threshold on the connection, whose PutFile is then disabled, so
    that the listener's stage is held back once the queue is full.
    """
    port = free_port()
    flow = Flow("listen")
    properties.setdefault("Listening Port", str(port))
    if properties["Listening Port"].startswith("${"):  # NiFi's tests: the port from a variable
        os.environ[properties["Listening Port"][2:-1]] = str(port)
    listen = flow.add(ListenHTTP(**properties), name="listen")
    out = tmp_path / "out"
    put = flow.add(
        PutFile(directory=str(out), **{"Conflict Resolution Strategy": "fail"}),
        name="put",
        disabled=threshold is not None,
    )
    flow.connect(listen, put, back_pressure_object_threshold=threshold)
    flow.auto_terminate(put, "success")
    flow.auto_terminate(put, "failure")
    stop = threading.Event()
    base = str(properties.get("Base Path", "contentListener"))
    base = os.environ.get(base[2:-1], base) if base.startswith("${") else base
    state = Listening(f"http://127.0.0.1:{port}/{base}", out)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            state.result = run_flow(
                flow,
                "direct",
                repository=tmp_path / "repo",
                settings=Settings(sync=False, poll_interval="20 millis"),
                continuous=True,
                should_stop=stop.is_set,
            )
        except BaseException as error:  # reported by the test thread
            failure.append(error)

    thread = threading.Thread(target=run, name="listen-run")
    thread.start()
    try:
        _wait_for(state.url + "/healthcheck", failure)
        yield state
    finally:
        stop.set()
        thread.join(timeout=60)
    if failure:
        raise failure[0]


def _wait_for(url: str, failure: list[BaseException]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not failure:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        time.sleep(0.05)
    if failure:
        raise failure[0]
    msg = f"the listener at {url} did not start"
    raise AssertionError(msg)
