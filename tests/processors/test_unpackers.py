"""Tests for UnpackContent's readers: seekable view, expansion bound, permissions, sparse TARs."""

from __future__ import annotations

import io
import os
import tarfile
from contextlib import contextmanager

import pytest

from flowcore.patterns import compile_pattern
from processors._unpackers import (
    SeekableContent,
    UnpackError,
    expansion_limit,
    flowfile_tar_entries,
    permissions,
    tar_entries,
)
from tests.processors.http_server._packages import package_v1, sparse_package_v1, sparse_tar


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


def test_sparse_entries_are_refused_before_they_are_read() -> None:
    """A GNU sparse entry declaring 3 GiB in a 10 KB tar: UnpackError from both tar readers,
    as the entry is reached (the plain entry before it is still given)."""
    tar = sparse_tar({"plain.txt": b"plain"}, "holes.bin", 3 << 30)
    entries = tar_entries(io.BytesIO(tar), 1 << 40, compile_pattern(".*"))
    assert next(entries).content.read() == b"plain"
    with pytest.raises(UnpackError, match=r"'holes\.bin' is a sparse file"):
        next(entries)
    with pytest.raises(UnpackError, match=r"'flowfile\.content' is a sparse file"):
        list(flowfile_tar_entries(io.BytesIO(sparse_package_v1(3 << 30))))


def test_flowfile_tar_first_only_reads_one_package() -> None:
    """first_only (ListenHTTP, NiFi's FlowFileUnpackagerV1): the first of two packages."""
    two = package_v1({"filename": "a"}, b"1") + package_v1({"filename": "b"}, b"2")
    assert len(list(flowfile_tar_entries(io.BytesIO(two)))) == 2
    (first,) = flowfile_tar_entries(io.BytesIO(two), first_only=True)
    assert first.attributes == {"filename": "a"}


def _pax_sparse_with_a_broken_map() -> bytes:
    """A PAX (sparse 1.0) entry whose map, the first lines of its data, is not numbers."""
    out = io.BytesIO()
    info = tarfile.TarInfo("flowfile.content")
    info.size = 512
    info.pax_headers = {
        "GNU.sparse.major": "1",
        "GNU.sparse.minor": "0",
        "GNU.sparse.name": "flowfile.content",
        "GNU.sparse.realsize": "100",
    }
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        archive.addfile(info, io.BytesIO(b"abc\nxyz\n" + bytes(504)))
    return out.getvalue()


def test_a_pax_sparse_map_that_is_not_numbers_is_an_unpack_error() -> None:
    """tarfile reads a PAX sparse map with int() and raises ValueError: both tar readers turn it
    into their UnpackError (the FlowFile goes to failure, a request gets its 500), not a crash."""
    data = _pax_sparse_with_a_broken_map()
    with pytest.raises(UnpackError, match="not a readable TAR"):
        list(tar_entries(io.BytesIO(data), 1 << 40, compile_pattern(".*")))
    with pytest.raises(UnpackError, match="not a readable FlowFile Tar v1 package"):
        list(flowfile_tar_entries(io.BytesIO(data)))
