"""The ``flowcore`` command: run, explain, status, provenance, check, dataset, processors.

Mistakes a user can make (a bad flow, a missing file, a repository in use) print one clear
message and exit with status 2; only flowcore's own bugs show a traceback. A batch ``run`` that
ends with FlowFiles it could not finish prints a ``stuck:`` line per queue and exits with 3.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import signal
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from flowcore.clock import now_ms
from flowcore.datasets.compaction import DEFAULT_MERGE_FILE_MAX, DEFAULT_MERGEABILITY_THRESHOLD
from flowcore.errors import FlowcoreError
from flowcore.faults import describe_storage_fault, storage_fault
from flowcore.flow import FlowDefinition
from flowcore.settings import DEFAULT_REPOSITORY, Settings

__all__ = ["load_flow", "main"]

USER_ERROR = 2

console = Console()
errors = Console(stderr=True)


class UsageError(FlowcoreError):
    """A command-line mistake (bad argument, missing file)."""


def load_flow(path: str | Path) -> FlowDefinition:
    """Import a flow file and return its module-level ``flow`` (or its only Flow).

    The file runs under its own module name, so an ``if __name__ == "__main__"`` block does not.

    Raises:
        UsageError: the file is missing or defines no flow (or several, none named ``flow``).
    """
    file = Path(path)
    if not file.is_file():
        msg = f"flow file {file} does not exist"
        raise UsageError(msg)
    name = f"flowcore_flow_{file.stem.replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        msg = f"{file} is not a Python file"
        raise UsageError(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # The flow's directory goes first on the path so that modules beside it import; the
    # built-in processors are imported before, so a folder there named `processors` cannot
    # stand in for them.
    importlib.import_module("processors")
    sys.path.insert(0, str(file.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    found = getattr(module, "flow", None)
    if isinstance(found, FlowDefinition):
        return found
    flows = [v for v in vars(module).values() if isinstance(v, FlowDefinition)]
    if len(flows) == 1:
        return flows[0]
    msg = (
        f"{file} defines {len(flows)} flows and none is named 'flow'; "
        "assign the one to run to a module-level variable named flow"
    )
    raise UsageError(msg)


def _conf(pairs: Sequence[str], option: str = "--conf") -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            msg = f"{option} {pair!r} must look like key=value"
            raise UsageError(msg)
        conf[key.strip()] = value.strip()
    return conf


def _repository(args: argparse.Namespace, flow_file: str | None = None) -> Path:
    if args.repository:
        return Path(args.repository)
    if flow_file:
        return Path(flow_file).resolve().parent / DEFAULT_REPOSITORY
    return Path(DEFAULT_REPOSITORY)


def _settings(args: argparse.Namespace) -> Settings:
    texts = _conf(getattr(args, "setting", None) or (), "--setting")
    values: dict[str, Any] = {}
    if getattr(args, "parallelism", None):
        values["parallelism"] = args.parallelism
    if getattr(args, "batch_size", None):
        values["batch_max_flowfiles"] = args.batch_size
    try:
        return Settings.parse(texts, **values)
    except ValueError as error:
        raise UsageError(str(error)) from None


# --- commands ---------------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    """Run a flow file to completion, or continuously until Ctrl-C."""
    from flowcore.driver.controller import run_flow  # noqa: PLC0415
    from flowcore.driver.run_result import RunProgress  # noqa: PLC0415

    flow = load_flow(args.flow)
    stop = threading.Event()
    if args.continuous:
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    progress = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=errors,
        transient=True,
        disable=args.json or not errors.is_terminal,
    )
    with progress:
        task = progress.add_task(f"running {flow.name}", total=None, detail="")
        processed = 0

        def report(event: RunProgress) -> None:
            nonlocal processed
            processed += event.flowfiles_in
            progress.update(
                task,
                detail=f"micro-batch {event.micro_batch}, {event.stage_id}: "
                f"{processed} taken, {event.queued} queued",
            )

        result = run_flow(
            flow,
            args.runner,
            repository=_repository(args, args.flow),
            master=args.master,
            conf=_conf(args.conf),
            settings=_settings(args),
            continuous=args.continuous,
            progress=report,
            should_stop=stop.is_set,
        )
    from flowcore.driver.run_result import EXIT_STUCK, stage_summary  # noqa: PLC0415

    status = 0 if args.continuous or result.finished else EXIT_STUCK
    if args.json:
        console.print_json(json.dumps(stage_summary(result), default=str))
    else:
        print_result(result)
    for label, (count, size) in result.queued.items():
        if not args.continuous:
            errors.print(
                f"stuck: {count} FlowFile(s), {size} bytes in {label}: {result.stuck[label]}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    return status


def print_result(result: Any) -> None:
    """A run's summary as tables (used by the CLI and ``make demo``)."""
    console.print(
        f"[bold]{result.flow}[/] on [bold]{result.runner}[/]: {result.micro_batches} "
        f"micro-batch(es), {result.stage_runs} stage run(s), {result.elapsed_seconds:.2f} s"
    )
    table = Table(title="FlowFiles per relationship")
    for column in ("component", "relationship", "FlowFiles", "bytes"):
        table.add_column(column, justify="right" if column in ("FlowFiles", "bytes") else "left")
    for component, relationships in result.transfers.items():
        for relationship, (count, size) in sorted(relationships.items()):
            table.add_row(component, relationship, f"{count:,}", f"{size:,}")
    console.print(table)
    console.print(f"provenance events recorded: {result.provenance_events:,}")
    for label, (count, size) in result.queued.items():
        console.print(f"still queued: {label}: {count:,} FlowFiles ({size:,} bytes)")
    for bulletin in result.bulletins:
        console.print(f"[red]bulletin[/] {bulletin.component_name}: {bulletin.message}")


