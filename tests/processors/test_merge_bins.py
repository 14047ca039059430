"""Tests for processors/_merge_bins.py: MergeContent's settings and migrate, read from a context."""

from __future__ import annotations

from flowcore.processor.binning import UNLIMITED, BinLimits, BinManager, EvictionReason
from flowcore.processor.context import ProcessContext
from flowcore.session.host import ComponentInfo, StateMap
from processors import MergeContent
from processors._merge_bins import (
    bin_limits,
    defragments,
    max_bin_age_ms,
    merge_options,
    take_ready,
)


def _context(processor: MergeContent, now: int = 10_000) -> ProcessContext:
    return ProcessContext(
        processor,
        component=ComponentInfo("merge-1", "MergeContent", "merge"),
        clock=lambda: now,
        state=StateMap,
    )


def test_the_limits_are_the_properties_and_defragment_has_none() -> None:
    """Bin-Packing's limits come from Min/Max Entries and Size; Defragment's bins are unlimited."""
    packing = _context(
        MergeContent(
            minimum_number_of_entries=2, maximum_number_of_entries=5, maximum_group_size="1 KB"
        )
    )
    assert not defragments(packing)
    assert bin_limits(packing) == BinLimits(0, 1024, 2, 5)
    fragments = _context(MergeContent(merge_strategy="Defragment", minimum_number_of_entries=2))
    assert defragments(fragments)
    assert bin_limits(fragments) == BinLimits(0, UNLIMITED, UNLIMITED, UNLIMITED)


def test_max_bin_age_is_in_milliseconds_or_none() -> None:
    """Max Bin Age reads as milliseconds; unset, bins never age out."""
    assert max_bin_age_ms(_context(MergeContent(max_bin_age="2 sec"))) == 2_000
    assert max_bin_age_ms(_context(MergeContent())) is None


def test_options_leave_out_properties_whose_dependencies_are_unmet() -> None:
    """A Header without the Text delimiter strategy is not in effect (NiFi's dependencies)."""
    unused = merge_options(_context(MergeContent(header="H")))
    assert unused.header is None
    used = merge_options(_context(MergeContent(header="H", delimiter_strategy="Text")))
    assert used.header == "H"
    assert used.now_ms == 10_000


def test_take_ready_evicts_the_oldest_bin_only_when_over_the_count() -> None:
    """No bin ready and more bins than Maximum Number of Bins: the oldest leaves, evicted."""
    context = _context(MergeContent(minimum_number_of_entries=10))
    manager = BinManager(bin_limits(context))
    manager.new_bin("a", 1_000)
    manager.new_bin("b", 2_000)
    assert take_ready(manager, context, relaxed=False, max_bins=2, could_not_bin=False) == []
    (evicted,) = take_ready(manager, context, relaxed=False, max_bins=1, could_not_bin=False)
    assert (evicted.group, evicted.reason) == ("a", EvictionReason.BIN_MANAGER_FULL)


def test_every_bin_holding_processor_shares_one_ready_loop() -> None:
    """MergeContent, MergeRecord and JoinEnrichment take the ready-bin loop, the end-of-input
    purge and on_stopped from HeldBins; each keeps only its binning and its merge."""
    from processors import JoinEnrichment, MergeContent, MergeRecord
    from processors._merge_bins import HeldBins

    for processor in (MergeContent, MergeRecord, JoinEnrichment):
        assert issubclass(processor, HeldBins)
        for name in ("_process_ready", "end_of_input", "on_stopped", "_reset", "__getstate__"):
            assert name not in vars(processor), (processor.__name__, name)
        assert "merge_bin" in vars(processor)
