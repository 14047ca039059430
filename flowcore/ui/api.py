"""The UI's JSON API (docs/ui.md lists every endpoint): flow, status, queues, content, provenance.

Each handler reads through :class:`~flowcore.ui.reading.RepositoryView` (read-only, no lock).
Errors a caller can make (an unknown connection, event or FlowFile; a bad query value) answer
with a JSON body ``{"error": "..."}`` and 404 or 400, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

import attrs
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from flowcore.cli.provenance import event_json
from flowcore.errors import ContentCorruptionError, FlowcoreError
from flowcore.provenance_events import ProvenanceEventType
from flowcore.ui.lineage import LineageTooLargeError, lineage_document
from flowcore.ui.reading import RepositoryView, UnknownItemError
from flowcore.ui.stats import FiveMinuteWindow, status_for_ui

__all__ = ["STATUS_EVERY", "routes"]

#: Seconds between two looks at ``status.json`` for the SSE stream.
STATUS_EVERY = 0.5
#: Bytes of content a viewer request returns at most (a download has no limit).
MAX_VIEW = 4 * 1024 * 1024
_CHUNK = 64 * 1024


class BadQueryError(FlowcoreError, ValueError):
    """A query parameter the API cannot use."""


def _error(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)


def _handled(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
    """*handler* in a worker thread, the caller's mistakes answered as JSON errors (404, 400).

    Handlers read files and the database; in a worker thread the event loop, which streams the
    status to every page, never waits on them.
    """

    async def endpoint(request: Request) -> Response:
        try:
            return await run_in_threadpool(handler, request)
        except UnknownItemError as error:
            return _error(404, error.args[0] if error.args else str(error))
        except BadQueryError as error:
            return _error(400, str(error))
        except LineageTooLargeError as error:
            return _error(503, str(error))

    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    return endpoint


def _view(request: Request) -> RepositoryView:
    return request.app.state.view


def _int(request: Request, name: str, default: int | None) -> int | None:
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        msg = f"{name}={text!r} must be a whole number"
        raise BadQueryError(msg) from None


def _time(request: Request, name: str) -> int | None:
    """A time as epoch milliseconds, or ISO 8601 (``2026-11-29T10:00:00Z``)."""
    text = request.query_params.get(name)
    if not text:
        return None
    if text.isdigit():
        return int(text)
    try:
        return int(datetime.fromisoformat(text).timestamp() * 1000)
    except ValueError:
        msg = f"{name}={text!r} must be epoch milliseconds or an ISO 8601 time"
        raise BadQueryError(msg) from None


def flow(request: Request) -> Response:
    """The flow: groups, components (properties masked), connections, stages, positions."""
    return JSONResponse(request.app.state.flow_document)


def _status(request: Request) -> dict[str, Any]:
    """The status the canvas draws: this run's counts and NiFi's 5-minute window beside them."""
    view = _view(request)
    document = request.app.state.flow_document  # as edited since the page opened
    window: FiveMinuteWindow = request.app.state.window
    return window.apply(status_for_ui(document, view.status()), view)


def status(request: Request) -> Response:
    """Per-processor and per-connection status, from the run's ``status.json``."""
    return JSONResponse(_status(request))


def bulletins(request: Request) -> Response:
    """The bulletin board: the last bulletins, oldest first."""
    limit = _int(request, "limit", 100) or 100
    return JSONResponse(_view(request).bulletins(limit))


async def events(request: Request) -> Response:
    """Server-sent events: the status each time ``status.json`` changes (and a first one)."""
    view = _view(request)
    path = view.directory / "status.json"
    once = request.query_params.get("once") == "1"

    async def stream() -> AsyncIterator[str]:
        last: Any = None
        while True:
            try:
                stamp: Any = path.stat().st_mtime_ns
            except FileNotFoundError:
                stamp = None
            if stamp != last:
                last = stamp
                body = json.dumps(await run_in_threadpool(_status, request))
                yield f"event: status\ndata: {body}\n\n"
                if once:
                    return
            if await request.is_disconnected():
                return
            await asyncio.sleep(STATUS_EVERY)

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


