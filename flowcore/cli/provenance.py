"""``flowcore provenance``: search, show, lineage and replay of provenance events.

``search`` takes components by the names users gave them as well as by id, and prints a table or
(``--json``) one JSON array of events for scripts; ``show`` prints an event's fields, or with
``--content`` the content after (or before) it while the content repository or its archive still
holds it; ``lineage`` draws a FlowFile's lineage (a tree in time order, JSON, DOT or SVG). An
unknown event id or uuid is one line naming it and how to find ids, exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from datetime import UTC, datetime
from typing import Any

from rich.markup import escape
from rich.table import Table

from flowcore.cli._common import (
    UsageError,
    console,
    errors,
    load_flow,
    open_repositories,
    with_repository,
)
from flowcore.cli.explain import write_file, write_output
from flowcore.definition.flow import FlowDefinition
from flowcore.errors import ContentNotFoundError
from flowcore.pictures.lineage_picture import lineage_picture
from flowcore.pictures.render import FORMATS, render
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from repositories.provenance_queries import MAX_LINEAGE_NODES

__all__ = ["add_command", "cmd_provenance", "event_json", "replay_queues", "vars_of"]

#: How to find what the commands take, for the one-line errors about unknown ids.
FIND_IDS = "`flowcore provenance search` lists events with their ids and FlowFile uuids"


def _event_row(event: Any) -> list[str]:
    when = datetime.fromtimestamp(event.event_time / 1000, UTC).isoformat(timespec="seconds")
    return [
        str(event.event_id),
        when,
        event.event_type.value,
        event.flowfile_uuid,
        event.filename or "",
        f"{event.component_name or event.component_id} ({event.component_type})",
        event.relationship or "",
    ]


def _open_for_queries(args: argparse.Namespace) -> Any:
    """The repository for search, show and lineage: read-only beside a run that holds it."""
    from flowcore.cli._common import repository_of  # noqa: PLC0415
    from repositories.repository_set import open_for_queries  # noqa: PLC0415

    return open_for_queries(repository_of(args))


def vars_of(event: Any) -> dict[str, Any]:
    """An event's fields, attributes shown as plain dicts."""
    import attrs  # noqa: PLC0415

    fields = attrs.asdict(event, recurse=False)
    for key in ("previous_attributes", "updated_attributes"):
        fields[key] = dict(fields[key])
    fields["event_type"] = event.event_type.value
    return fields


def event_json(event: ProvenanceEvent) -> dict[str, Any]:
    """An event for scripts: NiFi's field names in snake_case, JSON values only.

    ``attributes`` is NiFi's ``getAttributes()`` (previous overlaid with updated); content
    claims are written as ``container/section/id[start:end]`` (``+`` between a rope's pieces).
    """
    fields = vars_of(event)
    fields["attributes"] = dict(event.attributes)
    fields["parent_uuids"] = list(event.parent_uuids)
    fields["child_uuids"] = list(event.child_uuids)
    for key in ("content_claim", "previous_content_claim"):
        fields[key] = None if fields[key] is None else str(fields[key])
    return fields


def _event(provenance: Any, target: str) -> ProvenanceEvent:
    """The event *target* names.

    Raises:
        UsageError: *target* is not a number, or no stored event has that id.
    """
    try:
        event_id = int(target)
    except ValueError:
        msg = f"{target!r} is not a provenance event id (a number); {FIND_IDS}"
        raise UsageError(msg) from None
    try:
        return provenance.get(event_id)
    except KeyError:
        msg = f"no provenance event with id {event_id} (or retention has removed it); {FIND_IDS}"
        raise UsageError(msg) from None


def _components(provenance: Any, component: str) -> list[str]:
    """The component ids *component* (a name or an id) stands for.

    Raises:
        UsageError: no event names such a component.
    """
    found = provenance.component_ids(component)
    if not found:
        msg = f"no provenance event names a component with id or name {component!r}; {FIND_IDS}"
        raise UsageError(msg)
    return found


def _search(provenance: Any, args: argparse.Namespace) -> list[ProvenanceEvent]:
    attributes = {}
    for pair in args.attribute or ():
        name, sep, value = pair.partition("=")
        if not sep:
            msg = f"--attribute {pair!r} must look like NAME=VALUE (the value exactly as stored)"
            raise UsageError(msg)
        attributes[name] = value
    if args.type is not None:
        known = [t.value for t in ProvenanceEventType]
        if args.type.upper() not in known:
            msg = f"--type {args.type!r} is not an event type; use one of {', '.join(known)}"
            raise UsageError(msg)
        args.type = args.type.upper()
    ids = _components(provenance, args.component) if args.component else [None]
    events: list[ProvenanceEvent] = []
    for component_id in ids:
        events += provenance.search(
            flowfile_uuid=args.uuid,
            event_type=args.type,
            component_id=component_id,
            filename=args.filename,
            attributes=attributes or None,
            limit=args.limit,
        )
    events.sort(key=lambda e: e.event_id)
    return events[: args.limit]


def _print_search(events: list[ProvenanceEvent], *, as_json: bool) -> None:
    if as_json:
        rows = ",\n".join(json.dumps(event_json(e)) for e in events)  # one event a line
        sys.stdout.write(f"[\n{rows}\n]\n" if rows else "[]\n")
        return
    table = Table(title=f"{len(events)} event(s)")
    for column in ("id", "time", "type", "uuid", "filename", "component", "rel"):
        table.add_column(column)
    for event in events:
        table.add_row(*(escape(cell) for cell in _event_row(event)))
    console.print(table)


