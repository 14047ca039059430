"""PutDataset: a two-phase sink writing FlowFiles into a dataset of a few large chunks.

Tasks append FlowFile contents (with the Demarcator between them) to chunk files and return
what they wrote; the driver adds those chunks to a new manifest version, merges small chunks
as the auto-merge mode says, stages the version and commits its number with the stage run's
write-ahead log transaction, then publishes it. Readers (``flowcore.datasets.open``, ``flowcore
dataset cat``) always see one complete version.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import ClassVar

import attrs
import numpy as np

from flowcore.clock import now_ms
from flowcore.datasets.auto_merge import AutoMerge, AutoMergeMode, plan_merges
from flowcore.datasets.compaction import (
    DEFAULT_MERGE_FILE_MAX,
    DEFAULT_MERGEABILITY_THRESHOLD,
    plan_compaction,
    run_merges,
)
from flowcore.datasets.model import Chunk, Manifest
from flowcore.datasets.store import Dataset, demarcated, write_chunk
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import SinkJobs, TwoPhaseSink
from flowcore.processor.relationship import FAILURE, SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDependency, PropertyDescriptor
from flowcore.session.batch_context import BatchContext
from flowcore.session.process_session import ProcessSession
from flowcore.units import parse_data_size
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    NUMBER_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    ValidationResult,
)

__all__ = ["AUTO_MERGE_KEYS", "PutDataset"]

#: The keys of an ``auto_merge`` section and the properties they set.
AUTO_MERGE_KEYS = {
    "mode": "Auto Merge Mode",
    "desired_chunk_size": "Desired Chunk Size",
    "chunk_size_threshold": "Chunk Size Threshold",
    "max_intermediate_chunk_count": "Max Intermediate Chunk Count",
    "chunk_count_per_merge_job": "Chunk Count Per Merge Job",
}
_MANUAL = PropertyDependency("Auto Merge Mode", (AutoMergeMode.MANUAL.value,))


class PutDataset(TwoPhaseSink):
    """Writes FlowFile contents into a dataset: chunk files plus published manifest versions.

    Each task writes its FlowFiles, in queue order, into chunks of up to Desired Chunk Size.
    With an Auto Merge Mode other than disabled, small chunks are merged by merge jobs that run
    on the runner like any task (:mod:`flowcore.datasets.auto_merge`). In ``--continuous``
    runs, a maintenance pass merges adjacent mergeable chunks every Mergeability Interval.
    Pass ``auto_merge={"mode": "economy", ...}`` as a section, or set the properties.
    """

    DIRECTORY = PropertyDescriptor(
        "Directory",
        description="The dataset's directory (created when missing)",
        required=True,
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
    )
    DEMARCATOR = PropertyDescriptor(
        "Demarcator",
        description="Text written between FlowFile contents (and between merged chunks)",
        required=False,
    )
    ORDERED = PropertyDescriptor(
        "Ordered",
        description="Keep chunks in the order they were written; merges then join only "
        "neighbouring chunks",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    KEY_ATTRIBUTE = PropertyDescriptor(
        "Key Attribute",
        description="An attribute whose smallest and largest values each chunk records (its key "
        "range)",
        required=False,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    DESIRED_CHUNK_SIZE = PropertyDescriptor(
        "Desired Chunk Size",
        description="The size chunks are written and merged up to (YTsaurus' desired_chunk_size); "
        "also the split threshold of the maintenance pass",
        required=True,
        default="1 GB",
        validators=(DATA_SIZE_VALIDATOR,),
    )
    AUTO_MERGE_MODE = PropertyDescriptor(
        "Auto Merge Mode",
        description="disabled: keep every task's chunks; relaxed: merge small chunks when the "
        "run ends; economy: keep the run's small chunks at or under 4*sqrt(n) while it runs; "
        "manual: the limits below",
        required=True,
        default=AutoMergeMode.DISABLED.value,
        allowable_values=tuple(m.value for m in AutoMergeMode),
    )
    CHUNK_SIZE_THRESHOLD = PropertyDescriptor(
        "Chunk Size Threshold",
        description="Chunks under this percentage of the Desired Chunk Size are small, so merged",
        required=True,
        default="10",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    MAX_INTERMEDIATE = PropertyDescriptor(
        "Max Intermediate Chunk Count",
        description="manual mode: the most small chunks a run may leave before merging",
        required=True,
        validators=(POSITIVE_INTEGER_VALIDATOR,),
        dependencies=(_MANUAL,),
    )
    PER_MERGE_JOB = PropertyDescriptor(
        "Chunk Count Per Merge Job",
        description="manual mode: the most chunks one merge job takes",
        required=True,
        validators=(POSITIVE_INTEGER_VALIDATOR,),
        dependencies=(_MANUAL,),
    )
    MERGEABILITY_INTERVAL = PropertyDescriptor(
        "Mergeability Interval",
        description="In --continuous runs, how often adjacent mergeable chunks are merged",
        required=True,
        default="24 hours",
        validators=(TIME_PERIOD_VALIDATOR,),
    )
    MERGE_FILE_MAX = PropertyDescriptor(
        "Merge File Max",
        description="The most chunks one maintenance merge may join",
        required=True,
        default=str(DEFAULT_MERGE_FILE_MAX),
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    MERGEABILITY_THRESHOLD = PropertyDescriptor(
        "Mergeability Threshold",
        description="A maintenance merge makes at most this share of the Desired Chunk Size",
        required=True,
        default=str(DEFAULT_MERGEABILITY_THRESHOLD),
        validators=(NUMBER_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        DIRECTORY,
        DEMARCATOR,
        ORDERED,
        KEY_ATTRIBUTE,
        DESIRED_CHUNK_SIZE,
        AUTO_MERGE_MODE,
        CHUNK_SIZE_THRESHOLD,
        MAX_INTERMEDIATE,
        PER_MERGE_JOB,
        MERGEABILITY_INTERVAL,
        MERGE_FILE_MAX,
        MERGEABILITY_THRESHOLD,
    )
    relationships: ClassVar = (SUCCESS, FAILURE)
    tags: ClassVar = ("dataset", "sink", "chunks", "compaction", "merge", "put")

    def __init__(
        self, auto_merge: Mapping[str, object] | None = None, **properties: object
    ) -> None:
        for key, value in (auto_merge or {}).items():
            if key not in AUTO_MERGE_KEYS:
                msg = f"auto_merge has no {key!r}; use {', '.join(sorted(AUTO_MERGE_KEYS))}"
                raise ValueError(msg)
            properties[AUTO_MERGE_KEYS[key]] = value
        super().__init__(**properties)
        self._dataset: Dataset | None = None
        self._operation: str | None = None

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state.update(_dataset=None, _operation=None)  # the driver's lock never travels
        return state

    # --- configuration ----------------------------------------------------------------------

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """The auto-merge section must make sense as a whole."""
        try:
            self._auto_merge_from(values)
        except ValueError as error:
            return [
                ValidationResult(
                    "Auto Merge Mode", values.get("Auto Merge Mode"), False, str(error)
                )
            ]
        return []

    def _auto_merge_from(self, values: Mapping[str, str | None]) -> AutoMerge:
        def number(name: str) -> int | None:
            text = values.get(name)
            return int(text) if text and text.strip().isdigit() else None

        size = values.get("Desired Chunk Size") or "1 GB"
        return AutoMerge(
            mode=AutoMergeMode(values.get("Auto Merge Mode") or "disabled"),
            desired_chunk_size=max(1, int(parse_data_size(size, "B"))),
            chunk_size_threshold=number("Chunk Size Threshold") or 10,
            max_intermediate_chunk_count=number("Max Intermediate Chunk Count"),
            chunk_count_per_merge_job=number("Chunk Count Per Merge Job"),
        )

    def auto_merge(self) -> AutoMerge:
        """The sink's auto-merge section."""
        return self._auto_merge_from(self.active_values())

    def _path(self, context: ProcessContext) -> str:
        return context.get_property(self.DIRECTORY).evaluate_attribute_expressions().value or "."

    def _demarcator(self, context: ProcessContext) -> bytes:
        return (context.get_property(self.DEMARCATOR).value or "").encode("utf-8")

    # --- the tasks --------------------------------------------------------------------------

    def write(
        self, context: ProcessContext, session: ProcessSession, flowfiles: Sequence[FlowFile]
    ) -> bytes:
        """Append the contents to new chunk files; describe the chunks."""
        dataset = Dataset(self._path(context))
        demarcator = self._demarcator(context)
        desired = self.auto_merge().desired_chunk_size
        key_name = context.get_property(self.KEY_ATTRIBUTE).value
        owner = context.component.id[:8] if context.component is not None else "task"
        chunks = _write_chunks(
            dataset,
            session,
            flowfiles,
            owner=owner,
            demarcator=demarcator,
            limit=desired,
            key_name=key_name,
        )
        for flowfile in flowfiles:
            session.provenance.send(flowfile, dataset.path.resolve().as_uri())
        session.transfer(list(flowfiles), SUCCESS)
        return json.dumps([c.to_json() for c in chunks]).encode()

    def write_batches(self, context: BatchContext, batches: Sequence[FlowFileBatch]) -> bytes:
        """:meth:`write` over batches: the same chunks, their records read from claim ranges.

        The chunks close where :meth:`write`'s do (at Desired Chunk Size, counted across the
        batches); each record's bytes are picked from windows of its batch's claim, so memory
        holds about a window, never a batch's content.
        """
        dataset = Dataset(self._path(context))
        owner = context.component.id[:8] if context.component is not None else "task"
        chunks = _write_batch_chunks(
            dataset,
            context,
            batches,
            owner=owner,
            demarcator=self._demarcator(context),
            limit=self.auto_merge().desired_chunk_size,
            key_name=context.get_property(self.KEY_ATTRIBUTE).value,
        )
        uri = dataset.path.resolve().as_uri()
        for batch in batches:
            context.report_send(batch, uri)
        return json.dumps([c.to_json() for c in chunks]).encode()

    # --- the driver -------------------------------------------------------------------------

    def _held(self, context: ProcessContext) -> Dataset:
        if self._dataset is None:
            dataset = Dataset(self._path(context))
            dataset.acquire("write")
            self._dataset = dataset
        return self._dataset

    def commit(
        self,
        context: ProcessContext,
        messages: Sequence[bytes],
        state: Mapping[str, str],
        jobs: SinkJobs,
    ) -> Mapping[str, str]:
        """Add the tasks' chunks, merge as the mode says, stage the next version."""
        dataset = self._held(context)
        if self._operation is None:
            self._operation = uuid.uuid4().hex[:12]
        now = context.now()
        current = dataset.manifest()
        written = [
            attrs.evolve(Chunk.from_json(c), operation=self._operation)
            for message in messages
            for c in json.loads(message)
        ]
        chunks = (*current.chunks, *written)
        report = _Report.of(state, self._operation)
        report = attrs.evolve(report, produced=report.produced + len(written))
        chunks, report = self._auto_merge(dataset, current, chunks, report, jobs, final=False)
        compacted_at = int(state.get("compacted.at", "0") or 0)
        if jobs.continuous:
            interval = context.get_property(self.MERGEABILITY_INTERVAL).as_time_period("ms") or 0
            if now - compacted_at >= interval:
                chunks = self._maintain(context, dataset, current, chunks, jobs=jobs, now=now)
                compacted_at = now
        return self._stage(
            context, dataset, chunks, report=report, state=state, compacted_at=compacted_at, now=now
        )

    def end_of_run(
        self, context: ProcessContext, state: Mapping[str, str], jobs: SinkJobs
    ) -> Mapping[str, str] | None:
        """Relaxed mode merges the run's small chunks now that the run is over."""
        if self._operation is None or self.auto_merge().mode is not AutoMergeMode.RELAXED:
            return None
        dataset = self._held(context)
        current = dataset.manifest()
        report = _Report.of(state, self._operation)
        chunks, merged = self._auto_merge(
            dataset, current, current.chunks, report, jobs, final=True
        )
        if chunks == current.chunks:
            return None
        compacted_at = int(state.get("compacted.at", "0") or 0)
        return self._stage(
            context,
            dataset,
            chunks,
            report=merged,
            state=state,
            compacted_at=compacted_at,
            now=context.now(),
        )

    def _auto_merge(
        self,
        dataset: Dataset,
        current: Manifest,
        chunks: tuple[Chunk, ...],
        report: _Report,
        jobs: SinkJobs,
        *,
        final: bool,
    ) -> tuple[tuple[Chunk, ...], _Report]:
        config = self.auto_merge()
        ordered = self._ordered()
        mine = {c.id for c in chunks if c.operation == report.operation}
        groups = plan_merges(config, chunks, mine, report.produced, final=final, ordered=ordered)
        if groups:
            chunks = _merged(
                dataset,
                current,
                chunks,
                groups,
                jobs=jobs,
                owner="merge",
                operation=report.operation,
            )
        intermediate = sum(
            1 for c in chunks if c.operation == report.operation and c.size < config.small_below
        )
        return chunks, attrs.evolve(
            report,
            merge_jobs=report.merge_jobs + len(groups),
            intermediate=intermediate,
            high_water=max(report.high_water, intermediate),
        )

    def _maintain(
        self,
        context: ProcessContext,
        dataset: Dataset,
        current: Manifest,
        chunks: tuple[Chunk, ...],
        *,
        jobs: SinkJobs,
        now: int,
    ) -> tuple[Chunk, ...]:
        """The mergeability pass of a continuous run, inside the run's own version."""
        groups = plan_compaction(
            chunks,
            now,
            split_threshold=self.auto_merge().desired_chunk_size,
            merge_file_max=context.get_property(self.MERGE_FILE_MAX).as_integer() or 1,
            mergeability_threshold=float(
                context.get_property(self.MERGEABILITY_THRESHOLD).value
                or DEFAULT_MERGEABILITY_THRESHOLD
            ),
        )
        if not groups:
            return chunks
        return _merged(dataset, current, chunks, groups, jobs=jobs, owner="compaction")

    def _ordered(self) -> bool:
        return (self.active_values().get("Ordered") or "false").lower() == "true"

    def _stage(
        self,
        context: ProcessContext,
        dataset: Dataset,
        chunks: tuple[Chunk, ...],
        *,
        report: _Report,
        state: Mapping[str, str],
        compacted_at: int,
        now: int,
    ) -> dict[str, str]:
        version = dataset.next_version(at_least=int(state.get("version", "0") or 0))
        manifest = Manifest(version, chunks, self._ordered(), self._demarcator(context), now)
        dataset.stage(manifest)
        return {
            "version": str(version),
            "chunks": str(len(chunks)),
            "bytes": str(manifest.size),
            "compacted.at": str(compacted_at),
            **report.to_state(),
        }

    def publish(self, context: ProcessContext, state: Mapping[str, str]) -> None:
        """Publish the committed version; throw away versions staged past it."""
        dataset = self._held(context)
        committed = int(state.get("version", "0") or 0)
        dataset.discard_pending(above=committed)
        dataset.publish(committed)

    def release(self, context: ProcessContext) -> None:
        """The run stopped: release the dataset's lock; the next run is a new operation."""
        del context
        if self._dataset is not None:
            self._dataset.release()
            self._dataset = None
        self._operation = None


