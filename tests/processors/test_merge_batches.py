"""Tests for MergeContent over FlowFile batches: which configurations it takes, and how."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.binning import UNLIMITED, Bin, BinLimits, BinManager
from flowcore.flowfile import Attributes, FlowFile, ResourceClaim, new_uuids
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.process_context import ProcessContext
from flowcore.session.host import ComponentInfo, StateMap
from processors import MergeContent
from processors._merge_batches import _Intake, _offer, representatives


def _context(processor: MergeContent) -> ProcessContext:
    return ProcessContext(
        processor,
        component=ComponentInfo("merge-1", "MergeContent", "merge"),
        clock=lambda: 1_000,
        state=StateMap,
        resumed_bins=True,
    )


_QUEUED = itertools.count()


def _batch(count: int, size: int = 10) -> FlowFileBatch:
    """*count* FlowFiles queued after those of every batch made before."""
    key, first = new_uuids(count)
    position = next(_QUEUED) * 1_000
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
        queue_date_index=position,
    )


def _pieces(bin_: Bin) -> list[tuple[int, list[int]]]:
    return [(index, rows.tolist()) for index, rows in bin_.pieces]


@pytest.mark.parametrize(
    "properties",
    [
        {"correlation_attribute_name": "${kind}"},
        {"bin_termination_check": "${kind:equals('x')}"},
        {"merge_format": "TAR"},
        {"merge_strategy": "Defragment"},
        {"maximum_group_size": "5 B"},  # each FlowFile is larger: merged alone, one by one
    ],
    ids=["correlation-expression", "termination-check", "tar", "defragment", "oversize"],
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
    assert [_pieces(b) for b in binning.ready] == [[(0, [0, 1, 2]), (1, [0])], [(1, [1, 2, 3, 4])]]
    assert [b.reason.value for b in binning.ready] == ["MAX_ENTRIES_THRESHOLD_REACHED"] * 2
    assert [_pieces(b) for b in binning.open] == [[(1, [5])]]
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


def test_bins_are_grouped_by_the_correlation_column_in_queue_order() -> None:
    """Groups of a column: each bin holds its group's FlowFiles in queue order, across batches."""
    merge = MergeContent(
        correlation_attribute_name="group",
        minimum_number_of_entries=2,
        maximum_number_of_entries=2,
        maximum_number_of_bins=10,
    )
    first, second = _batch(4), _batch(2)
    first = first.with_columns({"group": column_of(["a", "b", "a", "b"])})
    second = second.with_columns({"group": column_of(["b", "a"])})
    binning = merge.bin_batches(_context(merge), [first, second], end_of_input=True)
    assert binning is not None
    assert [(b.group, _pieces(b)) for b in binning.ready] == [
        ("a", [(0, [0, 2])]),
        ("b", [(0, [1, 3])]),
        ("b", [(1, [0])]),
        ("a", [(1, [1])]),
    ]
    assert np.array_equal(binning.ready[0].pieces[0][1], [0, 2])


def _state(manager: BinManager) -> list[tuple]:
    return [
        (b.group, b.entries, b.size, b.successive_failed_offerings, b.created_ms, b.is_full())
        for b in manager.bins()
    ]


