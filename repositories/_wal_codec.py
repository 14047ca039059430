"""Byte framing of the write-ahead log: journal transactions and checkpoint files.

A journal starts with a header (magic, version) and holds transactions, each framed as::

    0x40 | txn id (8 bytes) | payload length (4) | CRC-32 of the payload (4)
         | CRC-32 of the 17 bytes before (4) | payload

A cleanly closed journal ends with 0x7F. Reading follows NiFi's recovery rules: only whole
transactions count; an incomplete last transaction (a torn tail) or a run of zero bytes at the end
(sudden power loss) ends the journal with a warning; anything else is corruption, reported with
the file and offset, never skipped. The frame header has a checksum of its own (journal format
version 2): a flipped bit in a length would otherwise look like a transaction running past the
end of the file, a torn tail, and every later transaction would be dropped in silence. A header
that fails its checksum is corruption unless the file ends inside it. Version 1 journals (no
header checksum) are still read.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any, NamedTuple

import msgpack

from flowcore.errors import WalCorruptionError
from repositories._files import FileFormat, read_header

__all__ = [
    "CHECKPOINT_MAGIC",
    "JOURNAL_COMPLETE",
    "JOURNAL_HEADER",
    "JOURNAL_VERSION",
    "TRANSACTION_FOLLOWS",
    "Frame",
    "ReadResult",
    "decode_checkpoint",
    "encode_checkpoint",
    "encode_transaction",
    "pack",
    "read_journal",
    "unpack",
]

JOURNAL_MAGIC = b"FLOWCORE-WAL"
CHECKPOINT_MAGIC = b"FLOWCORE-CKPT"
FORMAT_VERSION = 1  # checkpoints
JOURNAL_VERSION = 2  # journals: frame headers with a checksum of their own
JOURNAL_HEADER = JOURNAL_MAGIC + struct.pack(">H", JOURNAL_VERSION)
TRANSACTION_FOLLOWS = 0x40  # NiFi's marker bytes
JOURNAL_COMPLETE = 0x7F
_FRAME_V1 = struct.Struct(">BQII")  # marker, txn id, length, payload crc32
_FRAME = struct.Struct(">BQIII")  # marker, txn id, length, payload crc32, header crc32
_HEADER_CHECKED = struct.Struct(">BQII")  # the part of a v2 header its checksum covers
_CHECKPOINT = struct.Struct(">HQII")  # version, max txn id, length, crc32
_CHECKPOINT_FORMAT = FileFormat("checkpoint", CHECKPOINT_MAGIC, _CHECKPOINT, FORMAT_VERSION)


def pack(value: Any) -> bytes:
    """Pack with msgpack, keeping binary strings apart from text.

    Text holding lone surrogates (Python's form of file-name bytes that are not UTF-8) is
    written as those bytes and read back the same, so such a name never stops a queue.
    """
    return msgpack.packb(value, use_bin_type=True, unicode_errors="surrogateescape")


def unpack(data: bytes, *, use_list: bool = True) -> Any:
    """The inverse of :func:`pack`: string keys allowed, arrays as lists (or tuples)."""
    return msgpack.unpackb(
        data,
        raw=False,
        strict_map_key=False,
        use_list=use_list,
        unicode_errors="surrogateescape",
    )


def encode_transaction(txn_id: int, payload: bytes) -> bytes:
    """One framed transaction (journal format version 2)."""
    head = _HEADER_CHECKED.pack(TRANSACTION_FOLLOWS, txn_id, len(payload), zlib.crc32(payload))
    return head + struct.pack(">I", zlib.crc32(head)) + payload


class Frame(NamedTuple):
    """One whole transaction read back: its id, payload and where it ended."""

    txn_id: int
    payload: bytes
    end: int


class ReadResult(NamedTuple):
    """What reading a journal found.

    Attributes:
        frames: the whole transactions, in order.
        clean: the journal ended with the completion marker.
        warning: why reading stopped early (torn tail, trailing zeros), or None.
    """

    frames: list[Frame]
    clean: bool
    warning: str | None


def read_journal(path: Path) -> ReadResult:
    """Read every whole transaction of a journal file.

    Raises:
        WalCorruptionError: a wrong header, or bad bytes that are not a torn tail; the message
            names the file and the offset.
    """
    data = path.read_bytes()
    if len(data) < len(JOURNAL_HEADER):
        if data.strip(b"\x00") and not JOURNAL_HEADER.startswith(data):
            msg = f"{path} is not a flowcore journal (bad header at offset 0)"
            raise WalCorruptionError(msg)
        return ReadResult([], False, f"{path} ends inside its header; treated as empty")
    if not data.startswith(JOURNAL_MAGIC):
        msg = f"{path} is not a flowcore journal (bad header at offset 0)"
        raise WalCorruptionError(msg)
    (version,) = struct.unpack_from(">H", data, len(JOURNAL_MAGIC))
    if version not in (1, JOURNAL_VERSION):
        msg = (
            f"{path} has journal format version {version}; "
            f"this flowcore reads versions 1 and {JOURNAL_VERSION}"
        )
        raise WalCorruptionError(msg)
    frame = _FRAME if version == JOURNAL_VERSION else _FRAME_V1
    frames: list[Frame] = []
    offset = len(JOURNAL_HEADER)
    size = len(data)
    while offset < size:
        marker = data[offset]
        if marker == JOURNAL_COMPLETE:
            return ReadResult(frames, True, None)
        if not data[offset:].strip(b"\x00"):
            warning = (
                f"{path}: {size - offset} zero bytes at offset {offset} "
                "(sudden power loss?); ignoring them"
            )
            return ReadResult(frames, False, warning)
        if marker != TRANSACTION_FOLLOWS:
            msg = (
                f"{path} is corrupt at offset {offset}: unexpected byte {marker:#04x} "
                "where a transaction should start"
            )
            raise WalCorruptionError(msg)
        if offset + frame.size > size:
            warning = f"{path}: torn transaction header at offset {offset}; ignoring the tail"
            return ReadResult(frames, False, warning)
        if frame is _FRAME:
            *_, header_crc = _FRAME.unpack_from(data, offset)
            if zlib.crc32(data[offset : offset + _HEADER_CHECKED.size]) != header_crc:
                msg = (
                    f"{path} is corrupt at offset {offset}: a transaction header fails its "
                    "checksum (its length cannot be trusted, so nothing after it can be read)"
                )
                raise WalCorruptionError(msg)
        _, txn_id, length, crc = _HEADER_CHECKED.unpack_from(data, offset)
        start = offset + frame.size
        end = start + length
        if end > size:
            warning = f"{path}: torn transaction {txn_id} at offset {offset}; ignoring the tail"
            return ReadResult(frames, False, warning)
        payload = data[start:end]
        if zlib.crc32(payload) != crc:
            if not data[end:].strip(b"\x00"):
                warning = (
                    f"{path}: transaction {txn_id} at offset {offset} was torn "
                    "(bad checksum at the end); ignoring it"
                )
                return ReadResult(frames, False, warning)
            msg = (
                f"{path} is corrupt at offset {offset}: transaction {txn_id} fails its "
                "checksum and data follows it"
            )
            raise WalCorruptionError(msg)
        frames.append(Frame(txn_id, payload, end))
        offset = end
    return ReadResult(frames, False, None)


def encode_checkpoint(max_txn_id: int, payload: bytes) -> bytes:
    """A checkpoint file's bytes."""
    return (
        CHECKPOINT_MAGIC
        + _CHECKPOINT.pack(FORMAT_VERSION, max_txn_id, len(payload), zlib.crc32(payload))
        + payload
    )


def decode_checkpoint(path: Path) -> tuple[int, bytes]:
    """Read a checkpoint: its max transaction id and payload.

    Raises:
        WalCorruptionError: the file is not a whole, valid checkpoint (checkpoints are fsynced
            before they are renamed into place, so a bad one is real corruption).
    """
    data = path.read_bytes()
    head = _CHECKPOINT_FORMAT.start
    _, max_txn_id, length, crc = read_header(path, data, _CHECKPOINT_FORMAT)
    payload = data[head : head + length]
    if len(payload) != length or zlib.crc32(payload) != crc:
        msg = (
            f"{path} is corrupt at offset {head}: "
            "the checkpoint payload fails its length or checksum"
        )
        raise WalCorruptionError(msg)
    return max_txn_id, payload
