"""Byte streams over session content: write-only for callbacks, buffered or seekable to read."""

from __future__ import annotations

import io
import shutil
import tempfile
from typing import IO, Protocol

#: Bytes a seekable copy keeps in memory before it spills to a temporary file.
SPOOL_BYTES = 32 << 20


class _Raw(io.RawIOBase):
    """Any object with ``read(n)`` as a raw stream, *head* bytes first."""

    def __init__(self, stream: IO[bytes], head: bytes = b"") -> None:
        self._stream = stream
        self._head = head

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = len(buffer)
        if self._head:
            taken, self._head = self._head[:size], self._head[size:]
        else:
            taken = self._stream.read(size)
        buffer[: len(taken)] = taken
        return len(taken)


def buffered(stream: IO[bytes], head: bytes = b"") -> io.BufferedReader:
    """*stream* (a session's content stream) as a buffered reader, *head* read first.

    Text wrappers and the codecs need ``readinto``/``peek``, which content streams lack.
    """
    return io.BufferedReader(_Raw(stream, head), buffer_size=1 << 16)


def seekable(stream: IO[bytes]) -> IO[bytes]:
    """*stream* itself when it seeks, else a copy that does (memory up to SPOOL_BYTES, then disk).

    Parquet's footer is at the end of the content: its reader must seek.
    """
    if getattr(stream, "seekable", lambda: False)():
        return stream
    copy = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 (caller closes)
    shutil.copyfileobj(stream, copy, 1 << 20)  # type: ignore[misc]
    copy.seek(0)
    return copy  # type: ignore[return-value]


class Writable(Protocol):
    """Where a :class:`WriteStream` writes: a content claim's output stream, or any byte sink."""

    def write(self, data: bytes | memoryview, /) -> object:
        """Take *data* (a view it must copy, not keep)."""
        ...


class WriteStream:
    """A write-only stream over *target*: what write callbacks get, and what codecs write to.

    It takes bytes, any buffer (a contiguous one goes on as a flat view: no copy of a window)
    and str (UTF-8), and tells the bytes written through it (pyarrow's Parquet writer asks).
    Closing it only marks it closed: *target* stays open (NiFi's rule: the session closes its
    streams), so a record writer may close what a processor gave it and the processor writes on.
    """

    def __init__(self, target: Writable) -> None:
        self._target = target
        self._position = 0
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview | str) -> int:
        """Write *data*; its size in bytes."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        elif not isinstance(data, bytes):  # a buffer goes as a flat view: no copy of a window
            view = memoryview(data)
            data = view.cast("B") if view.c_contiguous else view.tobytes()  # len() = its bytes
        self._target.write(data)
        size = len(data)
        self._position += size
        return size

    def tell(self) -> int:
        """Bytes written through this stream so far."""
        return self._position

    def flush(self) -> None:
        """Nothing to flush: the target buffers."""

    def writable(self) -> bool:
        """It writes."""
        return True

    def seekable(self) -> bool:
        """It does not seek."""
        return False

    def readable(self) -> bool:
        """It does not read."""
        return False

    def close(self) -> None:
        """Mark closed; the target stays open (NiFi's rule)."""
        self.closed = True
