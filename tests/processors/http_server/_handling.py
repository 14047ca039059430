"""Test helper: a continuous HandleHttpRequest -> HandleHttpResponse -> PutFile run on loopback."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import httpx

from flowcore import Flow
from flowcore.driver.controller import RunResult, run_flow
from flowcore.settings import Settings
from processors import HandleHttpRequest, HandleHttpResponse, PutFile
from processors.http_server import StandardHttpContextMap
from tests.processors.http_server._listening import free_port

MAP = "http-context-map"


@attrs.define
class Handling:
    """A running web service: its base URL, where PutFile writes, the run's result once stopped."""

    url: str
    out: Path
    result: RunResult | None = None

    def written(self) -> dict[str, bytes]:
        """The files PutFile wrote (FlowFiles HandleHttpResponse sent to success), by name.

        PutFile's hidden temporaries (renamed into place after the commit) are not written yet.
        """
        if not self.out.exists():
            return {}
        return {p.name: p.read_bytes() for p in self.out.iterdir() if not p.name.startswith(".")}


def web_service(
    *,
    port: int,
    out: Path,
    request: Mapping[str, Any] | None = None,
    response: Mapping[str, Any] | None = None,
    context_map: Mapping[str, Any] | None = None,
    responding: bool = True,
) -> Flow:
    """HandleHttpRequest -> HandleHttpResponse -> PutFile(success); the response's failure and
    PutFile's relationships are auto-terminated. Not *responding*: HandleHttpResponse is
    disabled, so requests stay held (its input queue is durable)."""
    flow = Flow("web-service")
    flow.add_service(StandardHttpContextMap(MAP, **(context_map or {})))
    handle = flow.add(
        HandleHttpRequest(
            **{"Listening Port": str(port), "HTTP Context Map": MAP, **(request or {})}
        ),
        name="request",
    )
    answer = flow.add(
        HandleHttpResponse(
            **{"HTTP Status Code": "200", "HTTP Context Map": MAP, **(response or {})}
        ),
        name="response",
        disabled=not responding,
    )
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(handle, answer, durable=not responding)
    flow.connect(answer, put, "success")
    flow.auto_terminate(answer, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    return flow


@contextlib.contextmanager
def handling(tmp_path: Path, **options: Any) -> Iterator[Handling]:
    """Run :func:`web_service` (with *options*) continuously until the block ends."""
    port = free_port()
    out = tmp_path / "out"
    flow = web_service(port=port, out=out, **options)
    stop = threading.Event()
    state = Handling(f"http://127.0.0.1:{port}", out)
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

    thread = threading.Thread(target=run, name="handle-run")
    thread.start()
    try:
        _wait_for(state.url, failure)
        yield state
    finally:
        stop.set()
        thread.join(timeout=60)
    if failure:
        raise failure[0]


def _wait_for(url: str, failure: list[BaseException]) -> None:
    """Wait until the server takes connections (an OPTIONS request: 405, never queued)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not failure:
        with contextlib.suppress(httpx.TransportError):
            httpx.options(url, timeout=1)
            return
        time.sleep(0.05)
    if failure:
        raise failure[0]
    msg = f"the server at {url} did not start"
    raise AssertionError(msg)
