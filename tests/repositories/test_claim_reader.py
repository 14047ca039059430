"""Tests for reading claim ranges with block verification."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import repositories._claim_reader as claim_reader
from flowcore.errors import ContentCorruptionError
from flowcore.flowfile import ContentClaim
from repositories._claim_checksums import BLOCK_SIZE
from repositories.content import FileContentRepository


def _written(repo: FileContentRepository, contents: list[bytes]) -> list:  # type: ignore[type-arg]
    writer = repo.writer("w")
    claims = []
    for data in contents:
        stream = writer.open_stream()
        stream.write(data)
        claims.append(stream.close())
    writer.close()
    return claims


def test_small_ranges_in_one_block_verify_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many small FlowFiles packed in one block cost one CRC between them."""
    calls = []
    real = claim_reader.crc32c
    monkeypatch.setattr(claim_reader, "crc32c", lambda data: calls.append(len(data)) or real(data))
    contents = [os.urandom(100) for _ in range(300)]  # 30,000 bytes: all in block 0
    claims = _written(FileContentRepository(tmp_path), contents)
    repo = FileContentRepository(tmp_path)  # another process's: it must check what it reads
    assert [repo.read(c) for c in claims] == contents
    assert calls == [30_000]


def test_sequential_reading_verifies_each_block_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream read in odd-sized pieces checks every block exactly once, each whole."""
    calls = []
    real = claim_reader.crc32c
    monkeypatch.setattr(claim_reader, "crc32c", lambda data: calls.append(len(data)) or real(data))
    data = os.urandom(300_000)
    writing = FileContentRepository(tmp_path, max_appendable_size=1 << 30)
    (claim,) = _written(writing, [b"head" * 10, data])[1:]
    repo = FileContentRepository(tmp_path)  # another process's: it must check what it reads
    with repo.open(claim) as stream:
        pieces = []
        while piece := stream.read(7_777):
            pieces.append(piece)
        assert b"".join(pieces) == data
    assert calls == [65536, 65536, 65536, 65536, 300_040 - 4 * 65536]


def test_a_change_to_the_file_is_verified_again(tmp_path: Path) -> None:
    """Verified blocks are remembered per version of the file: writing to it forgets them."""
    repo = FileContentRepository(tmp_path)
    (claim,) = _written(repo, [b"a" * 5000])
    assert repo.read(claim) == b"a" * 5000
    path = repo.path_of(claim.resource_claim)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, b"b", 100)
    finally:
        os.close(fd)
    os.utime(path, ns=(1, 1))  # a new version even on a coarse clock
    with pytest.raises(ContentCorruptionError, match="block 0"):
        repo.read(claim)


def test_verified_blocks_stay_bounded() -> None:
    """The memory of verified blocks starts afresh past its bound."""
    blocks = claim_reader.VerifiedBlocks()
    identity = (None, 1, 2, 3)
    for block in range(claim_reader._REMEMBERED_BLOCKS + 1):
        blocks.add((identity, block))  # type: ignore[arg-type]
    assert (identity, 0) not in blocks
    assert (identity, claim_reader._REMEMBERED_BLOCKS) in blocks


def test_the_writing_instance_trusts_the_checksums_it_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes a repository's writer sealed are not read back to be checked in that instance."""
    calls = []
    real = claim_reader.crc32c
    monkeypatch.setattr(claim_reader, "crc32c", lambda data: calls.append(len(data)) or real(data))
    repo = FileContentRepository(tmp_path)
    data = os.urandom(200_000)
    (claim,) = _written(repo, [data])
    assert repo.read(claim) == data
    assert calls == []


def test_a_change_after_sealing_is_caught_by_the_writing_instance(tmp_path: Path) -> None:
    """What the writer knew covers only the version it wrote: a later change is checked."""
    repo = FileContentRepository(tmp_path)
    (claim,) = _written(repo, [b"a" * 5000])
    path = repo.path_of(claim.resource_claim)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, b"b", 100)
    finally:
        os.close(fd)
    os.utime(path, ns=(1, 1))
    with pytest.raises(ContentCorruptionError, match="block 0"):
        repo.read(claim)


@pytest.mark.parametrize("size", [0, 1, 65_535, 65_536, 300_001])
@pytest.mark.parametrize("fresh_reader", [False, True])
def test_export_copies_exactly_the_range(tmp_path: Path, size: int, fresh_reader: bool) -> None:
    """export writes the claim's bytes after what the file already holds, verified or not."""
    data = os.urandom(size)
    writing = FileContentRepository(tmp_path, max_appendable_size=1 << 30)
    claim = _written(writing, [b"before", data, b"after"])[1]
    repo = FileContentRepository(tmp_path) if fresh_reader else writing
    out = tmp_path / "out.bin"
    with out.open("wb") as target:
        target.write(b">")
        copied = 0 if claim is None else repo.export(claim, target)
        target.write(b"<")
    assert copied == size
    assert out.read_bytes() == b">" + data + b"<"


def test_export_refuses_a_damaged_block_before_copying_it(tmp_path: Path) -> None:
    """A flipped byte stops the export with the damage named; nothing of the range is copied."""
    (claim,) = _written(FileContentRepository(tmp_path), [os.urandom(200_000)])
    path = FileContentRepository(tmp_path).path_of(claim.resource_claim)
    with path.open("r+b") as damaged:
        damaged.seek(150_000)
        byte = damaged.read(1)
        damaged.seek(150_000)
        damaged.write(bytes([byte[0] ^ 1]))
    out = tmp_path / "out.bin"
    with out.open("wb") as target, pytest.raises(ContentCorruptionError, match="block 2"):
        FileContentRepository(tmp_path).export(claim, target)
    assert out.read_bytes() == b""


