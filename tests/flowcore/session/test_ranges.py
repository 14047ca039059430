"""Tests for flowcore/session/_ranges.py: a batch's contents read from its claim in windows."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import ContentCorruptionError
from flowcore.session._ranges import RangeReader, window_pieces, window_spans
from repositories._claim_checksums import BLOCK_SIZE
from repositories.content import FileContentRepository
from repositories.memory import MemoryContentRepository

_DATA = bytes(range(256)) * 64  # 16 KiB, every byte telling where it is


def _ranges(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Ranges inside _DATA: in order with gaps, overlapping, going back, and empty ones."""
    count = draw(st.integers(0, 40))
    offsets, sizes = [], []
    for _ in range(count):
        offsets.append(draw(st.integers(0, len(_DATA) - 1)))
        sizes.append(draw(st.integers(0, min(300, len(_DATA) - offsets[-1]))))
    if draw(st.booleans()):  # mostly ascending, as a split file's lines are
        order = np.argsort(offsets, kind="stable")
        offsets, sizes = [offsets[i] for i in order], [sizes[i] for i in order]
    return np.array(offsets, dtype=np.int64), np.array(sizes, dtype=np.int64)


ranges = st.composite(_ranges)


@settings(max_examples=200, deadline=None)
@given(ranges(), st.sampled_from([1, 64, 1000, 1 << 20]), st.sampled_from([b"", b"\n", b"--"]))
def test_each_range_and_the_joined_ranges_are_the_claim_s_bytes(
    picked: tuple[np.ndarray, np.ndarray], window: int, demarcator: bytes
) -> None:
    """Whatever the ranges and the window, each range reads as its bytes, in order, and the
    joined form is the ranges with the demarcator between two."""
    offsets, sizes = picked
    repo = MemoryContentRepository()
    claim = repo.write_bytes(_DATA)
    assert claim is not None
    reader = RangeReader(repo, window)
    wanted = [_DATA[o : o + s] for o, s in zip(offsets.tolist(), sizes.tolist(), strict=True)]
    each = [
        b"".join(bytes(p) for p in pieces)
        for pieces in reader.each(claim.resource_claim, offsets, sizes)
    ]
    assert each == wanted
    joined = b"".join(
        bytes(p) for p in reader.joined(claim.resource_claim, offsets, sizes, demarcator)
    )
    assert joined == demarcator.join(wanted)
    reusing = RangeReader(repo, window, reuse=True)  # each piece copied before the next
    pieces = reusing.joined(claim.resource_claim, offsets, sizes, demarcator)
    assert b"".join(bytes(p) for p in pieces) == demarcator.join(wanted)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.one_of(st.integers(0, 40), st.integers(0, 70_000))),
        max_size=60,
    ),
    st.sampled_from([b"", b"\n", b"--"]),
)
def test_window_pieces_are_the_ranges_with_the_demarcator_between(
    steps: list[tuple[int, int]], demarcator: bytes
) -> None:
    """Touching, apart, empty, small and large ranges: the pieces in order are the ranges with
    the demarcator between two, and a large range is a view, not a copy."""
    starts, ends, position = [], [], 0
    for gap, size in steps:
        starts.append(position + gap)
        ends.append(position + gap + size)
        position = ends[-1]
    window = memoryview(bytes(i % 251 for i in range(position)))
    pieces = list(
        window_pieces(window, np.array(starts, np.int64), np.array(ends, np.int64), demarcator)
    )
    expected = demarcator.join(bytes(window[a:b]) for a, b in zip(starts, ends, strict=True))
    assert b"".join(bytes(p) for p in pieces) == expected
    if demarcator:  # every large range is a view of its own, whatever its neighbours
        large = [b - a for a, b in zip(starts, ends, strict=True) if b - a >= 64 * 1024]
        views = [len(p) for p in pieces if isinstance(p, memoryview) and len(p) >= 64 * 1024]
        assert views == large


@settings(max_examples=100, deadline=None)
@given(ranges(), st.integers(1, 5000))
def test_spans_cover_every_row_once_ascending_inside_a_window(
    picked: tuple[np.ndarray, np.ndarray], window: int
) -> None:
    """Spans cut the rows in order; inside one, non-empty ranges ascend without overlap and fit
    the window (a lone range may be larger)."""
    offsets, sizes = picked
    spans = window_spans(offsets, sizes, window)
    assert [r for a, b in spans for r in range(a, b)] == list(range(len(offsets)))
    for start, stop in spans:
        present = [
            (int(o), int(s))
            for o, s in zip(offsets[start:stop], sizes[start:stop], strict=True)
            if s
        ]
        for (o1, s1), (o2, _) in itertools.pairwise(present):
            assert o2 >= o1 + s1
        if len(present) > 1:
            assert present[-1][0] + present[-1][1] - present[0][0] <= window


def _flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_window_fails_only_the_ranges_touching_the_damage(tmp_path: Path) -> None:
    """Damage between wanted ranges does not fail them: the window is read range by range,
    and only a range in the damaged block raises."""
    repo = FileContentRepository(tmp_path)
    writer = repo.writer("t")
    stream = writer.open_stream()
    data = bytes(range(251)) * (3 * BLOCK_SIZE // 251 + 1)
    stream.write(data)
    claim = stream.close()
    writer.close()
    assert claim is not None
    _flip(repo.path_of(claim.resource_claim), BLOCK_SIZE + 10)  # the second block
    fresh = FileContentRepository(tmp_path)
    around = [*range(0, BLOCK_SIZE - 100, 100), *range(2 * BLOCK_SIZE, 3 * BLOCK_SIZE - 100, 100)]
    offsets = np.array([*around, BLOCK_SIZE + 20], dtype=np.int64)  # the last one: damaged
    sizes = np.full(len(offsets), 90, dtype=np.int64)
    read = RangeReader(fresh).each(claim.resource_claim, offsets, sizes)
    for offset in around:  # one dense window around the damaged block: each range delivered
        assert b"".join(bytes(p) for p in next(read)) == data[offset : offset + 90]
    with pytest.raises(ContentCorruptionError):
        b"".join(bytes(p) for p in next(read))
