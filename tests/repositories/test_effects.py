"""Tests for repositories/effects.py: staged files and log lines carried out after the commit."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.session.host import Disposal, LogLine, Publication
from repositories import effects
from repositories.effects import (
    EffectFileWriter,
    FileSystemFlush,
    Outcome,
    can_sync_whole_file_systems,
    carry_out,
    is_temporary_name,
    publish,
    read_effects,
    release_targets,
    reserve_target,
    retries,
    sweep,
    temporary_name,
)


def _stage(writer: EffectFileWriter, directory: Path, name: str, data: bytes) -> Publication:
    temporary = writer.stage(directory)
    temporary.write_bytes(data)
    return Publication(str(temporary), str(directory / name), True)


def test_temporary_names_are_short_hidden_and_recognised() -> None:
    """A temporary's name is 31 characters, hidden, and only such names count as temporaries."""
    name = temporary_name("stage-t0-abc", 7)
    assert len(name) == 31
    assert name.startswith(".flowcore-")
    assert is_temporary_name(name)
    assert temporary_name("stage-t0-abc", 7) == name != temporary_name("stage-t0-abc", 8)
    assert not is_temporary_name(".a.txt.17.part")
    assert not is_temporary_name("data.csv")


def test_carry_out_publishes_logs_and_deletes_the_file(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """Committed effects: files renamed into place, lines logged, the effect file gone."""
    out = tmp_path / "out"
    out.mkdir()
    writer = EffectFileWriter(tmp_path / "effects", "s-t0-1")
    first = _stage(writer, out, "a.txt", b"A")
    second = _stage(writer, out, "b.txt", b"B")
    writer.commit([first, second], [LogLine("flowcore.test.effects", logging.INFO, "hello")])
    path = writer.close()
    assert path is not None
    with caplog.at_level(logging.INFO, logger="flowcore.test.effects"):
        report = carry_out(path)
    assert report.published == 2
    assert report.logged == 1
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.txt"]
    assert (out / "a.txt").read_bytes() == b"A"
    assert "hello" in caplog.text
    assert not Path(path).exists()


def test_an_attempt_that_staged_nothing_has_no_file(tmp_path: Path) -> None:
    """No effect file is written for a task whose sessions staged nothing."""
    writer = EffectFileWriter(tmp_path / "effects", "s-t0-1")
    assert writer.close() is None
    assert not (tmp_path / "effects").exists()


def test_a_rename_done_before_a_crash_is_not_done_twice(tmp_path: Path) -> None:
    """Carrying out again after a crash finds the renamed files in place and changes nothing."""
    out = tmp_path / "out"
    out.mkdir()
    writer = EffectFileWriter(tmp_path / "effects", "s-t0-1")
    first = _stage(writer, out, "a.txt", b"A")
    second = _stage(writer, out, "b.txt", b"B")
    writer.commit([first, second], [])
    path = writer.close()
    assert path is not None
    publish(first)  # the crash came after the first rename
    report = carry_out(path)
    assert (report.published, report.already) == (1, 1)
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.txt"]
    assert carry_out(path).published == 0  # the file is gone: nothing more to do


def test_a_file_that_appeared_is_kept_when_replacing_is_not_allowed(tmp_path: Path) -> None:
    """With replace false, a target written by someone else after the check wins."""
    out = tmp_path / "out"
    out.mkdir()
    writer = EffectFileWriter(tmp_path / "effects", "s-t0-1")
    staged = _stage(writer, out, "a.txt", b"mine")
    staged = Publication(staged.temporary, staged.target, replace=False)
    writer.commit([staged], [])
    path = writer.close()
    (out / "a.txt").write_bytes(b"theirs")
    report = carry_out(path)  # type: ignore[arg-type]
    assert report.conflicts == (str(out / "a.txt"),)
    assert [p.name for p in out.iterdir()] == ["a.txt"]
    assert (out / "a.txt").read_bytes() == b"theirs"


def test_a_link_made_before_a_crash_counts_as_published(tmp_path: Path) -> None:
    """With replace false, a crash between link and unlink leaves our own file: it is kept."""
    out = tmp_path / "out"
    out.mkdir()
    writer = EffectFileWriter(tmp_path / "effects", "s-t0-1")
    staged = _stage(writer, out, "a.txt", b"mine")
    staged = Publication(staged.temporary, staged.target, replace=False)
    Path(staged.target).hardlink_to(staged.temporary)
    assert publish(staged) is Outcome.PUBLISHED
    assert [p.name for p in out.iterdir()] == ["a.txt"]


def test_sweep_removes_uncommitted_temporaries_only(tmp_path: Path) -> None:
    """Temporaries of an attempt that never committed go; files not named like ours stay."""
    out = tmp_path / "out"
    out.mkdir()
    effects = tmp_path / "effects"
    dead = EffectFileWriter(effects, "s-t0-dead")
    staged = _stage(dead, out, "a.txt", b"half")
    dead.close()
    with open(dead.path, "a") as tampered:  # a damaged record cannot aim the sweep elsewhere
        tampered.write('{"stage": "%s"}\n' % (out / "keep.txt"))
    (out / "keep.txt").write_bytes(b"user data")
    live = EffectFileWriter(effects, "s-t1-live")
    kept = _stage(live, out, "b.txt", b"committed")
    live.close()
    findings = sweep(effects, keep=[str(live.path)])
    assert len(findings) == 1
    assert "1 temporary" in findings[0].problem
    assert not Path(staged.temporary).exists()
    assert (out / "keep.txt").read_bytes() == b"user data"
    assert Path(kept.temporary).exists()
    assert live.path.exists()
    assert not dead.path.exists()


def test_a_torn_last_line_ends_the_file(tmp_path: Path) -> None:
    """A record cut short by a kill is ignored; the records before it are read."""
    writer = EffectFileWriter(tmp_path, "s-t0-1")
    temporary = writer.stage(tmp_path)
    writer.close()
    with open(writer.path, "a") as out:
        out.write('{"publish": ["/x", ')
    effects = read_effects(writer.path)
    assert effects.staged == (str(temporary),)
    assert effects.publications == ()


@given(
    count=st.integers(min_value=1, max_value=8),
    crash_after=st.integers(min_value=0, max_value=8),
    replace=st.booleans(),
)
def test_carrying_out_after_a_crash_anywhere_gives_the_same_files(
    tmp_path_factory: pytest.TempPathFactory, count: int, crash_after: int, replace: bool
) -> None:
    """However many renames a crash let through, carrying out again ends with each file once."""
    root = tmp_path_factory.mktemp("effects")
    out = root / "out"
    out.mkdir()
    writer = EffectFileWriter(root / "effects", "s-t0-1")
    staged = []
    for number in range(count):
        one = _stage(writer, out, f"f{number}", f"data {number}".encode())
        staged.append(Publication(one.temporary, one.target, replace))
    writer.commit(staged, [])
    path = writer.close()
    for publication in staged[:crash_after]:
        publish(publication)
    carry_out(path)  # type: ignore[arg-type]
    carry_out(path)  # type: ignore[arg-type]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {
        f"f{n}": f"data {n}".encode() for n in range(count)
    }


