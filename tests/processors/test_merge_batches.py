"""Tests for MergeContent over FlowFile batches: which configurations it takes, and how."""

from __future__ import annotations

import itertools
import time
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.flowfile import Attributes, FlowFile, ResourceClaim, new_uuids
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.processor.binning import (
    UNLIMITED,
    Bin,
    BinLimits,
    BinManager,
    InsertionStrategy,
    Offer,
)
from flowcore.processor.context import ProcessContext
from flowcore.session.host import ComponentInfo, StateMap
from processors import MergeContent
from processors._merge_batches import (
    _Intake,
    _offer,
    _offer_each,
    bundle_number,
    representatives,
)
from processors._merge_bundles import bundle_filename


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
        {"bin_termination_check": "${nextInt():mod(2):equals(0)}"},
        {"merge_strategy": "Defragment"},  # the batch has no fragment attributes: failure
    ],
    ids=["correlation-expression", "termination-check-next-int", "defragment"],
)
def test_configurations_without_a_batch_form_decline(properties: dict) -> None:
    """bin_batches returns None, so the engine takes the FlowFiles one by one."""
    merge = MergeContent(**properties)
    assert merge.bin_batches(_context(merge), [_batch(3)], end_of_input=False) is None


@pytest.mark.parametrize(
    "properties",
    [
        {"bin_termination_check": "${kind:equals('x')}"},
        {"merge_format": "TAR"},
        {"merge_format": "Avro"},
        {"maximum_group_size": "5 B"},  # each FlowFile is larger: merged alone
    ],
    ids=["termination-check", "tar", "avro", "oversize"],
)
def test_configurations_once_declined_are_binned_from_batches(properties: dict) -> None:
    """Every Merge Format, a termination check and byte limits bin batches whole."""
    merge = MergeContent(**properties)
    assert merge.bin_batches(_context(merge), [_batch(3)], end_of_input=True) is not None


def test_an_oversize_flowfile_is_a_ready_bin_of_its_own() -> None:
    """FlowFiles larger than Maximum Group Size are each merged alone at once (merge.reason
    UNSET), ahead of the bins the same trigger readies, as offered one by one."""
    merge = MergeContent(
        maximum_group_size="15 B", minimum_number_of_entries=2, maximum_number_of_entries=2
    )
    small = attrs.evolve(_batch(4), sizes=[5, 20, 5, 5], offsets=[0, 5, 25, 30])
    binning = merge.bin_batches(_context(merge), [small], end_of_input=False)
    assert binning is not None
    assert [(_pieces(b), b.reason.value) for b in binning.ready] == [
        ([(0, [1])], "UNSET"),
        ([(0, [0, 2])], "MAX_ENTRIES_THRESHOLD_REACHED"),
    ]
    assert [_pieces(b) for b in binning.open] == [[(0, [3])]]


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
    """Groups of a column: each bin holds its group's FlowFiles in queue order, across batches;
    an intake is offered group after group (as the triggers do), so group a's bins open first."""
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
        ("a", [(1, [1])]),
        ("b", [(1, [0])]),
    ]
    assert np.array_equal(binning.ready[0].pieces[0][1], [0, 2])


def _state(manager: BinManager) -> list[tuple]:
    return [
        (
            b.group,
            b.entries,
            b.size,
            b.successive_failed_offerings,
            b.created_ms,
            b.is_full(),
            b.completed,
        )
        for b in manager.bins()
    ]


