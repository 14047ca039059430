"""The UI's ASGI application: the JSON API, the static pages, and the token gate.

On loopback (the default bind) anyone on the machine may use it, as ``flowcore status`` can read
the repository. Bound to any other address, every request must carry the token: as
``Authorization: Bearer T`` or ``X-Flowcore-Token: T``, or once as ``?token=T`` (a link to
open in a browser), after which an HttpOnly cookie carries it; otherwise the answer is 401.
"""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from flowcore.ui.api import routes
from flowcore.ui.control import RunControl
from flowcore.ui.edit_api import write_routes
from flowcore.ui.editing import FlowEditor
from flowcore.ui.reading import RepositoryView
from flowcore.ui.stats import FiveMinuteWindow

__all__ = ["COOKIE", "LOOPBACK_HOSTS", "STATIC", "LoopbackHosts", "TokenGate", "create_app"]

#: The static pages (plain ES modules and SVG: no build step).
STATIC = Path(__file__).resolve().parent / "static"
#: The cookie a ``?token=`` visit leaves, so the page's own requests carry the token.
COOKIE = "flowcore_ui_token"


class TokenGate:
    """ASGI middleware: requests without the token get 401 (HTTP and the SSE stream alike)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    def _given(self, request: Request) -> tuple[str | None, bool]:
        """The token the request carries, and whether it came in the query (set the cookie)."""
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            return header[7:].strip(), False
        if "x-flowcore-token" in request.headers:
            return request.headers["x-flowcore-token"], False
        if "token" in request.query_params:
            return request.query_params["token"], True
        return request.cookies.get(COOKIE), False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on when it carries the token (setting the cookie), else 401."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given, from_query = self._given(request)
        if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
            text = "this flowcore ui needs its token: open the link it printed at start"
            await JSONResponse({"error": text}, status_code=401)(scope, receive, send)
            return
        if not from_query:
            await self.app(scope, receive, send)
            return

        async def with_cookie(message: Any) -> None:
            if message["type"] == "http.response.start":
                cookie = f"{COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
            await send(message)

        await self.app(scope, receive, with_cookie)


#: The names a browser uses for this machine: a loopback UI answers only requests for them.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


class LoopbackHosts:
    """ASGI middleware of a loopback UI (no token): requests naming another host get 421.

    A web page the user visits could otherwise rebind its own domain to 127.0.0.1 (DNS
    rebinding) and read FlowFiles, save the flow or start runs with the browser's requests,
    which then name the page's domain in ``Host``.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on when its Host is this machine's loopback, else 421."""
        if (
            scope["type"] in ("http", "websocket")
            and host_name(Request(scope).headers.get("host", "")) not in LOOPBACK_HOSTS
        ):
            text = "this flowcore ui answers only http://127.0.0.1 or http://localhost"
            await JSONResponse({"error": text}, status_code=421)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def host_name(host: str) -> str:
    """A Host header's name without its port (``[::1]:8080`` -> ``[::1]``), lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


async def _index(_request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


@contextlib.asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    """Close the repository's connections and files when the server stops."""
    try:
        yield
    finally:
        app.state.control.close()
        app.state.view.close()


def create_app(
    view: RepositoryView,
    flow_document: dict[str, Any],
    *,
    token: str | None = None,
    flow_path: str | Path | None = None,
    editor: FlowEditor | None = None,
) -> ASGIApp:
    """The UI over *view* for the flow *flow_document* describes.

    Args:
        view: the repository, read-only.
        flow_document: ``/api/flow``'s document (:mod:`flowcore.ui.flow_document`).
        token: required on every request when given (any bind off loopback).
        flow_path: the flow file, which runs and replays the UI starts use (None: a flow
            only the repository records; no runs).
        editor: the flow definition's editor (NiFi JSON flows; None: the flow is read-only).
    """
    app = Starlette(
        routes=[
            *write_routes(),
            *routes(),
            Route("/", _index),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        lifespan=_lifespan,
    )
    app.state.view = view
    app.state.flow_document = flow_document
    app.state.flow_path = None if flow_path is None else str(flow_path)
    app.state.editor = editor
    app.state.control = RunControl(flow_path, view.directory)
    app.state.window = FiveMinuteWindow()
    return TokenGate(app, token) if token else LoopbackHosts(app)
