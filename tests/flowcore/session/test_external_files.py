"""Tests for external claims: files read in place, guarded by their fingerprint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowcore.errors import ContentChangedError, ContentNotFoundError
from flowcore.flowfile import ContentClaim, ResourceClaim
from flowcore.session.external_files import (
    file_chunks,
    fingerprint,
    matches,
    open_external,
    range_claim,
)
from repositories.content import FileContentRepository
from repositories.memory import MemoryContentRepository


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "big.log"
    path.parent.mkdir()
    path.write_bytes(b"0123456789")
    return path


def claim_on(path: Path, offset: int = 2, length: int = 5) -> ContentClaim:
    return ContentClaim(ResourceClaim.external(str(path), fingerprint(path)), offset, length)


def rewrite_in_place(path: Path) -> None:
    path.write_bytes(b"abcdefghij")  # same size and inode, new bytes
    os.utime(path, ns=(1, 1))


def test_fingerprint_names_size_mtime_and_inode(outside: Path) -> None:
    """The fingerprint is size:mtime_ns:inode."""
    info = outside.stat()
    assert fingerprint(outside) == f"10:{info.st_mtime_ns}:{info.st_ino}"
    claim = claim_on(outside).resource_claim
    assert claim.is_external
    assert matches(claim)
    rewrite_in_place(outside)
    assert not matches(claim)


def test_open_refuses_a_changed_or_missing_file(outside: Path) -> None:
    """A changed file raises ContentChangedError, a missing one ContentNotFoundError, and
    both messages say how to avoid it."""
    claim = claim_on(outside).resource_claim
    os.close(open_external(claim))
    rewrite_in_place(outside)
    with pytest.raises(ContentChangedError, match="Copy Into Repository"):
        open_external(claim)
    outside.unlink()
    with pytest.raises(ContentNotFoundError, match="is gone"):
        open_external(claim)


@pytest.mark.parametrize("kind", ["file", "memory"])
def test_both_repositories_read_ranges_in_place(tmp_path: Path, outside: Path, kind: str) -> None:
    """The file and memory repositories read an external range from the file itself."""
    repo = FileContentRepository(tmp_path / "repo") if kind == "file" else MemoryContentRepository()
    claim = claim_on(outside)
    assert repo.read(claim) == b"23456"
    assert repo.exists(claim.resource_claim)
    rewrite_in_place(outside)
    assert not repo.exists(claim.resource_claim)
    with pytest.raises(ContentChangedError):
        repo.read(claim)


def test_a_cached_descriptor_still_notices_an_in_place_change(
    tmp_path: Path, outside: Path
) -> None:
    """The file repository caches read descriptors; each open rechecks the fingerprint."""
    repo = FileContentRepository(tmp_path / "repo")
    claim = claim_on(outside)
    assert repo.read(claim) == b"23456"
    rewrite_in_place(outside)
    with pytest.raises(ContentChangedError):
        repo.read(claim)


def test_the_repository_never_archives_or_deletes_an_outside_file(
    tmp_path: Path, outside: Path
) -> None:
    """Claimants come and go; the file stays, and check() reports it only once it changed."""
    repo = FileContentRepository(tmp_path / "repo")
    claim = claim_on(outside).resource_claim
    repo.increment_claimant_count(claim, 3)
    assert repo.check() == []
    repo.decrement_claimant_count(claim, 3)
    repo.release_unclaimed([claim])
    repo.cleanup()
    assert not repo.remove(claim)
    assert outside.read_bytes() == b"0123456789"
    repo.increment_claimant_count(claim)
    rewrite_in_place(outside)
    (finding,) = repo.check(fix=True)
    assert "outside file changed or is gone" in finding.problem
    assert outside.exists()


def test_a_range_claim_checks_the_version_and_the_range(outside: Path) -> None:
    """range_claim points at a range of the file as listed (to its end when no length is
    given, None when empty) and refuses a changed file or a range outside it."""
    listed = fingerprint(outside)
    relative = os.path.relpath(outside)
    assert range_claim(relative, 2, 5, listed) == claim_on(outside)
    assert range_claim(outside, 4, None, None) == claim_on(outside, 4, 6)
    assert range_claim(outside, 10, 0, listed) is None
    with pytest.raises(ValueError, match="the range must lie inside the file"):
        range_claim(outside, 8, 3, listed)
    rewrite_in_place(outside)
    with pytest.raises(ContentChangedError, match="changed after it was listed"):
        range_claim(outside, 2, 5, listed)


def test_file_chunks_copy_a_file_a_chunk_at_a_time(outside: Path) -> None:
    """file_chunks gives the file's bytes in chunks of the size asked, opening it lazily."""
    assert list(file_chunks(outside, 4)) == [b"0123", b"4567", b"89"]
    gone = file_chunks(outside.with_name("gone"), 4)  # nothing is opened yet
    with pytest.raises(FileNotFoundError):
        next(gone)


def test_file_chunks_of_a_range_stop_at_its_end_or_the_files(tmp_path: Path) -> None:
    """With offset and length only that range comes, in chunks; a short file just ends early."""
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    assert list(file_chunks(path, 4, offset=3, length=6)) == [b"3456", b"78"]
    assert list(file_chunks(path, 4, offset=8, length=6)) == [b"89"]
    assert list(file_chunks(path, 4, offset=2, length=0)) == []