def _offered_as_triggers_do(
    manager: BinManager, flowfiles: list[FlowFile], groups: list[str], now: int, **how: Any
) -> list[Offer]:
    """BinManager.offer of one intake as MergeContent's trigger offers it: group by group."""
    offers = []
    for group in dict.fromkeys(groups):
        members = [f for f, g in zip(flowfiles, groups, strict=True) if g == group]
        offers.extend(manager.offer(group, members, now, **how))
    return offers


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
    order bins of different groups open in) as offering each FlowFile does, group by group."""
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
        _offered_as_triggers_do(one, flowfiles, groups, turn)
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


@given(
    max_entries=st.integers(1, 8),
    max_bytes=st.one_of(st.just(UNLIMITED), st.integers(0, 40)),
    turns=st.lists(
        st.lists(
            st.tuples(st.sampled_from("abc"), st.integers(0, 15), st.booleans()),
            min_size=1,
            max_size=25,
        ),
        max_size=6,
    ),
    check=st.booleans(),
    strategy=st.sampled_from(list(InsertionStrategy)),
    migrate_every=st.integers(1, 4),
)
def test_flowfiles_of_varied_sizes_are_binned_as_one_by_one(  # noqa: PLR0917 - drawn values
    max_entries: int,
    max_bytes: int,
    turns: list[list[tuple[str, int, bool]]],
    check: bool,
    strategy: InsertionStrategy,
    migrate_every: int,
) -> None:
    """Offering FlowFiles of varied sizes in turn on numbers (byte limits, oversize FlowFiles
    alone, a termination check under each insertion strategy) leaves the bins, counters and
    members BinManager.offer leaves, and makes the same bins of one."""
    limits = BinLimits(min_entries=1, max_entries=max_entries, max_bytes=max_bytes)
    one, whole = BinManager(limits), BinManager(limits)
    number = 0
    seen: dict[int, list[int]] = {}  # bin id -> the numbers of its FlowFiles
    pieces: dict[int, int] = {}  # bin id -> its pieces already counted
    for turn, offers in enumerate(turns):
        groups = [g for g, _, _ in offers]
        sizes = [size for _, size, _ in offers]
        ends = [end for _, _, end in offers]
        flowfiles = [
            FlowFile.create(number + i, 0, {"end": str(end)}).replace(size=size)
            for i, (size, end) in enumerate(zip(sizes, ends, strict=True))
        ]
        made = _offered_as_triggers_do(
            one,
            flowfiles,
            groups,
            turn,
            terminates=(lambda f: f.attributes["end"] == "True") if check else None,
            strategy=strategy,
        )
        alone = [(o.bin.entries, o.bin.size, o.flowfile.id) for o in made if o.alone]
        batch = _batch(len(offers)).with_columns({"group": column_of(groups)})
        batch = attrs.evolve(batch, sizes=sizes, offsets=np.cumsum([0, *sizes[:-1]]))
        intake = _Intake([batch], "group")
        apart: list[Bin] = []
        ending = np.array(ends) if check else None
        _offer_each(whole, intake, len(intake), turn, ending=ending, strategy=strategy, alone=apart)
        assert alone == [(b.entries, b.size, number + int(b.pieces[0][1][0])) for b in apart]
        for bin_ in whole.bins():  # this turn's pieces, as FlowFile numbers
            members = seen.setdefault(bin_.id, [])
            for _, rows in bin_.pieces[pieces.get(bin_.id, 0) :]:
                members.extend(number + rows)
            pieces[bin_.id] = len(bin_.pieces)
        number += len(offers)
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


def test_the_default_name_digests_every_uuid_of_the_bin() -> None:
    """A bundle's default name is the one-by-one path's: every FlowFile's uuid, not only the
    FlowFiles that stand for the batches in attribute comparisons."""
    batches = [_batch(5), _batch(2)]
    flowfiles = [f for b in batches for f in b.flowfiles()]
    assert bundle_number(batches) == bundle_filename(flowfiles, None)
    assert bundle_number(batches) != bundle_filename(representatives(batches), None)


def test_fragments_queued_out_of_order_are_defragmented_as_batches() -> None:
    """Fragments queued against their index order are merged whole: the bundle in index order,
    the originals in queue order, as one by one."""
    from flowcore.testing import TestRunner
    from processors import MergeContent, SplitText

    split = TestRunner(SplitText(line_split_count=1), batches=True)
    split.enqueue(b"a\nb\nc\n")
    split.run()
    merge = TestRunner(MergeContent(merge_strategy="Defragment"), batches=True)
    for piece in reversed(split.flowfiles_for("splits")):
        merge.enqueue(piece)
    merge.assert_batch_form_agrees()
    assert merge.batch_use.whole == 3
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


_FORMATS = [
    "Binary Concatenation",
    "TAR",
    "ZIP",
    "FlowFile Stream, v3",
    "FlowFile Stream, v2",
    "FlowFile Tar, v1",
]
_ATTRIBUTES = st.fixed_dictionaries(
    {},
    optional={
        "k": st.sampled_from(["a", "b"]),
        "end": st.sampled_from(["y", "n"]),
        "filename": st.sampled_from(["x", "y", "../x", "d/x", ""]),
        "path": st.sampled_from(["./", ".", "d", "./e/", "/abs"]),
        "tar.permissions": st.sampled_from(["493", "420", "777", "bad"]),
        "mime.type": st.sampled_from(["text/plain", "application/json"]),
        "segment.original.filename": st.just("whole.txt"),
    },
)
_TURNS = st.lists(
    st.lists(st.tuples(st.binary(max_size=12), _ATTRIBUTES), min_size=1, max_size=8),
    min_size=1,
    max_size=4,
)


@st.composite
def _properties(draw: st.DrawFn) -> dict[str, Any]:
    """A bin-packing MergeContent configuration, limits and options drawn at random."""
    low = draw(st.integers(1, 4))
    properties: dict[str, Any] = {
        "minimum_number_of_entries": low,
        "maximum_number_of_entries": draw(st.integers(low, 8)),
        "maximum_number_of_bins": draw(st.integers(1, 5)),
        "keep_path": draw(st.booleans()),
        "attribute_strategy": draw(
            st.sampled_from(["Keep Only Common Attributes", "Keep All Unique Attributes"])
        ),
    }
    if draw(st.booleans()):
        high = draw(st.integers(0, 40))
        properties["maximum_group_size"] = f"{high} B"
        properties["minimum_group_size"] = f"{draw(st.integers(0, min(high, 10)))} B"
    if draw(st.booleans()):
        properties["correlation_attribute_name"] = "k"
    if draw(st.booleans()):
        properties["bin_termination_check"] = "${end:equals('y')}"
        properties["flowfile_insertion_strategy"] = draw(
            st.sampled_from([s.value for s in InsertionStrategy])
        )
    if draw(st.booleans()):
        properties["delimiter_strategy"] = "Text"
        properties["demarcator"] = "|"
        properties["header"] = "<${k}>"
    if draw(st.booleans()):
        properties["tar_modified_time"] = "${mtime}"
    return properties


def _queued(runner: Any, turns: list[list[tuple[bytes, dict[str, str]]]]) -> None:
    """Enqueue each turn's FlowFiles; a moment passes between turns (a batch each)."""
    for turn, flowfiles in enumerate(turns):
        if turn:
            runner.advance_time(1)
        for content, attributes in flowfiles:
            runner.enqueue(content, {**attributes, "mtime": "2024-01-01T00:00:00Z"})


