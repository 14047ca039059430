"""Tests for UnpackContent's readers: the seekable view, the expansion bound, permissions."""

from __future__ import annotations

import io
import os
from contextlib import contextmanager

from processors._unpackers import SeekableContent, expansion_limit, permissions


def test_seekable_content_reopens_only_when_seeking_elsewhere() -> None:
    """Sequential reads use one stream; a seek elsewhere opens the range at the new place."""
    data = bytes(range(256)) * 10
    opened: list[tuple[int, int]] = []

    @contextmanager
    def open_range(offset: int, length: int):
        opened.append((offset, length))
        yield io.BytesIO(data[offset : offset + length])

    view = SeekableContent(open_range, len(data))
    assert view.read(10) == data[:10]
    assert view.read(10) == data[10:20]
    assert view.seek(-4, os.SEEK_END) == len(data) - 4
    assert view.read() == data[-4:]
    assert view.read() == b""
    view.seek(100)
    assert view.read(3) == data[100:103]
    assert opened == [(0, len(data)), (len(data) - 4, 4), (100, len(data) - 100)]
    view.close()


def test_expansion_limit_and_permissions() -> None:
    """1,000 times the archive plus 100 MiB; NiFi's rwx form of the low nine bits."""
    assert expansion_limit(1 << 20) == 1_000 * (1 << 20) + (100 << 20)
    assert permissions(0o100754) == "rwxr-xr--"
    assert permissions(0o4777) == "rwxrwxrwx"
