"""Tests for ProcessSession's content: copy-on-write writes, reads and streams, merges of
claims, ranges and ropes, and files imported, referenced and exported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import flowcore.session._content as session_content
import flowcore.session._ranges as session_ranges
from flowcore.errors import ContentChangedError, FlowFileAccessError, FlowFileHandlingError
from flowcore.flowfile import ContentClaim, Rope
from flowcore.session._content import RangeGather
from flowcore.session.streams import WriteStream
from flowcore.testing import TestRunner
from repositories.content import FileContentRepository
from tests.flowcore.session._session_runner import SUCCESS, Dummy, E, session_for, types


# a Dummy's harness; why not in a conftest.py: see _session_runner.py
@pytest.fixture
def runner() -> TestRunner:
    return TestRunner(Dummy())


def test_write_is_copy_on_write(runner: TestRunner) -> None:
    """write() makes a new claim and never touches the old content; CONTENT_MODIFIED."""
    original = runner.enqueue(b"old")
    session = session_for(runner)
    flowfile = session.get()
    written = session.write(flowfile, b"new content")
    assert written.content != flowfile.content
    assert written.size == 11
    assert runner.content.read(original.flowfile.content) == b"old"
    session.transfer(written, SUCCESS)
    session.commit()
    assert types(runner) == [E.CONTENT_MODIFIED]
    event = runner.provenance_events[0]
    assert event.previous_content_claim == original.flowfile.content
    assert event.content_claim == written.content
    assert event.previous_file_size == 3


@pytest.mark.parametrize(
    "source",
    [b"abc", "abc", [b"a", b"bc"], lambda out: out.write(b"abc")],
    ids=["bytes", "str", "chunks", "callback"],
)
def test_write_accepts_bytes_text_chunks_and_callbacks(runner: TestRunner, source: object) -> None:
    """write() takes bytes, UTF-8 text, an iterable of chunks, or a stream callback."""
    runner.enqueue(b"")
    session = session_for(runner)
    flowfile = session.write(session.get(), source)  # type: ignore[arg-type]
    assert session.read_bytes(flowfile) == b"abc"


@pytest.mark.parametrize(
    "buffer",
    [
        np.arange(6, dtype=np.uint8).reshape(2, 3),
        np.arange(3, dtype=np.int16),
        memoryview(bytearray(b"abcdef")).cast("B", (2, 3)),
        memoryview(b"a-b-c-")[::2],  # not contiguous
    ],
    ids=["2-d bytes", "int16", "2-d view", "strided"],
)
def test_write_counts_a_buffer_by_its_bytes(
    runner: TestRunner, tmp_path: Path, buffer: object
) -> None:
    """A buffer of any shape or item size is written as its bytes, on both repositories: the
    claim's length is its byte count, and the content written after it stays readable."""
    data = memoryview(buffer).tobytes()  # type: ignore[arg-type]
    runner.enqueue(b"")
    session = session_for(runner)
    written = session.write(session.get(), lambda out: out.write(buffer))
    after = session.write(session.create(), b"NEXT")
    assert (written.size, session.read_bytes(written)) == (len(data), data)
    assert session.read_bytes(after) == b"NEXT"
    repo = FileContentRepository(tmp_path)
    writer = repo.writer("w")
    claims = []
    for content in (buffer, b"NEXT"):
        stream = writer.open_stream()
        WriteStream(stream).write(content)  # type: ignore[arg-type]
        claims.append(stream.close())
    writer.close()
    fresh = FileContentRepository(tmp_path)  # reads verify the sealed footer
    assert [fresh.read(c) for c in claims] == [data, b"NEXT"]


def test_empty_write_gives_no_claim(runner: TestRunner) -> None:
    """Writing nothing leaves a FlowFile with no content claim and size 0."""
    runner.enqueue(b"abc")
    session = session_for(runner)
    flowfile = session.write(session.get(), b"")
    assert flowfile.content is None
    assert flowfile.size == 0


