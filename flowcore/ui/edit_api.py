"""The UI's writing API (docs/ui.md): configure and save, run control, replay.

Edits go to the server's :class:`~flowcore.ui.editing.FlowEditor` (NiFi-JSON flows only; a
Python flow answers 409 and offers ``GET /api/flow/convert``), each answered with the edited
flow's problems, every one at once; ``POST /api/flow/save`` writes the file. Runs and replays are
``flowcore`` commands the server starts (:class:`~flowcore.ui.control.RunControl`); while a run
holds the repository they answer 409 with one line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from flowcore.parameters import sole_reference
from flowcore.ui.control import ReplayError, RunConflictError, RunControl
from flowcore.ui.editing import EditError, FlowEditor, UnknownComponentError
from flowcore.ui.known_properties import is_sensitive

__all__ = ["write_routes"]


def _error(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)


class _ReadOnlyError(Exception):
    """The flow is a Python file (or recorded only): shown, not edited."""


def _not_json(constant: str) -> float:
    """Python's json reads NaN and Infinity; JSON (and NiFi's Jackson) has neither."""
    msg = f"{constant} is not JSON"
    raise ValueError(msg)


def _finite(text: str) -> float:
    """A JSON number, refused when it overflows to infinity (``1e999``)."""
    number = float(text)
    if not math.isfinite(number):
        msg = f"{text} is out of range"
        raise ValueError(msg)
    return number


def _editor(request: Request) -> FlowEditor:
    editor = request.app.state.editor
    if editor is None:
        msg = (
            "this flow is read-only here (a Python flow, or one only its repository records): "
            "convert it to a flow definition (GET /api/flow/convert) and open that"
        )
        raise _ReadOnlyError(msg)
    return editor


def _control(request: Request) -> RunControl:
    return request.app.state.control


def _writing(handler: Callable[[Request, Any], Any]) -> Callable[[Request], Any]:
    """*handler*(request, JSON body) in a worker thread, mistakes answered in one line."""

    async def endpoint(request: Request) -> Response:
        if request.method != "GET" and not request.headers.get("content-type", "").startswith(
            "application/json"
        ):
            # A page of another site cannot send this without CORS's preflight, which fails:
            # no cross-site request starts a run or saves the flow on a loopback UI.
            return _error(415, "send the request as JSON (Content-Type: application/json)")
        body: Any = {}
        raw = await request.body()
        if raw:
            try:
                body = json.loads(raw, parse_constant=_not_json, parse_float=_finite)
            except ValueError as error:
                return _error(400, f"the request body must be JSON with finite numbers: {error}")
        if not isinstance(body, dict):
            return _error(400, "the request body must be a JSON object")
        try:
            return await run_in_threadpool(handler, request, body)
        except UnknownComponentError as error:
            return _error(404, str(error))
        except (EditError, ReplayError) as error:
            return _error(400, str(error))
        except (_ReadOnlyError, RunConflictError) as error:
            return _error(409, str(error))

    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    return endpoint


def _edited(request: Request, **extra: Any) -> Response:
    """The answer to an edit: the flow's problems (all of them) and whether it is unsaved."""
    editor = _editor(request)
    document = editor.flow_document()
    request.app.state.flow_document = document
    return JSONResponse({**extra, "problems": document["problems"], "dirty": editor.dirty})


def update_processor(request: Request, body: dict[str, Any]) -> Response:
    """Set a processor's name, comments, properties, scheduling, auto-termination, state."""
    _editor(request).update_processor(request.path_params["id"], body)
    return _edited(request)


def add_processor(request: Request, body: dict[str, Any]) -> Response:
    """Add a processor of a palette type (``type``, optional ``name`` and ``position``)."""
    identifier = _editor(request).add_processor(body)
    return _edited(request, id=identifier)


def delete_processor(request: Request, _body: dict[str, Any]) -> Response:
    """Remove a processor that no connection touches."""
    _editor(request).delete_processor(request.path_params["id"])
    return _edited(request)


def update_service(request: Request, body: dict[str, Any]) -> Response:
    """Set a controller service's name, comments and properties."""
    _editor(request).update_service(request.path_params["id"], body)
    return _edited(request)


def move(request: Request, body: dict[str, Any]) -> Response:
    """Move a processor, port, funnel or group: ``{"x", "y"}`` in its group (NiFi's position)."""
    _editor(request).move(request.path_params["id"], body)
    return _edited(request)


def services(request: Request, _body: dict[str, Any]) -> Response:
    """A group's controller services (``?group=ID``; the root without), sensitive ones masked.

    A NiFi flow's as the editor holds it; a Python flow's as its conversion writes them
    (read-only); a flow only the repository records has none to show.
    """
    from flowcore.ui.services import group_services  # noqa: PLC0415

    editor = request.app.state.editor
    if editor is not None:
        root = editor.root
    elif request.app.state.flow_path is not None:
        root = _converted(request)["flowContents"]
    else:
        return JSONResponse({"services": [], "editable": False})
    try:
        found = group_services(root, request.query_params.get("group", ""))
    except KeyError as error:
        raise UnknownComponentError(error.args[0]) from None
    return JSONResponse({"services": found, "editable": editor is not None})


def _converted(request: Request) -> dict[str, Any]:
    """The Python flow as a NiFi flow definition (sensitive values out), made once."""
    from flowcore.cli._common import load_flow  # noqa: PLC0415
    from flowcore.nifi.exporting import export_flow  # noqa: PLC0415

    cached = getattr(request.app.state, "converted", None)
    if cached is None:
        cached = export_flow(load_flow(request.app.state.flow_path)).document
        _scrub(cached["flowContents"])
        request.app.state.converted = cached
    return cached


