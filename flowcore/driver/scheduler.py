"""Micro-batch scheduling decisions (DESIGN §7), as small functions of the queues' state.

The controller asks, for each stage in order: is it held back by back pressure, what input may
it take now (segments not waiting on a penalty or a bin's age, up to the batch limits), and how
is that cut into tasks. Everything here reads segment summaries only; no FlowFile is loaded.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import TypeVar

import attrs

from flowcore.compiler.plan import StagePlan
from flowcore.compiler.stages import CompiledFlow, Stage, compile_flow
from flowcore.engine.wire import NEVER, SegmentWait
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.records import SegmentSummary

__all__ = [
    "BatchLimits",
    "RetryAt",
    "binning_queued",
    "chunk",
    "holding_kept",
    "next_held",
    "next_wait",
    "select_segments",
    "split_segments",
]

T = TypeVar("T")


@attrs.frozen
class BatchLimits:
    """How much one stage run takes (whole segments, at least one).

    Attributes:
        flowfiles: FlowFiles of plain segments (records a task unpacks into objects).
        bytes: content bytes of all segments.
        batched: FlowFiles of all segments, when some are batched (one record each);
            None: as *flowfiles*.
    """

    flowfiles: int
    bytes: int
    batched: int | None = None


def select_segments(
    plan: StagePlan,
    queues: Mapping[str, Sequence[SegmentSummary]],
    retry_at: Mapping[str, int],
    now: int,
    limits: BatchLimits,
    *,
    skip: Collection[str] = frozenset(),
) -> list[SegmentSummary]:
    """The segments a stage run takes now, oldest first per queue, within *limits*.

    A segment waiting on a penalty or on a bin's age is skipped until then, and one in *skip*
    is not taken at all (a batch run leaves what failed during it). A stage with a binning
    member takes every segment of the binning member's queues once any of them is ready,
    because a bin needs all its group's FlowFiles together. A task holds a batched segment as
    one record, so FlowFiles of plain segments are bounded by ``limits.flowfiles`` and all of
    them together by the larger ``limits.batched``.
    """
    binning = {m.component_id for m in plan.binning_members}
    taken: list[SegmentSummary] = []
    total = plain = size = 0
    max_total = max(limits.flowfiles, limits.batched or 0)
    ready_binning = any(
        retry_at.get(s.segment_id, 0) <= now
        for queue_id, member in plan.queue_members.items()
        if member in binning
        for s in queues.get(queue_id, ())
    )
    for queue_id, member in plan.queue_members.items():
        for summary in queues.get(queue_id, ()):
            if member in binning:
                if not ready_binning:
                    break
            elif summary.segment_id in skip or retry_at.get(summary.segment_id, 0) > now:
                continue
            too_many = total + summary.count > max_total or (
                not summary.batched and plain + summary.count > limits.flowfiles
            )
            if taken and (too_many or size + summary.bytes > limits.bytes):
                return taken
            taken.append(summary)
            total += summary.count
            plain += 0 if summary.batched else summary.count
            size += summary.bytes
    return taken


def split_segments(
    segments: Sequence[SegmentSummary], parallelism: int
) -> list[list[SegmentSummary]]:
    """Consecutive segments grouped into at most *parallelism* tasks of similar FlowFile counts.

    Contiguous groups keep queue order across tasks: task *i*'s FlowFiles come before task
    *i + 1*'s.
    """
    if not segments:
        return []
    total = sum(s.count for s in segments) or len(segments)
    target = max(1, math.ceil(total / parallelism))
    groups: list[list[SegmentSummary]] = [[]]
    filled = 0
    for summary in segments:
        if groups[-1] and filled + summary.count > target and len(groups) < parallelism:
            groups.append([])
            filled = 0
        groups[-1].append(summary)
        filled += summary.count
    return groups


def chunk(items: Sequence[T], parts: int) -> list[list[T]]:
    """*items* cut into at most *parts* contiguous, nearly equal runs (none empty)."""
    if not items:
        return []
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    runs, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        runs.append(list(items[start:end]))
        start = end
    return runs


class RetryAt(Mapping[str, int]):
    """When each returned segment is worth taking again, read from its wait (no copy)."""

    def __init__(self, waits: Mapping[str, SegmentWait]) -> None:
        self._waits = waits

    def __getitem__(self, segment_id: str) -> int:
        return self._waits[segment_id].retry_at

    def __iter__(self) -> Iterator[str]:
        return iter(self._waits)

    def __len__(self) -> int:
        return len(self._waits)


def next_wait(
    wal: WriteAheadFlowFileRepository,
    waits: Mapping[str, SegmentWait],
    now: int,
    *,
    include_long: bool,
) -> int | None:
    """The earliest future time a queued segment becomes worth taking, if any."""
    times = [
        wait.retry_at
        for queue_id in wal.queue_ids()
        for s in wal.segments(queue_id)
        if (wait := waits.get(s.segment_id)) is not None
        and now < wait.retry_at < NEVER
        and (include_long or not wait.long)
    ]
    return min(times) if times else None


def next_held(
    wal: WriteAheadFlowFileRepository, waits: Mapping[str, SegmentWait], now: int
) -> int | None:
    """When the first FlowFiles held until a known time go on, if any.

    Held: a processor holds them (ControlRate's window), or they wait out a relationship
    retry's backoff. A batch run waits for them however long: they are part of what the
    flow does (retries are bounded by the Number of Retry Attempts).
    """
    times = [
        wait.retry_at
        for queue_id in wal.queue_ids()
        for s in wal.segments(queue_id)
        if (wait := waits.get(s.segment_id)) is not None and wait.held
    ]
    return max(now, min(times)) if times else None


def binning_queued(compiled: CompiledFlow, wal: WriteAheadFlowFileRepository) -> list[Stage]:
    """The stages whose binning members have FlowFiles queued (drained at the end of input)."""
    stages = []
    for stage in compiled.stages:
        plan = compiled.plans[stage.id]
        binning = {m.component_id for m in plan.binning_members}
        if any(wal.segments(q) for q, m in plan.queue_members.items() if m in binning):
            stages.append(stage)
    return stages


def holding_kept(compiled: CompiledFlow, wal: WriteAheadFlowFileRepository) -> CompiledFlow:
    """*compiled* again when a pipelined connection's queue holds FlowFiles of an earlier run.

    They queued while the connection was durable (before a disabled processor or a funnel
    with no outgoing connection, since enabled or connected on); it stays durable so they
    are taken (``compile_flow``'s *holding*).
    """
    pipelined = {c.id for c in compiled.flow.connections if c.id not in compiled.durable}
    holding = {q for q in wal.queue_ids() if q in pipelined and wal.queue_size(q)[0]}
    if not holding:
        return compiled
    return compile_flow(compiled.flow, validate=False, holding=holding)  # validated already
