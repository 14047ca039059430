"""Tests for queue segment files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import RepositoryError, WalCorruptionError
from flowcore.flowfile import Attributes, ContentClaim, FlowFile, ResourceClaim, Rope
from flowcore.flowfile_batch import FlowFileBatch
from repositories.segments import (
    read_segment,
    read_segment_range,
    read_summary,
    segment_path,
    summary_from_wire,
    summary_to_wire,
    write_segment,
)


@st.composite
def flowfiles(draw: st.DrawFn) -> FlowFile:
    fid = draw(st.integers(1, 2**40))
    attributes = draw(st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=4))
    one_claim = st.builds(
        lambda c, o, n: ContentClaim(ResourceClaim("default", str(c % 1024), f"claim-{c}"), o, n),
        st.integers(0, 3) | st.integers(0, 5000),  # often shared, sometimes not
        st.integers(0, 1000),
        st.integers(0, 1000),
    )
    rope = st.lists(one_claim.filter(lambda c: c.length > 0), min_size=2, max_size=4).map(Rope)
    claim = draw(st.none() | one_claim | rope)
    flowfile = FlowFile.create(fid, draw(st.integers(0, 2**42)), attributes, content=claim)
    return flowfile.replace(penalty_expiration=draw(st.integers(0, 2**42)))


@given(st.lists(flowfiles(), max_size=20))
def test_round_trip(tmp_path_factory, records: list[FlowFile]) -> None:  # type: ignore[no-untyped-def]
    """Any FlowFiles, ropes among them, written to a segment read back equal, with a matching
    summary."""
    directory = tmp_path_factory.mktemp("segments")
    summary = write_segment(directory, "q1", records, owner="task-3")
    path = directory / f"{summary.segment_id}.seg"
    assert read_segment(path) == records
    assert read_summary(path) == summary
    assert summary.count == len(records)
    assert summary.bytes == sum(f.size for f in records)
    pieces = [c for f in records if f.content for c in f.content.resource_claims]
    assert summary.resource_claims == set(pieces)
    shared = Counter(pieces)  # a rope holds one reference per piece
    assert dict(summary.claim_counts) == shared
    assert summary.segment_id.startswith("task-3-")
    assert not list(directory.glob("*.part"))


def test_damage_and_limits(tmp_path: Path) -> None:
    """A flipped byte is detected; a missing file and an oversize batch are clear errors."""
    summary = write_segment(tmp_path, "q", [FlowFile.create(1, 0, {"k": "v"})])
    path = tmp_path / f"{summary.segment_id}.seg"
    data = bytearray(path.read_bytes())
    data[-2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(WalCorruptionError, match="checksum"):
        read_segment(path)
    with pytest.raises(RepositoryError, match="missing"):
        read_segment(tmp_path / "nope.seg")
    with pytest.raises(RepositoryError, match="at most 10000"):
        write_segment(tmp_path, "q", [FlowFile.create(i, 0) for i in range(10_001)])


def test_a_batch_is_one_record_and_reads_back_as_its_flowfiles(tmp_path: Path) -> None:
    """A FlowFile batch's segment counts every FlowFile and its claim references."""
    rc = ResourceClaim("default", "3", "c-1")
    batch = FlowFileBatch.alike(
        count=4,
        first_id=10,
        uuid_key="0123abcd-0000-4000-8000-0000",
        uuid_first=0,
        attributes=Attributes({"path": "./", "k": "v"}),
        uuid_named=("filename",),
        resource_claim=rc,
        offset=100,
        stride=5,
        size=5,
        entry_date=1,
        lineage_start_date=1,
        queue_date=2,
        queue_date_index=7,
    )
    summary = write_segment(tmp_path, "q", batch, owner="t", sync=False)
    assert (summary.count, summary.bytes, summary.min_id, summary.max_id) == (4, 20, 10, 13)
    assert summary.batched
    assert summary_from_wire(summary_to_wire(summary)) == summary
    assert read_summary(segment_path(tmp_path, summary.segment_id)) == summary
    assert summary.claim_counts == ((rc, 4),)
    flowfiles = read_segment(segment_path(tmp_path, summary.segment_id))
    assert flowfiles == batch.flowfiles()
    assert flowfiles[2].filename == flowfiles[2].uuid == "0123abcd-0000-4000-8000-000000000002"
    assert flowfiles[2].content == ContentClaim(rc, 110, 5)


def test_a_summary_without_the_batched_flag_reads_as_plain(tmp_path: Path) -> None:
    """Summaries logged before the flag existed (seven fields) read back as plain segments."""
    plain = write_segment(tmp_path, "q", [], owner="t", sync=False)
    wire = summary_to_wire(plain)
    assert len(wire) == 7
    assert not summary_from_wire(wire).batched
    assert summary_from_wire([*wire, True]).batched


def test_a_segment_of_format_2_still_reads(tmp_path: Path) -> None:
    """Segments queued by the previous format (no batches) read after an upgrade."""
    flowfile = FlowFile.create(1, 0, {"k": "v"})
    summary = write_segment(tmp_path, "q", [flowfile], owner="t", sync=False)
    path = segment_path(tmp_path, summary.segment_id)
    data = bytearray(path.read_bytes())
    data[len(b"FLOWCORE-SEG") : len(b"FLOWCORE-SEG") + 2] = (2).to_bytes(2, "big")
    path.write_bytes(bytes(data))
    assert read_segment(path) == [flowfile]


def test_a_range_of_a_segment_is_those_records_alone(tmp_path: Path) -> None:
    """read_segment_range gives what read_segment's slice gives, for plain and batch segments."""
    rc = ResourceClaim("default", "1", "c-2")
    plain = [
        FlowFile.create(n, 5, {"filename": f"f{n}"}, content=ContentClaim(rc, n, 1))
        for n in range(7)
    ]
    batch = FlowFileBatch.alike(
        count=6, first_id=20, uuid_key="0123abcd-0000-4000-8000-0000", uuid_first=0,
        attributes=Attributes({"path": "./"}), uuid_named=("filename",), resource_claim=rc,
        offset=0, stride=2, size=2, entry_date=1, lineage_start_date=1, queue_date=2,
        queue_date_index=0,
    )  # fmt: skip
    for written in (plain, batch):
        summary = write_segment(tmp_path, "q", written, owner="t", sync=False)
        path = segment_path(tmp_path, summary.segment_id)
        whole = read_segment(path)
        assert read_segment_range(path, 2, 5) == whole[2:5]
        assert read_segment_range(path, 4, 100) == whole[4:]
        assert read_segment_range(path, 50, 60) == []
