"""``flowcore provenance``: search, show, lineage and replay of provenance events."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from rich.table import Table

from flowcore.cli._common import console, load_flow, open_repositories, with_repository
from flowcore.flow import FlowDefinition

__all__ = ["add_command", "cmd_provenance", "replay_queues", "vars_of"]


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


def cmd_provenance(args: argparse.Namespace) -> int:
    """Search, show, draw the lineage of, or replay provenance events."""
    if args.action == "replay":  # writes a FlowFile: needs the repository to itself
        repos = open_repositories(args, getattr(args, "flow", None))
    else:  # queries: read-only beside a live run
        repos = _open_for_queries(args)
    try:
        provenance = repos.provenance
        if args.action == "search":
            attributes = dict(a.split("=", 1) for a in args.attribute or ())
            events = provenance.search(
                flowfile_uuid=args.uuid,
                event_type=args.type,
                component_id=args.component,
                filename=args.filename,
                attributes=attributes or None,
                limit=args.limit,
            )
            table = Table(title=f"{len(events)} event(s)")
            for column in ("id", "time", "type", "uuid", "filename", "component", "rel"):
                table.add_column(column)
            for event in events:
                table.add_row(*_event_row(event))
            console.print(table)
        elif args.action == "show":
            event = provenance.get(int(args.target))
            for key, value in sorted(vars_of(event).items()):
                console.print(f"[bold]{key}[/]: {value}", highlight=False)
        elif args.action == "lineage":
            graph = provenance.lineage(args.target)

            def label(node: Any) -> str:
                data = graph.nodes[node]
                if data.get("kind") == "event":
                    return f"{data['event_type']} event {node}"
                return f"FlowFile {node}"

            for node in graph.nodes:
                children = ", ".join(label(c) for c in graph.successors(node))
                console.print(f"{label(node)} -> {children or '(end)'}", highlight=False)
        else:
            flow = load_flow(args.flow)
            replayed = provenance.replay(
                int(args.target),
                content=repos.content,
                flowfiles=repos.flowfiles,
                queues=replay_queues(flow),
            )
            console.print(
                f"replayed event {args.target} as FlowFile {replayed.uuid}; "
                f"run the flow to process it"
            )
    finally:
        repos.close()
    return 0


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


def replay_queues(flow: FlowDefinition) -> dict[str, str]:
    """Where a replayed FlowFile goes, per connection.

    A durable connection is its own queue; a pipelined connection's FlowFiles wait in its
    destination's park queue.
    """
    from flowcore.compiler.stages import compile_flow  # noqa: PLC0415
    from flowcore.queues import park_queue_id  # noqa: PLC0415

    compiled = compile_flow(flow)
    return {
        c.id: c.id if c.id in compiled.durable else park_queue_id(c.destination)
        for c in flow.connections
    }


def add_command(commands: Any) -> None:
    """Add ``provenance`` to the command parsers."""
    provenance = commands.add_parser("provenance", help="search and replay provenance")
    actions = provenance.add_subparsers(dest="action", required=True)
    search = actions.add_parser("search", help="find events")
    search.add_argument("--uuid")
    search.add_argument("--filename")
    search.add_argument("--type", help="event type, e.g. DROP")
    search.add_argument("--component", help="component id")
    search.add_argument("--attribute", action="append", metavar="NAME=VALUE")
    search.add_argument("--limit", type=int, default=100)
    with_repository(search)
    show = actions.add_parser("show", help="one event by id")
    show.add_argument("target", metavar="EVENT_ID")
    with_repository(show)
    lineage = actions.add_parser("lineage", help="a FlowFile's lineage")
    lineage.add_argument("target", metavar="UUID")
    with_repository(lineage)
    replay = actions.add_parser("replay", help="replay an event into its queue")
    replay.add_argument("target", metavar="EVENT_ID")
    replay.add_argument("flow", help="the flow file (replay needs its connections)")
    with_repository(replay)
    provenance.set_defaults(handler=cmd_provenance)