@attrs.frozen
class _Report:
    """A run's auto-merge figures, kept in the sink's state."""

    operation: str
    produced: int = 0
    merge_jobs: int = 0
    intermediate: int = 0
    high_water: int = 0

    @classmethod
    def of(cls, state: Mapping[str, str], operation: str) -> _Report:
        if state.get("operation") != operation:
            return cls(operation)  # a new run: a new operation
        return cls(
            operation,
            int(state.get("produced", "0")),
            int(state.get("merge.jobs", "0")),
            int(state.get("intermediate", "0")),
            int(state.get("intermediate.high_water", "0")),
        )

    def to_state(self) -> dict[str, str]:
        return {
            "operation": self.operation,
            "produced": str(self.produced),
            "merge.jobs": str(self.merge_jobs),
            "intermediate": str(self.intermediate),
            "intermediate.high_water": str(self.high_water),
        }


def _merged(
    dataset: Dataset,
    current: Manifest,
    chunks: tuple[Chunk, ...],
    groups: Sequence[Sequence[str]],
    *,
    jobs: SinkJobs,
    owner: str,
    operation: str | None = None,
) -> tuple[Chunk, ...]:
    """*chunks* (the version being built on *current*) with each group merged on the runner."""
    view = attrs.evolve(current, chunks=chunks)
    return run_merges(dataset, view, groups, run_jobs=jobs.run, owner=owner, operation=operation)


