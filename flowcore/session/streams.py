"""Byte streams for the codecs over a session's content: buffered, seekable, or telling."""

from __future__ import annotations

import io
import shutil
import tempfile
from typing import IO, Any

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


class TellingWriter:
    """A session's output stream with ``tell`` (pyarrow's Parquet writer asks for it).

    Every record processor hands its writer one: ``WriteStream`` neither seeks nor tells.
    """

    def __init__(self, out: Any) -> None:
        self._out = out
        self._position = 0
        self.closed = False

    def write(self, data: Any) -> int:
        """Write *data* (bytes or any buffer); its size in bytes."""
        size = len(memoryview(data).cast("B")) if not isinstance(data, bytes) else len(data)
        self._out.write(data)
        self._position += size
        return size

    def tell(self) -> int:
        """Bytes written so far."""
        return self._position

    def flush(self) -> None:
        """Nothing to flush: the session's stream buffers."""

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
        """Mark closed; the session's stream stays open (NiFi's rule)."""
        self.closed = True
