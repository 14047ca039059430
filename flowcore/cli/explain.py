"""``flowcore explain``: a flow drawn from its compiled plan, as text, DOT, SVG, Mermaid or JSON.

After a run the last run's FlowFile and byte counts are written on the connections: from
``--repository DIR``, or from the repository beside the flow file when a run of this flow has
left its ``status.json`` there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape

from flowcore.builder import flow_counts
from flowcore.cli._common import (
    USER_ERROR,
    UsageError,
    apply_parameters,
    errors,
    load_flow,
    print_warnings,
    repository_of,
    settings_of,
    with_parameters,
    with_repository,
)
from flowcore.cli._nifi import (
    load_type_map,
    print_notes,
    print_stopped,
    runnable,
    with_strict,
    with_type_map,
)
from flowcore.compiler.stages import CompiledFlow, compile_flow
from flowcore.errors import FlowValidationError
from flowcore.pictures.flow_picture import flow_picture
from flowcore.pictures.render import FORMATS, render

__all__ = ["add_command", "cmd_explain", "write_file", "write_output"]


def write_file(output: str, data: bytes) -> None:
    """Write *data* to the file *output*.

    Raises:
        UsageError: the file cannot be written (its directory is missing, say).
    """
    try:
        Path(output).write_bytes(data)
    except OSError as error:
        msg = f"cannot write {output}: {error.strerror or error}"
        raise UsageError(msg) from None


def write_output(text: str, output: str | None) -> None:
    """Print *text*, or write it to the file *output* and say so on stderr.

    Printed as it is (no terminal wrapping), so it can be piped into ``dot`` or a file.
    """
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    write_file(output, text.encode())
    errors.print(f"wrote {output}", highlight=False, markup=False)


def cmd_explain(args: argparse.Namespace) -> int:
    """Draw a flow file's flow, with the last run's counts when there are some.

    An invalid flow is drawn too when its graph allows, and its problems follow on stderr
    (exit status 2): the picture helps to see what is wrong.
    """
    flow = load_flow(args.flow, load_type_map(args.type_map, args), strict=args.strict)
    print_notes(flow)
    apply_parameters(flow, args)
    print_stopped(flow)
    print_warnings(runnable(flow))  # secrets too short to be masked in logs
    repository = repository_of(args, args.flow)
    counts = flow_counts(flow, repository)
    if counts is None and args.repository:
        errors.print(
            f"note: no run of flow '{flow.name}' has used {repository}; drawn without counts",
            highlight=False,
            markup=False,
        )
    settings = settings_of(args)
    compiled, invalid = _compiled(runnable(flow))
    picture = flow_picture(compiled, counts, runner=args.runner, settings=settings)
    write_output(render(picture, args.format), args.output)
    if invalid is not None:  # drawn all the same, as NiFi shows an invalid processor
        errors.print(f"[red]error:[/] {escape(str(invalid))}", highlight=False, soft_wrap=True)
        return USER_ERROR
    return 0


def _compiled(flow: Any) -> tuple[CompiledFlow, FlowValidationError | None]:
    """The flow's plan, and its problems when it is invalid but can still be drawn.

    Raises:
        FlowValidationError: the flow is invalid in a way that leaves nothing to draw.
    """
    try:
        return compile_flow(flow), None
    except FlowValidationError as invalid:
        try:
            return compile_flow(flow, validate=False), invalid
        except Exception:  # the phases need a valid graph: report only the problems
            raise invalid from None


def add_command(commands: Any) -> None:
    """Add ``explain`` to the command parsers."""
    explain = commands.add_parser(
        "explain", help="draw a flow: stages, connections, queues (and counts after a run)"
    )
    explain.add_argument("flow", help="a Python flow file or a NiFi flow definition (.json)")
    explain.add_argument("--format", choices=tuple(FORMATS), default="text")
    explain.add_argument("--output", metavar="FILE", help="write to FILE instead of printing")
    explain.add_argument(
        "--runner",
        choices=("direct", "spark"),
        default="spark",
        help="the runner a run would use (on spark, small stage runs go to the driver)",
    )
    explain.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an engine setting a run would use, e.g. driver_run_max_flowfiles=0 (see Settings)",
    )
    with_parameters(explain)
    with_type_map(explain)
    with_strict(explain)
    with_repository(explain)
    explain.set_defaults(handler=cmd_explain)
