"""``flowcore adopt``: hand a repository to another flow, on purpose.

A repository records the flow it belongs to, and ``flowcore run`` refuses another flow on it
(DESIGN §9c). Adopting says "this flow takes over": queues and state under ids the new flow has
(the same component names, the same connections, or ids given) become its own. Queues holding
FlowFiles that no connection of the new flow reads are refused, each named, or with
``--drop-orphaned`` emptied.
"""

from __future__ import annotations

import argparse
from typing import Any

from flowcore.cli._common import console, load_flow, repository_of, with_repository
from flowcore.cli._nifi import load_type_map, with_type_map

__all__ = ["add_command", "cmd_adopt"]


def cmd_adopt(args: argparse.Namespace) -> int:
    """Record the flow as the repository's; report the flow it took over and what was dropped."""
    from flowcore.driver.identity import adopt_repository  # noqa: PLC0415
    from repositories.repository_set import RepositorySet  # noqa: PLC0415

    flow = load_flow(args.flow, load_type_map(args.type_map))
    directory = repository_of(args, args.flow)
    repositories = RepositorySet.open(directory)
    try:
        before, dropped = adopt_repository(
            flow, repositories.flowfiles, directory, drop_orphaned=args.drop_orphaned
        )
    finally:
        repositories.close()
    owner = f"flow {before!r}" if before is not None else "no recorded flow"
    console.print(
        f"repository {directory} now belongs to flow {flow.name!r} (it had {owner})",
        highlight=False,
        markup=False,
    )
    for orphan in dropped:
        console.print(
            f"dropped {orphan.count:,} FlowFile(s) queued in {orphan.label}",
            highlight=False,
            markup=False,
        )
    return 0


def add_command(commands: Any) -> None:
    """Add ``adopt`` to the command parsers."""
    adopt = commands.add_parser(
        "adopt",
        help="hand a repository to another flow",
        description="Record FLOW as the flow the repository belongs to. Queues and state kept "
        "under ids FLOW has become its own; queues holding FlowFiles that no connection of "
        "FLOW reads are refused, each named, unless --drop-orphaned empties them.",
    )
    adopt.add_argument("flow", help="the flow file that takes the repository over")
    adopt.add_argument(
        "--drop-orphaned",
        action="store_true",
        help="drop the FlowFiles queued where FLOW has no connection",
    )
    with_type_map(adopt)
    with_repository(adopt)
    adopt.set_defaults(handler=cmd_adopt)