def test_rewrite_append_and_merge(runner: TestRunner) -> None:
    """rewrite streams old to new; append adds; merge concatenates with delimiters."""
    runner.enqueue(b"ab")
    runner.enqueue(b"cd")
    session = session_for(runner)
    first, second = session.get(2)
    first = session.rewrite(first, lambda src, out: out.write(src.read().upper()))
    first = session.append(first, b"!")
    assert session.read_bytes(first) == b"AB!"
    bundle = session.create([first, second])
    bundle = session.merge([first, second], bundle, header=b"[", footer=b"]", demarcator=b",")
    assert session.read_bytes(bundle) == b"[AB!,cd]"
    session.transfer(bundle, SUCCESS)
    session.remove([first, second])
    session.commit()


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 9)), min_size=1, max_size=30))
def test_many_small_ranges_merge_from_windows_and_gathers(pieces: list[tuple[int, int]]) -> None:
    """Small ranges of one claim, given as claims or as a RangeGather, merge to their bytes."""
    runner = TestRunner(Dummy())
    data = bytes(range(256)) * 2
    runner.enqueue(data)
    session = session_for(runner)
    source = session.get()
    assert isinstance(source.content, ContentClaim)
    base, offsets, sizes, position = source.content.offset, [], [], 0
    for gap, size in pieces:  # increasing ranges, apart or touching
        position += gap
        offsets.append(position)
        sizes.append(size)
        position += size
    offsets = [o % 400 for o in offsets] if position > 500 else offsets
    expected = b"".join(data[o : o + n] for o, n in zip(offsets, sizes, strict=True))
    claims = [
        ContentClaim(source.content.resource_claim, base + o, n)
        for o, n in zip(offsets, sizes, strict=True)
        if n
    ]
    merged = session.merge_contents(claims, session.create(source))
    assert session.read_bytes(merged) == expected
    if position <= 500:
        for between in (b"", b"|"):
            gather = RangeGather(
                source.content.resource_claim, base + np.array(offsets), np.array(sizes), between
            )
            gathered = session.merge_contents([gather], session.create(source))
            assert session.read_bytes(gathered) == between.join(
                data[o : o + n] for o, n in zip(offsets, sizes, strict=True)
            )
            session.remove(gathered)
    session.remove([merged, source])
    session.commit()


def test_a_range_larger_than_the_window_is_copied_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge of ranges each larger than the gather window copies them (it once looped)."""
    monkeypatch.setattr(session_content, "GATHER_WINDOW", 4)
    runner = TestRunner(Dummy())
    runner.enqueue(b"abcdefghijklmnop")
    session = session_for(runner)
    source = session.get()
    claim = source.content
    assert isinstance(claim, ContentClaim)
    ranges = [ContentClaim(claim.resource_claim, claim.offset + o, 6) for o in (0, 8)]
    gather = RangeGather(claim.resource_claim, claim.offset + np.array([0, 8]), np.array([6, 6]))
    for parts in (ranges, [gather]):
        merged = session.merge_contents(parts, session.create(source))
        assert session.read_bytes(merged) == b"abcdefijklmn"
        session.remove(merged)
    session.remove(source)
    session.commit()


def test_damage_between_the_ranges_does_not_fail_their_merge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A window around small ranges that runs into damaged bytes is not needed: each range is
    then read on its own, and only a damaged range would fail."""
    # as when the window's middle is damaged (test_ranges.py damages a real claim file)
    monkeypatch.setattr(session_ranges.RangeReader, "_window", lambda *_: (None, 0))
    runner = TestRunner(Dummy())
    runner.enqueue(b"a" * 300_000)
    session = session_for(runner)
    source = session.get()
    claim = source.content
    assert isinstance(claim, ContentClaim)
    ranges = [ContentClaim(claim.resource_claim, claim.offset + o, 10) for o in (0, 50, 200_000)]
    merged = session.merge_contents(ranges, session.create(source))
    assert session.read_bytes(merged) == b"a" * 30
    session.remove([merged, source])
    session.commit()


def test_a_zero_copy_merge_is_a_rope_that_reads_the_same(runner: TestRunner) -> None:
    """merge(zero_copy=True) points at the sources' ranges, writes each delimiter once, and
    reads, streams and slices like the copied merge."""
    for data in (b"alpha", b"beta", b"gamma"):
        runner.enqueue(data)
    session = session_for(runner)
    sources = session.get(3)
    bundle = session.merge(sources, session.create(sources), b"<", b">", b"|", zero_copy=True)
    assert isinstance(bundle.content, Rope)
    assert session.read_bytes(bundle) == b"<alpha|beta|gamma>"
    with session.read(bundle) as stream:
        assert stream.read(3) == b"<al"
        assert stream.read() == b"pha|beta|gamma>"
    source_claims = {c for f in sources for c in f.content.resource_claims}
    written = set(bundle.content.resource_claims) - source_claims
    assert len(written) == 1  # the three delimiters share one small claim file
    split = session.clone(bundle, 4, 7)
    assert session.read_bytes(split) == b"ha|beta"
    assert set(split.content.resource_claims) <= set(bundle.content.resource_claims)
    session.transfer([bundle, split], SUCCESS)
    session.remove(sources)
    session.commit()


