"""Micro-batch scheduling decisions (DESIGN §7), as small functions of the queues' state.

The controller asks, for each stage in order: is it held back by back pressure, what input may
it take now (segments not waiting on a penalty or a bin's age, up to the batch limits), and how
is that cut into tasks. Everything here reads segment summaries only; no FlowFile is loaded.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import TypeVar

import attrs

from flowcore.compiler.plan import StagePlan
from repositories.records import SegmentSummary

__all__ = [
    "BatchLimits",
    "chunk",
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
