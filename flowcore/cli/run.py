"""``flowcore run``: run a flow file to completion, or continuously until Ctrl-C."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from rich.markup import escape
from rich.table import Table

from flowcore.cli._argv import SERVER_ENV
from flowcore.cli._common import (
    USER_ERROR,
    apply_parameters,
    console,
    errors,
    load_flow,
    parse_pairs,
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
from flowcore.cli._progress import EXIT_INTERRUPTED, ProgressDisplay
from flowcore.cli._serve_client import server_of, submit

__all__ = ["add_command", "cmd_run", "print_result", "run_here"]


def cmd_run(args: argparse.Namespace) -> int:
    """Run a flow file here, or on a ``flowcore serve`` server (``--server``, ``FLOWCORE_SERVER``).

    See :func:`run_here`; a served run prints and exits the same way (:mod:`flowcore.cli.serve`).
    """
    server = server_of(args)
    if server is not None:
        return submit(server, args)
    return run_here(args)


def run_here(
    args: argparse.Namespace,
    *,
    cancelled: Callable[[], bool] | None = None,
    module_name: str | None = None,
) -> int:
    """Run a flow file to completion, or continuously until Ctrl-C, in this process.

    Ctrl-C or SIGTERM stops the run after the micro-batch in progress (see
    :mod:`flowcore.cli._progress`): a continuous run then prints its summary and exits with 0,
    a batch run with :data:`~flowcore.cli._progress.EXIT_INTERRUPTED`.

    A batch run that ends with work it could not finish exits with
    :data:`~flowcore.driver.run_result.EXIT_STUCK`; one that finished but dropped FlowFiles at
    an auto-terminated ``failure`` with :data:`~flowcore.driver.run_result.EXIT_FAILED`. Either
    way stderr gets one line per queue (``stuck:``) and per processor and distinct reason
    (``failed:``), never one per FlowFile; a continuous run reports the same and exits with 0.

    Args:
        args: ``run``'s parsed options.
        cancelled: a second stop switch beside Ctrl-C (a served run's client asking it to stop,
            or gone); it stops the run the same way.
        module_name: the name to import the flow file under (a server imports each request's
            afresh, under a name of its own).
    """
    from flowcore.driver.controller import run_flow  # noqa: PLC0415

    flow = load_flow(
        args.flow,
        load_type_map(args.type_map, args),
        module_name=module_name,
        strict=args.strict,
    )
    print_notes(flow)
    apply_parameters(flow, args)
    invalid = print_stopped(flow)  # left stopped, as NiFi leaves them
    print_warnings(runnable(flow))  # secrets too short to be masked in logs
    with ProgressDisplay(errors, flow.name, enabled=not args.json) as (report, stop):

        def stopped() -> bool:
            return stop.is_set() or (cancelled is not None and cancelled())

        result = run_flow(
            runnable(flow),
            args.runner,
            repository=repository_of(args, args.flow),
            master=args.master,
            conf=parse_pairs(args.conf),
            settings=settings_of(args),
            continuous=args.continuous,
            progress=report,
            should_stop=stopped,
        )
    from flowcore.driver.run_result import EXIT_FAILED, EXIT_STUCK, stage_summary  # noqa: PLC0415

    status = 0  # a continuous run stopped on request: what follows is a report
    if not args.continuous and not result.finished:
        status = EXIT_STUCK  # first: a later run may finish that work; failure is done with
    elif not args.continuous and result.list_failed:
        status = USER_ERROR  # a source's listing raised: a missing bucket, a refused password
    elif not args.continuous and result.failed:
        status = EXIT_FAILED
    if stopped() and not args.continuous:
        status = EXIT_INTERRUPTED  # stopped early: what is queued waits for the next run
    if args.json:
        console.print_json(json.dumps(stage_summary(result), default=str))
    else:
        print_result(result)
    for label, (count, size) in result.queued.items():
        if status == EXIT_STUCK and label in result.stuck:
            errors.print(
                f"stuck: {count} FlowFile(s), {size} bytes in {label}: {result.stuck[label]}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    for name, (count, size) in result.waiting_for_disabled().items():
        if name in invalid:
            line = (
                f"stopped: {count} FlowFile(s), {size} bytes wait for invalid processor "
                f"'{name}'; fix it (see its note) to process them"
            )
        else:
            line = (
                f"disabled: {count} FlowFile(s), {size} bytes wait for disabled processor "
                f"'{name}'; enable it to process them"
            )
        errors.print(line, markup=False, highlight=False, soft_wrap=True)
    for name, (count, size) in result.waiting_before_funnels().items():
        errors.print(
            f"waiting: {count} FlowFile(s), {size} bytes wait before funnel '{name}', which has "
            "no outgoing connection; connect it to process them",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for name, why in result.unscheduled.items():
        if not args.continuous:
            errors.print(
                f"stuck: {name} never ran: it could not be scheduled: {why} (see the "
                "bulletins); fix what on_scheduled needs, a later run schedules it again",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    for name, why in result.yielded.items():
        if not args.continuous:
            errors.print(
                f"stuck: {name} stopped listing: {why}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    for why in result.list_failed.values():
        if not args.continuous:
            errors.print(f"error: {why}", markup=False, highlight=False, soft_wrap=True)
    for line in result.failure_lines():
        errors.print(f"failed: {line}", markup=False, highlight=False, soft_wrap=True)
    return status


def print_result(result: Any) -> None:
    """A run's summary as tables (used by the CLI and ``make demo``)."""
    console.print(
        f"[bold]{escape(result.flow)}[/] on [bold]{escape(result.runner)}[/]"
        f"{f' ({result.master})' if result.master else ''}: {escape(result.work_and_time())}"
    )
    for old, new in result.renamed.items():
        console.print(f"renamed: {escape(old)} -> {escape(new)} (its state and queues kept)")
    table = Table(title="FlowFiles per relationship")
    for column in ("component", "relationship", "FlowFiles", "bytes"):
        table.add_column(column, justify="right" if column in ("FlowFiles", "bytes") else "left")
    for component, relationships in result.transfers.items():
        for relationship, (count, size) in sorted(relationships.items()):
            table.add_row(escape(component), escape(relationship), f"{count:,}", f"{size:,}")
    console.print(table)
    console.print(f"provenance events recorded: {result.provenance_events:,}")
    for label, (count, size) in result.queued.items():
        console.print(f"still queued: {escape(label)}: {count:,} FlowFiles ({size:,} bytes)")
    for name, failed in result.failed.items():
        console.print(
            f"[red]failed[/] {escape(failed.processor_type)} '{escape(name)}': "
            f"{failed.count:,} FlowFiles ({failed.size:,} bytes) dropped at its auto-terminated "
            "failure"
        )
    for name, reasons in result.bulletin_reasons().items():
        for reason in reasons:  # one line per distinct reason: alike ones are counted
            if reason.message is None:
                text = f"{reason.count:,} more, of other reasons (flowcore status)"
            else:
                text = escape(reason.message)
                text += f" [dim]({reason.count:,} like this)[/]" if reason.count > 1 else ""
            console.print(f"[red]bulletin[/] {escape(name)}: {text}")


