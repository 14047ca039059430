"""The ``flowcore`` command: run, explain, status, provenance, check, dataset, processors.

One module per command (``run``, ``explain``, ``status``, ``provenance``, ``check``,
``datasets``, ``catalog``), each adding its parser with ``add_command``; what they share is in
:mod:`flowcore.cli._common`.

Mistakes a user can make (a bad flow, a missing file, a repository in use) print one clear
message and exit with status 2; only flowcore's own bugs show a traceback. A batch ``run`` that
ends with FlowFiles it could not finish prints a ``stuck:`` line per queue and exits with 3.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.markup import escape

from flowcore.cli import catalog, check, datasets, explain, provenance, run, status
from flowcore.cli._common import USER_ERROR, errors, load_flow
from flowcore.cli.run import print_result
from flowcore.errors import FlowcoreError
from flowcore.faults import describe_storage_fault, storage_fault

__all__ = ["load_flow", "main", "print_result"]

#: The commands, in the order ``flowcore --help`` lists them.
COMMANDS = (run, explain, status, provenance, check, datasets, catalog)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flowcore", description="NiFi-style flows compiled to Apache Spark."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The console entry point."""
    args = _parser().parse_args(argv)
    try:
        return args.handler(args)
    except Exception as error:
        fault = storage_fault(error)
        if fault is not None:  # a full or read-only disk: the user's to fix, in one line
            text = describe_storage_fault(fault)
        elif isinstance(error, FlowcoreError):
            text = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
        else:
            raise
        errors.print(f"[red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)
        return USER_ERROR


if __name__ == "__main__":
    sys.exit(main())