def _write_chunks(
    dataset: Dataset,
    session: ProcessSession,
    flowfiles: Sequence[FlowFile],
    *,
    owner: str,
    demarcator: bytes,
    limit: int,
    key_name: str | None,
) -> list[Chunk]:
    """Write the FlowFiles, in order, into chunks that close once they reach *limit* bytes."""
    chunks = []
    for group in _chunk_groups(flowfiles, len(demarcator), limit):
        chunk_id = dataset.new_chunk_id(owner)
        readers = ((lambda f=f: session.read(f)) for f in group)
        size = write_chunk(dataset.chunk_path(chunk_id), demarcated(readers, demarcator))
        keys = (
            [k for f in group if (k := f.attributes.get(key_name)) is not None] if key_name else []
        )
        chunks.append(
            Chunk(
                chunk_id,
                size,
                len(group),
                now_ms(),
                first_key=min(keys) if keys else None,
                last_key=max(keys) if keys else None,
            )
        )
    return chunks


def _chunk_groups(
    flowfiles: Sequence[FlowFile], demarcator: int, limit: int
) -> Iterator[list[FlowFile]]:
    group: list[FlowFile] = []
    size = 0
    for flowfile in flowfiles:
        size += flowfile.size + (demarcator if group else 0)
        group.append(flowfile)
        if size >= limit:
            yield group
            group, size = [], 0
    if group:
        yield group