def cmd_explain(args: argparse.Namespace) -> int:
    """Print the stages of a flow file."""
    console.print(load_flow(args.flow).explain(), highlight=False, markup=False)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """Queues, counts and bulletins of a repository (as of its last commit)."""
    from repositories.repository_set import read_bulletins, read_status  # noqa: PLC0415

    directory = _repository(args)
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


def _open(args: argparse.Namespace, flow_file: str | None = None) -> Any:
    from repositories.repository_set import RepositorySet  # noqa: PLC0415

    directory = _repository(args, flow_file)
    if not directory.is_dir():
        msg = f"repository {directory} does not exist; pass --repository DIR"
        raise UsageError(msg)
    return RepositorySet.open(directory)


def _event_row(event: Any) -> list[str]:
    when = datetime.fromtimestamp(event.event_time / 1000, UTC).isoformat(timespec="seconds")
    return [
        str(event.event_id),
        when,
        event.event_type.value,
        event.flowfile_uuid,
        event.filename or "",
        f"{event.component_name or event.component_id} ({event.component_type})",
        event.relationship or "",
    ]


def cmd_provenance(args: argparse.Namespace) -> int:
    """Search, show, draw the lineage of, or replay provenance events."""
    repos = _open(args, getattr(args, "flow", None))
    try:
        provenance = repos.provenance
        if args.action == "search":
            attributes = dict(a.split("=", 1) for a in args.attribute or ())
            events = provenance.search(
                flowfile_uuid=args.uuid,
                event_type=args.type,
                component_id=args.component,
                filename=args.filename,
                attributes=attributes or None,
                limit=args.limit,
            )
            table = Table(title=f"{len(events)} event(s)")
            for column in ("id", "time", "type", "uuid", "filename", "component", "rel"):
                table.add_column(column)
            for event in events:
                table.add_row(*_event_row(event))
            console.print(table)
        elif args.action == "show":
            event = provenance.get(int(args.target))
            for key, value in sorted(vars_of(event).items()):
                console.print(f"[bold]{key}[/]: {value}", highlight=False)
        elif args.action == "lineage":
            graph = provenance.lineage(args.target)

            def label(node: Any) -> str:
                data = graph.nodes[node]
                if data.get("kind") == "event":
                    return f"{data['event_type']} event {node}"
                return f"FlowFile {node}"

            for node in graph.nodes:
                children = ", ".join(label(c) for c in graph.successors(node))
                console.print(f"{label(node)} -> {children or '(end)'}", highlight=False)
        else:
            flow = load_flow(args.flow)
            replayed = provenance.replay(
                int(args.target),
                content=repos.content,
                flowfiles=repos.flowfiles,
                queues=replay_queues(flow),
            )
            console.print(
                f"replayed event {args.target} as FlowFile {replayed.uuid}; "
                f"run the flow to process it"
            )
    finally:
        repos.close()
    return 0


