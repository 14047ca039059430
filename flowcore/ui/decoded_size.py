"""How big content decodes, told before it is decoded: the record viewer's guard.

A few KB of compressed Avro or Parquet can hold gigabytes (one 200 MB string deflates to 200 KB,
zstd does better), and a reader decodes a whole block or row group at once. The viewer first
reads the sizes the formats state, and decompresses, a megabyte at a time and only counting,
what states none, stopping at the bound: content past it is refused with one line.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from typing import TYPE_CHECKING

from flowcore.errors import FlowcoreError

if TYPE_CHECKING:
    import pyarrow.parquet as pq

__all__ = ["TooBigToShowError", "check_avro", "check_parquet", "decoded_size"]

_AVRO_MAGIC = b"Obj\x01"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class TooBigToShowError(FlowcoreError, ValueError):
    """Content whose first records decode past the viewer's bound: refused before decoding."""


def check_parquet(metadata: pq.FileMetaData, count: int, bound: int) -> None:
    """Refuse Parquet whose row groups holding its first *count* records decode past *bound*.

    The footer states each row group's uncompressed size, so nothing is decompressed to tell.
    """
    rows = decoded = 0
    for index in range(metadata.num_row_groups):
        if rows >= count:
            break
        group = metadata.row_group(index)
        rows += group.num_rows
        decoded += group.total_byte_size  # the footer's total uncompressed size
    if decoded > bound:
        msg = (
            f"this Parquet file's first row groups hold {decoded:,} bytes uncompressed; the "
            f"viewer decodes up to {bound:,}: download it to see its records"
        )
        raise TooBigToShowError(msg)


def _long(data: bytes, pos: int) -> tuple[int, int]:
    """The zig-zag varint long at *pos* (Avro's), and the position after it."""
    shift = value = 0
    while True:
        byte = data[pos]  # IndexError past the end: a header or block cut off
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
        if shift > 63:
            raise IndexError(pos)


def check_avro(data: bytes, count: int, bound: int) -> None:
    """Refuse an Avro data file whose blocks holding its first *count* records decode past *bound*.

    The container's blocks are walked without decoding them: each states its byte size, and its
    decompressed size is read from the codec's own header or by decompressing up to the bound
    (never past it). Bare datums are not compressed, and a damaged header is left to fastavro.
    """
    if not data.startswith(_AVRO_MAGIC):
        return
    try:
        pos, codec = 4, b"null"
        while True:  # the header's metadata map, in blocks
            entries, pos = _long(data, pos)
            if entries == 0:
                break
            if entries < 0:
                entries = -entries
                _, pos = _long(data, pos)
            for _ in range(entries):
                length, pos = _long(data, pos)
                key, pos = data[pos : pos + length], pos + length
                length, pos = _long(data, pos)
                if key == b"avro.codec":
                    codec = data[pos : pos + length]
                pos += length
        pos += 16  # the sync marker
        decoded = records = 0
        while records < count and pos < len(data):
            entries, pos = _long(data, pos)
            length, pos = _long(data, pos)
            block = data[pos : pos + length]
            if len(block) < length:
                return  # cut off by the viewer's window: not read
            decoded += decoded_size(codec.decode(errors="replace"), block, bound - decoded)
            if decoded > bound:
                msg = (
                    f"this Avro content's first records decode to more than {bound:,} "
                    f"bytes (its {codec.decode(errors='replace')} block at byte {pos:,} holds "
                    "more); the viewer does not decompress it: download the content"
                )
                raise TooBigToShowError(msg)
            records += entries
            pos += length + 16
    except IndexError:
        return  # a header or block cut off: fastavro reads what precedes it or says what broke


def decoded_size(codec: str, block: bytes, room: int) -> int:
    """*block*'s decompressed size, or more than *room* when it exceeds it (not decompressed).

    Args:
        codec: the block's Avro codec name (``avro.codec``).
        block: the compressed block as the container holds it.
        room: the bytes it may decode to; past them decompressing stops.
    """
    limit = max(room, 0) + 1
    try:
        if codec == "null":
            return len(block)
        if codec == "deflate":
            inflater = zlib.decompressobj(-15)
            size, chunk = 0, inflater.decompress(block, _STEP)
            while chunk:  # a megabyte at a time, counted and dropped
                size += len(chunk)
                if size >= limit or inflater.eof:
                    break
                chunk = inflater.decompress(inflater.unconsumed_tail, _STEP)
            return size
        if codec in ("bzip2", "xz"):
            decompressor = bz2.BZ2Decompressor() if codec == "bzip2" else lzma.LZMADecompressor()
            size, chunk = 0, decompressor.decompress(block, _STEP)
            while chunk:
                size += len(chunk)
                if size >= limit or decompressor.eof:
                    break
                chunk = decompressor.decompress(b"", _STEP)
            return size
        if codec == "snappy":  # a raw snappy block starts with its length, as a varint
            return _uvarint(block)
        if codec == "lz4":  # lz4.block stores the length first, 4 bytes little-endian
            return int.from_bytes(block[:4], "little")
        if codec == "zstandard":
            return _zstd_size(block, limit)
    except (zlib.error, lzma.LZMAError, OSError, EOFError):
        return 0  # not decompressible: fastavro says so when it reads the block
    return limit  # a codec the viewer cannot bound


#: Bytes decompressed at a time while a block's size is counted.
_STEP = 1 << 20


def _uvarint(data: bytes) -> int:
    shift = value = 0
    for byte in data[:10]:
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
        shift += 7
    return 0


def _zstd_size(block: bytes, unknown: int) -> int:
    """A zstd frame's content size from its header (*unknown* when the frame omits it)."""
    if block[:4] != _ZSTD_MAGIC or len(block) < 6:
        return 0
    descriptor = block[4]
    single = descriptor >> 5 & 1
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    width = (single, 2, 4, 8)[descriptor >> 6]
    if not width:
        return unknown
    size = int.from_bytes(block[pos : pos + width], "little")
    return size + 256 if width == 2 else size