def _batch_groups(
    batches: Sequence[FlowFileBatch], demarcator: int, limit: int
) -> Iterator[list[tuple[int, int, int]]]:
    """:func:`_chunk_groups` over batches: each group as ``(batch, start, stop)`` cuts."""
    sizes = [b.sizes for b in batches]
    if not sizes or not sum(len(s) for s in sizes):
        return
    owners = np.concatenate([np.full(len(s), i, dtype=np.int64) for i, s in enumerate(sizes)])
    rows = np.concatenate([np.arange(len(s), dtype=np.int64) for s in sizes])
    # a group's size is its records' sizes plus a demarcator before each but the first
    reached = np.cumsum(np.concatenate(sizes) + demarcator)
    count, start, before = len(reached), 0, 0
    while start < count:
        stop = int(np.searchsorted(reached, before + demarcator + limit, side="left")) + 1
        stop = min(max(stop, start + 1), count)
        yield _cuts(owners[start:stop], rows[start:stop])
        before, start = int(reached[stop - 1]), stop


def _cuts(owners: np.ndarray, rows: np.ndarray) -> list[tuple[int, int, int]]:
    """Consecutive rows as ``(batch, start, stop)``, one per batch they lie in."""
    edges = np.flatnonzero(owners[1:] != owners[:-1]) + 1
    bounds = [0, *edges.tolist(), len(owners)]
    return [
        (int(owners[a]), int(rows[a]), int(rows[b - 1]) + 1) for a, b in itertools.pairwise(bounds)
    ]


