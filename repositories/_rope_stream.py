"""One stream over a rope's pieces, opened one at a time, for both content repositories."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import BinaryIO

from flowcore.flowfile import ContentClaim, Rope

__all__ = ["open_rope"]

_BUFFER = 64 * 1024


class _RopeRaw(io.RawIOBase):
    """Raw reads across the pieces; a piece's stream is opened when reading reaches it."""

    def __init__(self, rope: Rope, open_piece: Callable[[ContentClaim], BinaryIO]) -> None:
        super().__init__()
        self._pieces = iter(rope.pieces)
        self._open_piece = open_piece
        self._current: BinaryIO | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while True:
            if self._current is None:
                piece = next(self._pieces, None)
                if piece is None:
                    return 0
                self._current = self._open_piece(piece)
            data = self._current.read(len(buffer))
            if data:
                buffer[: len(data)] = data
                return len(data)
            self._current.close()
            self._current = None

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
        self._pieces = iter(())
        super().close()


def open_rope(rope: Rope, open_piece: Callable[[ContentClaim], BinaryIO]) -> BinaryIO:
    """A buffered stream reading *rope*'s pieces in order through *open_piece*."""
    return io.BufferedReader(_RopeRaw(rope, open_piece), _BUFFER)  # type: ignore[return-value]
