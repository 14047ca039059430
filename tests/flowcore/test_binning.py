"""Tests for the bin manager's engine additions: bins aged from queue dates, cuts of batches."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flowcore.binning import UNLIMITED, Bin, BinLimits, BinManager, EvictionReason
from flowcore.flowfile import FlowFile


def _queued(number: int, queue_date: int) -> FlowFile:
    return FlowFile.create(number, queue_date, {"filename": str(number)}).replace(
        queue_date=queue_date
    )


def test_a_rebuilt_bin_is_as_old_as_its_oldest_flowfile() -> None:
    """With age_from_queue_date, Max Bin Age counts from the first FlowFile's queue date."""
    manager = BinManager(BinLimits(min_entries=10, max_entries=10), age_from_queue_date=True)
    manager.offer(None, [_queued(1, 1_000), _queued(2, 5_000)], now_ms=60_000)
    (bin_,) = manager.bins()
    assert bin_.created_ms == 1_000
    (ready,) = manager.remove_ready_bins(relaxed=False, now_ms=62_000, max_age_ms=60_000)
    assert ready.reason is EvictionReason.TIMEOUT


def test_by_default_a_bin_is_created_now() -> None:
    """Without the option (the harness, NiFi), a bin is as old as the offer."""
    manager = BinManager(BinLimits(min_entries=10, max_entries=10))
    manager.offer(None, [_queued(1, 1_000)], now_ms=60_000)
    assert manager.bins()[0].created_ms == 60_000
    assert manager.remove_ready_bins(relaxed=False, now_ms=62_000, max_age_ms=60_000) == []


def _state(manager: BinManager) -> list[tuple]:
    return [
        (b.entries, b.size, b.successive_failed_offerings, b.created_ms, b.is_full())
        for b in manager.bins()
    ]


def _members(bin_: Bin) -> list[int]:
    """A bin's FlowFiles by number: FlowFile ids, or the positions its cuts cover."""
    if bin_.flowfiles:
        return [f.id for f in bin_.flowfiles]
    return [n for _, start, stop in bin_.pieces for n in range(start, stop)]


@given(
    max_entries=st.integers(1, 12),
    max_bytes=st.one_of(st.just(UNLIMITED), st.integers(10, 60)),
    cuts=st.lists(st.tuples(st.integers(1, 25), st.integers(0, 10)), min_size=1, max_size=6),
    migrate_every=st.integers(1, 4),
)
def test_a_cut_is_binned_as_its_flowfiles_one_by_one(
    max_entries: int, max_bytes: int, cuts: list[tuple[int, int]], migrate_every: int
) -> None:
    """offer_cut leaves the bins, their counters and members as offering each FlowFile does."""
    limits = BinLimits(min_entries=1, max_entries=max_entries, max_bytes=max_bytes)
    one, whole = BinManager(limits), BinManager(limits)
    number = 0
    for turn, (count, size) in enumerate(cuts):
        flowfiles = [
            FlowFile.create(n, 0, {}).replace(size=size) for n in range(number, number + count)
        ]
        one.offer(None, flowfiles, now_ms=turn)
        whole.offer_cut(None, (turn, number, number + count), size, now_ms=turn)
        number += count
        assert _state(one) == _state(whole)
        assert [_members(b) for b in one.bins()] == [_members(b) for b in whole.bins()]
        if turn % migrate_every == 0:  # ready bins leave, so later cuts meet fewer bins
            taken = [
                b.id for b in one.remove_ready_bins(relaxed=True, now_ms=turn, max_age_ms=None)
            ]
            kept = [
                b.id for b in whole.remove_ready_bins(relaxed=True, now_ms=turn, max_age_ms=None)
            ]
            assert len(taken) == len(kept)