def update_connection(request: Request, body: dict[str, Any]) -> Response:
    """Set a connection's back pressure, expiration, prioritizers, name, relationships."""
    _editor(request).update_connection(request.path_params["id"], body)
    return _edited(request)


def add_connection(request: Request, body: dict[str, Any]) -> Response:
    """Connect ``source`` to ``destination`` for ``relationships``."""
    identifier = _editor(request).add_connection(body)
    return _edited(request, id=identifier)


def delete_connection(request: Request, _body: dict[str, Any]) -> Response:
    """Remove a connection; refused, as NiFi, while its queue in the repository is not empty."""
    view = request.app.state.view
    _editor(request).delete_connection(request.path_params["id"], queued=view.queue_size)
    return _edited(request)


def save(request: Request, _body: dict[str, Any]) -> Response:
    """Write the edited flow definition over its file (atomically)."""
    editor = _editor(request)
    editor.save()
    return _edited(request, saved=str(editor.path))


def discard(request: Request, _body: dict[str, Any]) -> Response:
    """Forget the unsaved edits: the file as it is."""
    _editor(request).discard()
    return _edited(request)


def palette(_request: Request, _body: dict[str, Any]) -> Response:
    """The processor types a flow may add: ``available_processors()``."""
    from flowcore.registry import available_processors  # noqa: PLC0415

    return JSONResponse({"types": sorted(available_processors())})


def _scrub(group: dict[str, Any]) -> None:
    """Sensitive values out of a definition sent to the browser (parameter references stay).

    Sensitive as the item's descriptor or flowcore's class for its type says.
    """
    items = [
        *((p, False) for p in group.get("processors") or ()),
        *((s, True) for s in group.get("controllerServices") or ()),
    ]
    for item, service in items:
        properties = item.get("properties") or {}
        for name, value in properties.items():
            reference = isinstance(value, str) and sole_reference(value)
            if value is not None and not reference and is_sensitive(item, name, service=service):
                properties[name] = None
    for child in group.get("processGroups") or ():
        _scrub(child)


def convert(request: Request, _body: dict[str, Any]) -> Response:
    """A Python flow as a NiFi 2.x flow definition (``flowcore convert --to nifi``), to download."""
    from flowcore.cli._common import load_flow  # noqa: PLC0415
    from flowcore.nifi.exporting import export_flow  # noqa: PLC0415

    path = request.app.state.flow_path
    if path is None:
        msg = "the UI has no flow file to convert: start it as flowcore ui FLOW"
        raise _ReadOnlyError(msg)
    exported = export_flow(load_flow(path))
    _scrub(exported.document["flowContents"])
    name = f"{exported.document['flowContents'].get('name') or 'flow'}.json"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
    return JSONResponse(
        exported.document, headers={"Content-Disposition": f'attachment; filename="{safe}"'}
    )


def run_state(request: Request, _body: dict[str, Any]) -> Response:
    """The run this UI started: running, mode, pid, exit status, last lines of output."""
    return JSONResponse(_control(request).state())


def run_start(request: Request, body: dict[str, Any]) -> Response:
    """Start ``flowcore run`` (``{"continuous": true}`` for a continuous run)."""
    runner = str(body.get("runner") or "direct")
    if runner not in ("direct", "spark"):
        msg = f"runner {runner!r}: use direct or spark"
        raise EditError(msg)
    return JSONResponse(
        _control(request).start(continuous=bool(body.get("continuous")), runner=runner)
    )


def run_stop(request: Request, _body: dict[str, Any]) -> Response:
    """Stop the run: SIGINT (stops after the micro-batch), SIGTERM after a grace period."""
    return JSONResponse(_control(request).stop())


def replay(request: Request, _body: dict[str, Any]) -> Response:
    """Replay an event, as ``flowcore provenance replay`` does."""
    line = _control(request).replay(request.path_params["event_id"])
    return JSONResponse({"replayed": request.path_params["event_id"], "message": line})


def write_routes() -> list[Route]:
    """The writing API's routes, under ``/api``."""
    return [
        Route("/api/processors", _writing(add_processor), methods=["POST"]),
        Route("/api/processors/{id}", _writing(update_processor), methods=["PUT"]),
        Route("/api/processors/{id}", _writing(delete_processor), methods=["DELETE"]),
        Route("/api/positions/{id}", _writing(move), methods=["PUT"]),
        Route("/api/services", _writing(services), methods=["GET"]),
        Route("/api/services/{id}", _writing(update_service), methods=["PUT"]),
        Route("/api/connections", _writing(add_connection), methods=["POST"]),
        Route("/api/connections/{id}", _writing(update_connection), methods=["PUT"]),
        Route("/api/connections/{id}", _writing(delete_connection), methods=["DELETE"]),
        Route("/api/flow/save", _writing(save), methods=["POST"]),
        Route("/api/flow/discard", _writing(discard), methods=["POST"]),
        Route("/api/flow/convert", _writing(convert), methods=["GET"]),
        Route("/api/palette", _writing(palette), methods=["GET"]),
        Route("/api/run", _writing(run_state), methods=["GET"]),
        Route("/api/run", _writing(run_start), methods=["POST"]),
        Route("/api/run/stop", _writing(run_stop), methods=["POST"]),
        Route("/api/provenance/{event_id:int}/replay", _writing(replay), methods=["POST"]),
    ]