@given(
    max_entries=st.integers(1, 12),
    max_bytes=st.one_of(st.just(UNLIMITED), st.integers(10, 60)),
    size=st.integers(0, 10),
    turns=st.lists(st.lists(st.sampled_from("abc"), min_size=1, max_size=25), max_size=6),
    migrate_every=st.integers(1, 4),
)
def test_batches_are_binned_as_their_flowfiles_one_by_one(
    max_entries: int, max_bytes: int, size: int, turns: list[list[str]], migrate_every: int
) -> None:
    """Offering a batch's FlowFiles at once leaves the bins, counters and members (and the
    order bins of different groups open in) as offering each FlowFile does."""
    limits = BinLimits(min_entries=1, max_entries=max_entries, max_bytes=max_bytes)
    one, whole = BinManager(limits), BinManager(limits)
    number = 0
    seen: dict[int, list[int]] = {}  # bin id -> the numbers of its FlowFiles
    pieces: dict[int, int] = {}  # bin id -> its pieces already counted
    for turn, groups in enumerate(turns):
        count = len(groups)
        flowfiles = [
            FlowFile.create(n, 0, {}).replace(size=size) for n in range(number, number + count)
        ]
        for flowfile, group in zip(flowfiles, groups, strict=True):
            one.offer(group, [flowfile], now_ms=turn)
        batch = _batch(count, size).with_columns({"group": column_of(groups)})
        intake = _Intake([batch], "group")
        _offer(whole, intake, len(intake), max(size, 1) if max_bytes < UNLIMITED else 1, turn)
        for bin_ in whole.bins():  # this turn's pieces, as FlowFile numbers
            members = seen.setdefault(bin_.id, [])
            for _, rows in bin_.pieces[pieces.get(bin_.id, 0) :]:
                members.extend(number + rows)
            pieces[bin_.id] = len(bin_.pieces)
        number += count
        assert _state(one) == _state(whole)
        assert [[f.id for f in b.flowfiles] for b in one.bins()] == [
            seen[b.id] for b in whole.bins()
        ]
        if turn % migrate_every == 0:  # ready bins leave, so later offers meet fewer bins
            taken = [
                b.id for b in one.remove_ready_bins(relaxed=True, now_ms=turn, max_age_ms=None)
            ]
            kept = [
                b.id for b in whole.remove_ready_bins(relaxed=True, now_ms=turn, max_age_ms=None)
            ]
            assert len(taken) == len(kept)


def test_fragments_queued_out_of_order_are_defragmented_one_by_one() -> None:
    """Fragments queued against their index order take the per-FlowFile path (the bundle in
    index order, the originals in queue order), so both forms agree."""
    from flowcore.testing import TestRunner
    from processors import MergeContent, SplitText

    split = TestRunner(SplitText(line_split_count=1), batches=True)
    split.enqueue(b"a\nb\nc\n")
    split.run()
    merge = TestRunner(MergeContent(merge_strategy="Defragment"), batches=True)
    for piece in reversed(split.flowfiles_for("splits")):
        merge.enqueue(piece)
    merge.assert_batch_form_agrees(allow_decline=True)
    merge.assert_transfer_count("merged", 1)
    merge.flowfiles_for("merged")[0].assert_content_equals("abc")
    assert [f.content for f in merge.flowfiles_for("original")] == [b"c", b"b", b"a"]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(1, 40), min_size=1, max_size=9),
    st.integers(1, 4),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_defragment_of_more_files_than_bins_agrees_with_one_by_one(
    lines: list[int], max_bins: int, interleave: bool, rng: Any
) -> None:
    """More files than Maximum Number of Bins: queued file after file, every bin completes in
    turn and the batch form takes them all; interleaved, a bin would be evicted (failure) and
    the batch form leaves it to the one-by-one path. Both forms agree either way."""
    from flowcore.testing import TestRunner
    from processors import MergeContent, SplitText

    split = TestRunner(SplitText(line_split_count=1, remove_trailing_newlines=False), batches=True)
    for number, count in enumerate(lines):
        split.enqueue(b"".join(b"f%d l%d\n" % (number, i) for i in range(count)))
    split.run(len(lines))
    pieces = split.flowfiles_for("splits")
    if interleave:
        rng.shuffle(pieces)
    merge = TestRunner(
        MergeContent(merge_strategy="Defragment", maximum_number_of_bins=max_bins),
        batches=True,
    )
    for piece in pieces:
        merge.enqueue(piece)
    merge.assert_batch_form_agrees(allow_decline=True)
    if not interleave:
        assert merge.batch_use.declined == [], merge.batch_use
        assert sorted(f.content for f in merge.flowfiles_for("merged")) == sorted(
            b"".join(b"f%d l%d\n" % (number, i) for i in range(count))
            for number, count in enumerate(lines)
        )
