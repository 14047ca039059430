"""``flowcore status``: queues, counts and bulletins of a repository."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from rich.table import Table

from flowcore.cli._common import UsageError, console, repository_of, with_repository

__all__ = ["add_command", "cmd_status"]


def cmd_status(args: argparse.Namespace) -> int:
    """Queues, counts and bulletins of a repository (as of its last commit)."""
    from repositories.repository_set import read_bulletins, read_status  # noqa: PLC0415

    directory = repository_of(args)
    status = read_status(directory)
    if status is None:
        msg = f"no flowcore run has used repository {directory} yet (no status.json there)"
        raise UsageError(msg)
    updated = datetime.fromtimestamp(status["updated"] / 1000, UTC).isoformat(timespec="seconds")
    console.print(f"[bold]{status['flow']}[/] (last commit {updated})")
    table = Table(title="queues")
    for column in ("queue", "FlowFiles", "bytes"):
        table.add_column(column)
    for queue in status["queues"].values():
        table.add_row(queue["label"], f"{queue['flowfiles']:,}", f"{queue['bytes']:,}")
    console.print(table)
    for stage, connections in status.get("held_back", {}).items():
        console.print(f"{stage} held back by back pressure on {', '.join(connections)}")
    counts = Table(title="FlowFiles per relationship (last run)")
    for column in ("component", "relationship", "FlowFiles", "bytes"):
        counts.add_column(column)
    for component, relationships in status.get("transfers", {}).items():
        for relationship, (count, size) in sorted(relationships.items()):
            counts.add_row(component, relationship, f"{count:,}", f"{size:,}")
    console.print(counts)
    bulletins = read_bulletins(directory)[-args.bulletins :]
    if bulletins:
        board = Table(title="bulletins")
        for column in ("time", "component", "level", "message"):
            board.add_column(column)
        for b in bulletins:
            when = datetime.fromtimestamp(b.time / 1000, UTC).isoformat(timespec="seconds")
            board.add_row(when, b.component_name, b.level, b.message)
        console.print(board)
    return 0


def add_command(commands: Any) -> None:
    """Add ``status`` to the command parsers."""
    status = commands.add_parser("status", help="queues, counts and bulletins")
    status.add_argument("--bulletins", type=int, default=20, help="how many to show")
    with_repository(status)
    status.set_defaults(handler=cmd_status)