def vars_of(event: Any) -> dict[str, Any]:
    """An event's fields, attributes shown as plain dicts."""
    import attrs  # noqa: PLC0415

    fields = attrs.asdict(event, recurse=False)
    for key in ("previous_attributes", "updated_attributes"):
        fields[key] = dict(fields[key])
    fields["event_type"] = event.event_type.value
    return fields


def replay_queues(flow: FlowDefinition) -> dict[str, str]:
    """Where a replayed FlowFile goes, per connection.

    A durable connection is its own queue; a pipelined connection's FlowFiles wait in its
    destination's park queue.
    """
    from flowcore.compiler.stages import compile_flow  # noqa: PLC0415
    from flowcore.queues import park_queue_id  # noqa: PLC0415

    compiled = compile_flow(flow)
    return {
        c.id: c.id if c.id in compiled.durable else park_queue_id(c.destination)
        for c in flow.connections
    }


def cmd_check(args: argparse.Namespace) -> int:
    """Check (and with --fix repair) the repositories; without --fix nothing is changed."""
    from repositories.repository_set import check_repositories  # noqa: PLC0415

    findings = check_repositories(_repository(args, None), fix=args.fix)
    for finding in findings:
        console.print(str(finding), highlight=False, markup=False)
    unfixed = [f for f in findings if not f.fixed]
    console.print(f"{len(findings)} finding(s), {len(unfixed)} not fixed")
    return 1 if unfixed else 0


def cmd_processors(args: argparse.Namespace) -> int:
    """List available processors, or show one's usage page."""
    from flowcore.registry import available_processors, describe, processor_class  # noqa: PLC0415

    if args.name:
        console.print(describe(processor_class(args.name)), highlight=False, markup=False)
        return 0
    table = Table(title="processors")
    table.add_column("name")
    table.add_column("kind")
    table.add_column("relationships")
    table.add_column("summary")
    for name, cls in sorted(available_processors().items()):
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        relationships = ", ".join(r.name for r in cls.relationships)
        table.add_row(name, cls.kind.value, relationships, summary)
    console.print(table)
    return 0


def cmd_dataset(args: argparse.Namespace) -> int:
    """Show, print, compact a dataset, or set its chunks' mergeability."""
    from flowcore.datasets import open as open_dataset  # noqa: PLC0415
    from flowcore.datasets.compaction import compact  # noqa: PLC0415
    from flowcore.datasets.model import Mergeability  # noqa: PLC0415
    from flowcore.units import parse_data_size  # noqa: PLC0415

    dataset = open_dataset(args.path)
    if not (dataset.path / "manifests").is_dir():
        msg = f"{args.path} is not a dataset (it has no manifests/ directory)"
        raise UsageError(msg)
    if args.action == "cat":
        out = sys.stdout.buffer
        for data in dataset.iter_bytes(args.version):
            out.write(data)
        out.flush()
        return 0
    if args.action == "compact":
        runner = None
        if args.runner == "spark":
            from flowcore.runners import make_runner  # noqa: PLC0415

            runner = make_runner("spark", master=args.master)
        done = compact(
            dataset,
            split_threshold=int(parse_data_size(args.desired_chunk_size, "B")),
            merge_file_max=args.merge_file_max,
            mergeability_threshold=args.mergeability_threshold,
            run_jobs=runner.map_jobs if runner is not None else None,
        )
        console.print(
            f"version {done.version}: {done.merged_groups} merge(s), chunks "
            f"{done.chunks_before} -> {done.chunks_after}",
            highlight=False,
        )
        return 0
    if args.action == "mergeability":
        chosen = Mergeability.from_text(args.set)
        manifest = dataset.set_mergeability(args.chunks, chosen, now_ms=now_ms())
        console.print(f"version {manifest.version}: {len(args.chunks)} chunk(s) {args.set}")
        return 0
    manifest = dataset.manifest(args.version)
    table = Table(title=f"{dataset.path} version {manifest.version}")
    for column in ("chunk", "bytes", "records", "mergeability", "created", "keys"):
        table.add_column(column)
    for chunk in manifest.chunks:
        keys = f"{chunk.first_key} .. {chunk.last_key}" if chunk.first_key is not None else ""
        created = datetime.fromtimestamp(chunk.created_ms / 1000, UTC).isoformat(timespec="seconds")
        table.add_row(
            chunk.id,
            str(chunk.size),
            str(chunk.records),
            chunk.mergeability.to_text(),
            created,
            keys,
        )
    console.print(table)
    console.print(
        f"{len(manifest.chunks)} chunk(s), {manifest.size} bytes, {manifest.records} records; "
        f"ordered: {manifest.ordered}; versions kept: {dataset.versions()}",
        highlight=False,
    )
    return 0


