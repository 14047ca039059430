r"""Line boundaries in a byte stream, found without holding lines in memory.

Text processors (SplitText) and line-aware block readers need each line's offset, length and
terminator, not its bytes. :func:`iter_lines` scans a stream in chunks and yields
:class:`LineSpan` values; a line of any length costs the same memory. Terminators are NiFi's
(``TextLineDemarcator``): ``\\r\\n``, ``\\n`` and a lone ``\\r``; the last line may have none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO, NamedTuple

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "LineGroup",
    "LineSpan",
    "LineSplits",
    "iter_line_groups",
    "iter_lines",
    "iter_split_lines",
    "split_lines",
]

DEFAULT_CHUNK_SIZE = 1 << 20  # bytes per read: amortises calls, bounds memory
_TERMINATOR = re.compile(rb"\r\n|\r|\n")
_LF = 0x0A


class LineSpan(NamedTuple):
    r"""One line: where it starts, how long it is (terminator included), and its terminator.

    Attributes:
        offset: the byte offset of the line's first byte.
        length: the line's length in bytes, terminator included.
        crlf: the terminator's length: 2 for ``\\r\\n``, 1 for ``\\n`` or ``\\r``, 0 for none.
        prefix: the line's first bytes (at most the ``prefix_size`` asked for).
    """

    offset: int
    length: int
    crlf: int
    prefix: bytes = b""

    @property
    def is_empty(self) -> bool:
        """Whether the line holds only its terminator (NiFi's definition of an empty line)."""
        return self.length == self.crlf


def iter_lines(
    stream: BinaryIO, *, prefix_size: int = 0, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> Iterator[LineSpan]:
    """Yield every line of *stream* as a :class:`LineSpan`, in order.

    Args:
        stream: a binary stream positioned at the first byte to scan (offsets count from it).
        prefix_size: how many leading bytes of each line to keep in ``prefix`` (for marker tests).
        chunk_size: bytes read per call.
    """
    base = 0  # absolute offset of the current chunk's first byte
    line_start = 0
    prefix = b""
    pending_cr = False  # the previous chunk ended in '\r': the line ends there, maybe with '\n'
    while True:
        chunk = stream.read(chunk_size)
        index = 0
        if pending_cr:
            pending_cr = False
            if chunk[:1] == b"\n":
                yield LineSpan(line_start, base + 1 - line_start, 2, prefix)
                line_start, index = base + 1, 1
            else:
                yield LineSpan(line_start, base - line_start, 1, prefix)
                line_start = base
            prefix = b""
        if not chunk:
            break
        for match in _TERMINATOR.finditer(chunk, index):
            start, end = match.span()
            if prefix_size and len(prefix) < prefix_size:
                prefix += chunk[index : min(end, index + prefix_size - len(prefix))]
            if end == len(chunk) and end - start == 1 and chunk[start] == 0x0D:
                pending_cr = True  # a '\n' may open the next chunk
                index = end
                break
            yield LineSpan(line_start, base + end - line_start, end - start, prefix)
            line_start, index, prefix = base + end, end, b""
        else:
            if prefix_size and len(prefix) < prefix_size:
                prefix += chunk[index : index + prefix_size - len(prefix)]
        base += len(chunk)
    if line_start < base:
        yield LineSpan(line_start, base - line_start, 0, prefix)


class LineGroup(NamedTuple):
    """Consecutive lines taken together (a split's worth), summarised.

    Attributes:
        offset: the first line's offset.
        length: bytes of all the lines, terminators included.
        count: how many lines.
        empty: how many of them are empty (only a terminator).
        trailing_crlf: terminator bytes of the empty lines at the group's end.
        last_crlf: the last line's terminator length.
    """

    offset: int
    length: int
    count: int
    empty: int
    trailing_crlf: int
    last_crlf: int


class _Group:
    """A group of lines being filled."""

    __slots__ = ("count", "empty", "last_crlf", "offset", "size", "trailing")

    def __init__(self, size: int) -> None:
        self.size = size
        self.offset = self.count = self.empty = self.trailing = self.last_crlf = 0

    def _emit(self, end: int) -> LineGroup:
        group = LineGroup(
            self.offset, end - self.offset, self.count, self.empty, self.trailing, self.last_crlf
        )
        self.count = self.empty = self.trailing = self.last_crlf = 0
        return group

    def add_line(self, offset: int, length: int, crlf: int) -> LineGroup | None:
        if self.count == 0:
            self.offset = offset
        self.count += 1
        if length == crlf:
            self.empty += 1
            self.trailing += crlf
        else:
            self.trailing = 0
        self.last_crlf = crlf
        return self._emit(offset + length) if self.count == self.size else None

    def add_run(
        self, offset: int, end: int, *, lines: int, empty: int, trailing: int, all_empty: bool
    ) -> LineGroup | None:
        r"""Add *lines* ``\\n``-terminated lines from *offset* to *end*.

        *empty* of them are empty, *trailing* of those at the end (all lines when *all_empty*).
        """
        if self.count == 0:
            self.offset = offset
        self.count += lines
        self.empty += empty
        self.trailing = self.trailing + trailing if all_empty else trailing
        self.last_crlf = 1
        return self._emit(end) if self.count == self.size else None


def iter_line_groups(
    stream: BinaryIO, group_size: int, *, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> Iterator[LineGroup]:
    r"""Yield *stream*'s lines in groups of *group_size* (the last may be smaller).

    The same lines as :func:`iter_lines`, without a Python object per line: chunks holding
    only ``\\n`` terminators are scanned once with numpy (every newline's position), so splitting a
    log into 10,000-line pieces runs at memory speed. Chunks with ``\\r`` take the exact per-line
    path.
    """
    import numpy  # noqa: PLC0415 - only this path needs it; workers that never split skip it

    group = _Group(group_size)
    base = 0  # absolute offset of chunk[0]
    line_start = 0  # absolute offset of the line being read
    pending_cr = False
    while True:
        chunk = stream.read(chunk_size)
        index = 0
        if pending_cr:
            pending_cr = False
            crlf = 2 if chunk[:1] == b"\n" else 1
            end = base + crlf - 1
            if (done := group.add_line(line_start, end - line_start, crlf)) is not None:
                yield done
            line_start, index = end, crlf - 1
        if not chunk:
            break
        if chunk.find(b"\r", index) >= 0:
            for match in _TERMINATOR.finditer(chunk, index):
                start, end = match.span()
                if end == len(chunk) and end - start == 1 and chunk[start] == 0x0D:
                    pending_cr = True
                    break
                done = group.add_line(line_start, base + end - line_start, end - start)
                if done is not None:
                    yield done
                line_start = base + end
        else:
            # Every \n of the chunk in one vectorised pass: group ends are every group.size-th
            # one, and a \n right after another ends an empty line.
            newlines = numpy.flatnonzero(numpy.frombuffer(chunk, numpy.uint8)[index:] == _LF)
            newlines += index
            taken, total = 0, len(newlines)
            while taken < total:
                take = min(group.size - group.count, total - taken)
                mine = newlines[taken : taken + take]
                end = int(mine[-1]) + 1
                at_line_start = line_start == base + index
                empty = int(numpy.count_nonzero(numpy.diff(mine) == 1))
                if at_line_start and chunk[index] == _LF:
                    empty += 1
                run, position = 0, end - 1
                while position >= index and chunk[position] == _LF:
                    run += 1
                    position -= 1
                trailing = run if position < index and at_line_start else run - 1
                done = group.add_run(
                    line_start,
                    base + end,
                    lines=take,
                    empty=empty,
                    trailing=trailing,
                    all_empty=trailing == take,
                )
                if done is not None:
                    yield done
                line_start, index = base + end, end
                taken += take
        base += len(chunk)
    if line_start < base and (done := group.add_line(line_start, base - line_start, 0)):
        yield done
    if group.count:
        yield group._emit(base)


class LineSplits(NamedTuple):
    """Splits of whole lines as arrays (:func:`split_lines`), one entry per split."""

    starts: Any  # numpy int64: where each split starts
    lengths: Any  # its bytes, line terminators included
    trimmed: Any  # its bytes without trailing line terminators (Remove Trailing Newlines)
    line_counts: Any  # its lines that are not empty


def split_lines(
    stream: BinaryIO, group_size: int, *, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> LineSplits | None:
    r"""*stream*'s lines in groups of *group_size*, computed with numpy, no object per line.

    The same splits as :func:`iter_line_groups` followed by SplitText's trimming rules, for
    content whose only line terminator is ``\\n``; None when a ``\\r`` appears (the exact
    per-line path handles ``\\r\\n`` and lone ``\\r``).
    """
    import numpy  # noqa: PLC0415 - only this path needs it

    parts = []
    for part in iter_split_lines(stream, group_size, chunk_size=chunk_size):
        if part is None:
            return None
        parts.append(part)
    if not parts:
        empty = numpy.zeros(0, numpy.int64)
        return LineSplits(empty, empty, empty, empty)
    return LineSplits(*(numpy.concatenate(column) for column in zip(*parts, strict=True)))


def iter_split_lines(
    stream: BinaryIO,
    group_size: int,
    *,
    max_splits: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> Iterator[LineSplits | None]:
    r""":func:`split_lines`, as consecutive parts of at most *max_splits* splits each.

    Memory is bounded by *max_splits* (and a chunk), not by the content's size: the lines of
    a part are found, grouped and forgotten before the next part is read. Yields None, and
    stops, when a ``\\r`` appears (the parts yielded before it are then to be dropped).
    """
    import numpy  # noqa: PLC0415 - only this path needs it

    per_part = None if max_splits is None else max(1, max_splits) * group_size  # lines
    ends: list[Any] = []  # line ends (terminators included) not yet grouped, in pieces
    held = 0
    first = 0  # where the first held line starts
    base = 0
    while chunk := stream.read(chunk_size):
        if b"\r" in chunk:
            yield None
            return
        found = numpy.flatnonzero(numpy.frombuffer(chunk, numpy.uint8) == _LF)
        if len(found):
            ends.append(found.astype(numpy.int64) + (base + 1))
            held += len(found)
        base += len(chunk)
        while per_part is not None and held >= per_part:
            line_ends = numpy.concatenate(ends)
            taken, rest = line_ends[:per_part], line_ends[per_part:]
            yield _grouped(first, taken, numpy.ones(len(taken), numpy.int64), group_size)
            first = int(taken[-1])
            ends, held = ([rest] if len(rest) else []), len(rest)
    line_ends = numpy.concatenate(ends) if ends else numpy.zeros(0, numpy.int64)
    terminators = numpy.ones(len(line_ends), numpy.int64)
    if base > first and (not len(line_ends) or line_ends[-1] < base):  # no last terminator
        line_ends = numpy.append(line_ends, base)
        terminators = numpy.append(terminators, 0)
    if len(line_ends):
        yield _grouped(first, line_ends, terminators, group_size)


def _grouped(first: int, ends: Any, terminators: Any, group_size: int) -> LineSplits:
    """The splits of consecutive lines, the first starting at *first*.

    Groups of *group_size* lines (the last may be smaller), with SplitText's trimming rules.
    """
    import numpy  # noqa: PLC0415 - only this path needs it

    lines = len(ends)
    starts = numpy.concatenate(([first], ends[:-1]))
    nonempty = (ends - starts) > terminators
    firsts = numpy.arange(0, lines, group_size)
    lasts = numpy.minimum(firsts + group_size, lines) - 1
    split_starts = starts[firsts]
    lengths = ends[lasts] - split_starts
    counted = numpy.concatenate(([0], numpy.cumsum(nonempty)))
    line_counts = counted[lasts + 1] - counted[firsts]
    # Trailing empty lines of each group, then its last terminator (NiFi's trimming rule).
    last_nonempty = numpy.maximum.accumulate(numpy.where(nonempty, numpy.arange(lines), -1))
    trailing = lasts - numpy.maximum(last_nonempty[lasts], firsts - 1)
    last_terminator = terminators[lasts]
    trailing = trailing + numpy.where(lengths - trailing >= last_terminator, last_terminator, 0)
    return LineSplits(split_starts, lengths, lengths - trailing, line_counts)
