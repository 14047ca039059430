"""Tests for FlowFile batches: materialized exactly, cut and changed as a whole."""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from flowcore.flowfile import Attributes, ContentClaim, FlowFile, ResourceClaim
from flowcore.flowfile_batch import FlowFileBatch

RC = ResourceClaim("default", "1", "c")


def batch(count: int = 5, size: int = 10, stride: int = 10) -> FlowFileBatch:
    return FlowFileBatch.alike(
        count=count,
        first_id=100,
        uuid_key="0123abcd-0000-4000-8000-0000",
        uuid_first=0x10,
        attributes=Attributes({"path": "./", "kind": "x"}),
        uuid_named=("filename",),
        resource_claim=RC,
        offset=50,
        stride=stride,
        size=size,
        entry_date=7,
        lineage_start_date=7,
        queue_date=9,
        queue_date_index=3,
    )


def test_a_flowfile_of_a_batch_is_the_one_a_session_would_create() -> None:
    """Id, uuid, filename, content place, lineage and queue positions follow the position."""
    made = batch().flowfile(2)
    uuid = "0123abcd-0000-4000-8000-000000000012"
    expected = FlowFile.create(102, 7, {"kind": "x"}, uuid=uuid, content=ContentClaim(RC, 70, 10))
    assert made == expected.replace(queue_date=9, queue_date_index=5)
    assert list(made.attributes) == ["filename", "path", "kind", "uuid"]


def test_no_content_and_shared_content() -> None:
    """Size 0 means no claim; stride 0 means every FlowFile points at the same bytes."""
    assert batch(size=0, stride=0).flowfile(1).content is None
    assert batch(stride=0).flowfile(4).content == ContentClaim(RC, 50, 10)
    assert batch().claim_counts() == {RC: 5}
    assert batch(size=0).claim_counts() == {}


@given(st.integers(0, 12), st.integers(0, 12))
def test_a_cut_is_the_same_flowfiles(start: int, stop: int) -> None:
    """batch.cut(a, b) holds exactly FlowFiles a .. b-1."""
    whole = batch(count=12)
    if start > stop:
        start, stop = stop, start
    assert whole.cut(start, stop).flowfiles() == whole.flowfiles()[start:stop]


def test_changing_attributes_keeps_uuids_and_fixes_a_uuid_named_one() -> None:
    """Setting filename makes it shared; uuid cannot be set."""
    changed = batch().with_attributes({"filename": "a.txt", "uuid": "no", "k": "v"})
    first = changed.flowfile(0)
    assert (first.filename, first.uuid, first.attributes["k"]) == (
        "a.txt",
        "0123abcd-0000-4000-8000-000000000010",
        "v",
    )
    assert changed.uuid_named == ()
    assert changed.bytes == 50


@given(st.integers(0, 6), st.sampled_from([0, 10]), st.booleans())
def test_all_flowfiles_at_once_equal_each_built_alone(count: int, size: int, named: bool) -> None:
    """The fast copy of FlowFile 0 gives exactly what flowfile(i) checks and builds."""
    whole = attrs.evolve(batch(count=count, size=size), uuid_named=("filename",) if named else ())
    if not named:
        whole = whole.with_attributes({"filename": "a.txt"})
    assert whole.flowfiles() == [whole.flowfile(i) for i in range(count)]
    assert list(whole) == whole.flowfiles()


@given(st.lists(st.integers(0, 2**33), max_size=40), st.booleans())
def test_uuid_bytes_are_the_uuids_back_to_back(numbers: list[int], past_32_bits: bool) -> None:
    """The uuids as one byte string equal the uuid strings joined, numbers of any width."""
    if not past_32_bits:
        numbers = [n % 2**32 for n in numbers]
    made = attrs.evolve(batch(len(numbers)), uuid_numbers=np.array(numbers, dtype=np.int64))
    assert made.uuid_bytes() == "".join(made.uuids()).encode()


@given(st.lists(st.integers(0, 2), min_size=1, max_size=12))
def test_interleaved_parts_are_the_batch_they_were_cut_from(routes: list[int]) -> None:
    """Parts cut by mask and given different attributes join back in row order, each
    FlowFile as it was in its part."""
    from flowcore.flowfile_batch.columns import column_of

    whole = batch(count=len(routes)).with_columns(
        {"n": column_of([str(i) for i in range(len(routes))])}
    )
    labels = np.array(routes)
    parts, rows = [], []
    for route in sorted(set(routes)):
        picked = np.flatnonzero(labels == route)
        parts.append(whole.take(picked).with_attributes({"route": f"r{route}", "kind": "x"}))
        rows.append(picked)
    joined = FlowFileBatch.interleaved(parts, rows)
    assert joined is not None
    expected = [None] * len(routes)
    for part, picked in zip(parts, rows, strict=True):
        for position, row in enumerate(picked.tolist()):
            expected[row] = part.flowfile(position)
    assert joined.flowfiles() == expected
    assert joined.attributes.get("kind") == "x"  # one value in every part: still shared


def test_parts_of_different_batches_do_not_join() -> None:
    """Other claims or uuid keys cannot make one batch."""
    other = attrs.evolve(batch(count=2), resource_claim=ResourceClaim("default", "1", "d"))
    assert (
        FlowFileBatch.interleaved([batch(count=2), other], [np.array([0, 2]), np.array([1, 3])])
        is None
    )
