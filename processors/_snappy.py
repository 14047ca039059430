r"""The three Snappy stream formats NiFi's CompressContent speaks, over cramjam's raw Snappy.

Snappy itself compresses one block in memory; a stream format cuts the content into blocks and
frames them. NiFi uses three, all from snappy-java:

- ``snappy`` (snappy-java's ``SnappyOutputStream``): the header ``\\x82SNAPPY\\x00``, version 1,
  compatible version 1 (two big-endian int32), then per block of at most 32 KiB its compressed
  length (big-endian int32) and the raw Snappy block. A stream without the header is read as
  one raw Snappy block, as ``SnappyInputStream`` does; concatenated streams are read on.
- ``snappy-hadoop`` (Hadoop's ``BlockCompressorStream``): per block the uncompressed length,
  the compressed length (both big-endian int32) and the raw Snappy block. NiFi only writes it.
- ``snappy framed`` (the framing format of google/snappy's ``framing_format.txt``): a stream
  identifier chunk, then chunks of at most 64 KiB of content, each with a masked CRC-32C of the
  uncompressed bytes; a chunk that compresses by less than 15% is stored uncompressed, as
  snappy-java does.

cramjam's own stream classes gather all output in one buffer, so the framing is done here, a
block at a time: memory holds one block whatever the content's size. A block that declares more
than :data:`MAX_BLOCK` bytes uncompressed is refused rather than decoded in memory.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import cramjam
import crc32c

from processors._packaging import CHUNK

__all__ = [
    "MAX_BLOCK",
    "SnappyFormatError",
    "compress_framed",
    "compress_hadoop",
    "compress_snappy_java",
    "decompress_framed",
    "decompress_snappy_java",
]

Write = Callable[[bytes], object]

MAX_BLOCK = 64 << 20  # bytes: the largest block decoded (snappy-java writes 32 KiB blocks)
_JAVA_BLOCK = 32 << 10  # bytes per block, snappy-java's default
_JAVA_MAGIC = b"\x82SNAPPY\x00"
_JAVA_HEADER = _JAVA_MAGIC + struct.pack(">ii", 1, 1)
_FRAME_BLOCK = 1 << 16  # bytes: the framing format's limit per chunk
_FRAME_ID = b"\xff\x06\x00\x00sNaPpY"
_MIN_RATIO = 0.85  # snappy-java stores a chunk uncompressed above this ratio


class SnappyFormatError(ValueError):
    """The bytes are not a stream of the Snappy format read (the message says where)."""


def _blocks(source: Any, size: int) -> Any:
    """*source* in blocks of *size* bytes (the last may be shorter)."""
    pending = b""
    while data := source.read(CHUNK):
        data = pending + data if pending else data
        whole = len(data) - len(data) % size
        for start in range(0, whole, size):
            yield data[start : start + size]
        pending = data[whole:]
    if pending:
        yield pending


def _exactly(source: Any, size: int, what: str) -> bytes:
    parts, left = [], size
    while left:
        data = source.read(min(left, CHUNK))
        if not data:
            msg = f"the stream ends inside {what}"
            raise SnappyFormatError(msg)
        parts.append(data)
        left -= len(data)
    return b"".join(parts)


def _raw(block: bytes, limit: int = MAX_BLOCK) -> bytes:
    """One raw Snappy block decoded, refused when it declares more than *limit* bytes."""
    try:
        size = cramjam.snappy.decompress_raw_len(block)
        if size > limit:
            msg = f"a Snappy block declares {size} bytes, more than the {limit} allowed"
            raise SnappyFormatError(msg)
        return bytes(cramjam.snappy.decompress_raw(block))
    except cramjam.DecompressionError as ex:
        msg = f"a Snappy block is corrupt: {ex}"
        raise SnappyFormatError(msg) from None


# --- snappy-java's SnappyOutputStream ---------------------------------------------------------


def compress_snappy_java(source: Any, write: Write) -> None:
    """snappy-java's stream: its header, then length-prefixed raw blocks of 32 KiB."""
    write(_JAVA_HEADER)
    for block in _blocks(source, _JAVA_BLOCK):
        packed = bytes(cramjam.snappy.compress_raw(block))
        write(struct.pack(">i", len(packed)) + packed)


