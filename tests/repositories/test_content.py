"""Tests for the file content repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import ContentNotFoundError, RepositoryError
from flowcore.flowfile import ResourceClaim
from repositories import ContentRepository
from repositories.content import FileContentRepository


def write(repo: FileContentRepository, chunks: list[bytes], owner: str = "task-1") -> list:
    writer = repo.writer(owner)
    claims = []
    for data in chunks:
        stream = writer.open_stream()
        stream.write(data)
        claims.append(stream.close())
    writer.close()
    return claims


def test_satisfies_the_protocol(tmp_path: Path) -> None:
    """The file repository implements the ContentRepository protocol."""
    assert isinstance(FileContentRepository(tmp_path), ContentRepository)


def test_claims_pack_into_files_and_read_back(tmp_path: Path) -> None:
    """Small contents share a claim file until the appendable size; each reads back exactly."""
    repo = FileContentRepository(tmp_path, max_appendable_size=10)
    claims = write(repo, [b"aaaa", b"bbbb", b"cccc", b"dd"])
    assert claims[0].resource_claim == claims[2].resource_claim
    assert claims[3].resource_claim != claims[0].resource_claim
    assert [repo.read(c) for c in claims] == [b"aaaa", b"bbbb", b"cccc", b"dd"]
    path = repo.path_of(claims[0].resource_claim)
    assert path.parent.parent == tmp_path
    assert int(path.parent.name) < 1024
    assert "task-1" in path.name


def test_streams_read_ranges(tmp_path: Path) -> None:
    """A read stream covers only its range, in pieces or by lines."""
    repo = FileContentRepository(tmp_path)
    first, second = write(repo, [b"line1\nline2\n", b"other"])
    with repo.open(first) as stream:
        assert stream.readline() == b"line1\n"
        assert stream.read(3) == b"lin"
        assert stream.read() == b"e2\n"
        assert stream.read() == b""
    assert repo.read(second) == b"other"


def test_containers_round_robin(tmp_path: Path) -> None:
    """Several containers are used in turn."""
    repo = FileContentRepository([tmp_path / "disk1", tmp_path / "disk2"], max_appendable_size=1)
    claims = write(repo, [b"a", b"b", b"c"])
    assert {c.resource_claim.container for c in claims} == {"c0", "c1"}


def test_counts_gate_removal_and_missing_content_is_clear(tmp_path: Path) -> None:
    """Only unclaimed, finished claim files are removed; reading removed content names it."""
    repo = FileContentRepository(tmp_path)
    (claim,) = write(repo, [b"data"])
    repo.increment_claimant_count(claim.resource_claim)
    assert not repo.remove(claim.resource_claim)
    repo.decrement_claimant_count(claim.resource_claim)
    assert repo.remove(claim.resource_claim)
    with pytest.raises(ContentNotFoundError, match="no longer in the content repository"):
        repo.read(claim)
    with pytest.raises(RepositoryError, match="unknown container"):
        repo.path_of(ResourceClaim("elsewhere", "1", "x"))


def test_open_writer_file_is_not_removed(tmp_path: Path) -> None:
    """A claim file still being appended to is never removed, even at zero claimants."""
    repo = FileContentRepository(tmp_path)
    writer = repo.writer("w")
    stream = writer.open_stream()
    stream.write(b"x")
    claim = stream.close()
    assert not repo.remove(claim.resource_claim)
    writer.close()
    assert repo.remove(claim.resource_claim)


def test_check_reports_missing_files(tmp_path: Path) -> None:
    """check() lists claimed files that are gone and can forget them."""
    repo = FileContentRepository(tmp_path)
    (claim,) = write(repo, [b"data"])
    repo.increment_claimant_count(claim.resource_claim)
    repo.path_of(claim.resource_claim).unlink()
    assert len(repo.check()) == 1
    assert repo.check(fix=True)[0].fixed
    assert repo.check() == []
    assert list(repo.resource_claims()) == []


@given(st.lists(st.binary(max_size=300), min_size=1, max_size=20), st.integers(1, 500))
def test_anything_written_reads_back(
    tmp_path_factory, chunks: list[bytes], appendable: int
) -> None:  # type: ignore[no-untyped-def]
    """Whatever the appendable size, every content reads back byte for byte."""
    repo = FileContentRepository(tmp_path_factory.mktemp("content"), max_appendable_size=appendable)
    claims = write(repo, chunks)
    for data, claim in zip(chunks, claims, strict=True):
        assert (repo.read(claim) if claim is not None else b"") == data