def queue_listing(request: Request) -> Response:
    """A connection's queue, in queue order: NiFi's "List queue"."""
    connection = request.path_params["connection_id"]
    known = {c["id"] for c in request.app.state.flow_document["connections"]}
    if connection not in known:
        msg = f"the flow has no connection with id {connection!r}"
        raise UnknownItemError(msg)
    offset = _int(request, "offset", 0) or 0
    limit = _int(request, "limit", 100)
    page = _view(request).list_queue(connection, offset, 100 if limit is None else limit)
    body = attrs.asdict(page)
    for row in body["flowfiles"]:
        del row["segment_id"]
    return JSONResponse(body)


def _flowfile_json(queue_id: str, flowfile: Any) -> dict[str, Any]:
    return {
        "uuid": flowfile.uuid,
        "queue": queue_id,
        "filename": flowfile.attributes.get("filename", ""),
        "size": flowfile.size,
        "entry_date": flowfile.entry_date,
        "lineage_start_date": flowfile.lineage_start_date,
        "queue_date": flowfile.queue_date,
        "penalty_expiration": flowfile.penalty_expiration,
        "content_claim": None if flowfile.content is None else str(flowfile.content),
        "attributes": dict(sorted(flowfile.attributes.items())),
    }


def flowfile(request: Request) -> Response:
    """A queued FlowFile's details and attributes."""
    queue_id, found = _view(request).flowfile(request.path_params["uuid"])
    return JSONResponse(_flowfile_json(queue_id, found))


def _chunks(stream: Any, first: bytes, limit: int | None) -> Iterator[bytes]:
    """*first* (read and verified before the status line), then the rest of *stream*.

    A block failing its checksum past *first* raises here, after the status was sent: the
    server then breaks the body off (no closing chunk), so a client never takes a truncated
    download for a whole one.
    """
    left = None if limit is None else limit - len(first)
    try:
        if first:
            yield first
        while left is None or left > 0:
            data = stream.read(_CHUNK if left is None else min(_CHUNK, left))
            if not data:
                return
            if left is not None:
                left -= len(data)
            yield data
    finally:
        stream.close()


#: A ``type/subtype`` media type with parameters, in HTTP's token characters (a FlowFile's
#: ``mime.type`` is any text: anything else is sent as ``application/octet-stream``).
_MEDIA_TYPE = re.compile(
    r"[\w!#$&^.+-]+/[\w!#$&^.+-]+(\s*;\s*[\w!#$&^.+-]+=[\w!#$&^.+\"-]+)*", re.ASCII
)


def content_disposition(disposition: str, filename: str) -> str:
    """A Content-Disposition naming *filename*, whatever its characters (RFC 6266).

    HTTP headers are Latin-1: an ASCII fallback goes in ``filename`` (anything else, quotes and
    control characters replaced by ``_``) and the name itself, percent-encoded UTF-8, in
    ``filename*`` (RFC 5987), which browsers prefer; a plain ASCII name goes alone.
    """
    fallback = (
        "".join(ch if " " <= ch <= "~" and ch not in '"\\' else "_" for ch in filename) or "content"
    )
    if fallback == filename:
        return f'{disposition}; filename="{fallback}"'
    encoded = urllib.parse.quote(filename or "content", safe="")
    return f"{disposition}; filename=\"{fallback}\"; filename*=UTF-8''{encoded}"


def _content(
    request: Request, view: RepositoryView, claim: Any, attributes: Mapping[str, str]
) -> Response:
    """*claim*'s bytes: inline for the viewer (the first :data:`MAX_VIEW`), or a download.

    ``?records=1`` answers Avro and Parquet content as records instead (JSON, a
    :class:`~flowcore.ui.reading.RecordView`): a table and NiFi's formatted JSON.

    What the viewer shows (at most :data:`MAX_VIEW`) is read, and so checked against the claim
    file's checksums, before the status line; a download only its first chunk (it streams: a
    1 GB claim is never held). Damage found then answers 500 with one line naming the claim;
    damage found later breaks the download off.
    """
    if request.query_params.get("records") == "1":
        return JSONResponse(attrs.asdict(view.records(claim, attributes, MAX_VIEW)))
    filename, mime = attributes.get("filename", "content"), attributes.get("mime.type")
    download = request.query_params.get("download") == "1"
    if claim is None:
        return Response(b"", media_type="application/octet-stream")
    limit = None if download else MAX_VIEW
    try:  # the viewer's range whole (it is bounded), a download's first chunk: verified here
        stream = view.open_content(claim)
        try:
            first = stream.read(_CHUNK if limit is None else limit)
        except BaseException:
            stream.close()
            raise
    except ContentCorruptionError as error:  # before the status line: an error, not 200
        reason = " ".join(error.reason.split())
        return _error(500, f"the content {claim} cannot be read: {reason}")
    disposition = "attachment" if download else "inline"
    headers = {
        "Content-Disposition": content_disposition(disposition, filename),
        "X-Content-Type-Options": "nosniff",
    }
    usable = mime is not None and _MEDIA_TYPE.fullmatch(mime) is not None
    media = mime if download and usable else "application/octet-stream"
    return StreamingResponse(_chunks(stream, first, limit), media_type=media, headers=headers)