def add_command(commands: Any) -> None:
    """Add ``run`` to the command parsers."""
    run = commands.add_parser(
        "run",
        help="run a flow file",
        description="Run a flow file: to completion, or with --continuous until Ctrl-C.",
        epilog="exit status: 0 all work done; 2 a mistake in the flow, its files or the "
        "arguments; 3 a batch run ended with FlowFiles it could not finish (a 'stuck:' line "
        "per queue says where and why; they stay queued for the next run); 4 a batch run "
        "finished but processors sent FlowFiles to an auto-terminated 'failure', which drops "
        "them (a 'failed:' line per processor and distinct reason gives the count; a failure "
        "connected to another processor is handled, not counted); 3 wins over 4; 130 stopped "
        "by Ctrl-C. FlowFiles left for a disabled processor are no failure: a 'disabled:' line "
        "says how many wait for it; nor are those left for an invalid processor of a NiFi flow, "
        "which stays stopped (a 'stopped:' line; --strict makes it an error), or FlowFiles "
        "before a funnel with no outgoing connection (a 'waiting:' line per funnel)",
    )
    run.add_argument(
        "flow",
        help="a Python file defining a module-level `flow`, or a NiFi flow definition "
        "(.json, .json.gz: a downloaded flow, a registry snapshot, an instance's flow.json.gz)",
    )
    run.add_argument("--runner", choices=("direct", "spark"), default="spark")
    run.add_argument("--master", help="Spark master URL (default local[*])")
    run.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    run.add_argument("--continuous", action="store_true", help="keep polling sources")
    run.add_argument("--parallelism", type=int, help="tasks per stage run")
    run.add_argument("--batch-size", type=int, help="FlowFiles per stage run")
    run.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an engine setting, e.g. provenance_max_storage_time='7 days' (see Settings)",
    )
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.add_argument(
        "--server",
        nargs="?",
        const="",
        metavar="SOCKET",
        help="run on a `flowcore serve` server's warm Spark session: the one at SOCKET, or "
        f"the default one of the master (also: {SERVER_ENV}=SOCKET or {SERVER_ENV}=default)",
    )
    with_parameters(run)
    with_type_map(run)
    with_strict(run)
    with_repository(run)
    run.set_defaults(handler=cmd_run)