def test_a_rope_the_policy_refuses_is_copied_instead(runner: TestRunner) -> None:
    """Inputs using a small share of a big claim file would pin dead bytes: the merge copies."""
    runner.enqueue(b"x" * 1000)
    session = session_for(runner)
    (big,) = session.get(1)
    pieces = [session.clone(big, i * 100, 3) for i in range(3)]
    bundle = session.merge(pieces, session.create(pieces), zero_copy=True)
    assert isinstance(bundle.content, ContentClaim)
    assert bundle.content.resource_claim != big.content.resource_claim
    assert session.read_bytes(bundle) == b"x" * 9
    session.transfer([big, *pieces, bundle], SUCCESS)
    session.commit()


def test_keep_range_slices_the_claim_without_copying(runner: TestRunner) -> None:
    """keep_range() points at part of the same claim (no byte written; CONTENT_MODIFIED at
    commit); the whole range changes nothing; a range outside the content is refused."""
    original = runner.enqueue(b"0123456789").flowfile.content
    session = session_for(runner)
    flowfile = session.get()
    kept = session.keep_range(flowfile, 2, 5)
    assert kept.content == ContentClaim(original.resource_claim, original.offset + 2, 5)
    assert session.read_bytes(kept) == b"23456"
    assert session.keep_range(kept, 0, 5).content == kept.content
    with pytest.raises(FlowFileHandlingError, match="must lie inside"):
        session.keep_range(kept, 3, 3)
    assert session.keep_range(kept, 1, 0).content is None
    session.transfer(kept, SUCCESS)
    session.commit()
    assert types(runner) == [E.CONTENT_MODIFIED]


def test_read_stream_blocks_other_use_until_closed(runner: TestRunner) -> None:
    """While a read stream is open the FlowFile cannot be transferred; after, it can."""
    runner.enqueue(b"line1\nline2\n")
    session = session_for(runner)
    flowfile = session.get()
    with session.read(flowfile) as stream:
        assert list(stream) == [b"line1\n", b"line2\n"]
        with pytest.raises(FlowFileAccessError, match="open stream"):
            session.transfer(flowfile, SUCCESS)
    with pytest.raises(FlowFileAccessError, match="closed"):
        stream.read()
    session.transfer(flowfile, SUCCESS)
    session.commit()


def test_import_and_export(runner: TestRunner, tmp_path) -> None:
    """import_from copies a file (deleting it after commit when asked); export_to writes one."""
    source = tmp_path / "in.txt"
    source.write_bytes(b"from disk")
    session = session_for(runner)
    flowfile = session.import_from(source, session.create(), keep_source=False)
    assert source.exists()
    session.export_to(flowfile, tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_bytes() == b"from disk"
    session.transfer(flowfile, SUCCESS)
    session.commit()
    assert not source.exists()


def test_import_by_reference_points_at_a_range_without_copying(
    runner: TestRunner, tmp_path: Path
) -> None:
    """The content is a range of the file itself; a range past its end or a stale
    fingerprint is refused with the file named."""
    path = tmp_path / "data.txt"
    path.write_bytes(b"hello world")
    session = session_for(runner)
    flowfile = session.import_by_reference(path, session.create(), offset=6, length=5)
    assert flowfile.size == 5
    assert flowfile.content is not None
    assert flowfile.content.resource_claim.is_external
    assert session.read_bytes(flowfile) == b"world"
    with pytest.raises(ValueError, match="must lie inside the file"):
        session.import_by_reference(path, flowfile, offset=8, length=5)
    with pytest.raises(ContentChangedError, match=str(path)):
        session.import_by_reference(path, flowfile, fingerprint="1:2:3")
    session.transfer(flowfile, SUCCESS)
    session.commit()
