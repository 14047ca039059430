"""Tests for reading claim ranges with block verification."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import repositories._claim_reader as claim_reader
from flowcore.errors import ContentCorruptionError
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
    repo = FileContentRepository(tmp_path)
    contents = [os.urandom(100) for _ in range(300)]  # 30,000 bytes: all in block 0
    claims = _written(repo, contents)
    assert [repo.read(c) for c in claims] == contents
    assert calls == [30_000]


def test_sequential_reading_verifies_each_block_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream read in odd-sized pieces checks every block exactly once, each whole."""
    calls = []
    real = claim_reader.crc32c
    monkeypatch.setattr(claim_reader, "crc32c", lambda data: calls.append(len(data)) or real(data))
    repo = FileContentRepository(tmp_path, max_appendable_size=1 << 30)
    data = os.urandom(300_000)
    (claim,) = _written(repo, [b"head" * 10, data])[1:]
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