def _write_batch_chunks(
    dataset: Dataset,
    context: BatchContext,
    batches: Sequence[FlowFileBatch],
    *,
    owner: str,
    demarcator: bytes,
    limit: int,
    key_name: str | None,
) -> list[Chunk]:
    """:func:`_write_chunks` over batches; the chunks written are removed if one fails."""
    chunks: list[Chunk] = []
    try:
        for group in _batch_groups(batches, len(demarcator), limit):
            parts = [batches[i].cut(start, stop) for i, start, stop in group]
            chunk_id = dataset.new_chunk_id(owner)
            chunks.append(Chunk(chunk_id, 0, 0, 0))  # removed should writing it fail
            size = write_chunk(dataset.chunk_path(chunk_id), _joined(context, parts, demarcator))
            keys = [k for part in parts for k in _keys(part, key_name)] if key_name else []
            chunks[-1] = Chunk(
                chunk_id,
                size,
                sum(p.count for p in parts),
                now_ms(),
                first_key=min(keys) if keys else None,
                last_key=max(keys) if keys else None,
            )
    except BaseException:
        for chunk in chunks:
            path = dataset.chunk_path(chunk.id)
            path.unlink(missing_ok=True)
            path.with_name(path.name + ".part").unlink(missing_ok=True)
        raise
    return chunks


def _joined(
    context: BatchContext, parts: Sequence[FlowFileBatch], demarcator: bytes
) -> Iterator[bytes | memoryview]:
    """The records of *parts*, in order, *demarcator* between two (across parts too)."""
    for index, part in enumerate(parts):
        if index and demarcator:
            yield demarcator
        yield from context.joined_contents(part, demarcator)


def _keys(batch: FlowFileBatch, name: str) -> list[str]:
    """The distinct values of attribute *name* in *batch* (FlowFiles without it left out)."""
    column = batch.column(name)
    if column is None:
        return []
    codes, values = column.encoded()
    return [v for c in np.unique(codes).tolist() if (v := values[c]) is not None]
