"""``flowcore dataset``: show, print or compact a dataset, or set its chunks' mergeability."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import Any

from rich.table import Table

from flowcore.cli._common import UsageError, console
from flowcore.clock import now_ms
from flowcore.datasets.compaction import DEFAULT_MERGE_FILE_MAX, DEFAULT_MERGEABILITY_THRESHOLD

__all__ = ["add_command", "cmd_dataset"]


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


def add_command(commands: Any) -> None:
    """Add ``dataset`` to the command parsers."""
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
