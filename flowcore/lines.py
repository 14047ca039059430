r"""Line boundaries in a byte stream, found without holding lines in memory.

Text processors (SplitText) and line-aware block readers need each line's offset, length and
terminator, not its bytes. :func:`iter_lines` scans a stream in chunks and yields
:class:`LineSpan` values; a line of any length costs the same memory. Terminators are NiFi's
(``TextLineDemarcator``): ``\\r\\n``, ``\\n`` and a lone ``\\r``; the last line may have none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

__all__ = ["DEFAULT_CHUNK_SIZE", "LineSpan", "iter_lines"]

DEFAULT_CHUNK_SIZE = 1 << 20  # bytes per read: amortises calls, bounds memory
_TERMINATOR = re.compile(rb"\r\n|\r|\n")


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