def _block(path: Path) -> None:
    """A non-empty directory where a file is to go: the rename is refused."""
    path.mkdir()
    (path / "inside").write_bytes(b"")


def _unblock(path: Path) -> None:
    (path / "inside").unlink()
    path.rmdir()


def test_a_refused_rename_is_kept_staged_and_published_later(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """A rename the file system refuses keeps the staged file in a retry file, while the log
    lines are emitted at once; carrying the retry file out once the obstacle is gone
    publishes it and removes it."""
    out = tmp_path / "out"
    out.mkdir()
    writer = EffectFileWriter(tmp_path / "effects", "s-t0-1")
    staged = _stage(writer, out, "a.txt", b"A")
    writer.commit([staged], [LogLine("flowcore.test.effects", logging.INFO, "on time")])
    path = writer.close()
    _block(out / "a.txt")
    with caplog.at_level(logging.INFO, logger="flowcore.test.effects"):
        report = carry_out(path)  # type: ignore[arg-type]
    assert "on time" in caplog.messages
    assert len(report.failed) == 1
    assert report.failed[0].startswith(str(out / "a.txt"))
    assert report.waiting == (str(out / "a.txt"),)
    assert not Path(path).exists()  # type: ignore[arg-type]
    [retry] = retries(tmp_path / "effects")
    assert Path(staged.temporary).exists()
    assert carry_out(retry).waiting == (str(out / "a.txt"),)  # still refused: kept as it was
    assert retries(tmp_path / "effects") == [retry]
    _unblock(out / "a.txt")
    assert carry_out(retry).published == 1
    assert (out / "a.txt").read_bytes() == b"A"
    assert retries(tmp_path / "effects") == []


def test_a_later_publication_of_a_waiting_target_waits_behind_it(tmp_path: Path) -> None:
    """Commit order holds per target: while an older file for a name waits, a newer one for the
    same name waits behind it (a file for another name is published at once), and once the
    obstacle is gone both land in order, so the newer file is what stays."""
    out = tmp_path / "out"
    out.mkdir()
    effects = tmp_path / "effects"
    files = []
    for attempt, data in (("s-t0-1", b"old"), ("s-t0-2", b"new")):
        writer = EffectFileWriter(effects, attempt)
        writer.commit([_stage(writer, out, "a.txt", data), _stage(writer, out, attempt, data)], [])
        files.append(writer.close())
    _block(out / "a.txt")
    first = carry_out(files[0])  # type: ignore[arg-type]
    second = carry_out(files[1], blocked=first.waiting)  # type: ignore[arg-type]
    assert (first.published, second.published) == (1, 1)
    assert second.waiting == (str(out / "a.txt"),)
    assert len(retries(effects)) == 2
    _unblock(out / "a.txt")
    published = sum(carry_out(path).published for path in retries(effects))
    assert published == 2
    assert (out / "a.txt").read_bytes() == b"new"
    assert retries(effects) == []


def test_a_source_that_cannot_be_deleted_never_stops_the_carry_out(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """A delete the file system refuses (here: a directory in the file's place) is a warning;
    the effect file is still finished, so the next start is not blocked."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").mkdir()
    writer = EffectFileWriter(tmp_path / "effects", "s-t0-1")
    writer.commit([], [], [Disposal(str(tmp_path / "in" / "a.txt"))])
    path = writer.close()
    with caplog.at_level(logging.WARNING):
        carry_out(path)  # type: ignore[arg-type]
    assert "could not delete the ingested source" in caplog.text
    assert not Path(path).exists()  # type: ignore[arg-type]


def test_without_hard_links_publishing_falls_back_to_a_rename(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On a file system that refuses hard links (vfat, SMB), a no-replace publication checks
    and renames instead; an existing target is still kept."""
    import errno as errnos
    import os

    def refuse(*_args: object) -> None:
        raise OSError(errnos.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", refuse)
    out = tmp_path / "out"
    out.mkdir()
    writer = EffectFileWriter(tmp_path / "effects", "s-t0-1")
    fresh = _stage(writer, out, "a.txt", b"A")
    taken = _stage(writer, out, "b.txt", b"mine")
    (out / "b.txt").write_bytes(b"theirs")
    assert publish(Publication(fresh.temporary, fresh.target, replace=False)) is Outcome.PUBLISHED
    assert publish(Publication(taken.temporary, taken.target, replace=False)) is Outcome.CONFLICT
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.txt"]
    assert (out / "b.txt").read_bytes() == b"theirs"


def test_a_reserved_target_belongs_to_one_task_of_the_run(tmp_path: Path) -> None:
    """The first task to reserve a name holds it; another task of the run is refused, a retry
    of the holder (same index) takes it over, another run or another name is free."""
    assert reserve_target(tmp_path, "run1", "/out/a.txt", 0)
    assert not reserve_target(tmp_path, "run1", "/out/a.txt", 1)
    assert reserve_target(tmp_path, "run1", "/out/a.txt", 0)
    assert reserve_target(tmp_path, "run1", "/out/b.txt", 1)
    assert reserve_target(tmp_path, "run2", "/out/a.txt", 1)


def test_released_targets_are_free_again(tmp_path: Path) -> None:
    """Releasing a run frees its names and keeps other runs'; releasing all clears every run."""
    reserve_target(tmp_path, "run1", "/out/a.txt", 0)
    reserve_target(tmp_path, "run2", "/out/a.txt", 0)
    release_targets(tmp_path, "run1")
    assert reserve_target(tmp_path, "run1", "/out/a.txt", 1)
    assert not reserve_target(tmp_path, "run2", "/out/a.txt", 1)
    release_targets(tmp_path)
    assert reserve_target(tmp_path, "run2", "/out/a.txt", 1)


def test_a_file_system_flush_makes_files_written_since_durable_once_per_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FileSystemFlush opens each file system once (missing directories made), fsyncs a few
    files one by one and flushes many with syncfs; syncfs is relied on only where it reports
    lost writes (Linux 5.8 and later)."""
    flush = FileSystemFlush([tmp_path / "a", tmp_path, tmp_path / "b" / "c"])
    try:
        assert (tmp_path / "b" / "c").is_dir()
        assert len(flush._opened) == 1  # one file system
        (tmp_path / "a" / "f").write_bytes(b"x")
        flush.add(tmp_path / "a" / "f")
        flush.flush()  # one file: fsynced on its own
        flush.add(tmp_path / "a" / "gone")
        with pytest.raises(FileNotFoundError):
            flush.flush()
        if can_sync_whole_file_systems():
            monkeypatch.setattr(effects, "FSYNC_EACH_MAX", 0)
            flush.add(tmp_path / "a" / "f")
            flush.flush()  # more than FSYNC_EACH_MAX: syncfs
    finally:
        flush.close()
    release = tuple(int(p) for p in os.uname().release.split("-")[0].split(".")[:2])
    assert can_sync_whole_file_systems() is (sys.platform == "linux" and release >= (5, 8))
