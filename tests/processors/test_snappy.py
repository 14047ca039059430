"""Tests for the Snappy stream formats: interoperation with cramjam, chunk types, limits."""

from __future__ import annotations

import io
import os

import cramjam
import pytest

from processors._snappy import (
    SnappyFormatError,
    compress_framed,
    decompress_framed,
    decompress_snappy_java,
)


def _framed(data: bytes) -> bytes:
    out = io.BytesIO()
    compress_framed(io.BytesIO(data), out.write)
    return out.getvalue()


def _unframed(data: bytes) -> bytes:
    out = io.BytesIO()
    decompress_framed(io.BytesIO(data), out.write)
    return out.getvalue()


def test_framed_interoperates_with_cramjam_both_ways() -> None:
    """cramjam reads our frames and we read cramjam's, compressible or not."""
    data = os.urandom(70_000) + b"a" * 200_000
    assert bytes(cramjam.snappy.decompress(_framed(data))) == data
    assert _unframed(bytes(cramjam.snappy.compress(data))) == data


def test_framed_skips_padding_and_refuses_reserved_chunks() -> None:
    """Padding (0xfe) is skipped; a reserved unskippable chunk (0x02) is an error."""
    data = _framed(b"hello")
    assert _unframed(data + b"\xfe\x02\x00\x00\x00\x00") == b"hello"
    with pytest.raises(SnappyFormatError, match="unskippable"):
        _unframed(data + b"\x02\x00\x00\x00")


def test_snappy_java_refuses_a_block_past_the_limit() -> None:
    """A block length beyond MAX_BLOCK is refused before anything is read into memory."""
    header = b"\x82SNAPPY\x00" + b"\0\0\0\1" * 2
    with pytest.raises(SnappyFormatError, match="not valid"):
        decompress_snappy_java(io.BytesIO(header + b"\x7f\xff\xff\xff"), io.BytesIO().write)