def _declined_only_at_merge(runner: Any) -> bool:
    """Whether every bin the batch form left to the one-by-one path was left at its merge."""
    return all(
        why.startswith("merge_batches raised MergeDeclined") for why in runner.batch_use.declined
    )


@pytest.mark.parametrize("merge_format", _FORMATS)
@settings(deadline=None)
@given(properties=_properties(), turns=_TURNS)
def test_each_format_merges_batches_as_one_by_one(
    merge_format: str, properties: dict[str, Any], turns: list
) -> None:
    """Random batches of random sizes and attributes: the batch form makes the same bins, the
    same merged bytes and attributes, the same originals and provenance as one by one."""
    from flowcore.testing import TestRunner

    runner = TestRunner(MergeContent(merge_format=merge_format, **properties))
    _queued(runner, turns)
    runner.assert_batch_form_agrees(allow_decline=True)
    assert _declined_only_at_merge(runner), runner.batch_use.declined
    if merge_format not in ("ZIP", "TAR"):  # only duplicate entry names send one to failure
        assert runner.batch_use.declined == []


def test_a_zip_name_used_twice_leaves_its_bin_to_one_by_one() -> None:
    """A duplicate ZIP entry goes to failure one by one: the batch merge declines that bin (the
    session rolled back), and the bins around it still merge from batches."""
    from flowcore.testing import TestRunner

    runner = TestRunner(
        MergeContent(merge_format="ZIP", minimum_number_of_entries=2, maximum_number_of_entries=2)
    )
    for name in ("a", "b", "c", "c", "d", "e"):
        runner.enqueue(name, {"filename": name})
    runner.assert_batch_form_agrees()
    assert runner.batch_use.whole == 4
    assert [why.split("(")[0] for why in runner.batch_use.declined] == [
        "merge_batches raised MergeDeclined"
    ]
    runner.assert_transfer_count("failure", 1)
    runner.assert_transfer_count("merged", 3)


