"""``flowcore processors``: the processors available, or one's usage page."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from flowcore.cli._common import console

__all__ = ["add_command", "cmd_processors"]


def cmd_processors(args: argparse.Namespace) -> int:
    """List available processors, or show one's usage page."""
    from flowcore.registry import (  # noqa: PLC0415
        available_processors,
        describe,
        processor_class,
        relationships_of,
    )

    if args.name:
        page = describe(processor_class(args.name), width=console.width)
        console.print(page, highlight=False, markup=False, soft_wrap=True)
        return 0
    table = Table(title="processors")
    table.add_column("name")
    table.add_column("kind")
    table.add_column("relationships")
    table.add_column("summary")
    for name, cls in sorted(available_processors().items()):
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        relationships = ", ".join(r.name for r in relationships_of(cls))
        table.add_row(name, cls.kind.value, relationships, summary)
    console.print(table)
    return 0


def add_command(commands: Any) -> None:
    """Add ``processors`` to the command parsers."""
    processors = commands.add_parser("processors", help="list processors or show one")
    processors.add_argument("name", nargs="?")
    processors.set_defaults(handler=cmd_processors)
