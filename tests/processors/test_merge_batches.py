"""Tests for MergeContent over FlowFile batches: which configurations it takes, and how."""

from __future__ import annotations

import pytest

from flowcore.flowfile import Attributes, ResourceClaim, new_uuids
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.process_context import ProcessContext
from flowcore.session.host import ComponentInfo, StateMap
from processors import MergeContent
from processors._merge_batches import representatives


def _context(processor: MergeContent) -> ProcessContext:
    return ProcessContext(
        processor,
        component=ComponentInfo("merge-1", "MergeContent", "merge"),
        clock=lambda: 1_000,
        state=StateMap,
        resumed_bins=True,
    )


def _batch(count: int, size: int = 10) -> FlowFileBatch:
    key, first = new_uuids(count)
    return FlowFileBatch.alike(
        count=count,
        first_id=1,
        uuid_key=key,
        uuid_first=first,
        attributes=Attributes({"path": "./", "kind": "x"}),
        uuid_named=("filename",),
        resource_claim=ResourceClaim("default", "0", "claim-1"),
        offset=0,
        stride=size,
        size=size,
        entry_date=500,
        lineage_start_date=500,
        queue_date=900,
    )


@pytest.mark.parametrize(
    "properties",
    [
        {"correlation_attribute_name": "kind"},
        {"bin_termination_check": "${kind:equals('x')}"},
        {"merge_format": "TAR"},
        {"merge_strategy": "Defragment"},
        {"maximum_group_size": "5 B"},  # each FlowFile is larger: merged alone, one by one
    ],
    ids=["correlation", "termination-check", "tar", "defragment", "oversize"],
)
def test_configurations_without_a_batch_form_decline(properties: dict) -> None:
    """bin_batches returns None, so the engine takes the FlowFiles one by one."""
    merge = MergeContent(**properties)
    assert merge.bin_batches(_context(merge), [_batch(3)], end_of_input=False) is None


def test_bins_are_cut_from_batches_by_count() -> None:
    """Max entries 4 over batches of 3 and 6: bins of 4, 4 and one left open."""
    merge = MergeContent(minimum_number_of_entries=4, maximum_number_of_entries=4)
    binning = merge.bin_batches(_context(merge), [_batch(3), _batch(6)], end_of_input=False)
    assert binning is not None
    assert [b.pieces for b in binning.ready] == [[(0, 0, 3), (1, 0, 1)], [(1, 1, 5)]]
    assert [b.reason.value for b in binning.ready] == ["MAX_ENTRIES_THRESHOLD_REACHED"] * 2
    assert [b.pieces for b in binning.open] == [[(1, 5, 6)]]
    assert binning.ready[0].created_ms == 900  # as old as its FlowFiles' queue date
    at_end = merge.bin_batches(_context(merge), [_batch(3), _batch(6)], end_of_input=True)
    assert at_end is not None
    assert at_end.ready[-1].reason.value == "END_OF_INPUT"
    assert at_end.open == ()


def test_a_batch_is_represented_by_its_first_and_last_flowfile() -> None:
    """Two FlowFiles show every attribute that differs inside a batch; one stands alone."""
    many, one = _batch(5), _batch(1)
    shown = representatives([many, one])
    assert [f.uuid for f in shown] == [many.uuid(0), many.uuid(4), one.uuid(0)]
    assert shown[0].attributes["filename"] != shown[1].attributes["filename"]
