"""A batch's contents read from its one resource claim in windows, not a claim opened per FlowFile.

A batch of split lines holds 200,000 ranges of a few dozen bytes each in one claim. Opening the
claim for each range costs a hundred times the bytes, so a sink's batch form reads the claim in
windows (:data:`GATHER_WINDOW`) and picks each range out of the window it lies in, as a merge of
ranges does (:class:`~flowcore.session._content.RangeGather`). A range larger than a window is
streamed on its own, so memory holds about a window whatever the batch.

A window that cannot be read (damage between the wanted ranges, a claim cut short) falls back to
reading its ranges one by one: only a damaged range raises, and the batch form then declines so
the per-FlowFile path reports that FlowFile.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from flowcore.errors import ContentCorruptionError, ContentNotFoundError
from flowcore.flowfile import ContentClaim, ResourceClaim

if TYPE_CHECKING:
    from repositories.protocols import ContentRepository

__all__ = ["GATHER_WINDOW", "RangeReader", "window_pieces", "window_spans"]

#: The most bytes of one claim read at once to copy the small ranges inside them.
GATHER_WINDOW = 8 << 20
#: Ranges filling less than 1/SPARSE of their window's bytes are read one by one.
_SPARSE = 64
#: Bytes read at a time from a range streamed on its own.
_STREAM_CHUNK = 1 << 20
#: Small ranges are joined into pieces of about this many bytes (few writes, little new memory).
_PIECE = 64 * 1024


def window_pieces(
    window: memoryview, starts: np.ndarray, ends: np.ndarray, demarcator: bytes = b""
) -> Iterator[bytes | memoryview]:
    """The ranges ``window[starts[i]:ends[i]]`` one after the other, *demarcator* between two.

    Ranges that touch (and no demarcator goes between) are one view; a range of at least
    :data:`_PIECE` bytes is a view of its own; smaller ones are joined into pieces of about
    that size, which the allocator reuses, rather than one copy of the window.
    """
    count = len(starts)
    if not count:
        return
    if not demarcator:
        apart = np.flatnonzero(starts[1:] != ends[:-1])
        starts = starts[np.concatenate(([0], apart + 1))]
        ends = ends[np.concatenate((apart, [count - 1]))]
        count = len(starts)
    sizes = ends - starts
    large = sizes >= _PIECE
    filled = np.cumsum(sizes) // _PIECE  # a new piece where the bytes so far pass a multiple
    cuts = np.flatnonzero((filled[1:] != filled[:-1]) | large[1:] | large[:-1]) + 1
    lows, highs = starts.tolist(), ends.tolist()
    for first, stop in itertools.pairwise([0, *cuts.tolist(), count]):
        if first and demarcator:
            yield demarcator
        if stop - first == 1:
            yield window[lows[first] : highs[first]]
        else:
            yield demarcator.join(
                [window[a:b] for a, b in zip(lows[first:stop], highs[first:stop], strict=True)]
            )


def window_spans(
    offsets: np.ndarray, sizes: np.ndarray, window: int = GATHER_WINDOW
) -> list[tuple[int, int]]:
    """``(start, stop)`` row spans whose ranges ascend without overlap inside *window* bytes.

    Empty ranges (size 0) never break a span, wherever their offset points.
    """
    count = len(offsets)
    if not count:
        return []
    ends = offsets + sizes
    # an empty range sits where the ranges before it end: it neither breaks nor widens a span
    reached = np.maximum.accumulate(np.where(sizes > 0, ends, 0))
    starts = np.where(sizes > 0, offsets, np.concatenate(([0], reached[:-1])))
    ends = starts + sizes
    breaks = np.flatnonzero(starts[1:] < ends[:-1]) + 1
    spans = []
    for low_row, high_row in itertools.pairwise([0, *breaks.tolist(), count]):
        stretch_ends = ends[low_row:high_row]
        index = low_row
        while index < high_row:
            limit = int(starts[index]) + window
            stop = int(np.searchsorted(stretch_ends, limit, side="right")) + low_row
            stop = max(stop, index + 1)
            spans.append((index, stop))
            index = stop
    return spans


class RangeReader:
    """Reads ranges of one resource claim through a content repository, window by window.

    Args:
        content: the repository the claim is in (a task's, or the harness's).
        window: the most bytes read at once.
    """

    def __init__(
        self, content: ContentRepository, window: int = GATHER_WINDOW, *, reuse: bool = False
    ) -> None:
        self._content = content
        self._window_size = window
        #: read every window into one buffer (pieces then valid only until the next is asked for)
        self._reuse = reuse
        self._buffer: bytearray | None = None

    def each(
        self, resource: ResourceClaim | None, offsets: np.ndarray, sizes: np.ndarray
    ) -> Iterator[Sequence[bytes | memoryview] | Iterator[bytes]]:
        """Each range's bytes, in order, as pieces to write one after the other.

        A range read from a window is one memoryview of it (valid until the next range is
        asked for); a range larger than a window is streamed in pieces of a megabyte.
        """
        for start, stop in window_spans(offsets, sizes, self._window_size):
            window, low = self._window(resource, offsets, sizes, start, stop)
            for offset, size in zip(
                offsets[start:stop].tolist(), sizes[start:stop].tolist(), strict=True
            ):
                if not size or resource is None:
                    yield ()
                elif window is not None:
                    yield (window[offset - low : offset - low + size],)
                else:
                    yield self._stream(ContentClaim(resource, offset, size))

    def joined(
        self,
        resource: ResourceClaim | None,
        offsets: np.ndarray,
        sizes: np.ndarray,
        demarcator: bytes = b"",
    ) -> Iterator[bytes | memoryview]:
        """The ranges one after the other, *demarcator* between two, in pieces.

        A large range is a piece of its own (a view of the window), small ones are joined into
        pieces of about :data:`_PIECE` bytes: no copy of a whole window is made. With *reuse*,
        a piece is valid only until the next one is asked for.
        """
        first = True
        for start, stop in window_spans(offsets, sizes, self._window_size):
            window, low = self._window(resource, offsets, sizes, start, stop)
            if window is not None:
                if not first and demarcator:
                    yield demarcator
                starts = offsets[start:stop] - low
                yield from window_pieces(window, starts, starts + sizes[start:stop], demarcator)
                first = False
                continue
            for offset, size in zip(
                offsets[start:stop].tolist(), sizes[start:stop].tolist(), strict=True
            ):
                if not first and demarcator:
                    yield demarcator
                first = False
                if size and resource is not None:
                    yield from self._stream(ContentClaim(resource, offset, size))

    def _window(
        self,
        resource: ResourceClaim | None,
        offsets: np.ndarray,
        sizes: np.ndarray,
        start: int,
        stop: int,
    ) -> tuple[memoryview | None, int]:
        """The bytes around ranges ``start .. stop-1`` read at once, and where they start.

        None when they are better read one by one (a lone or sparse range), or when the
        window cannot be read whole: each range is then read on its own, so damage between
        them fails none of them.
        """
        if resource is None or stop - start < 2:
            return None, 0
        present = sizes[start:stop] > 0
        if not present.any():
            return None, 0
        low = int(offsets[start:stop][present].min())
        high = int((offsets[start:stop] + sizes[start:stop])[present].max())
        if int(sizes[start:stop].sum()) * _SPARSE < high - low:
            return None, 0
        try:
            with self._content.open(ContentClaim(resource, low, high - low)) as source:
                if not self._reuse:
                    return memoryview(source.read()), low
                return self._read_into_buffer(source, high - low), low
        except (ContentCorruptionError, ContentNotFoundError):
            return None, 0

    def _read_into_buffer(self, source: BinaryIO, size: int) -> memoryview:
        """*size* bytes of *source* in the reused buffer: no new memory touched per window.

        Raises:
            ContentNotFoundError: the source ends early.
        """
        if self._buffer is None or len(self._buffer) < size:
            self._buffer = bytearray(size)  # a new one: views of the old may still be alive
        view = memoryview(self._buffer)[:size]
        got = 0
        while got < size and (read := source.readinto(view[got:])):
            got += read
        if got < size:
            msg = f"a content claim's range ended {size - got} bytes early"
            raise ContentNotFoundError(msg)
        return view

    def _stream(self, claim: ContentClaim) -> Iterator[bytes]:
        with self._content.open(claim) as source:
            while data := source.read(_STREAM_CHUNK):
                yield data