def _avro(names: list[str], schema: dict, metadata: dict[str, str]) -> bytes:
    import io

    import fastavro

    out = io.BytesIO()
    records = [{"name": n} for n in names]
    fastavro.writer(out, fastavro.parse_schema(schema), records, metadata=metadata)
    return out.getvalue()


_PERSON = {"type": "record", "name": "Person", "fields": [{"name": "name", "type": "string"}]}
_PLACE = {"type": "record", "name": "Place", "fields": [{"name": "name", "type": "string"}]}


@settings(deadline=None, max_examples=50)
@given(
    files=st.lists(
        st.tuples(
            st.lists(st.sampled_from(["Ann", "Bo", "Cy"]), max_size=4),
            st.sampled_from([_PERSON, _PERSON, _PERSON, _PLACE]),
            st.sampled_from([{}, {"m": "1"}, {"m": "2"}]),
        ),
        min_size=1,
        max_size=10,
    ),
    entries=st.integers(1, 4),
    max_bytes=st.one_of(st.none(), st.integers(150, 600)),
    strategy=st.sampled_from(
        [
            "Do Not Merge Uncommon Metadata",
            "Ignore Metadata",
            "Use First Metadata",
            "Keep Only Common Metadata",
        ]
    ),
)
def test_avro_merges_batches_as_one_by_one(
    files: list, entries: int, max_bytes: int | None, strategy: str
) -> None:
    """Avro bins merged from batches read each file's header, then its records, as one by one
    does; a file of another schema or metadata leaves its bin to the one-by-one path."""
    from flowcore.testing import TestRunner

    properties: dict[str, Any] = {"metadata_strategy": strategy}
    if max_bytes is not None:
        properties["maximum_group_size"] = f"{max_bytes} B"
    runner = TestRunner(
        MergeContent(
            merge_format="Avro",
            minimum_number_of_entries=entries,
            maximum_number_of_entries=entries,
            **properties,
        )
    )
    for names, schema, metadata in files:
        runner.enqueue(_avro(names, schema, metadata))
    runner.assert_batch_form_agrees(allow_decline=True)
    assert _declined_only_at_merge(runner), runner.batch_use.declined


@pytest.mark.parametrize("merge_format", _FORMATS)
def test_defragment_in_each_format_agrees_with_one_by_one(merge_format: str) -> None:
    """Split files defragmented from batches in every format: the packaged entries drop the
    fragment attributes and the bundle is the one-by-one path's."""
    from flowcore.testing import TestRunner
    from processors import SplitText

    split = TestRunner(SplitText(line_split_count=1), batches=True)
    split.enqueue(b"a\nbb\nccc\n", {"filename": "one.txt"})
    split.enqueue(b"d\nee\n", {"filename": "two.txt"})
    split.run(2)
    merge = TestRunner(MergeContent(merge_strategy="Defragment", merge_format=merge_format))
    for number, piece in enumerate(split.flowfiles_for("splits")):
        merge.enqueue(piece, {"filename": f"{number}.txt"})  # a ZIP name once each
    merge.assert_batch_form_agrees()
    assert merge.batch_use.declined == []
    merge.assert_transfer_count("merged", 2)


