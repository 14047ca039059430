"""``flowcore status``: a run's queues, back pressure, progress and bulletins, live while it runs.

The running controller rewrites ``status.json`` at every micro-batch, stage run and commit
(:mod:`flowcore.driver.live_status`); this command reads it without taking the repository's
lock, and says whether the run that wrote it is live (its process holds the lock) or when it
ended. Per processor it shows its FlowFiles per relationship and its task time (NiFi's
Tasks/Time, ``HH:MM:SS.mmm``). ``--json`` prints the same for scripts.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
from rich.markup import escape
from rich.table import Table

from flowcore.cli._common import UsageError, console, repository_of, with_repository

__all__ = ["add_command", "cmd_status", "describe_run", "duration"]


def cmd_status(args: argparse.Namespace) -> int:
    """Queues, back pressure, progress and bulletins of a repository: live, or as last left."""
    from repositories.repository_set import live_run, read_bulletins, read_status  # noqa: PLC0415

    directory = repository_of(args)
    holder = live_run(directory) if directory.is_dir() else None
    status = read_status(directory)
    if status is None:
        if holder is None:
            msg = f"no flowcore run has used repository {directory} yet (no status.json there)"
            raise UsageError(msg)
        status = {}  # a run that has just started, still recovering the repository
    bulletins = read_bulletins(directory)[-args.bulletins :] if args.bulletins > 0 else []
    live = holder is not None and holder in (0, (status.get("run") or {}).get("pid"))
    if args.json:
        document = {
            "repository": str(Path(directory).resolve()),
            "live": live,
            "holder": holder,
            **status,
            "bulletins": [attrs.asdict(b) for b in bulletins],
        }
        console.print_json(json.dumps(document, default=str))
        return 0
    console.print(describe_run(status, holder, live), highlight=False)
    if status:
        _print_status(status, live)
    if bulletins:
        board = Table(title="bulletins")
        for column in ("time", "component", "level", "message"):
            board.add_column(column)
        for b in bulletins:
            board.add_row(_time(b.time), escape(b.component_name), b.level, escape(b.message))
        console.print(board)
    return 0


def describe_run(status: dict[str, Any], holder: int | None, live: bool) -> str:
    """The first line: the flow, and whether its run is live or when it ended."""
    run = status.get("run") or {}
    flow = escape(status.get("flow", "?"))
    where = f"on {run.get('runner', 'an unknown runner')}" + (
        " (continuous)" if run.get("continuous") else ""
    )
    if live:
        elapsed = duration(run.get("elapsed_seconds", 0))
        return (
            f"[bold]{flow}[/] [green]live[/]: run pid {run.get('pid')} {where}, started "
            f"{_time(run.get('started'))}, running {elapsed} (status of {_time(status['updated'])})"
        )
    if holder is not None:
        return f"a run (pid {holder}) holds the repository and has not written its status yet; " + (
            f"below is [bold]{flow}[/]'s from the run before" if status else "try again"
        )
    if not run:  # written before status was live: the last commit's
        return f"[bold]{flow}[/] not running (last commit {_time(status['updated'])})"
    if run.get("ended") is None:
        return (
            f"[bold]{flow}[/] not running: the last run (pid {run.get('pid')}) {where} stopped "
            f"without finishing (killed?); last update {_time(status['updated'])}"
        )
    return (
        f"[bold]{flow}[/] not running: the last run (pid {run.get('pid')}) {where} ended "
        f"{_time(run['ended'])} after {duration(run.get('elapsed_seconds', 0))}"
    )


def _print_status(status: dict[str, Any], live: bool) -> None:
    _print_micro_batch(status, live)
    connections = status.get("connections")
    if connections is None:  # a status written before connections were listed
        connections = [{"label": q["label"], **q} for q in status.get("queues", {}).values()]
    table = Table(title="connections")
    for column in ("connection", "FlowFiles", "bytes", "back pressure", "penalized", "in bins"):
        table.add_column(column, justify="left" if column == "connection" else "right")
    for c in connections:
        table.add_row(
            escape(c["label"]) + ("" if c.get("durable", True) else " [dim](pipelined)[/]"),
            f"{c['flowfiles']:,}",
            f"{c['bytes']:,}",
            _back_pressure(c.get("back_pressure")),
            f"{c.get('penalized', 0):,}",
            f"{c.get('in_bins', 0):,}",
        )
    console.print(table)
    for stage, held_by in status.get("held_back", {}).items():
        label = {c["id"]: c["label"] for c in status.get("connections", []) if "id" in c}
        names = ", ".join(label.get(c, c) for c in held_by)
        console.print(f"held back: {stage} by back pressure on {names}", highlight=False)
    for component, size in status.get("parked", {}).items():
        console.print(
            f"parked: {component}: {size['flowfiles']:,} FlowFiles ({size['bytes']:,} bytes)",
            highlight=False,
        )
    if "penalized" in status:
        penalized = status["penalized"]
        console.print(
            f"penalized: {penalized['flowfiles']:,} FlowFiles ({penalized['bytes']:,} bytes); "
            f"replayed since the run before: {status.get('replayed', 0):,} FlowFiles",
            highlight=False,
        )
    _print_stages(status)
    _print_processors(status)


def _print_processors(status: dict[str, Any]) -> None:
    """Per processor: FlowFiles and bytes per relationship, and its task time (NiFi's)."""
    from flowcore.driver.live_status import task_duration  # noqa: PLC0415

    transfers = status.get("transfers", {})
    nanos = status.get("tasks_duration_nanos", {})
    counts = Table(title="FlowFiles per relationship and task time (this run)")
    for column in ("component", "relationship", "FlowFiles", "bytes", "task time"):
        counts.add_column(column, justify="right" if column == "task time" else "left")
    for component in [*transfers, *(c for c in nanos if c not in transfers)]:
        spent = task_duration(nanos[component]) if component in nanos else ""
        relationships = sorted(transfers.get(component, {}).items()) or [("", ("", ""))]
        for relationship, (count, size) in relationships:
            counts.add_row(
                escape(component),
                escape(relationship),
                f"{count:,}" if count != "" else "",
                f"{size:,}" if size != "" else "",
                spent,
            )
            spent = ""  # on the component's first row only
    console.print(counts)


def _print_micro_batch(status: dict[str, Any], live: bool) -> None:
    batch = status.get("micro_batch")
    if not batch or not batch.get("number"):
        return
    if not live:
        console.print(f"micro-batches run: {batch['number']:,}", highlight=False)
        return
    line = f"micro-batch {batch['number']} (started {_time(batch.get('started'))})"
    if batch.get("running"):
        line += f": running {', '.join(batch['running'])} since {_time(batch.get('since'))}"
    console.print(line, highlight=False)


def _print_stages(status: dict[str, Any]) -> None:
    stages = status.get("stages")
    if not stages:
        return
    table = Table(title="stages (this run)")
    for column in ("stage", "processors", "in", "out", "runs"):
        table.add_column(column, justify="right" if column in ("in", "out", "runs") else "left")
    for stage in stages.values():
        table.add_row(
            stage["stage_id"],
            escape(stage["name"]),
            f"{stage['flowfiles_in']:,}",
            f"{stage['flowfiles_out']:,}",
            f"{stage['runs']:,}",
        )
    console.print(table)
    read = status.get("input")
    if read:
        pending = read["pending_items"]
        console.print(
            f"input: {read['read_items']:,} work item(s) read, {pending:,} listed and waiting",
            highlight=False,
        )


def _back_pressure(settings: dict[str, Any] | None) -> str:
    if not settings:
        return ""
    objects = settings["object_threshold"]
    limit = f"{objects:,}" if objects > 0 else "off"
    text = f"{limit} / {settings['data_size_threshold']}"
    return f"[red]OVER[/] {text}" if settings["over"] else text


def _time(ms: int | None) -> str:
    if ms is None:
        return "?"
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds")


def duration(seconds: float) -> str:
    """``H:MM:SS``, never cut short (a run of 30 hours reads ``30:00:00``)."""
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def add_command(commands: Any) -> None:
    """Add ``status`` to the command parsers."""
    status = commands.add_parser(
        "status",
        help="queues, back pressure, progress and bulletins (live while a run runs)",
        description="Show a repository's run: live while it runs (updated every micro-batch), "
        "or as the last run left it.",
    )
    status.add_argument("--bulletins", type=int, default=20, help="how many to show")
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    with_repository(status)
    status.set_defaults(handler=cmd_status)
