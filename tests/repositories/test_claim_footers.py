"""Tests for the footer cache: bounded, and safe when another thread evicts it mid-read."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from flowcore.errors import ContentCorruptionError
from flowcore.flowfile import ContentClaim
from repositories._claim_footers import FOOTERS_KEPT, SEALED_SUFFIX, FooterCache
from repositories.content import FileContentRepository


def _written(repo: FileContentRepository, count: int) -> list[ContentClaim]:
    """*count* contents, each in a claim file of its own (sealed: its writer is closed)."""
    claims = []
    for i in range(count):
        writer = repo.writer(f"task-{i}")
        stream = writer.open_stream()
        stream.write(f"content {i}".encode())
        claims.append(stream.close())
        writer.close()
    return claims


class _EvictedAfterLookup(dict):  # type: ignore[type-arg]
    """A footer memory where, right after each lookup that finds a footer, another thread
    reads another claim file and so starts the memory afresh (kept = 1): the interleaving
    that raised KeyError in the repository's footer lookup."""

    def __init__(self, other_read: Any) -> None:
        super().__init__()
        self.other_read = other_read
        self.evictions = 0
        self._busy = False

    def _evict(self) -> None:
        if self._busy:  # the other thread's own lookups do not evict again
            return
        self._busy = True
        try:
            reader = threading.Thread(target=self.other_read)
            reader.start()
            reader.join()
            self.evictions += 1
        finally:
            self._busy = False

    def __contains__(self, key: object) -> bool:
        found = super().__contains__(key)
        if found:
            self._evict()
        return found

    def get(self, key: Any, default: Any = None) -> Any:
        found = super().get(key, default)
        if found is not default:
            self._evict()
        return found


def test_a_read_survives_another_thread_evicting_its_footer_between_lookup_and_use(
    tmp_path: Path,
) -> None:
    """Each time a read finds its file's footer remembered, another thread's read of another
    file evicts it before the first read uses it: every read still returns its bytes."""
    repo = FileContentRepository(tmp_path, archive=False)
    first, second = _written(repo, 2)
    errors: list[BaseException] = []

    def other_read() -> None:
        try:
            assert repo.read(second) == b"content 1"
        except BaseException as error:
            errors.append(error)

    entries = _EvictedAfterLookup(other_read)
    repo._footers._entries = entries  # the interleaving is driven from inside the memory
    repo._footers.kept = 1
    try:
        for _ in range(5):
            assert repo.read(first) == b"content 0"
            assert repo.size_of(first.resource_claim) == len(b"content 0")
    finally:
        repo.close()
    assert not errors
    assert entries.evictions >= 5


def test_concurrent_readers_of_many_files_past_the_bound(tmp_path: Path) -> None:
    """Four threads reading eight files through a memory of two footers read every byte right
    and never hold more than the bound."""
    repo = FileContentRepository(tmp_path, archive=False)
    repo._footers.kept = 2  # small, so the memory starts afresh all the time
    claims = _written(repo, 8)
    errors: list[BaseException] = []

    def reader(offset: int) -> None:
        try:
            for n in range(200):
                index = (n + offset) % len(claims)
                assert repo.read(claims[index]) == f"content {index}".encode()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    repo.close()
    assert not errors
    assert len(repo._footers) <= 2


def test_the_memory_is_bounded_and_remembers_files_without_a_footer() -> None:
    """Past its bound the memory starts afresh; a file without a footer is remembered as None
    (not read again), apart from a file never read."""
    cache = FooterCache(kept=2)
    assert FOOTERS_KEPT == 4096
    ids = [(None, i, 0, 0, 0) for i in range(3)]
    cache.remember(ids[0], None)  # type: ignore[arg-type]
    cache.remember(ids[1], None)  # type: ignore[arg-type]
    assert len(cache) == 2
    cache.remember(ids[2], None)  # type: ignore[arg-type]
    assert len(cache) == 1
    cache.clear()
    assert len(cache) == 0


def test_a_sealed_file_without_a_footer_is_damaged(tmp_path: Path) -> None:
    """A file named as sealed but without a footer was cut short: the error names its path."""
    repo = FileContentRepository(tmp_path, archive=False)
    (claim,) = _written(repo, 1)
    path = repo.path_of(claim.resource_claim)
    assert path.name.endswith(SEALED_SUFFIX)
    path.write_bytes(b"content 0")  # the footer is gone
    fresh = FileContentRepository(tmp_path, archive=False)
    try:
        with pytest.raises(ContentCorruptionError, match="has no checksum footer") as caught:
            fresh.read(claim)
        assert str(path) in str(caught.value)
    finally:
        fresh.close()
        repo.close()
