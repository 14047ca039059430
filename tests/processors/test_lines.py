"""Tests for the streaming line scanner."""

from __future__ import annotations

import io
import re

from hypothesis import given
from hypothesis import strategies as st

from processors._lines import (
    LineGroup,
    LineSpan,
    iter_line_groups,
    iter_lines,
    iter_split_lines,
    split_lines,
)


def spans(data: bytes, **kwargs: int) -> list[tuple[int, int, int]]:
    return [(s.offset, s.length, s.crlf) for s in iter_lines(io.BytesIO(data), **kwargs)]


def test_terminators_and_last_line() -> None:
    """'\\r\\n', '\\n' and a lone '\\r' end lines; the last line may have no terminator."""
    assert spans(b"a\r\nb\nc\rd") == [(0, 3, 2), (3, 2, 1), (5, 2, 1), (7, 1, 0)]
    assert spans(b"") == []
    assert spans(b"\n\n") == [(0, 1, 1), (1, 1, 1)]


def test_crlf_split_across_chunks() -> None:
    """A '\\r\\n' whose halves land in different chunks is one terminator."""
    assert spans(b"ab\r\ncd", chunk_size=3) == [(0, 4, 2), (4, 2, 0)]
    assert spans(b"ab\r", chunk_size=3) == [(0, 3, 1)]
    assert spans(b"ab\rc", chunk_size=3) == [(0, 3, 1), (3, 1, 0)]


def test_prefix_is_kept_across_chunks() -> None:
    """The first bytes of each line are kept for marker tests, even across chunk boundaries."""
    lines = list(iter_lines(io.BytesIO(b"Header1\nxy\n"), prefix_size=4, chunk_size=2))
    assert [line.prefix for line in lines] == [b"Head", b"xy\n"]
    assert LineSpan(0, 1, 1).is_empty


@given(st.binary(max_size=200).map(lambda b: re.sub(rb"[^ab\r\n]", b"a", b)), st.integers(1, 17))
def test_lines_tile_the_input(data: bytes, chunk_size: int) -> None:
    """Lines are contiguous, cover every byte, and match a whole-buffer split, for any chunking."""
    found = list(iter_lines(io.BytesIO(data), chunk_size=chunk_size))
    assert b"".join(data[s.offset : s.offset + s.length] for s in found) == data
    expected = [m.group() for m in re.finditer(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", data)]
    assert [data[s.offset : s.offset + s.length] for s in found] == expected
    for span in found:
        line = data[span.offset : span.offset + span.length]
        terminator = re.search(rb"(\r\n|\r|\n)$", line)
        assert span.crlf == (len(terminator.group()) if terminator else 0)


def _grouped_reference(data: bytes, size: int) -> list[LineGroup]:
    groups, current = [], []
    for line in iter_lines(io.BytesIO(data)):
        current.append(line)
        if len(current) == size:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    summaries = []
    for lines in groups:
        trailing = empty = 0
        for line in lines:
            if line.is_empty:
                trailing += line.crlf
                empty += 1
            else:
                trailing = 0
        end = lines[-1].offset + lines[-1].length
        summaries.append(
            LineGroup(
                lines[0].offset, end - lines[0].offset, len(lines), empty, trailing, lines[-1].crlf
            )
        )
    return summaries


@given(
    st.binary(max_size=200).map(lambda b: bytes(b"ab\n\n\r"[x % 5] for x in b)),
    st.booleans(),
    st.integers(1, 7),
    st.integers(1, 16),
)
def test_line_groups_summarise_the_same_lines(
    data: bytes, no_cr: bool, size: int, chunk_size: int
) -> None:
    """Bulk-counted groups equal groups built line by line, on any chunking and terminators."""
    if no_cr:
        data = data.replace(b"\r", b"")
    got = list(iter_line_groups(io.BytesIO(data), size, chunk_size=chunk_size))
    assert got == _grouped_reference(data, size)


@given(
    st.lists(st.sampled_from([b"a", b"bc", b"", b"dd d"]), max_size=40).map(b"\n".join),
    st.booleans(),
    st.integers(1, 4),
    st.integers(1, 7),
)
def test_split_lines_are_splittexts_splits_of_line_groups(
    body: bytes, final_newline: bool, group_size: int, chunk_size: int
) -> None:
    """The numpy splits equal SplitText's splits of the line groups, trimming included."""
    from processors.split_text import _splits_of_groups

    data = body + (b"\n" if final_newline else b"")
    found = split_lines(io.BytesIO(data), group_size, chunk_size=chunk_size)
    assert found is not None
    expected = list(_splits_of_groups(iter_line_groups(io.BytesIO(data), group_size)))
    assert found.starts.tolist() == [s.start for s in expected]
    assert found.lengths.tolist() == [s.length for s in expected]
    assert found.trimmed.tolist() == [s.trimmed for s in expected]
    assert found.line_counts.tolist() == [s.line_count for s in expected]


def test_split_lines_leaves_carriage_returns_to_the_exact_path() -> None:
    """Content with a \\r is declined (None): \\r\\n and lone \\r need the per-line rules."""
    assert split_lines(io.BytesIO(b"a\r\nb\n"), 1) is None


@given(
    st.lists(st.sampled_from([b"a", b"bc", b"", b"dd d"]), max_size=40).map(b"\n".join),
    st.booleans(),
    st.integers(1, 4),
    st.integers(1, 7),
    st.integers(1, 5),
)
def test_split_lines_in_parts_are_the_same_splits_in_bounded_parts(
    body: bytes, final_newline: bool, group_size: int, chunk_size: int, max_splits: int
) -> None:
    """Parts of at most max_splits splits, one after the other, are split_lines' splits."""
    data = body + (b"\n" if final_newline else b"")
    whole = split_lines(io.BytesIO(data), group_size, chunk_size=chunk_size)
    assert whole is not None
    parts = list(
        iter_split_lines(io.BytesIO(data), group_size, max_splits=max_splits, chunk_size=chunk_size)
    )
    assert all(p is not None and 0 < len(p.starts) <= max_splits for p in parts)
    for name in ("starts", "lengths", "trimmed", "line_counts"):
        joined = [v for p in parts for v in getattr(p, name).tolist()]
        assert joined == getattr(whole, name).tolist()
