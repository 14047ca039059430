"""Test helper: a continuous HandleHttpRequest -> HandleHttpResponse -> PutFile run on loopback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from flowcore import Flow
from processors import HandleHttpRequest, HandleHttpResponse, PutFile
from processors.http_server import StandardHttpContextMap
from tests.processors.http_server._serving import Serving, answers, free_port, serving

MAP = "http-context-map"


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
def handling(tmp_path: Path, **options: Any) -> Iterator[Serving]:
    """Run :func:`web_service` (with *options*) continuously until the block ends."""
    port = free_port()
    out = tmp_path / "out"
    state = Serving(f"http://127.0.0.1:{port}", out)
    flow = web_service(port=port, out=out, **options)
    # ready once the server takes connections: OPTIONS is not allowed, 405, never queued
    with serving(flow, tmp_path / "repo", state, lambda: answers("OPTIONS", state.url)) as run:
        yield run
