r"""Blocks of a file and where their records begin: the rules FileSplitter reads by.

A file is cut into nominal blocks of a fixed size (:func:`nominal_blocks`) without being read.
A *record reader* then moves each block's two ends to record boundaries, so every record belongs
to exactly one block and the blocks, in order, are the file:

* ``Lines`` follows Hadoop's ``LineRecordReader``: a block that does not start at offset 0 skips
  to the first line that starts *after* its nominal start, and a block reads on past its nominal
  end to finish the line that holds that end. So block ``[o, e)`` becomes ``[L(o), L(e))`` where
  ``L(x)`` is the first line start after ``x`` (0 for ``x = 0``, the file size when there is
  none). A line ends at ``\n``, ``\r\n`` or a lone ``\r``, as SplitText's lines do. A line longer
  than a block leaves empty blocks behind it.
* ``Fixed Length`` records of N bytes: both ends round up to a multiple of N (the last record
  may be short).
* ``None``: the nominal block itself (raw bytes).

Only the bytes between a nominal boundary and the next line end are read, so finding the range
of a 64 MB block costs one small read at each end.

With header lines (FileSplitter's Header Line Count, for CSV files), the file's first N lines
are the header (:func:`header_end`) and every block reads as the header followed by its own
lines after the header (:func:`split_header`), so each block parses alone, as Spark's CSV source
reads every split with ``header=true``; the header's lines are no block's records.
"""

from __future__ import annotations

import enum
import os
import re

__all__ = [
    "RecordReader",
    "aligned_range",
    "block_count",
    "header_end",
    "line_start_after",
    "nominal_block",
    "nominal_blocks",
]

_SCAN_CHUNK = 64 * 1024
_TERMINATOR = re.compile(rb"\r\n|\r|\n")


class RecordReader(enum.Enum):
    """How block boundaries are moved to record boundaries (FileSplitter's Record Reader)."""

    LINES = "Lines"
    FIXED_LENGTH = "Fixed Length"
    NONE = "None"


def nominal_blocks(size: int, block_size: int) -> list[tuple[int, int]]:
    """``(offset, length)`` of each block of a *size*-byte file; an empty file has one block.

    Raises:
        ValueError: *block_size* is not positive.
    """
    if block_size <= 0:
        msg = f"block size must be positive, not {block_size}"
        raise ValueError(msg)
    if size == 0:
        return [(0, 0)]
    return [(offset, min(block_size, size - offset)) for offset in range(0, size, block_size)]


def block_count(size: int, block_size: int) -> int:
    """How many nominal blocks a *size*-byte file has (``len(nominal_blocks(...))``)."""
    return max(1, -(-size // block_size))


def nominal_block(size: int, block_size: int, index: int) -> tuple[int, int]:
    """``(offset, length)`` of block *index* (``nominal_blocks(...)[index]``, without the list)."""
    offset = index * block_size
    return offset, max(0, min(block_size, size - offset))


def line_start_after(fd: int, position: int, size: int) -> int:
    r"""The first line start after *position* in the file open as *fd* of *size* bytes.

    ``0`` for position 0 (the first line starts there); *size* when no line starts after it.
    A position between the ``\r`` and ``\n`` of one terminator is inside that terminator.
    """
    if position <= 0:
        return 0
    return _line_end_from(fd, position, size)


def _line_end_from(fd: int, at: int, size: int) -> int:
    """The end of the first line terminator at or after *at* (*size* when there is none)."""
    while at < size:
        # One byte more than the chunk, so a '\r' at the chunk's end sees what follows it.
        chunk = os.pread(fd, _SCAN_CHUNK + 1, at)
        if not chunk:
            break
        match = _TERMINATOR.search(chunk)
        if match is not None and (match.start() < _SCAN_CHUNK or len(chunk) <= _SCAN_CHUNK):
            return at + match.end()
        at += _SCAN_CHUNK
    return size


def aligned_range(
    fd: int,
    offset: int,
    length: int,
    size: int,
    *,
    reader: RecordReader,
    record_length: int = 1,
) -> tuple[int, int]:
    """The ``[start, end)`` a nominal block covers once its ends are moved to record boundaries.

    Args:
        fd: the file, open for reading (only ``Lines`` reads it).
        offset: the block's nominal offset.
        length: the block's nominal length.
        size: the file's size.
        reader: the record reader.
        record_length: the record size for ``Fixed Length``.
    """
    end = min(offset + length, size)
    if reader is RecordReader.LINES:
        finish = size if end >= size else line_start_after(fd, end, size)
        return line_start_after(fd, offset, size), finish
    if reader is RecordReader.FIXED_LENGTH:
        if record_length <= 0:
            msg = f"record length must be positive, not {record_length}"
            raise ValueError(msg)
        return (
            min(size, -(-offset // record_length) * record_length),
            min(size, -(-end // record_length) * record_length),
        )
    return offset, end


def header_end(fd: int, lines: int, size: int) -> int:
    """Where the first *lines* lines of the file open as *fd* end: the first record's start.

    The whole file (*size*) when it has fewer lines; 0 for no header lines.
    """
    at = 0
    for _ in range(lines):
        if at >= size:
            break
        at = _line_end_from(fd, at, size)
    return at


def split_header(start: int, end: int, header: int) -> tuple[int, int, int]:
    """``(header_length, data_start, data_end)``: what a block ``[start, end)`` reads with a header.

    The header is ``[0, header)`` of the file and comes first in every block but the first,
    which holds it already: the first block reads ``[0, max(end, header))``, the others their
    own lines after the header, ``[max(start, header), max(end, header))``, behind it. A block
    left with no line of its own (its lines were all header, or a long line took them) reads
    nothing, not even the header, so every block that has content has records.

    Args:
        start: the block's line-aligned start (0 only for the first block).
        end: the block's line-aligned end.
        header: where the header ends (:func:`header_end`).
    """
    if start == 0:
        return 0, 0, max(end, header)
    data_start, data_end = max(start, header), max(end, header)
    if data_end == data_start:
        return 0, data_start, data_start
    return header, data_start, data_end
