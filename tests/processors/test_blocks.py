"""Tests for block cutting and the record readers' boundary rules."""

from __future__ import annotations

import io
import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import processors._blocks as blocks
from processors._blocks import (
    RecordReader,
    aligned_range,
    block_count,
    header_end,
    line_start_after,
    nominal_block,
    nominal_blocks,
    split_header,
)
from processors._lines import iter_lines

# Files made of short and long lines with every terminator, with or without a final one.
_PIECES = st.sampled_from([b"a", b"bc", b"x" * 40, b"\n", b"\r\n", b"\r", b"\n\n"])
CONTENTS = st.lists(_PIECES, max_size=60).map(b"".join)


@contextmanager
def opened(tmp: Path, data: bytes) -> Iterator[int]:
    path = tmp / "f"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def scan_chunk(size: int) -> Iterator[None]:
    saved = blocks._SCAN_CHUNK
    blocks._SCAN_CHUNK = size
    try:
        yield
    finally:
        blocks._SCAN_CHUNK = saved


def ranges(fd: int, size: int, block_size: int, reader: RecordReader, n: int = 1) -> list:
    return [
        aligned_range(fd, o, length, size, reader=reader, record_length=n)
        for o, length in nominal_blocks(size, block_size)
    ]


def lines(data: bytes) -> list[bytes]:
    return [data[s.offset : s.offset + s.length] for s in iter_lines(io.BytesIO(data))]


def test_nominal_blocks_cover_the_file_and_an_empty_file_has_one() -> None:
    """Blocks are consecutive, the last one short; an empty file still has one empty block."""
    assert nominal_blocks(10, 4) == [(0, 4), (4, 4), (8, 2)]
    assert nominal_blocks(8, 4) == [(0, 4), (4, 4)]
    assert nominal_blocks(0, 4) == [(0, 0)]
    with pytest.raises(ValueError, match="block size must be positive"):
        nominal_blocks(10, 0)


@given(size=st.integers(0, 200), block_size=st.integers(1, 50))
def test_one_block_and_the_count_agree_with_the_list(size: int, block_size: int) -> None:
    """block_count and nominal_block give what nominal_blocks lists, without the list."""
    listed = nominal_blocks(size, block_size)
    assert block_count(size, block_size) == len(listed)
    assert [nominal_block(size, block_size, i) for i in range(len(listed))] == listed


def test_a_line_starting_exactly_at_a_block_start_belongs_to_the_previous_block(
    tmp_path: Path,
) -> None:
    """Hadoop's rule: the earlier block reads while a line starts at or before its end."""
    with opened(tmp_path, b"abc\ndef\nghi\n") as fd:
        assert ranges(fd, 12, 4, RecordReader.LINES) == [(0, 8), (8, 12), (12, 12)]


def test_a_crlf_cut_between_its_two_bytes_stays_whole(tmp_path: Path) -> None:
    """A boundary between the \\r and \\n of one terminator is inside that terminator."""
    with opened(tmp_path, b"ab\r\ncd") as fd:
        assert line_start_after(fd, 3, 6) == 4
        assert ranges(fd, 6, 3, RecordReader.LINES) == [(0, 4), (4, 6)]


@given(data=CONTENTS, block_size=st.integers(1, 50), chunk=st.integers(1, 8))
def test_lines_every_line_is_in_exactly_one_block(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, block_size: int, chunk: int
) -> None:
    """The blocks, in order, are the file, and each holds whole lines only, whatever the
    block size and however the scan is chunked."""
    tmp = tmp_path_factory.mktemp("lines")
    with opened(tmp, data) as fd, scan_chunk(chunk):
        found = ranges(fd, len(data), block_size, RecordReader.LINES)
    assert found[0][0] == 0
    assert found[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(found))
    assert [line for s, e in found for line in lines(data[s:e])] == lines(data)


@given(data=CONTENTS, block_size=st.integers(1, 50), record=st.integers(1, 9))
def test_fixed_length_blocks_hold_whole_records(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, block_size: int, record: int
) -> None:
    """Boundaries fall on multiples of the record length; only the file's last record is short."""
    tmp = tmp_path_factory.mktemp("fixed")
    with opened(tmp, data) as fd:
        found = ranges(fd, len(data), block_size, RecordReader.FIXED_LENGTH, record)
    assert b"".join(data[s:e] for s, e in found) == data
    assert all(s % record == 0 or s == len(data) for s, _ in found)


def test_none_keeps_the_nominal_blocks(tmp_path: Path) -> None:
    """Raw blocks are the nominal blocks, unread."""
    with opened(tmp_path, b"0123456789") as fd:
        assert ranges(fd, 10, 4, RecordReader.NONE) == [(0, 4), (4, 8), (8, 10)]


def test_the_header_ends_after_its_lines_or_at_the_end_of_a_short_file(tmp_path: Path) -> None:
    """header_end counts \n, \r\n and lone \r lines; a file with fewer lines is all header."""
    with opened(tmp_path, b"a,b\r\nc\rd\n1,2\n") as fd:
        assert [header_end(fd, n, 14) for n in range(5)] == [0, 5, 7, 9, 13]
        assert header_end(fd, 9, 14) == 14


def test_a_block_left_without_a_line_of_its_own_reads_nothing() -> None:
    """The first block reads the header even when it ends inside it; the others only behind
    lines of their own."""
    assert split_header(0, 3, 10) == (0, 0, 10)
    assert split_header(0, 14, 10) == (0, 0, 14)
    assert split_header(4, 10, 10) == (0, 10, 10)
    assert split_header(4, 12, 10) == (10, 10, 12)
    assert split_header(12, 12, 10) == (0, 12, 12)
    assert split_header(12, 20, 10) == (10, 12, 20)


@given(
    data=CONTENTS,
    block_size=st.integers(1, 50),
    headers=st.integers(0, 4),
    chunk=st.integers(1, 8),
)
def test_with_a_header_every_line_after_it_is_in_exactly_one_block(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, block_size: int, headers: int, chunk: int
) -> None:
    """Behind the header, the blocks' own ranges are the rest of the file, in order, whole
    lines only; every block with content but the first starts with the header."""
    tmp = tmp_path_factory.mktemp("header")
    size = len(data)
    with opened(tmp, data) as fd, scan_chunk(chunk):
        header = header_end(fd, headers, size)
        found = [
            split_header(s, e, header) for s, e in ranges(fd, size, block_size, RecordReader.LINES)
        ]
    assert lines(data[:header]) == lines(data)[:headers]
    first_length, first_start, first_end = found[0]
    assert (first_length, first_start) == (0, 0)
    own = [data[header:first_end], *(data[s:e] for _, s, e in found[1:])]
    assert b"".join(own) == data[header:]
    assert [line for part in own for line in lines(part)] == lines(data)[headers:]
    for length, start, end in found[1:]:
        assert length == (header if end > start else 0)
