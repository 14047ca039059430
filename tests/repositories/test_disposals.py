"""Tests for disposals: source files deleted or moved after a commit, idempotently."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from flowcore.session.host import Disposal, MoveConflict
from repositories.disposals import Disposed, dispose
from repositories.effects import EffectFileWriter, carry_out, read_effects


@pytest.fixture
def source(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "a.txt"
    path.write_text("new")
    return path


def test_delete_then_again_is_done(source: Path) -> None:
    """A delete removes the file; carried out again (after a crash) it finds it gone."""
    assert dispose(Disposal(str(source))) is Disposed.DELETED
    assert dispose(Disposal(str(source))) is Disposed.ALREADY


def test_move_creates_the_directory_and_is_idempotent(source: Path, tmp_path: Path) -> None:
    """A move lands at its target (directory made); a second attempt has nothing to do."""
    target = tmp_path / "done" / "deeper" / "a.txt"
    disposal = Disposal(str(source), str(target))
    assert dispose(disposal) is Disposed.MOVED
    assert target.read_text() == "new"
    assert not source.exists()
    assert dispose(disposal) is Disposed.ALREADY


def test_a_crash_between_link_and_unlink_is_finished(source: Path, tmp_path: Path) -> None:
    """Both names on one file (killed between link and unlink): the move completes."""
    (tmp_path / "done").mkdir()
    target = tmp_path / "done" / "a.txt"
    os.link(source, target)
    assert dispose(Disposal(str(source), str(target), MoveConflict.FAIL)) is Disposed.MOVED
    assert target.read_text() == "new"
    assert not source.exists()


@pytest.mark.parametrize(
    "case",
    [
        (MoveConflict.RENAME, Disposed.RENAMED, False, "old"),
        (MoveConflict.REPLACE, Disposed.MOVED, False, "new"),
        (MoveConflict.KEEP, Disposed.KEPT_EXISTING, False, "old"),
        (MoveConflict.FAIL, Disposed.LEFT, True, "old"),
    ],
)
def test_move_conflict_strategies(
    source: Path, tmp_path: Path, case: tuple[MoveConflict, Disposed, bool, str]
) -> None:
    """An existing target is renamed around, replaced, kept (source deleted) or left alone."""
    conflict, outcome, left, existing = case
    (tmp_path / "done").mkdir()
    target = tmp_path / "done" / "a.txt"
    target.write_text("old")
    disposal = Disposal(str(source), str(target), conflict, "a-1234.txt")
    assert dispose(disposal) is outcome
    assert source.exists() is left
    assert target.read_text() == existing
    renamed = tmp_path / "done" / "a-1234.txt"
    assert renamed.exists() is (conflict is MoveConflict.RENAME)
    if renamed.exists():
        assert renamed.read_text() == "new"


def test_move_across_file_systems_copies_then_unlinks(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where link and rename fail with EXDEV the file is copied, fsynced, then unlinked; a
    copy left by a crash is recognised instead of renamed around."""
    real_link = os.link

    def cross(src: object, dst: object, **kwargs: object) -> None:
        if Path(str(src)) == source:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_link(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "link", cross)
    target = tmp_path / "done" / "a.txt"
    disposal = Disposal(str(source), str(target), MoveConflict.RENAME, "a-1.txt")
    assert dispose(disposal) is Disposed.MOVED
    assert target.read_text() == "new"
    assert not source.exists()
    assert [p.name for p in target.parent.iterdir()] == ["a.txt"]  # no temporary left
    source.write_text("new")  # a crash after the copy, before the unlink: same size, mtime
    os.utime(source, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns))
    assert dispose(disposal) is Disposed.MOVED
    assert not (tmp_path / "done" / "a-1.txt").exists()
    assert not source.exists()


def test_effect_file_records_moves_and_carries_them_out(source: Path, tmp_path: Path) -> None:
    """A move is written to the task's effect file and done when it is carried out."""
    target = tmp_path / "done" / "a.txt"
    writer = EffectFileWriter(tmp_path / "effects", "s-t0-1")
    writer.commit([], [], [Disposal(str(source), str(target), MoveConflict.KEEP, None)])
    path = writer.close()
    assert read_effects(path).disposals == (  # type: ignore[arg-type]
        Disposal(str(source), str(target), MoveConflict.KEEP, None),
    )
    carry_out(path)  # type: ignore[arg-type]
    assert target.read_text() == "new"
    assert not source.exists()
    assert not Path(path).exists()  # type: ignore[arg-type]


def test_only_the_version_read_is_deleted_or_moved(source: Path, tmp_path: Path) -> None:
    """A file rewritten since it was read, or a new file of the same name found when a crashed
    run's disposals are finished, was never ingested: it is left, delete or move."""
    from flowcore.session.external_files import fingerprint

    read = fingerprint(source)
    source.unlink()
    source.write_text("a newer file of the same name")
    assert dispose(Disposal(str(source), fingerprint=read)) is Disposed.CHANGED
    moved = Disposal(str(source), str(tmp_path / "done" / "a.txt"), fingerprint=read)
    assert dispose(moved) is Disposed.CHANGED
    assert source.read_text() == "a newer file of the same name"
    assert not (tmp_path / "done" / "a.txt").exists()
    current = Disposal(str(source), fingerprint=fingerprint(source))
    assert dispose(current) is Disposed.DELETED


def test_the_version_read_travels_through_the_effect_file(source: Path, tmp_path: Path) -> None:
    """The effect file keeps each disposal's version, so a start-up checks it too."""
    from flowcore.session.external_files import fingerprint

    writer = EffectFileWriter(tmp_path / "effects", "s-t0-2")
    disposals = [
        Disposal(str(source), fingerprint=fingerprint(source)),
        Disposal(str(source), str(tmp_path / "t"), MoveConflict.FAIL, None, "1:2:3"),
    ]
    writer.commit((), (), disposals)
    path = writer.close(sync=False)
    assert path is not None
    assert read_effects(path).disposals == tuple(disposals)