def decompress_snappy_java(source: Any, write: Write) -> None:
    """Read snappy-java's stream (or, without its header, one raw Snappy block)."""
    head = source.read(len(_JAVA_HEADER))
    if not head.startswith(_JAVA_MAGIC) or len(head) < len(_JAVA_HEADER):
        whole = head + b"".join(iter(lambda: source.read(CHUNK), b""))
        if len(whole) > MAX_BLOCK:
            msg = f"a raw Snappy stream (no snappy-java header) over {MAX_BLOCK} bytes"
            raise SnappyFormatError(msg)
        write(_raw(whole))
        return
    while True:
        length = source.read(4)
        if not length:
            return
        if len(length) < 4:
            msg = "the stream ends inside a block length"
            raise SnappyFormatError(msg)
        if length == _JAVA_MAGIC[:4]:  # a concatenated stream's header
            if _exactly(source, len(_JAVA_HEADER) - 4, "a header")[:4] != _JAVA_MAGIC[4:]:
                msg = "a concatenated snappy-java header is corrupt"
                raise SnappyFormatError(msg)
            continue
        (size,) = struct.unpack(">i", length)
        if not 0 <= size <= MAX_BLOCK:
            msg = f"a block length of {size} bytes is not valid"
            raise SnappyFormatError(msg)
        write(_raw(_exactly(source, size, "a block")))


# --- Hadoop's BlockCompressorStream -----------------------------------------------------------


def compress_hadoop(source: Any, write: Write) -> None:
    """Hadoop's block stream: per 32 KiB block, both lengths and the raw block."""
    for block in _blocks(source, _JAVA_BLOCK):
        packed = bytes(cramjam.snappy.compress_raw(block))
        write(struct.pack(">ii", len(block), len(packed)) + packed)


# --- the framing format -----------------------------------------------------------------------


def _masked_crc(data: bytes) -> int:
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _chunk(kind: int, body: bytes) -> bytes:
    return bytes((kind,)) + len(body).to_bytes(3, "little") + body


def compress_framed(source: Any, write: Write) -> None:
    """The framing format: the stream identifier, then checksummed chunks of 64 KiB."""
    write(_FRAME_ID)
    for block in _blocks(source, _FRAME_BLOCK):
        crc = struct.pack("<I", _masked_crc(block))
        packed = bytes(cramjam.snappy.compress_raw(block))
        if len(packed) > len(block) * _MIN_RATIO:
            write(_chunk(0x01, crc + block))
        else:
            write(_chunk(0x00, crc + packed))


def decompress_framed(source: Any, write: Write) -> None:
    """Read the framing format, checking every chunk's CRC-32C."""
    first = True
    while True:
        head = source.read(4)
        if not head:
            if first:
                msg = "the stream is empty: no stream identifier"
                raise SnappyFormatError(msg)
            return
        if len(head) < 4:
            msg = "the stream ends inside a chunk header"
            raise SnappyFormatError(msg)
        kind, size = head[0], int.from_bytes(head[1:], "little")
        if first and kind != 0xFF:
            msg = f"the stream starts with chunk type {kind:#04x}, not the stream identifier"
            raise SnappyFormatError(msg)
        first = False
        body = _exactly(source, size, f"a chunk of type {kind:#04x}")
        if kind == 0xFF:
            if head + body != _FRAME_ID:
                msg = "the stream identifier is not 'sNaPpY'"
                raise SnappyFormatError(msg)
        elif kind in (0x00, 0x01):
            if size < 4:
                msg = "a data chunk is shorter than its checksum"
                raise SnappyFormatError(msg)
            data = _raw(body[4:], _FRAME_BLOCK) if kind == 0x00 else body[4:]
            if len(data) > _FRAME_BLOCK:
                msg = f"a chunk holds {len(data)} bytes, more than the format's 65536"
                raise SnappyFormatError(msg)
            if struct.unpack("<I", body[:4])[0] != _masked_crc(data):
                msg = "a chunk's CRC-32C does not match its content"
                raise SnappyFormatError(msg)
            write(data)
        elif kind <= 0x7F:
            msg = f"the stream holds the reserved unskippable chunk type {kind:#04x}"
            raise SnappyFormatError(msg)
        # 0x80-0xfe: padding and reserved skippable chunks are skipped
