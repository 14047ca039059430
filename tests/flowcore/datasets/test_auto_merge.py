"""Tests for write-time auto-merge: a simulation of 10,000 output tasks per mode, and planning
properties (limits, neighbours only when ordered)."""

from __future__ import annotations

import math
import random

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.datasets import AutoMerge, AutoMergeMode, Chunk, economy_quota, plan_merges
from flowcore.datasets.compaction import apply_merges

KB = 1024
TASKS = 10_000


def simulate(config: AutoMerge, *, tasks: int = TASKS, ordered: bool = False, seed: int = 7):
    """Run *tasks* output tasks, each writing one chunk, merging as the planner says after
    each; return (chunks, worst ratio of intermediate count to the limit, merge jobs)."""
    rng = random.Random(seed)
    chunks: list[Chunk] = []
    mine: set[str] = set()
    jobs = 0
    worst = 0.0
    made = 0

    def new_chunk(size: int) -> Chunk:
        nonlocal made
        made += 1
        return Chunk(f"c{made}", size, 1, 0)

    for produced in range(1, tasks + 1):
        chunk = new_chunk(rng.randint(1, 40) * KB)
        chunks.append(chunk)
        mine.add(chunk.id)
        groups = plan_merges(config, chunks, mine, produced, final=False, ordered=ordered)
        if groups:  # (each pass below is over every chunk: only when something changes)
            chunks = list(_merge(chunks, groups, new_chunk, mine))
        jobs += len(groups)
        limit = config.limit(produced)
        if limit is not None:
            small = sum(1 for c in chunks if c.id in mine and c.size < config.small_below)
            worst = max(worst, small / limit)
    groups = plan_merges(config, chunks, mine, tasks, final=True, ordered=ordered)
    chunks = list(_merge(chunks, groups, new_chunk, mine))
    return chunks, worst, jobs + len(groups)


def _merge(chunks, groups, new_chunk, mine):
    by_id = {c.id: c for c in chunks}
    merged = []
    for group in groups:
        assert len(group) >= 2
        made = new_chunk(sum(by_id[i].size for i in group))
        mine.add(made.id)
        merged.append(made)
    return apply_merges(chunks, groups, merged)


def test_economy_keeps_intermediate_chunks_within_four_sqrt_n() -> None:
    """10,000 tasks: after every task the run's small chunks number at most 4*sqrt(n)
    (slack 0), and merging stays rare."""
    config = AutoMerge(AutoMergeMode.ECONOMY, desired_chunk_size=64 * 1024 * KB)
    chunks, worst, jobs = simulate(config)
    assert worst <= 1.0
    assert len(chunks) <= economy_quota(TASKS)
    assert jobs < TASKS // 10


def test_relaxed_ends_with_chunks_near_the_desired_size() -> None:
    """Relaxed mode merges nothing while the run goes on, then leaves chunks near the desired
    size: all but the last are at least half of it."""
    config = AutoMerge(AutoMergeMode.RELAXED, desired_chunk_size=4 * 1024 * KB)
    chunks, _, _ = simulate(config)
    sizes = sorted(c.size for c in chunks)
    assert all(size <= config.desired_chunk_size for size in sizes)
    assert all(size >= config.desired_chunk_size // 2 for size in sizes[1:])
    total = sum(sizes)
    assert len(chunks) <= math.ceil(total / (config.desired_chunk_size / 2))


@pytest.mark.parametrize("ordered", [False, True])
def test_manual_mode_honours_its_limits(ordered: bool) -> None:
    """Never more intermediate chunks than max_intermediate_chunk_count after a task, and
    never more than chunk_count_per_merge_job chunks in one merge job."""
    config = AutoMerge(
        AutoMergeMode.MANUAL,
        desired_chunk_size=1024 * 1024 * KB,
        max_intermediate_chunk_count=50,
        chunk_count_per_merge_job=8,
    )
    _, worst, _ = simulate(config, tasks=3_000, ordered=ordered)
    assert worst <= 1.0


def test_disabled_never_merges() -> None:
    """Disabled keeps every task's chunk."""
    chunks, _, jobs = simulate(AutoMerge(), tasks=500)
    assert (len(chunks), jobs) == (500, 0)


def test_manual_needs_both_limits() -> None:
    """Manual mode without its two limits is refused, naming them."""
    with pytest.raises(ValueError, match="max_intermediate_chunk_count and chunk_count"):
        AutoMerge(AutoMergeMode.MANUAL, max_intermediate_chunk_count=3)


_SIZES = st.lists(st.integers(1, 120), min_size=2, max_size=40)


@given(sizes=_SIZES, small=st.sets(st.integers(0, 39)), per_job=st.integers(2, 6))
def test_ordered_merges_join_only_neighbouring_small_chunks(sizes, small, per_job) -> None:  # type: ignore[no-untyped-def]
    """In an ordered dataset every merge group is a run of adjacent intermediate chunks, at
    most per_job long, and merging keeps every other chunk in place."""
    chunks = [Chunk(f"c{i}", s, 1, 0) for i, s in enumerate(sizes)]
    mine = {f"c{i}" for i in small if i < len(sizes)}
    config = AutoMerge(
        AutoMergeMode.MANUAL,
        desired_chunk_size=1000,
        chunk_size_threshold=100,
        max_intermediate_chunk_count=1,
        chunk_count_per_merge_job=per_job,
    )
    groups = plan_merges(config, chunks, mine, len(chunks), final=False, ordered=True)
    position = {c.id: i for i, c in enumerate(chunks)}
    for group in groups:
        indexes = [position[i] for i in group]
        assert indexes == list(range(indexes[0], indexes[0] + len(group)))
        assert set(group) <= mine
        assert 2 <= len(group) <= per_job
    merged = [
        Chunk(f"m{n}", sum(sizes[position[i]] for i in g), 1, 0) for n, g in enumerate(groups)
    ]
    result = apply_merges(chunks, groups, merged)
    assert sum(c.size for c in result) == sum(sizes)
    untouched = [c.id for c in result if not c.id.startswith("m")]
    assert untouched == [c.id for c in chunks if not any(c.id in g for g in groups)]


@given(sizes=_SIZES, produced=st.integers(1, 10_000))
def test_economy_plans_only_when_over_the_quota(sizes, produced) -> None:  # type: ignore[no-untyped-def]
    """Economy plans nothing at or under 4*sqrt(n), and over it plans down to half of that."""
    chunks = [Chunk(f"c{i}", s, 1, 0) for i, s in enumerate(sizes)]
    config = AutoMerge(AutoMergeMode.ECONOMY, desired_chunk_size=10_000, chunk_size_threshold=100)
    mine = {c.id for c in chunks}
    groups = plan_merges(config, chunks, mine, produced, final=False, ordered=False)
    quota = economy_quota(produced)
    if len(chunks) <= quota:
        assert groups == []
    else:
        left = len(chunks) - sum(len(g) - 1 for g in groups)
        assert left <= quota // 2 or left <= 1
    assert attrs.asdict(config)["mode"] is AutoMergeMode.ECONOMY
