"""Tests for the read descriptors a content repository keeps open (an LRU of duplicates)."""

from __future__ import annotations

import os
from pathlib import Path

from flowcore.flowfile import ResourceClaim
from repositories._read_descriptors import OPEN_READERS, ReadDescriptors


def _open(path: Path, text: bytes) -> int:
    path.write_bytes(text)
    return os.open(path, os.O_RDONLY)


def test_a_duplicate_outlives_the_eviction_of_the_kept_descriptor(tmp_path: Path) -> None:
    """Past the bound the least recently used descriptor closes; a reader's duplicate of it
    still reads, and a descriptor used again is kept over an older one."""
    assert OPEN_READERS == 64
    kept = ReadDescriptors(kept=2)
    claims = [ResourceClaim("default", "0", f"f{i}") for i in range(3)]
    dups = [kept.keep(c, _open(tmp_path / c.id, c.id.encode())) for c in claims[:2]]
    again = kept.duplicate(claims[0])  # claims[1] is now the least recently used
    assert again is not None
    os.close(again)
    os.close(kept.keep(claims[2], _open(tmp_path / "f2", b"f2")))
    assert len(kept) == 2
    assert kept.duplicate(claims[1]) is None
    assert os.pread(dups[1], 2, 0) == b"f1"  # its own duplicate, not closed by the eviction
    for fd in dups:
        os.close(fd)
    kept.close()
    assert len(kept) == 0


def test_the_descriptor_kept_first_wins(tmp_path: Path) -> None:
    """Two readers that opened the same file at once: one descriptor is kept (the second is
    closed) and both read through it; forget closes it."""
    kept = ReadDescriptors()
    before = len(os.listdir("/proc/self/fd"))
    claim = ResourceClaim("default", "0", "f")
    first = _open(tmp_path / "f", b"abc")
    second = os.open(tmp_path / "f", os.O_RDONLY)
    one = kept.keep(claim, first)
    two = kept.keep(claim, second)
    assert len(kept) == 1
    assert len(os.listdir("/proc/self/fd")) == before + 3  # the kept one and two duplicates
    assert os.pread(one, 3, 0) == os.pread(two, 3, 0) == b"abc"
    kept.forget(claim)
    assert kept.duplicate(claim) is None
    os.close(one)
    os.close(two)
