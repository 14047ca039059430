"""Durable repository throughput, each figure beside a baseline measured in the same run.

Scenarios:

* ``wal``: FlowFiles enqueued through the write-ahead FlowFile repository, 10 segments of 10,000
  FlowFiles per commit (a stage run), segment files and the journal fsynced on every commit, all
  on one core; and the driver's share alone (the commit of the summaries), since on Spark the
  tasks write segments in parallel. Baseline: the same bytes written and fsynced with ``write``.
* ``recovery``: opening the repository after a crash with 1M and 10M FlowFiles queued (journals
  only, no checkpoint, as after kill -9), claimant counts included. The segments are hard links
  of one real segment file, since recovery reads only the summaries the log holds. Baseline:
  reading the log's bytes.
* ``content``: 1 GiB through the file content repository as 64 KiB contents (16 to a 1 MB claim
  file, the default; then with 16 MB claim files) and as 16 MiB contents (a file each), no
  fsync per claim file (NiFi's default). Baseline: the same writes to one plain file. Alternated
  three times on one repository, best of each, since disk write-back is noisy.
* ``provenance``: events written to event files by a task, then indexed into SQLite by the
  driver. Baseline: the same rows inserted with ``sqlite3.executemany`` into an unindexed table.
* ``lineage``: the lineage of a FlowFile forked into 1,000 children (each then dropped) in a
  repository of 1M events. Baseline: one indexed lookup of the fork's events by uuid.

Run: ``.venv/bin/python bench/repositories.py`` (``--quick`` for a small run). Prints one JSON
line and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.table import Table

from flowcore.flowfile import ContentClaim, FlowFile, ResourceClaim
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from repositories._provenance_rows import ROW_COLUMNS, event_record
from repositories.content import FileContentRepository
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.provenance import SqlProvenanceRepository
from repositories.records import MAX_SEGMENT_RECORDS, Transaction

MIB = 1 << 20
SEGMENTS_PER_COMMIT = 10


def flowfiles(first_id: int, count: int) -> list[FlowFile]:
    claim = ResourceClaim("default", "1", "1700000000000-bench")
    return [
        FlowFile.create(
            i,
            1_700_000_000_000,
            {"filename": f"part-{i}.log", "path": "./"},
            content=ContentClaim(claim, i * 100, 100),
        )
        for i in range(first_id, first_id + count)
    ]


def bench_wal(directory: Path, total: int) -> dict[str, float]:
    repo = WriteAheadFlowFileRepository(directory / "wal", checkpoint_every=1_000_000)
    per_commit = SEGMENTS_PER_COMMIT * MAX_SEGMENT_RECORDS
    batches = [flowfiles(n, per_commit) for n in range(0, total, per_commit)]
    start = time.perf_counter()
    committing = 0.0
    for batch in batches:
        segments = [
            repo.write_segment("q", batch[i : i + MAX_SEGMENT_RECORDS], owner="bench")
            for i in range(0, len(batch), MAX_SEGMENT_RECORDS)
        ]
        before_commit = time.perf_counter()
        repo.commit(Transaction(enqueued=segments))
        committing += time.perf_counter() - before_commit
    elapsed = time.perf_counter() - start
    written = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
    repo.close()
    raw = directory / "raw"
    chunk = os.urandom(written // (len(batches) * (SEGMENTS_PER_COMMIT + 1)) or 1)
    start = time.perf_counter()
    for _ in batches:
        for _ in range(SEGMENTS_PER_COMMIT + 1):  # the segment files and the journal
            with open(raw, "wb") as out:
                out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
    raw_elapsed = time.perf_counter() - start
    return {
        "wal_enqueue_flowfiles_per_s": total / elapsed,
        "wal_driver_commit_flowfiles_per_s": total / committing,
        "raw_fsync_flowfiles_per_s": total / raw_elapsed,
    }


def bench_recovery(directory: Path, total: int) -> dict[str, float]:
    wal_dir = directory / f"recovery-{total}"
    repo = WriteAheadFlowFileRepository(wal_dir, checkpoint_every=10_000_000)
    template = repo.write_segment("q", flowfiles(0, MAX_SEGMENT_RECORDS), owner="template")
    source = repo.segment_dir / f"{template.segment_id}.seg"
    summaries = []
    for n in range(total // MAX_SEGMENT_RECORDS):
        summary = attrs.evolve(template, segment_id=f"bench-{n:06d}")
        os.link(source, repo.segment_dir / f"{summary.segment_id}.seg")
        summaries.append(summary)
    for i in range(0, len(summaries), 100):
        repo.commit(Transaction(enqueued=summaries[i : i + 100]))
    source.unlink()
    del repo  # no close(): recovery replays the journal as after kill -9
    log_bytes = sum(p.stat().st_size for p in (wal_dir / "journals").iterdir())
    start = time.perf_counter()
    recovered = WriteAheadFlowFileRepository(wal_dir)
    claimants = recovered.referenced_claims()  # what the content repository's recover() needs
    elapsed = time.perf_counter() - start
    assert sum(claimants.values()) == total
    assert recovered.queue_size("q")[0] == total
    recovered.close()
    start = time.perf_counter()
    for path in (wal_dir / "journals").iterdir():
        path.read_bytes()
    raw = time.perf_counter() - start
    return {
        f"recovery_{total // 1_000_000}m_s": elapsed,
        f"read_log_{total // 1_000_000}m_s": raw,
        f"log_{total // 1_000_000}m_mb": log_bytes / MIB,
    }


def bench_content(
    directory: Path, size: int, content_size: int, appendable: int = MIB, rounds: int = 3
) -> dict[str, float]:
    block = os.urandom(min(64 * 1024, content_size))
    writes_per_content = content_size // len(block)
    label = f"{content_size // 1024}k_in_{appendable // MIB}m"
    repo = FileContentRepository(directory / label, max_appendable_size=appendable)

    def through_repository(_n: int) -> float:
        os.sync()  # start each run with no dirty pages from the previous one
        start = time.perf_counter()
        writer = repo.writer("bench")
        claims = []
        for _ in range(size // content_size):
            stream = writer.open_stream()
            for _ in range(writes_per_content):
                stream.write(block)
            claims.append(stream.close())
        writer.close()
        elapsed = time.perf_counter() - start
        for claim in claims:  # the section directories stay, as in a running repository
            repo.remove(claim.resource_claim)
        return elapsed

    def raw(n: int) -> float:
        path = directory / f"raw-content-{n}"
        os.sync()
        start = time.perf_counter()
        with open(path, "wb") as out:
            for _ in range(size // len(block)):
                out.write(block)
        elapsed = time.perf_counter() - start
        path.unlink()
        return elapsed

    ours, theirs = [], []
    for n in range(rounds):  # alternated, best of each: the disk's write-back is noisy
        ours.append(through_repository(n))
        theirs.append(raw(n))
    return {
        f"content_write_{label}_mb_per_s": size / MIB / min(ours),
        f"raw_write_{label}_mb_per_s": size / MIB / min(theirs),
    }


def provenance_events(count: int, offset: int = 0) -> list[ProvenanceEvent]:
    claim = ContentClaim(ResourceClaim("default", "1", "1700000000000-bench"), 0, 100)
    return [
        ProvenanceEvent(
            event_type=ProvenanceEventType.ROUTE,
            flowfile_uuid=f"{i:08x}-0000-4000-8000-000000000000",
            component_id="route-1",
            component_type="RouteOnAttribute",
            event_time=1_700_000_000_000 + i,
            file_size=100,
            relationship="matched",
            previous_attributes={"filename": f"part-{i}.log", "path": "./"},
            content_claim=claim,
            source_queue_identifier="q",
        )
        for i in range(offset, offset + count)
    ]


def bench_provenance(directory: Path, count: int) -> dict[str, float]:
    repo = SqlProvenanceRepository(directory / "prov" / "provenance.db")
    events = provenance_events(count)
    start = time.perf_counter()
    names = []
    for i in range(0, count, 100_000):
        writer = repo.writer(f"task-{i}")
        writer.append(events[i : i + 100_000])
        names.append(writer.close())
    written = time.perf_counter() - start
    start = time.perf_counter()
    repo.index_files(names)
    indexed = time.perf_counter() - start
    # The lineage scenario: a 1,000-way fork and the children's drops in the same repository.
    children = tuple(f"child-{i:04d}" for i in range(1000))
    fork = ProvenanceEvent(
        event_type=ProvenanceEventType.FORK,
        flowfile_uuid="parent",
        component_id="split-1",
        component_type="SplitText",
        event_time=1_800_000_000_000,
        parent_uuids=("parent",),
        child_uuids=children,
    )
    drops = [
        ProvenanceEvent(ProvenanceEventType.DROP, c, "put-1", "PutFile", 1_800_000_000_001)
        for c in children
    ]
    repo.register([fork, *drops])
    start = time.perf_counter()
    graph = repo.lineage("parent")
    lineage = time.perf_counter() - start
    events_in_graph = sum(1 for _, d in graph.nodes(data=True) if d["kind"] == "event")
    with repo.engine.connect() as conn:
        start = time.perf_counter()
        conn.exec_driver_sql(
            "SELECT * FROM provenance_event WHERE flowfile_uuid = 'parent'"
        ).fetchall()
        lookup = time.perf_counter() - start
    total_events = repo.count()
    repo.close()

    rows = [(i, *event_record(e, ())[0]) for i, e in enumerate(events)]
    raw_db = sqlite3.connect(directory / "raw.db")
    raw_db.execute(f"CREATE TABLE t (event_id INTEGER PRIMARY KEY, {', '.join(ROW_COLUMNS)})")
    marks = ", ".join("?" * (len(ROW_COLUMNS) + 1))
    start = time.perf_counter()
    with raw_db:
        raw_db.executemany(f"INSERT INTO t VALUES ({marks})", rows)
    raw = time.perf_counter() - start
    raw_db.close()
    return {
        "provenance_write_events_per_s": count / written,
        "provenance_index_events_per_s": count / indexed,
        "sqlite_raw_insert_rows_per_s": count / raw,
        "lineage_ms": lineage * 1000,
        "lineage_events": events_in_graph,
        "lineage_repository_events": total_events,
        "uuid_lookup_ms": lookup * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    quick = args.quick
    with tempfile.TemporaryDirectory(prefix="flowcore-bench-", dir=ROOT) as tmp:
        directory = Path(tmp)
        results: dict[str, float] = {}
        results |= bench_wal(directory, 200_000 if quick else 1_000_000)
        results |= bench_recovery(directory, 1_000_000)
        if not quick:
            results |= bench_recovery(directory, 10_000_000)
        volume = 64 * MIB if quick else 1024 * MIB
        results |= bench_content(directory, volume, 64 * 1024)
        results |= bench_content(directory, volume, 64 * 1024, appendable=16 * MIB)
        results |= bench_content(directory, volume, 16 * MIB)
        results |= bench_provenance(directory, 100_000 if quick else 1_000_000)
    print(json.dumps({k: round(v, 3) for k, v in results.items()}))

    table = Table(title="Durable repositories (same-run baselines)")
    for column in ("measure", "flowcore", "baseline", "target"):
        table.add_column(column, justify="left" if column == "measure" else "right")

    def row(label: str, ours: str, base: str, target: str, unit: str = ",.0f") -> None:
        value = results.get(ours)
        if value is not None:
            table.add_row(label, f"{value:{unit}}", f"{results[base]:{unit}}", target)

    row(
        "WAL enqueue FlowFiles/s (fsync per commit) / raw write+fsync",
        "wal_enqueue_flowfiles_per_s",
        "raw_fsync_flowfiles_per_s",
        ">= 1,000,000",
    )
    row(
        "  of which the driver's commit alone (tasks write segments)",
        "wal_driver_commit_flowfiles_per_s",
        "raw_fsync_flowfiles_per_s",
        "-",
    )
    row("recovery, 1M queued (s) / read the log", "recovery_1m_s", "read_log_1m_s", "-", ".3f")
    row(
        "recovery, 10M queued (s) / read the log", "recovery_10m_s", "read_log_10m_s", "<= 5", ".3f"
    )
    for label, key in (
        ("64 KiB contents, 1 MB claim files (default)", "64k_in_1m"),
        ("64 KiB contents, 16 MB claim files", "64k_in_16m"),
        ("16 MiB contents (a claim file each)", "16384k_in_1m"),
    ):
        row(
            f"content write MB/s, {label} / raw sequential write",
            f"content_write_{key}_mb_per_s",
            f"raw_write_{key}_mb_per_s",
            ">= 70% of raw",
        )
    row(
        "provenance events/s indexed / sqlite3 unindexed insert",
        "provenance_index_events_per_s",
        "sqlite_raw_insert_rows_per_s",
        ">= 200,000",
    )
    row(
        "provenance events/s written by a task (event file)",
        "provenance_write_events_per_s",
        "provenance_write_events_per_s",
        "-",
    )
    row(
        "lineage of a 1,000-way fork (ms) / uuid lookup",
        "lineage_ms",
        "uuid_lookup_ms",
        "<= 100",
        ".1f",
    )
    Console().print(table)


if __name__ == "__main__":
    main()
