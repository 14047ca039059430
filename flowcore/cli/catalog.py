"""``flowcore processors``: the processors available, or one's usage page; services too.

``flowcore processors`` lists the processors; ``flowcore processors --services`` lists the
controller services (built-in and registered), and ``flowcore processors NAME`` shows the usage
page of the processor or, when no processor has that name, of the controller service (by its
name or a NiFi type it stands for).
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from flowcore.cli._common import console

__all__ = ["add_command", "cmd_processors"]


def cmd_processors(args: argparse.Namespace) -> int:
    """List available processors, or show one's usage page."""
    from flowcore.errors import UnknownProcessorError  # noqa: PLC0415
    from flowcore.registry import (  # noqa: PLC0415
        available_processors,
        available_services,
        describe,
        describe_service,
        processor_class,
        relationships_of,
        service_class,
    )

    if args.name:
        try:
            page = describe(processor_class(args.name), width=console.width)
        except UnknownProcessorError as missing:
            try:
                service = service_class(args.name)
            except UnknownProcessorError:
                raise missing from None  # near processor names (services: --services)
            page = describe_service(service, width=console.width)
        console.print(page, highlight=False, markup=False, soft_wrap=True)
        return 0
    if args.services:
        services = Table(title="controller services")
        services.add_column("name")
        services.add_column("implements")
        services.add_column("NiFi type")
        services.add_column("summary")
        for name, cls in available_services().items():
            summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
            nifi_type = cls.nifi_types[0] if cls.nifi_types else ""
            services.add_row(name, ", ".join(cls.implements), nifi_type, summary)
        console.print(services)
        return 0
    table = Table(title="processors")
    table.add_column("name")
    table.add_column("kind")
    table.add_column("relationships")
    table.add_column("summary")
    for name, cls in sorted(available_processors().items()):
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        relationships = ", ".join(r.name for r in relationships_of(cls))
        kind = cls.kind.value
        if cls.kind_with_input is not None:  # GenerateTableFetch: a source unless fed
            kind += f" ({cls.kind_with_input.value} when fed)"
        table.add_row(name, kind, relationships, summary)
    console.print(table)
    return 0


def add_command(commands: Any) -> None:
    """Add ``processors`` to the command parsers."""
    processors = commands.add_parser("processors", help="list processors or show one")
    processors.add_argument("name", nargs="?", help="a processor's or service's usage page")
    processors.add_argument(
        "--services", action="store_true", help="list the controller services instead"
    )
    processors.set_defaults(handler=cmd_processors)
