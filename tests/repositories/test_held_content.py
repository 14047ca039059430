"""Tests for HeldContent: committed content read after its commit, its claims held meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore.flowfile import ContentClaim, Rope
from repositories.content import FileContentRepository
from repositories.held_content import HeldContent


def _written(repo: FileContentRepository, *contents: bytes) -> list[ContentClaim]:
    """Each content in a claim file of its own, claimed once (a FlowFile in a queue)."""
    claims = []
    for data in contents:
        writer = repo.writer("task-1")
        stream = writer.open_stream()
        stream.write(data)
        claim = stream.close()
        writer.close()
        assert claim is not None
        repo.increment_claimant_count(claim.resource_claim)
        claims.append(claim)
    return claims


def test_a_held_claim_outlives_its_flowfile_until_released(tmp_path: Path) -> None:
    """Held, a claim survives the commit that drops its FlowFile and the cleanup after it,
    and reads back window by window; released, the next cleanup takes it (no archive)."""
    repo = FileContentRepository(tmp_path, max_appendable_size=1, archive=False)
    data = bytes(i % 251 for i in range(3 << 20))
    (claim,) = _written(repo, data)
    held = HeldContent(repo)
    held.hold(claim)
    repo.decrement_claimant_count(claim.resource_claim)  # the commit dropped the FlowFile
    assert repo.cleanup() == 0
    assert repo.path_of(claim.resource_claim).exists()
    windows = [held.read(claim, offset, 1 << 20) for offset in range(0, len(data), 1 << 20)]
    assert [len(w) for w in windows] == [1 << 20] * 3
    assert b"".join(windows) == data
    held.release(claim)
    assert repo.cleanup() == 1
    assert not repo.path_of(claim.resource_claim).exists()


def test_a_rope_is_held_piece_by_piece(tmp_path: Path) -> None:
    """Every piece of a rope (two of one claim file among them) is held and released, and a
    window across pieces reads as one."""
    repo = FileContentRepository(tmp_path, max_appendable_size=1, archive=False)
    first, second = _written(repo, b"0123456789", b"abcdefghij")
    rope = Rope((first.slice(0, 4), second, first.slice(6, 4)))
    held = HeldContent(repo)
    held.hold(rope)
    assert repo.claimant_count(first.resource_claim) == 3
    assert repo.claimant_count(second.resource_claim) == 2
    assert held.read(rope, 2, 14) == b"23abcdefghij67"
    held.release(rope)
    assert repo.claimant_count(first.resource_claim) == 1
    assert repo.claimant_count(second.resource_claim) == 1


def test_a_window_outside_the_content_is_refused(tmp_path: Path) -> None:
    """A window past the content's end is an error, not a read of a neighbour's bytes."""
    repo = FileContentRepository(tmp_path)
    (claim,) = _written(repo, b"short")
    with pytest.raises(ValueError, match="cannot slice"):
        HeldContent(repo).read(claim, 3, 10)