_IN_FLOWS = {
    "tar": {
        "merge_format": "TAR",
        "minimum_number_of_entries": 5,
        "maximum_number_of_entries": 5,
        "tar_modified_time": "2024-01-01T00:00:00Z",  # else the clock's second, run by run
    },
    "stream-v3-by-bytes": {
        "merge_format": "FlowFile Stream, v3",
        "maximum_group_size": "40 B",
        "minimum_number_of_entries": 3,
    },
    "stream-v2-termination": {
        "merge_format": "FlowFile Stream, v2",
        "bin_termination_check": "${fragment.index:mod(4):equals(0)}",
        "flowfile_insertion_strategy": "First in New Bin",
    },
}


@pytest.mark.parametrize("merge", _IN_FLOWS.values(), ids=_IN_FLOWS.keys())
def test_a_flow_merges_the_same_bundles_from_batches(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, merge: dict
) -> None:
    """On the direct runner, split lines of varied lengths merged from batch bins give the
    files, transfers and provenance of the flow binning each FlowFile."""
    from collections import Counter

    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import GetFile, PutFile, SplitText, UpdateAttribute
    from repositories.repository_set import RepositorySet
    from tests.flowcore.conftest import event_shape

    def outcome(root: Any) -> tuple:
        """The run's event shapes, files written and transfers."""
        result = run_flow(flow(root / "out"), "direct", repository=root / "repo", settings=settings)
        repos = RepositorySet.open(root / "repo")
        try:
            events = Counter(event_shape(e) for e in repos.provenance.search(limit=100_000))
        finally:
            repos.close()
        files = Counter(p.read_bytes() for p in (root / "out").iterdir())
        return events, files, dict(result.transfers)

    source = tmp_path / "in"
    source.mkdir()
    for number in range(3):  # lines of varied lengths
        lines = (f"{number} {'x' * (i % 7)} {i}\n" for i in range(17 + number))
        (source / f"{number}.txt").write_text("".join(lines))

    # Read once, a tick after writing: relatime then leaves the access time (an attribute
    # FlowFile Stream packages) as it is when the runs read the files, the same for both.
    time.sleep(0.05)
    for written in source.iterdir():
        written.read_bytes()

    def flow(out: Any) -> Flow:
        made = Flow("formats")
        gen = made.add(GetFile(input_directory=str(source), keep_source_file=True), name="get")
        split = made.add(SplitText(line_split_count=1), name="split")
        merger = made.add(MergeContent(**merge), name="merge")
        name = made.add(UpdateAttribute(filename="${uuid}"), name="name")  # a file each
        put = made.add(PutFile(directory=str(out)), name="put")
        made.connect(gen, split)
        made.connect(split, merger, "splits", back_pressure_object_threshold=1_000)
        made.connect(merger, name, "merged")
        made.connect(name, put)
        made.auto_terminate(split, ["original", "failure"])
        made.auto_terminate(merger, ["original", "failure"])
        made.auto_terminate(put, ["success", "failure"])
        return made

    settings = Settings(sync=False, parallelism=1)
    merged: list[bool] = []
    real = MergeContent.merge_batches

    def counting(self: MergeContent, *args: Any) -> Any:
        made = real(self, *args)
        merged.append(made is not None)
        return made

    with monkeypatch.context() as patch:
        patch.setattr(MergeContent, "merge_batches", counting)
        whole = outcome(tmp_path / "whole")
    with monkeypatch.context() as patch:
        patch.setattr(MergeContent, "bin_batches", lambda *_, **__: None)
        single = outcome(tmp_path / "single")
    assert merged
    assert all(merged)
    assert whole == single
