"""Tests for CompressContent's codecs: each format read back by its reference library, streamed."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib

import brotli
import cramjam
import lz4.frame
import pytest

from processors._codecs import CODECS, OUT_CHUNK, CodecError, ExpansionLimitError

try:
    from compression import zstd
except ImportError:
    from backports import zstd

DATA = os.urandom(40_000) + b"flowcore " * 200_000
REFERENCE = {
    "gzip": gzip.decompress,
    "deflate": zlib.decompress,
    "bzip2": bz2.decompress,
    "xz-lzma2": lzma.decompress,
    "lzma": lzma.decompress,
    "snappy framed": lambda b: bytes(cramjam.snappy.decompress(b)),
    "lz4-framed": lz4.frame.decompress,
    "zstd": zstd.decompress,
    "brotli": brotli.decompress,
}
DECODABLE = [name for name, codec in CODECS.items() if codec.decompress is not None]


def _compress(name: str, data: bytes, level: int = 1) -> bytes:
    out = io.BytesIO()
    CODECS[name].run_compress(io.BytesIO(data), out.write, level)
    return out.getvalue()


def _decompress(name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    CODECS[name].run_decompress(io.BytesIO(data), out.write)
    return out.getvalue()


def test_nifi_lists_eleven_formats_in_its_order() -> None:
    """The codecs are NiFi 2's Compression Formats, in its order."""
    assert list(CODECS) == [
        "gzip", "deflate", "bzip2", "xz-lzma2", "lzma", "snappy", "snappy-hadoop",
        "snappy framed", "lz4-framed", "zstd", "brotli",
    ]  # fmt: skip


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_library_reads_what_is_written(name: str) -> None:
    """Each format's own library decompresses the codec's output to the input."""
    assert REFERENCE[name](_compress(name, DATA)) == DATA


@pytest.mark.parametrize("name", DECODABLE)
def test_round_trip(name: str) -> None:
    """Every decodable format gives back what it compressed, empty content included."""
    assert _decompress(name, _compress(name, DATA, 6)) == DATA
    assert _decompress(name, _compress(name, b"")) == b""


@pytest.mark.parametrize("name", ["gzip", "bzip2", "xz-lzma2", "lz4-framed", "zstd", "snappy"])
def test_concatenated_members_are_read_on(name: str) -> None:
    """Concatenated gzip members, streams and frames decompress to all of them, as in NiFi."""
    twice = _compress(name, b"one ") + _compress(name, b"two")
    assert _decompress(name, twice) == b"one two"


@pytest.mark.parametrize("name", DECODABLE)
def test_truncated_empty_or_foreign_data_is_a_codec_error(name: str) -> None:
    """Cut, empty or uncompressed input raises CodecError naming the format."""
    whole = _compress(name, DATA)
    for bad in (whole[: len(whole) // 2], b"", b"plain text, not compressed"):
        with pytest.raises(CodecError, match=name):
            _decompress(name, bad)


def test_gzip_output_is_deterministic() -> None:
    """The gzip header holds no time: the same content compresses to the same bytes."""
    assert _compress("gzip", DATA) == _compress("gzip", DATA)
    assert _compress("gzip", b"x")[4:8] == b"\0\0\0\0"


def test_gzip_bomb_is_written_out_in_bounded_pieces() -> None:
    """A small gzip of 64 MiB of zeros reaches the writer in pieces of at most OUT_CHUNK."""
    bomb = gzip.compress(b"\0" * (64 << 20), 9)
    pieces: list[int] = []
    CODECS["gzip"].run_decompress(io.BytesIO(bomb), lambda b: pieces.append(len(b)))
    assert sum(pieces) == 64 << 20
    assert max(pieces) <= OUT_CHUNK


def test_snappy_java_layout_and_raw_fallback() -> None:
    """snappy-java's header and length-prefixed blocks; a raw Snappy block reads as one."""
    packed = _compress("snappy", b"abc" * 50_000)
    assert packed[:16] == b"\x82SNAPPY\x00" + b"\0\0\0\1" * 2
    assert _decompress("snappy", bytes(cramjam.snappy.compress_raw(b"raw block"))) == b"raw block"


def test_snappy_hadoop_blocks_carry_both_lengths() -> None:
    """snappy-hadoop: each block starts with its uncompressed then compressed length."""
    packed = _compress("snappy-hadoop", b"z" * 100)
    assert int.from_bytes(packed[:4], "big") == 100
    length = int.from_bytes(packed[4:8], "big")
    assert bytes(cramjam.snappy.decompress_raw(packed[8 : 8 + length])) == b"z" * 100


def test_framed_snappy_checks_every_chunk_crc() -> None:
    """A flipped byte in a framed chunk fails its CRC-32C."""
    packed = bytearray(_compress("snappy framed", os.urandom(1000)))
    packed[-1] ^= 0xFF
    with pytest.raises(CodecError, match="CRC"):
        _decompress("snappy framed", bytes(packed))


@pytest.mark.parametrize("name", ["gzip", "bzip2", "xz-lzma2", "zstd", "lz4-framed", "brotli"])
def test_decompression_stops_at_its_limit(name: str) -> None:
    """Past the limit a decoder stops, having written no more than it, with the reason."""
    codec = CODECS[name]
    packed = io.BytesIO()
    codec.run_compress(io.BytesIO(b"\0" * (4 << 20)), packed.write, 6)
    written: list[bytes] = []
    with pytest.raises(ExpansionLimitError, match=r"more than 1000000 bytes.*compression bomb"):
        codec.run_decompress(io.BytesIO(packed.getvalue()), written.append, 1_000_000)
    assert sum(map(len, written)) <= 1_000_000
    whole = io.BytesIO()
    codec.run_decompress(io.BytesIO(packed.getvalue()), whole.write, 4 << 20)
    assert whole.getvalue() == b"\0" * (4 << 20)
