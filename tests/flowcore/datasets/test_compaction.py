"""Tests for merging chunks: planning by mergeability and compaction (kill -9 during it:
tests/stress/test_dataset_kills.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.datasets import Chunk, Dataset, Mergeability, compact, plan_compaction
from flowcore.errors import DatasetError

_MERGEABILITY = st.sampled_from(
    [Mergeability.ALWAYS, Mergeability.NEVER, Mergeability.after(100), Mergeability.after(10**9)]
)
_CHUNKS = st.lists(st.tuples(st.integers(1, 60), _MERGEABILITY), max_size=40)


@given(spec=_CHUNKS, file_max=st.integers(2, 6), threshold=st.floats(0.05, 1.0))
def test_compaction_merges_only_adjacent_eligible_chunks_within_limits(
    spec, file_max, threshold
) -> None:  # type: ignore[no-untyped-def]
    """Every planned range is adjacent, fully eligible now, at most merge_file_max chunks and
    at most threshold x split threshold bytes; no eligible neighbours are left that fit."""
    chunks = [Chunk(f"c{i}", size, 1, 0, m) for i, (size, m) in enumerate(spec)]
    now = 1_000
    groups = plan_compaction(
        chunks, now, split_threshold=200, merge_file_max=file_max, mergeability_threshold=threshold
    )
    position = {c.id: i for i, c in enumerate(chunks)}
    by_id = {c.id: c for c in chunks}
    for group in groups:
        indexes = [position[i] for i in group]
        assert indexes == list(range(indexes[0], indexes[0] + len(group)))
        assert 2 <= len(group) <= file_max
        assert sum(by_id[i].size for i in group) <= threshold * 200
        assert all(by_id[i].mergeability.eligible(0, now) for i in group)


def test_compact_publishes_one_new_version_with_the_same_bytes(
    tmp_path: Path, published_dataset: Callable[..., Dataset]
) -> None:
    """Compaction joins the small chunks, keeps the bytes (demarcators included) and order,
    and leaves NEVER chunks alone."""
    dataset = published_dataset(tmp_path / "ds", [10, 20, 30, 40, 500, 5, 5])
    before = b"".join(dataset.iter_bytes())
    done = compact(dataset, split_threshold=1_000, now_ms=0)
    assert (done.chunks_before, done.chunks_after, done.merged_groups) == (7, 3, 2)
    assert b"".join(dataset.iter_bytes()) == before
    assert dataset.latest_version() == 2
    never = published_dataset(tmp_path / "never", [10, 20], mergeability=Mergeability.NEVER)
    assert compact(never, split_threshold=1_000).merged_groups == 0


def test_compaction_refuses_a_dataset_in_use(
    tmp_path: Path, published_dataset: Callable[..., Dataset]
) -> None:
    """A running writer holds the lock: compaction says so instead of racing it."""
    dataset = published_dataset(tmp_path / "ds", [10, 20])
    writer = Dataset(tmp_path / "ds")
    writer.acquire("write")
    try:
        with pytest.raises(DatasetError, match="another flow run or compaction"):
            compact(dataset, split_threshold=1_000)
    finally:
        writer.release()
