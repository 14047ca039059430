"""Tests for external claims: files read in place, guarded by their fingerprint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowcore.errors import ContentChangedError, ContentNotFoundError
from flowcore.flowfile import ContentClaim, ResourceClaim
from flowcore.session.external_files import fingerprint, matches, open_external
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
