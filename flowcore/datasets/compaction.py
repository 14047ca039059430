"""Merging chunks: the merge job every runner can run, and mergeability-based compaction.

A merge job reads some chunks of a dataset in order and writes them as one new chunk (the
dataset's demarcator between them); it runs on the runner like any task. The maintenance pass
(Accumulo's tablet auto-merge) merges ranges of *adjacent* chunks whose mergeability allows it,
while a range holds at most ``merge_file_max`` chunks and at most ``mergeability_threshold``
times the split threshold (the desired chunk size) of bytes. A compaction publishes its result
as a new version with one rename, so a crash during it loses nothing and readers never see a
mix; the chunks it wrote are removed as orphans.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from flowcore.clock import now_ms as current_ms
from flowcore.datasets.model import Chunk, Manifest, Mergeability
from flowcore.datasets.store import Dataset, write_chunk

__all__ = [
    "DEFAULT_MERGEABILITY_THRESHOLD",
    "DEFAULT_MERGE_FILE_MAX",
    "Compaction",
    "MergeJob",
    "apply_merges",
    "compact",
    "merge_jobs",
    "plan_compaction",
    "run_merge_job",
    "run_merges",
]

DEFAULT_MERGE_FILE_MAX = 10_000  # Accumulo's table.merge.file.max
DEFAULT_MERGEABILITY_THRESHOLD = 0.25  # Accumulo's table.mergeability.threshold

#: Runs a picklable function over items on a runner, results in order (DirectRunner or Spark).
RunJobs = Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]


def _in_process(function: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    return [function(item) for item in items]


@attrs.frozen
class MergeJob:
    """Merge *chunks* of the dataset at *dataset* into a chunk named *output_id* (picklable)."""

    dataset: str
    chunks: tuple[Chunk, ...]
    output_id: str
    demarcator: bytes = b""


def run_merge_job(job: MergeJob) -> Chunk:
    """Write the merged chunk; return what the manifest records of it."""
    dataset = Dataset(job.dataset)
    pieces = dataset.iter_chunk_bytes(job.chunks, job.demarcator)
    size = write_chunk(dataset.chunk_path(job.output_id), pieces)
    keys = [k for c in job.chunks for k in (c.first_key, c.last_key) if k is not None]
    return Chunk(
        job.output_id,
        size,
        sum(c.records for c in job.chunks),
        current_ms(),
        Mergeability.ALWAYS,  # type: ignore[attr-defined]
        min(keys) if keys else None,
        max(keys) if keys else None,
    )


def merge_jobs(
    dataset: Dataset, manifest: Manifest, groups: Sequence[Sequence[str]], owner: str
) -> list[MergeJob]:
    """One job per group of chunk ids."""
    by_id = {c.id: c for c in manifest.chunks}
    return [
        MergeJob(
            str(dataset.path),
            tuple(by_id[i] for i in group),
            dataset.new_chunk_id(owner),
            manifest.demarcator,
        )
        for group in groups
    ]


def apply_merges(
    chunks: Sequence[Chunk], groups: Sequence[Sequence[str]], merged: Sequence[Chunk]
) -> tuple[Chunk, ...]:
    """*chunks* with each group replaced by its merged chunk, where the group's first was."""
    replacement: dict[str, Chunk | None] = {}
    for group, chunk in zip(groups, merged, strict=True):
        replacement[group[0]] = chunk
        replacement.update(dict.fromkeys(group[1:]))
    out = []
    for chunk in chunks:
        if chunk.id not in replacement:
            out.append(chunk)
        elif (new := replacement[chunk.id]) is not None:
            out.append(new)
    return tuple(out)


def plan_compaction(
    chunks: Sequence[Chunk],
    now_ms: int,
    *,
    split_threshold: int,
    merge_file_max: int = DEFAULT_MERGE_FILE_MAX,
    mergeability_threshold: float = DEFAULT_MERGEABILITY_THRESHOLD,
) -> list[tuple[str, ...]]:
    """Ranges of adjacent mergeable chunks to merge, each within both limits.

    A chunk that is not eligible (NEVER, or DELAY not yet passed), or is alone too large for a
    range, ends the range before it.
    """
    limit = mergeability_threshold * split_threshold
    groups: list[tuple[str, ...]] = []
    current: list[Chunk] = []
    size = 0

    def close() -> None:
        nonlocal current, size
        if len(current) >= 2:
            groups.append(tuple(c.id for c in current))
        current, size = [], 0

    for chunk in chunks:
        if not chunk.mergeability.eligible(chunk.created_ms, now_ms) or chunk.size > limit:
            close()
            continue
        if len(current) >= merge_file_max or size + chunk.size > limit:
            close()
        current.append(chunk)
        size += chunk.size
    close()
    return groups


def run_merges(
    dataset: Dataset,
    manifest: Manifest,
    groups: Sequence[Sequence[str]],
    *,
    run_jobs: RunJobs | None = None,
    owner: str = "compaction",
    operation: str | None = None,
) -> tuple[Chunk, ...]:
    """*manifest*'s chunks with each group merged by a job on *run_jobs* (in-process by default).

    *operation*, when given, marks the merged chunks as the work of that run.
    """
    merged = (run_jobs or _in_process)(run_merge_job, merge_jobs(dataset, manifest, groups, owner))
    if operation is not None:
        merged = [attrs.evolve(c, operation=operation) for c in merged]
    return apply_merges(manifest.chunks, groups, merged)


@attrs.frozen
class Compaction:
    """What a maintenance pass did."""

    version: int
    merged_groups: int
    chunks_before: int
    chunks_after: int


def compact(
    dataset: Dataset,
    *,
    split_threshold: int,
    merge_file_max: int = DEFAULT_MERGE_FILE_MAX,
    mergeability_threshold: float = DEFAULT_MERGEABILITY_THRESHOLD,
    now_ms: int | None = None,
    run_jobs: RunJobs | None = None,
    hold_lock: bool = True,
) -> Compaction:
    """Merge eligible ranges of adjacent chunks and publish the result as a new version.

    Args:
        dataset: the dataset.
        split_threshold: the chunk size that counts as full (a sink's desired chunk size).
        merge_file_max: the most chunks one range may merge.
        mergeability_threshold: a range holds at most this share of *split_threshold*.
        now_ms: the clock, for DELAY mergeability.
        run_jobs: runs the merge jobs (a runner's ``map_jobs``); in-process by default.
        hold_lock: take the dataset's lock (False when the caller, a flow run, holds it).

    Raises:
        DatasetError: the dataset is in use, or a flow left a version unpublished.
    """
    if hold_lock:
        dataset.acquire("compact")
    try:
        dataset.refuse_unfinished("compact")
        now = current_ms() if now_ms is None else now_ms
        manifest = dataset.manifest()
        groups = plan_compaction(
            manifest.chunks,
            now,
            split_threshold=split_threshold,
            merge_file_max=merge_file_max,
            mergeability_threshold=mergeability_threshold,
        )
        before = len(manifest.chunks)
        if not groups:
            return Compaction(manifest.version, 0, before, before)
        chunks = run_merges(dataset, manifest, groups, run_jobs=run_jobs)
        version = dataset.commit_version(attrs.evolve(manifest, chunks=chunks), now_ms=now)
        return Compaction(version, len(groups), before, len(chunks))
    finally:
        if hold_lock:
            dataset.release()
