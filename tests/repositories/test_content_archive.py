"""Tests for the content archive's age-off (retention, then disk usage, oldest first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore.errors import RepositoryError
from repositories._content_archive import archived, created_ms, expire, percentage


def test_retention_then_usage_oldest_first(tmp_path: Path) -> None:
    """Files past retention go first; then the oldest go while the disk is over the usage mark
    less 2 points, and no more."""
    entries = [(t, tmp_path / f"{t}-x") for t in (100, 500, 900, 950)]
    deleted: list[Path] = []
    usage = iter([0.95, 0.90, 0.87])
    removed = expire(
        entries,
        1_000,
        retention_ms=600,
        max_usage=0.90,
        usage=lambda: next(usage),
        delete=deleted.append,
    )
    assert removed == 3
    assert deleted == [entries[0][1], entries[1][1], entries[2][1]]


def test_under_the_mark_only_retention_applies(tmp_path: Path) -> None:
    """With the disk below the mark, only files past retention are deleted."""
    entries = [(100, tmp_path / "a"), (950, tmp_path / "b")]
    deleted: list[Path] = []
    removed = expire(
        entries, 1_000, retention_ms=600, max_usage=0.9, usage=lambda: 0.1, delete=deleted.append
    )
    assert (removed, deleted) == (1, [tmp_path / "a"])


def test_archived_files_carry_their_claim_time(tmp_path: Path) -> None:
    """A claim id's millisecond prefix is its age; only numbered sections' archives count."""
    (tmp_path / "7" / "archive").mkdir(parents=True)
    (tmp_path / "7" / "archive" / "1234-task.claim").write_bytes(b"x")
    (tmp_path / "notes" / "archive").mkdir(parents=True)
    (tmp_path / "notes" / "archive" / "9-x").write_bytes(b"x")
    found = list(archived(tmp_path))
    assert found == [(1234, tmp_path / "7" / "archive" / "1234-task.claim")]
    legacy = tmp_path / "legacy"
    legacy.write_bytes(b"x")
    assert created_ms("legacy", legacy) == legacy.stat().st_mtime_ns // 1_000_000


def test_percentage_is_nifis_form_only() -> None:
    """'90%' is 0.9; anything else is refused naming the setting."""
    assert percentage(" 90% ", "archive_max_usage") == 0.9
    with pytest.raises(RepositoryError, match="archive_max_usage must be a whole percentage"):
        percentage("0.9", "archive_max_usage")
