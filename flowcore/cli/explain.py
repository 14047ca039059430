"""``flowcore explain``: a flow's stages, and why each was cut."""

from __future__ import annotations

import argparse
from typing import Any

from flowcore.cli._common import console, load_flow

__all__ = ["add_command", "cmd_explain"]


def cmd_explain(args: argparse.Namespace) -> int:
    """Print the stages of a flow file."""
    console.print(load_flow(args.flow).explain(), highlight=False, markup=False)
    return 0


def add_command(commands: Any) -> None:
    """Add ``explain`` to the command parsers."""
    explain = commands.add_parser("explain", help="print a flow's stages")
    explain.add_argument("flow")
    explain.set_defaults(handler=cmd_explain)
