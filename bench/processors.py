"""SplitText and MergeContent throughput and peak memory, each beside a baseline from the same run.

Scenarios (each in its own subprocess, so its peak RSS is its own):

* ``split``: one generated log file of ``--split-size`` bytes (default 2 GiB) in the file content
  repository, split into 1-line FlowFiles. The host spills finished FlowFiles every 10,000 as
  msgpack segment files (as the engine writes queue segments), so memory must stay flat however
  many splits there are. Baselines: iterating the file's lines in plain Python, and ``cat``.
* ``merge``: ``--merge-count`` inputs of ``--merge-size`` bytes (default 100 x 20 MiB) merged
  by MergeContent (Binary Concatenation) into one bundle, streamed. Baseline: ``cat`` of the same
  files into one.
* ``idle``: importing flowcore and the processors, the floor under both RSS figures.

Run: ``.venv/bin/python bench/processors.py`` (``--quick`` for a small run). Prints one JSON line
and a table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Collection, Sequence
from pathlib import Path

import msgpack

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(
    0, str(ROOT)
)  # ahead of bench/, where this file would shadow the processors package

from flowcore import FlowFile
from flowcore.processor import Processor
from flowcore.processor.context import ProcessContext
from flowcore.session.host import (
    ComponentInfo,
    QueuedFlowFile,
    SessionCommit,
    SessionOutput,
    SessionSpill,
    StateMap,
)
from flowcore.session.process_session import ProcessSession
from repositories.content import FileContentRepository

MIB = 1 << 20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class BenchHost:
    """A minimal engine-like host: a file content repository, segment files for outputs."""

    spill_threshold = 10_000
    penalization_ms = 30_000

    def __init__(self, processor: Processor, workdir: Path) -> None:
        self.processor = processor
        self.component = ComponentInfo(type(processor).__name__, type(processor).__name__)
        self.content = FileContentRepository(workdir / "content")
        self.segments = workdir / "segments"
        self.segments.mkdir(parents=True, exist_ok=True)
        self.queue: deque[FlowFile] = deque()
        self.ids = itertools.count(1)
        self.out_counts: dict[str, int] = {}
        self.out_bytes = 0
        self.segment_bytes = 0
        self._segment_ids = itertools.count()

    def now(self) -> int:
        return time.time_ns() // 1_000_000

    def next_flowfile_id(self) -> int:
        return next(self.ids)

    def poll(self, max_count: int, flowfile_filter: object) -> list[QueuedFlowFile]:
        taken = []
        while self.queue and len(taken) < max_count:
            taken.append(QueuedFlowFile(self.queue.popleft(), "input"))
        return taken

    def relationships(self) -> Collection[str]:
        return self.processor.relationship_names()

    def destinations(self, relationship: str) -> int:
        return 1

    def is_auto_terminated(self, relationship: str) -> bool:
        return False

    def get_state(self) -> StateMap:
        return StateMap()

    def _write_segment(self, outputs: Sequence[SessionOutput]) -> None:
        records = []
        for output in outputs:
            flowfile = output.flowfile
            claim = flowfile.content
            records.append(
                (
                    flowfile.id,
                    flowfile.uuid,
                    dict(flowfile.attributes),
                    None
                    if claim is None
                    else (str(claim.resource_claim), claim.offset, claim.length),
                    flowfile.size,
                    output.relationship,
                )
            )
            self.out_counts[output.relationship] = self.out_counts.get(output.relationship, 0) + 1
            self.out_bytes += flowfile.size
        data = msgpack.packb(records, use_bin_type=True)
        path = self.segments / f"segment-{next(self._segment_ids)}.msgpack"
        path.write_bytes(data)
        self.segment_bytes += len(data)
        path.unlink()  # the engine would enqueue it; the bench only pays for writing it

    def spill(self, batch: SessionSpill) -> None:
        self._write_segment(batch.outputs)

    def discard_spilled(self) -> None:
        raise AssertionError("the bench never rolls back")

    def apply_commit(self, commit: SessionCommit) -> None:
        self._write_segment(commit.outputs)

    def restore(self, flowfiles: Sequence[QueuedFlowFile]) -> None:
        self.queue.extendleft(reversed([q.flowfile for q in flowfiles]))

    def context(self) -> ProcessContext:
        return ProcessContext(
            self.processor, component=self.component, clock=self.now, state=self.get_state
        )

    def enqueue_file(self, path: Path, chunk: int = 8 * MIB) -> None:
        """Copy *path* into the content repository as one queued FlowFile."""
        writer = self.content.writer("source")
        stream = writer.open_stream()
        with open(path, "rb") as source:
            while data := source.read(chunk):
                stream.write(data)
        claim = stream.close()
        writer.close()
        self.queue.append(
            FlowFile.create(
                self.next_flowfile_id(), self.now(), {"filename": path.name}, content=claim
            )
        )


def generate_log(path: Path, size: int) -> None:
    """Write an access-log-like file of about *size* bytes, in bounded memory."""
    block_lines = [
        f"10.0.{i % 250}.{i % 97} - - [22/Nov/2026:10:{i % 60:02d}:{i % 60:02d} +0000] "
        f'"GET /api/items/{i} HTTP/1.1" {200 + (i % 5) * 100} {1000 + i}\n'
        for i in range(10_000)
    ]
    block = "".join(block_lines).encode()
    with open(path, "wb") as out:
        written = 0
        while written < size:
            piece = block[: size - written]
            out.write(piece)
            written += len(piece)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def scenario_split(size: int, workdir: Path) -> dict[str, float]:
    from processors import SplitText

    source = workdir / "input.log"
    generate_log(source, size)
    host = BenchHost(SplitText(line_split_count=1), workdir)
    host.enqueue_file(source)
    processor = host.processor
    start = time.perf_counter()
    processor.on_trigger_sessions(host.context(), lambda: ProcessSession(host))
    elapsed = time.perf_counter() - start
    splits = host.out_counts.get("splits", 0)
    baseline_start = time.perf_counter()
    with open(source, "rb") as lines:
        baseline_lines = sum(1 for _ in lines)
    python_lines_s = time.perf_counter() - baseline_start
    cat_s = timed(["cat", str(source)])
    return {
        "split_input_mb": size / MIB,
        "split_flowfiles": splits,
        "split_seconds": elapsed,
        "split_mb_per_s": size / MIB / elapsed,
        "split_flowfiles_per_s": splits / elapsed,
        "split_peak_rss_mb": peak_rss_mb(),
        "split_baseline_lines": baseline_lines,
        "baseline_python_lines_mb_per_s": size / MIB / python_lines_s,
        "baseline_cat_mb_per_s": size / MIB / cat_s,
    }


def scenario_merge(count: int, size: int, workdir: Path) -> dict[str, float]:
    from processors import MergeContent

    inputs = workdir / "inputs"
    inputs.mkdir()
    files = []
    for i in range(count):
        path = inputs / f"part-{i:03d}"
        generate_log(path, size)
        files.append(path)
    host = BenchHost(
        MergeContent(minimum_number_of_entries=count, maximum_number_of_entries=count), workdir
    )
    for path in files:
        host.enqueue_file(path)
    start = time.perf_counter()
    host.processor.on_trigger_sessions(host.context(), lambda: ProcessSession(host))
    elapsed = time.perf_counter() - start
    merged = host.out_counts.get("merged", 0)
    total = count * size
    cat_s = timed(["sh", "-c", f"cat {inputs}/part-* > {workdir / 'cat-out'}"])
    return {
        "merge_inputs": count,
        "merge_input_mb": total / MIB,
        "merge_bundles": merged,
        "merge_seconds": elapsed,
        "merge_mb_per_s": total / MIB / elapsed,
        "merge_flowfiles_per_s": count / elapsed,
        "merge_peak_rss_mb": peak_rss_mb(),
        "baseline_cat_merge_mb_per_s": total / MIB / cat_s,
    }


def run_child(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        workdir = Path(tmp)
        if args.scenario == "split":
            result = scenario_split(args.split_size, workdir)
        elif args.scenario == "merge":
            result = scenario_merge(args.merge_count, args.merge_size, workdir)
        else:
            import processors  # noqa: F401

            result = {"idle_peak_rss_mb": peak_rss_mb()}
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenario", choices=["split", "merge", "idle"])
    parser.add_argument("--split-size", type=int, default=2 * 1024 * MIB)
    parser.add_argument("--merge-count", type=int, default=100)
    parser.add_argument("--merge-size", type=int, default=20 * MIB)
    parser.add_argument("--quick", action="store_true", help="64 MiB split, 20 x 2 MiB merge")
    parser.add_argument(
        "--workdir", default=None, help="where to put temporary data (needs ~3x the input)"
    )
    args = parser.parse_args()
    if args.scenario:
        run_child(args)
        return
    if args.quick:
        args.split_size, args.merge_count, args.merge_size = 64 * MIB, 20, 2 * MIB
    results: dict[str, float] = {}
    for scenario in ("idle", "split", "merge"):
        command = [
            sys.executable,
            __file__,
            "--scenario",
            scenario,
            "--split-size",
            str(args.split_size),
            "--merge-count",
            str(args.merge_count),
            "--merge-size",
            str(args.merge_size),
        ]
        if args.workdir:
            command += ["--workdir", args.workdir]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results.update(json.loads(output.strip().splitlines()[-1]))
    print(json.dumps({k: round(v, 2) for k, v in results.items()}))
    from rich.console import Console
    from rich.table import Table

    table = Table(title="SplitText and MergeContent (file content repository, same-run baselines)")
    for column in ("measure", "flowcore", "baseline", "ratio"):
        table.add_column(column, justify="left" if column == "measure" else "right")
    rows = [
        (
            "SplitText MB/s (1-line splits)",
            results["split_mb_per_s"],
            results["baseline_python_lines_mb_per_s"],
            "python line loop",
        ),
        ("SplitText FlowFiles/s", results["split_flowfiles_per_s"], None, ""),
        (
            "SplitText peak RSS MB",
            results["split_peak_rss_mb"],
            results["idle_peak_rss_mb"],
            "idle import",
        ),
        (
            "MergeContent MB/s",
            results["merge_mb_per_s"],
            results["baseline_cat_merge_mb_per_s"],
            "cat",
        ),
        (
            "MergeContent peak RSS MB",
            results["merge_peak_rss_mb"],
            results["idle_peak_rss_mb"],
            "idle import",
        ),
    ]
    for label, ours, base, note in rows:
        table.add_row(
            label,
            f"{ours:,.1f}",
            "" if base is None else f"{base:,.1f} ({note})",
            "" if base is None else f"{ours / base:.2f}x",
        )
    Console().print(table)
    r = results
    per_input = r["merge_input_mb"] / r["merge_inputs"]
    print(
        f"split: {r['split_input_mb']:.0f} MiB into {r['split_flowfiles']:,.0f} FlowFiles in "
        f"{r['split_seconds']:.1f} s; cat reads it at {r['baseline_cat_mb_per_s']:,.0f} MB/s. "
        f"merge: {r['merge_inputs']:.0f} x {per_input:.0f} MiB in {r['merge_seconds']:.1f} s"
    )


if __name__ == "__main__":
    main()