def flowfile_content(request: Request) -> Response:
    """A queued FlowFile's content (``?download=1``: all of it, as an attachment)."""
    view = _view(request)
    _, found = view.flowfile(request.path_params["uuid"])
    return _content(request, view, found.content, found.attributes)


def event_content(request: Request) -> Response:
    """The content before (``input``) or after (``output``) a provenance event."""
    view = _view(request)
    which = request.path_params["which"]
    if which not in ("input", "output"):
        msg = f"content {which!r}: ask for input or output"
        raise UnknownItemError(msg)
    found = view.event(request.path_params["event_id"])
    claim = found.content_claim if which == "output" else found.previous_content_claim
    if claim is None:
        msg = f"event {found.event_id} ({found.event_type.value}) has no {which} content"
        raise UnknownItemError(msg)
    return _content(request, view, claim, found.attributes)


def provenance_search(request: Request) -> Response:
    """Events by component (id or name), type, uuid, filename, attribute and time range."""
    query = request.query_params
    kind = query.get("type") or None
    if kind is not None:
        known = [t.value for t in ProvenanceEventType]
        if kind.upper() not in known:
            msg = f"type={kind!r} is not an event type; use one of {', '.join(known)}"
            raise BadQueryError(msg)
        kind = kind.upper()
    attributes = {}
    for pair in query.getlist("attribute"):
        name, sep, value = pair.partition("=")
        if not sep or not name:
            msg = f"attribute={pair!r} must look like NAME=VALUE"
            raise BadQueryError(msg)
        attributes[name] = value
    limit = min(_int(request, "limit", 100) or 100, 10_000)
    found = _view(request).events(
        component=query.get("component") or None,
        flowfile_uuid=query.get("uuid") or None,
        event_type=kind,
        filename=query.get("filename") or None,
        attributes=attributes or None,
        start=_time(request, "start"),
        end=_time(request, "end"),
        limit=limit,
    )
    return JSONResponse({"events": [event_json(e) for e in found]})


def provenance_event(request: Request) -> Response:
    """One event with its attributes before and after, and whether its content is still held."""
    view = _view(request)
    found = view.event(request.path_params["event_id"])
    body = event_json(found)
    body["previous_attributes"] = dict(found.previous_attributes)
    body["content_available"] = {
        which: claim is not None and all(view.content.exists(c) for c in claim.resource_claims)
        for which, claim in (
            ("input", found.previous_content_claim),
            ("output", found.content_claim),
        )
    }
    return JSONResponse(body)


def lineage(request: Request) -> Response:
    """A FlowFile's lineage around the FlowFiles asked to be expanded, laid out by Graphviz."""
    uuid = request.path_params["uuid"]
    expand = [u for u in request.query_params.get("expand", "").split(",") if u]
    graph = _view(request).provenance.lineage(uuid)
    if not any(data.get("kind") == "event" for _, data in graph.nodes(data=True)):
        msg = f"no provenance event names FlowFile {uuid}"
        raise UnknownItemError(msg)
    return JSONResponse(lineage_document(graph, uuid, expand))


def routes() -> list[Route]:
    """The API's routes, under ``/api``."""
    return [
        Route("/api/flow", _handled(flow)),
        Route("/api/status", _handled(status)),
        Route("/api/bulletins", _handled(bulletins)),
        Route("/api/events", events),
        Route("/api/connections/{connection_id:path}/flowfiles", _handled(queue_listing)),
        Route("/api/flowfiles/{uuid}", _handled(flowfile)),
        Route("/api/flowfiles/{uuid}/content", _handled(flowfile_content)),
        Route("/api/content/{event_id:int}/{which}", _handled(event_content)),
        Route("/api/provenance", _handled(provenance_search)),
        Route("/api/provenance/{event_id:int}", _handled(provenance_event)),
        Route("/api/lineage/{uuid}", _handled(lineage)),
    ]
