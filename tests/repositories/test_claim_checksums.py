"""Tests for the per-block checksum footer of claim files."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from repositories._claim_checksums import (
    BLOCK_SIZE,
    MAGIC,
    TRAILER_SIZE,
    BlockSummer,
    FooterDamage,
    footer_size,
    read_footer,
)


def _sealed(path: Path, chunks: list[bytes]) -> bytes:
    summer = BlockSummer()
    for chunk in chunks:
        summer.update(chunk)
    data = b"".join(chunks)
    path.write_bytes(data + summer.footer())
    return data


def _footer_of(path: Path):  # type: ignore[no-untyped-def]
    fd = os.open(path, os.O_RDONLY)
    try:
        return read_footer(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=3 * BLOCK_SIZE + 100),
    cuts=st.lists(st.integers(0, 3 * BLOCK_SIZE + 100), max_size=6),
)
def test_any_split_of_the_writes_gives_the_crc_of_each_block(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, cuts: list[int]
) -> None:
    """However the bytes arrive, the footer holds the CRC32C of each 64 KiB block."""
    bounds = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    path = tmp_path_factory.mktemp("sums") / "claim"
    _sealed(path, chunks)
    footer = _footer_of(path)
    assert footer is not None
    assert footer.data_length == len(data)
    expected = tuple(crc32c(data[i : i + BLOCK_SIZE]) for i in range(0, len(data), BLOCK_SIZE))
    assert footer.crcs == expected
    assert path.stat().st_size == len(data) + footer_size(len(data))


def test_a_file_without_the_magic_has_no_footer(tmp_path: Path) -> None:
    """Files of older flowcores (no magic at the end) read as having no footer."""
    path = tmp_path / "old"
    path.write_bytes(b"x" * 100)
    assert _footer_of(path) is None
    (tmp_path / "tiny").write_bytes(b"x")
    assert _footer_of(tmp_path / "tiny") is None


@pytest.mark.parametrize("where", ["array", "length", "block size", "own crc"])
def test_a_flipped_byte_in_the_footer_is_damage(tmp_path: Path, where: str) -> None:
    """A flipped byte anywhere in the footer (array or trailer fields) is reported, not trusted."""
    path = tmp_path / "claim"
    data = _sealed(path, [os.urandom(BLOCK_SIZE * 2 + 10)])
    raw = bytearray(path.read_bytes())
    trailer = len(raw) - TRAILER_SIZE
    position = {
        "array": len(data) + 5,
        "length": trailer,
        "block size": trailer + 9,
        "own crc": trailer + 16,
    }[where]
    raw[position] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(FooterDamage):
        _footer_of(path)


def test_bytes_cut_from_the_middle_do_not_match_the_recorded_length(tmp_path: Path) -> None:
    """A file whose size no longer fits its footer is reported with both numbers."""
    path = tmp_path / "claim"
    _sealed(path, [b"a" * 1000])
    raw = path.read_bytes()
    path.write_bytes(raw[:10] + raw[20:])
    with pytest.raises(FooterDamage, match="records 1000 bytes of data"):
        _footer_of(path)


def test_the_magic_closes_every_footer(tmp_path: Path) -> None:
    """Even empty data gets a footer, ending with the magic."""
    path = tmp_path / "claim"
    _sealed(path, [])
    assert path.read_bytes().endswith(MAGIC)
    footer = _footer_of(path)
    assert footer is not None
    assert (footer.data_length, footer.crcs) == (0, ())
