"""``flowcore convert``: a flow written again as a NiFi 2.x flow definition or as Python.

``flowcore convert flow.py --to nifi`` writes the JSON NiFi's "Import from JSON" takes (the
shape of its "Download flow definition"); ``--to python`` writes a Python flow file equal to
the flow. The flow is read as ``flowcore run`` reads it, so a NiFi flow definition converts to
Python as a flow file does, its types flowcore lacks mapped with ``--type-map`` as ``run``
takes it. What NiFi cannot hold is printed as ``note:`` lines on stderr, and so is each invalid
processor of a NiFi flow (written as it is, as NiFi keeps it: stopped, not disabled);
``--strict`` refuses an invalid flow instead, every problem in one error (exit status 2).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from flowcore.cli._common import errors, load_flow
from flowcore.cli._nifi import load_type_map, print_notes, print_stopped, with_strict, with_type_map
from flowcore.cli.explain import write_output
from flowcore.definition.validation import validate_flow
from flowcore.nifi.exporting import export_flow
from flowcore.nifi.python_source import flow_to_python

__all__ = ["TARGETS", "add_command", "cmd_convert"]

#: What ``--to`` takes.
TARGETS = ("nifi", "python")


def cmd_convert(args: argparse.Namespace) -> int:
    """Write the flow in the target form to stdout or ``--output``; notes go to stderr."""
    flow = load_flow(args.flow, load_type_map(args.type_map, args), strict=args.strict)
    print_notes(flow)  # what reading a NiFi flow kept without effect
    if args.strict:
        validate_flow(flow)
    print_stopped(flow)
    if args.to == "python":
        write_output(flow_to_python(flow, origin=args.flow), args.output)
        return 0
    exported = export_flow(flow)
    for note in exported.notes:
        errors.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    write_output(json.dumps(exported.document, indent=2, ensure_ascii=False), args.output)
    return 0


def add_command(commands: Any) -> None:
    """Add ``convert`` to the command parsers."""
    convert = commands.add_parser(
        "convert", help="write a flow as a NiFi 2.x flow definition or as a Python flow file"
    )
    convert.add_argument("flow", help="a Python flow file (or a NiFi flow definition)")
    convert.add_argument(
        "--to",
        choices=TARGETS,
        required=True,
        help="nifi: JSON for NiFi's import; python: a flow file",
    )
    convert.add_argument("--output", metavar="FILE", help="write to FILE instead of printing")
    with_type_map(convert)
    with_strict(convert)
    convert.set_defaults(handler=cmd_convert)