def _print_bytes(stream: Any) -> None:
    """Copy *stream* to standard output as bytes; a reader that stops early (``| head``) is fine."""
    try:
        shutil.copyfileobj(stream, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        # Python would report the pipe again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _show_content(repos: Any, event: ProvenanceEvent, which: str, output: str | None) -> None:
    """Write the content after (or before) *event* to stdout or *output*, bytes as they are.

    Raises:
        UsageError: the event has no such content, or the repository no longer holds it.
    """
    claim = event.content_claim if which == "after" else event.previous_content_claim
    if claim is None:
        msg = f"event {event.event_id} ({event.event_type.value}) has no content {which} it"
        raise UsageError(msg)
    gone = (
        f"the content {which} event {event.event_id} is gone from the content repository and "
        "its archive (content no FlowFile holds is archived for 3 hours, NiFi's "
        "archive.max.retention.period, or less when the disk fills)"
    )
    if not all(repos.content.exists(c) for c in claim.resource_claims):
        raise UsageError(gone)
    try:
        with repos.content.open(claim) as stream:
            if output is None:
                _print_bytes(stream)
                return
            data = stream.read()
    except ContentNotFoundError:
        raise UsageError(gone) from None
    write_file(output, data)
    errors.print(f"wrote {len(data):,} bytes to {output}", highlight=False, markup=False)


def _show(repos: Any, args: argparse.Namespace) -> None:
    event = _event(repos.provenance, args.target)
    if args.content is not None:
        _show_content(repos, event, args.content, args.output)
        return
    if args.output is not None:
        msg = "--output saves content: use it with --content (after or before)"
        raise UsageError(msg)
    for key, value in sorted(vars_of(event).items()):
        console.print(f"[bold]{key}[/]: {escape(str(value))}", highlight=False)


def _lineage(provenance: Any, args: argparse.Namespace) -> None:
    graph = provenance.lineage(args.target)
    if not any(data.get("kind") == "event" for _, data in graph.nodes(data=True)):
        msg = f"no provenance event names FlowFile {args.target}; {FIND_IDS}"
        raise UsageError(msg)
    picture = lineage_picture(graph, args.target, limit=MAX_LINEAGE_NODES)
    write_output(render(picture, args.format), args.output)


def _replay(repos: Any, args: argparse.Namespace) -> None:
    from flowcore.driver.identity import claim_repository  # noqa: PLC0415

    # The repository must be this flow's, and its renamed components carry their kept ids.
    flow, _ = claim_repository(load_flow(args.flow), repos.flowfiles, repos.directory)
    _event(repos.provenance, args.target)
    replayed = repos.provenance.replay(
        int(args.target),
        content=repos.content,
        flowfiles=repos.flowfiles,
        queues=replay_queues(flow),
    )
    console.print(
        f"replayed event {args.target} as FlowFile {replayed.uuid}; run the flow to process it"
    )


def cmd_provenance(args: argparse.Namespace) -> int:
    """Search, show, draw the lineage of, or replay provenance events."""
    if args.action == "replay":  # writes a FlowFile: needs the repository to itself
        repos = open_repositories(args, getattr(args, "flow", None))
    else:  # queries: read-only beside a live run
        repos = _open_for_queries(args)
    try:
        if args.action == "search":
            _print_search(_search(repos.provenance, args), as_json=args.json)
        elif args.action == "show":
            _show(repos, args)
        elif args.action == "lineage":
            _lineage(repos.provenance, args)
        else:
            _replay(repos, args)
    finally:
        repos.close()
    return 0


def replay_queues(flow: FlowDefinition) -> dict[str, str]:
    """Where a replayed FlowFile goes, per connection.

    A durable connection is its own queue; a pipelined connection's FlowFiles wait in its
    destination's park queue.
    """
    from flowcore.compiler.stages import compile_flow  # noqa: PLC0415
    from flowcore.definition.queues import park_queue_id  # noqa: PLC0415

    compiled = compile_flow(flow)
    return {
        c.id: c.id if c.id in compiled.durable else park_queue_id(c.destination)
        for c in flow.connections
    }


def add_command(commands: Any) -> None:
    """Add ``provenance`` to the command parsers."""
    provenance = commands.add_parser("provenance", help="search, show, draw and replay provenance")
    actions = provenance.add_subparsers(dest="action", required=True)
    search = actions.add_parser("search", help="find events")
    search.add_argument("--uuid")
    search.add_argument("--filename")
    search.add_argument("--type", help="event type, e.g. DROP")
    search.add_argument("--component", help="component name (as given to flow.add) or id")
    search.add_argument("--attribute", action="append", metavar="NAME=VALUE")
    search.add_argument("--limit", type=int, default=100)
    search.add_argument("--json", action="store_true", help="one JSON array of events")
    with_repository(search)
    show = actions.add_parser("show", help="one event by id, or its content")
    show.add_argument("target", metavar="EVENT_ID")
    show.add_argument(
        "--content",
        nargs="?",
        const="after",
        choices=("after", "before"),
        help="print the content after the event (or before it: NiFi's input claim)",
    )
    show.add_argument("--output", metavar="FILE", help="save the content to FILE")
    with_repository(show)
    lineage = actions.add_parser("lineage", help="a FlowFile's lineage, as a tree or a picture")
    lineage.add_argument("target", metavar="UUID")
    lineage.add_argument("--format", choices=tuple(FORMATS), default="text")
    lineage.add_argument("--output", metavar="FILE", help="write to FILE instead of printing")
    with_repository(lineage)
    replay = actions.add_parser("replay", help="replay an event into its queue")
    replay.add_argument("target", metavar="EVENT_ID")
    replay.add_argument("flow", help="the flow file (replay needs its connections)")
    with_repository(replay)
    provenance.set_defaults(handler=cmd_provenance)
