"""Tests for processors._merge_record_bins: NiFi's RecordBin and RecordBinManager rules."""

from __future__ import annotations

from flowcore.flowfile import FlowFile
from flowcore.processor.binning import EvictionReason
from processors._merge_record_bins import RecordBinManager, RecordLimits, fragment_problem


def flowfile(n: int, size: int = 10, **attributes: str) -> FlowFile:
    """A FlowFile record of *size* bytes."""
    created = FlowFile.create(n, 0, attributes)
    return FlowFile(id=n, uuid=created.uuid, attributes=created.attributes, size=size)


def test_limits_are_soft() -> None:
    """A bin takes a whole FlowFile past Maximum Number of Records, then completes."""
    manager = RecordBinManager(RecordLimits(min_records=1, max_records=3), max_bins=5)
    bin_, done = manager.add("g", flowfile(1), 2, 0)
    assert done == []
    same, done = manager.add("g", flowfile(2), 5, 0)
    assert same is bin_
    assert done == [bin_]
    assert bin_.records == 7
    assert bin_.reason is EvictionReason.MAX_ENTRIES_THRESHOLD_REACHED
    assert manager.bin_count == 0


def test_full_enough_and_expired() -> None:
    """Relaxed takes bins at their minimums; Max Bin Age takes older ones first."""
    manager = RecordBinManager(RecordLimits(min_records=2, max_records=10), max_bins=5)
    manager.add("a", flowfile(1), 2, 0)
    manager.add("b", flowfile(2), 1, 50)
    assert manager.take_full(relaxed=False) == []
    expired = manager.take_expired(now_ms=120, max_age_ms=100)
    assert [b.group for b in expired] == ["a"]
    assert expired[0].reason is EvictionReason.TIMEOUT
    assert manager.take_full(relaxed=True) == []
    manager.add("b", flowfile(3), 1, 130)
    (ready,) = manager.take_full(relaxed=True)
    assert ready.reason is EvictionReason.MIN_THRESHOLDS_REACHED


def test_too_many_bins_completes_the_oldest() -> None:
    """A new bin past Maximum Number of Bins completes the oldest one."""
    manager = RecordBinManager(RecordLimits(min_records=5), max_bins=2)
    first, _ = manager.add("a", flowfile(1), 1, 0)
    manager.add("b", flowfile(2), 1, 0)
    _, done = manager.add("c", flowfile(3), 1, 0)
    assert done == [first]
    assert first.reason is EvictionReason.BIN_MANAGER_FULL
    assert manager.bin_count == 2


def test_defragment_is_full_at_fragment_count() -> None:
    """Defragment: the bin completes with fragment.count FlowFiles."""
    manager = RecordBinManager(RecordLimits(defragment=True), max_bins=5)
    manager.add("f", flowfile(1, **{"fragment.count": "2"}), 1, 0)
    _, done = manager.add("f", flowfile(2, **{"fragment.count": "2"}), 1, 0)
    assert len(done) == 1


def test_fragment_problems() -> None:
    """Missing, non-integer, conflicting and short fragment counts are named."""
    assert "not present" in (fragment_problem([flowfile(1)]) or "")
    assert "x" in (fragment_problem([flowfile(1, **{"fragment.count": "x"})]) or "")
    conflicting = [flowfile(1, **{"fragment.count": "2"}), flowfile(2, **{"fragment.count": "3"})]
    assert "another FlowFile" in (fragment_problem(conflicting) or "")
    assert "only 1 of 2" in (fragment_problem([flowfile(1, **{"fragment.count": "2"})]) or "")
    whole = [flowfile(1, **{"fragment.count": "2"}), flowfile(2)]
    assert fragment_problem(whole) is None


def test_measured_bytes_and_bin_for() -> None:
    """bin_for gives the open bin or a new one not yet held; a measured size counts, not the
    content's, toward Maximum Bin Size."""
    manager = RecordBinManager(RecordLimits(min_records=1, max_bytes=20), max_bins=5)
    new = manager.bin_for("g", flowfile(1, size=1000), 0)
    assert manager.bin_count == 0
    placed, done = manager.add("g", flowfile(1, size=1000), 1, 0, size=9, into=new)
    assert placed is new
    assert done == []
    assert manager.bin_for("g", flowfile(2), 0) is new
    _, done = manager.add("g", flowfile(2, size=1000), 1, 0, size=12, into=new)
    assert done == [new]
    assert new.size == 21
    assert new.reason is EvictionReason.MAX_BYTES_THRESHOLD_REACHED