# --- parsing ----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flowcore", description="NiFi-style flows compiled to Apache Spark."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def with_repository(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--repository",
            metavar="DIR",
            help="repository directory (default: .flowcore next to the flow, or here)",
        )

    run = commands.add_parser(
        "run",
        help="run a flow file",
        description="Run a flow file: to completion, or with --continuous until Ctrl-C.",
        epilog="exit status: 0 all work done; 2 a mistake in the flow, its files or the "
        "arguments; 3 a batch run ended with FlowFiles it could not finish (a 'stuck:' line "
        "per queue says where and why; they stay queued for the next run)",
    )
    run.add_argument("flow", help="a Python file defining a module-level `flow`")
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
    with_repository(run)
    run.set_defaults(handler=cmd_run)

    explain = commands.add_parser("explain", help="print a flow's stages")
    explain.add_argument("flow")
    explain.set_defaults(handler=cmd_explain)

    status = commands.add_parser("status", help="queues, counts and bulletins")
    status.add_argument("--bulletins", type=int, default=20, help="how many to show")
    with_repository(status)
    status.set_defaults(handler=cmd_status)

    provenance = commands.add_parser("provenance", help="search and replay provenance")
    actions = provenance.add_subparsers(dest="action", required=True)
    search = actions.add_parser("search", help="find events")
    search.add_argument("--uuid")
    search.add_argument("--filename")
    search.add_argument("--type", help="event type, e.g. DROP")
    search.add_argument("--component", help="component id")
    search.add_argument("--attribute", action="append", metavar="NAME=VALUE")
    search.add_argument("--limit", type=int, default=100)
    with_repository(search)
    show = actions.add_parser("show", help="one event by id")
    show.add_argument("target", metavar="EVENT_ID")
    with_repository(show)
    lineage = actions.add_parser("lineage", help="a FlowFile's lineage")
    lineage.add_argument("target", metavar="UUID")
    with_repository(lineage)
    replay = actions.add_parser("replay", help="replay an event into its queue")
    replay.add_argument("target", metavar="EVENT_ID")
    replay.add_argument("flow", help="the flow file (replay needs its connections)")
    with_repository(replay)
    provenance.set_defaults(handler=cmd_provenance)

    check = commands.add_parser("check", help="check the repositories")
    check.add_argument("--fix", action="store_true")
    with_repository(check)
    check.set_defaults(handler=cmd_check)

    dataset = commands.add_parser("dataset", help="show, cat or compact a dataset")
    verbs = dataset.add_subparsers(dest="action", required=True)
    for verb, text in (("show", "its chunks"), ("cat", "its bytes, to standard output")):
        sub = verbs.add_parser(verb, help=text)
        sub.add_argument("path")
        sub.add_argument("--version", type=int, help="a retained version (default: current)")
    compact = verbs.add_parser("compact", help="merge adjacent mergeable chunks")
    compact.add_argument("path")
    compact.add_argument("--desired-chunk-size", default="1 GB", help="the split threshold")
    compact.add_argument("--merge-file-max", type=int, default=DEFAULT_MERGE_FILE_MAX)
    compact.add_argument(
        "--mergeability-threshold", type=float, default=DEFAULT_MERGEABILITY_THRESHOLD
    )
    compact.add_argument("--runner", choices=("direct", "spark"), default="direct")
    compact.add_argument("--master", help="Spark master URL for --runner spark")
    mergeability = verbs.add_parser("mergeability", help="set chunks' mergeability")
    mergeability.add_argument("path")
    mergeability.add_argument("chunks", nargs="+", metavar="CHUNK_ID")
    mergeability.add_argument("--set", required=True, help="never, always or delay:<duration>")
    dataset.set_defaults(handler=cmd_dataset)

    processors = commands.add_parser("processors", help="list processors or show one")
    processors.add_argument("name", nargs="?")
    processors.set_defaults(handler=cmd_processors)
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