def test_export_falls_back_to_reading_when_the_kernel_cannot_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where copy_file_range is refused (another file system on an old kernel), bytes are read."""
    import errno

    def refuse(*_: object) -> int:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(claim_reader.os, "copy_file_range", refuse)
    data = os.urandom(150_000)
    (claim,) = _written(FileContentRepository(tmp_path), [data])
    out = tmp_path / "out.bin"
    with out.open("wb") as target:
        assert FileContentRepository(tmp_path).export(claim, target) == len(data)
    assert out.read_bytes() == data


@pytest.mark.parametrize("opener", ["gzip", "bz2", "lzma"])
def test_export_into_a_compressing_file_goes_through_it(tmp_path: Path, opener: str) -> None:
    """A wrapper handing out its file's descriptor (GzipFile) gets the bytes as a stream: the
    kernel must not copy them past it."""
    import importlib

    module = importlib.import_module(opener)
    data = os.urandom(100_000)
    (claim,) = _written(FileContentRepository(tmp_path), [data])
    out = tmp_path / "out.z"
    with module.open(out, "wb") as target:
        FileContentRepository(tmp_path).export(claim, target)
    with module.open(out, "rb") as written:
        assert written.read() == data


def test_export_of_a_file_cut_short_after_opening_fails(tmp_path: Path) -> None:
    """A range whose file shrinks under the copy is refused, not exported short."""
    from flowcore.errors import ContentNotFoundError

    repo = FileContentRepository(tmp_path, max_appendable_size=1 << 30)
    writer = repo.writer("w")
    stream = writer.open_stream()  # still being written: read as it is, unverified
    stream.write(os.urandom(200_000))
    claim = stream.close()
    with repo.open(claim) as source:
        os.truncate(repo.path_of(claim.resource_claim), 100_000)
        with (tmp_path / "out").open("wb") as target, pytest.raises(ContentNotFoundError):
            source.copy_to(target)
    writer.close()


def test_a_utime_back_to_the_written_time_does_not_hide_a_change(tmp_path: Path) -> None:
    """Same size, modification time put back: the change time still tells the new version."""
    repo = FileContentRepository(tmp_path)
    (claim,) = _written(repo, [b"a" * 5000])
    path = repo.path_of(claim.resource_claim)
    before = path.stat()
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, b"b", 100)
    finally:
        os.close(fd)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(ContentCorruptionError, match="block 0"):
        repo.read(claim)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_readinto_hands_out_what_read_does(tmp_path_factory, data) -> None:  # type: ignore[no-untyped-def]
    """Whatever the range and the buffer sizes, readinto fills buffers with exactly the bytes
    read() returns, each block verified, partly covered ones included."""
    root = tmp_path_factory.mktemp("claims")
    content = bytes(range(251)) * (3 * BLOCK_SIZE // 251 + 2)
    (claim,) = _written(FileContentRepository(root, max_appendable_size=1 << 30), [content])
    offset = data.draw(st.integers(0, len(content) - 1))
    length = data.draw(st.integers(0, len(content) - offset))
    ranged = ContentClaim(claim.resource_claim, claim.offset + offset, length)
    repo = FileContentRepository(root)  # another process's: it verifies what it reads
    got = bytearray()
    with repo.open(ranged) as stream:
        if data.draw(st.booleans()):  # a small read first leaves bytes in the stream's buffer
            got += stream.read(data.draw(st.integers(0, 100)))
        buffer = bytearray(data.draw(st.integers(1, 2 * BLOCK_SIZE + 7)))
        while count := stream.readinto(buffer):
            got += buffer[:count]
    assert bytes(got) == content[offset : offset + length]


def test_readinto_refuses_a_damaged_block(tmp_path: Path) -> None:
    """A flipped byte in a block readinto covers, whole or in part, raises naming the block;
    the bytes around it still read."""
    content = os.urandom(3 * BLOCK_SIZE)
    (claim,) = _written(FileContentRepository(tmp_path, max_appendable_size=1 << 30), [content])
    path = FileContentRepository(tmp_path).path_of(claim.resource_claim)
    damaged = bytearray(path.read_bytes())
    damaged[BLOCK_SIZE + 5] ^= 0xFF
    path.write_bytes(bytes(damaged))
    for offset, length in ((0, 3 * BLOCK_SIZE), (BLOCK_SIZE + 100, 50), (BLOCK_SIZE - 10, 20)):
        repo = FileContentRepository(tmp_path)
        ranged = ContentClaim(claim.resource_claim, offset, length)
        with repo.open(ranged) as stream, pytest.raises(ContentCorruptionError, match="block 1"):
            stream.readinto(bytearray(length))
    repo = FileContentRepository(tmp_path)
    buffer = bytearray(BLOCK_SIZE)
    with repo.open(ContentClaim(claim.resource_claim, 2 * BLOCK_SIZE, BLOCK_SIZE)) as stream:
        assert stream.readinto(buffer) == BLOCK_SIZE
    assert bytes(buffer) == content[2 * BLOCK_SIZE :]


def test_readinto_a_cut_short_file_is_damage(tmp_path: Path) -> None:
    """A claim file cut short after its range was opened is reported, not read as shorter."""
    content = os.urandom(2 * BLOCK_SIZE)
    (claim,) = _written(FileContentRepository(tmp_path, max_appendable_size=1 << 30), [content])
    repo = FileContentRepository(tmp_path)
    with repo.open(claim) as stream:
        os.truncate(repo.path_of(claim.resource_claim), BLOCK_SIZE)
        with pytest.raises(ContentCorruptionError, match="ends at byte"):
            stream.readinto(bytearray(2 * BLOCK_SIZE))
