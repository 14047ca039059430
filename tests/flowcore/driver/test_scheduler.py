"""Tests for the micro-batch scheduling decisions."""

from __future__ import annotations

import attrs
from hypothesis import given
from hypothesis import strategies as st

from flowcore.builder import Flow
from flowcore.compiler.stages import compile_flow
from flowcore.driver.scheduler import BatchLimits, chunk, select_segments, split_segments
from processors import GenerateFlowFile, MergeContent, UpdateAttribute
from repositories.records import SegmentSummary


def _summary(name: str, queue: str, count: int, size: int = 0) -> SegmentSummary:
    return SegmentSummary(name, queue, count, size)


def _plans() -> tuple:
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag")
    merge = flow.add(MergeContent(), name="merge")
    end = flow.add(UpdateAttribute(), name="end")
    first = flow.connect(gen, tag)
    flow.connect(tag, merge, durable=True)
    flow.connect(merge, end, "merged", durable=True)
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(end, "success")
    compiled = compile_flow(flow)
    plans = [compiled.plans[s.id] for s in compiled.stages]
    return flow, first, plans


def test_select_takes_ready_segments_within_limits() -> None:
    """Segments are taken oldest first until the FlowFile limit; waiting ones are skipped."""
    _, _, plans = _plans()
    plan = plans[2]  # UpdateAttribute 'end' after the merge
    (queue,) = [q for q in plan.queue_members if not q.startswith("park:")]
    queues = {queue: [_summary(f"s{i}", queue, 40) for i in range(5)]}
    taken = select_segments(plan, queues, {"s1": 10_000}, 5_000, BatchLimits(100, 10**9))
    assert [s.segment_id for s in taken] == ["s0", "s2"]
    assert select_segments(plan, queues, {}, 0, BatchLimits(1, 10**9))[0].segment_id == "s0"


def test_select_respects_the_byte_limit() -> None:
    """The byte limit stops the batch, but one segment is always taken."""
    _, _, plans = _plans()
    plan = plans[2]
    (queue,) = [q for q in plan.queue_members if not q.startswith("park:")]
    queues = {queue: [_summary("a", queue, 1, 900), _summary("b", queue, 1, 900)]}
    taken = select_segments(plan, queues, {}, 0, BatchLimits(100, 1000))
    assert [s.segment_id for s in taken] == ["a"]


def test_batched_segments_count_against_their_own_limit() -> None:
    """Plain segments' FlowFiles are bounded by the FlowFile limit, all FlowFiles together by
    the larger batched limit (a task holds a batched segment as one record)."""
    _, _, plans = _plans()
    plan = plans[2]
    (queue,) = [q for q in plan.queue_members if not q.startswith("park:")]
    b0, b1, b2, b3 = (attrs.evolve(_summary(f"b{i}", queue, 40), batched=True) for i in range(4))
    queues = {queue: [b0, _summary("p0", queue, 40), b1, b2, b3, _summary("p1", queue, 40)]}

    def take(limits: BatchLimits) -> list[str]:
        return [s.segment_id for s in select_segments(plan, queues, {}, 0, limits)]

    assert take(BatchLimits(100, 10**9, batched=200)) == ["b0", "p0", "b1", "b2", "b3"]
    assert take(BatchLimits(30, 10**9, batched=200)) == ["b0"]  # p0 is over the plain limit
    assert take(BatchLimits(100, 10**9)) == ["b0", "p0"]  # None: the FlowFile limit for all


def test_binning_stage_takes_every_segment_once_one_is_ready() -> None:
    """A binning stage takes its bins' waiting FlowFiles with the new ones, or nothing."""
    _, _, plans = _plans()
    plan = plans[1]  # MergeContent
    (queue,) = [q for q in plan.queue_members if not q.startswith("park:")]
    waiting = _summary("old", queue, 3)
    fresh = _summary("new", queue, 2)
    limits = BatchLimits(100, 10**9)
    assert select_segments(plan, {queue: [waiting]}, {"old": 10**12}, 0, limits) == []
    taken = select_segments(plan, {queue: [waiting, fresh]}, {"old": 10**12}, 0, limits)
    assert [s.segment_id for s in taken] == ["old", "new"]


@given(st.lists(st.integers(0, 50), max_size=30), st.integers(1, 8))
def test_split_segments_keeps_order_and_everything(counts: list[int], parallelism: int) -> None:
    """Splitting into tasks keeps every segment, in order, in at most `parallelism` groups."""
    segments = [_summary(f"s{i}", "q", c) for i, c in enumerate(counts)]
    groups = split_segments(segments, parallelism)
    assert [s for g in groups for s in g] == segments
    assert len(groups) <= parallelism
    assert all(groups)


@given(st.lists(st.integers(), max_size=40), st.integers(1, 10))
def test_chunk_is_contiguous_and_balanced(items: list[int], parts: int) -> None:
    """Chunks concatenate to the items and differ in size by at most one."""
    runs = chunk(items, parts)
    assert [x for run in runs for x in run] == items
    if items:
        sizes = [len(r) for r in runs]
        assert max(sizes) - min(sizes) <= 1
        assert len(runs) == min(parts, len(items))
