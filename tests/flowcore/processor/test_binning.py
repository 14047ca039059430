"""Tests for the bin manager's engine additions: bins aged from queue dates, cuts of batches."""

from __future__ import annotations

from flowcore.flowfile import FlowFile
from flowcore.processor.binning import BinLimits, BinManager, EvictionReason


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
