"""Test helper: a continuous flowcore run of ListenHTTP -> PutFile in a thread, on loopback."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from flowcore import Flow
from processors import ListenHTTP, PutFile
from tests.processors.http_server._serving import Serving, answers, free_port, serving


@contextlib.contextmanager
def listening(
    tmp_path: Path,
    *,
    threshold: int | None = None,
    services: Iterable[Any] = (),
    scheme: str = "http",
    ready: Callable[[str], bool] | None = None,
    **properties: Any,
) -> Iterator[Serving]:
    """Run ListenHTTP (with *properties*) -> PutFile continuously until the block ends.

    *services* are declared on the flow; *scheme* is the URL's (``https`` with an SSL
    Context Service), and *ready* tells whether the health check URL it is given answers
    (a plain GET by default). *threshold* puts
    an object back pressure threshold on the connection, whose PutFile is then disabled, so
    that the listener's stage is held back once the queue is full.
    """
    port = free_port()
    flow = Flow("listen")
    for service in services:
        flow.add_service(service)
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
    base = str(properties.get("Base Path", "contentListener"))
    base = os.environ.get(base[2:-1], base) if base.startswith("${") else base
    state = Serving(f"{scheme}://127.0.0.1:{port}/{base}", out)
    health = state.url + "/healthcheck"
    probe = ready or (lambda url: answers("GET", url, 200))
    with serving(flow, tmp_path / "repo", state, lambda: probe(health)) as run:
        yield run
