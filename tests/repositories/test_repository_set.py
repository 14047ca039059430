"""Tests for repositories/repository_set.py: starts that tell new from damaged, `check`, the id."""

from __future__ import annotations

import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from flowcore import Flow
from flowcore.cli import main
from flowcore.driver.controller import run_flow
from flowcore.errors import RepositoryError, WalCorruptionError
from flowcore.settings import Settings
from processors import GenerateFlowFile, UpdateAttribute
from repositories import repository_set
from repositories.records import Transaction
from repositories.repository_set import (
    REPOSITORY_ID_KEY,
    RepositoryReader,
    RepositorySet,
    check_repositories,
    live_run,
    open_for_queries,
)


def _flow() -> Flow:
    flow = Flow("queued")
    gen = flow.add(GenerateFlowFile(batch_size=50, unique_flowfiles=True), name="gen")
    tag = flow.add(UpdateAttribute(tag="x"), name="tag")
    flow.connect(gen, tag, durable=True)
    flow.auto_terminate(tag, "success")
    return flow


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "lock"
    }


def test_check_without_fix_changes_nothing_even_on_a_damaged_repository(tmp_path: Path) -> None:
    """`flowcore check` on a repository whose checkpoint was deleted reports it and leaves
    every file byte for byte as it was (the issue's 931 lost FlowFiles)."""
    repository = tmp_path / "repo"
    settings = Settings(sync=False, parallelism=1)
    run_flow(_flow(), "direct", repository=repository, settings=settings)
    run_flow(_flow(), "direct", repository=repository, settings=settings)
    (repository / "flowfile" / "checkpoint").unlink()
    before = _tree(repository)
    findings = check_repositories(repository)
    assert any("checkpoint is missing" in f.problem for f in findings)
    assert _tree(repository) == before
    with pytest.raises(WalCorruptionError, match="checkpoint is missing"):
        RepositorySet.open(repository)
    assert _tree(repository) == before


def test_a_damaged_segment_is_quarantined_by_check_fix(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A flipped byte in a queued segment: the run refuses in one line naming it; `check`
    reports it without moving it; `check --fix` quarantines it, reports the FlowFiles lost,
    and the next run goes on with the rest."""
    repository = tmp_path / "repo"
    flow = Flow("two-queues")
    gen = flow.add(GenerateFlowFile(batch_size=5, unique_flowfiles=True), name="gen")
    tag = flow.add(UpdateAttribute(tag="x"), name="tag")
    flow.connect(gen, tag, durable=True)
    flow.auto_terminate(tag, "success")
    repos = RepositorySet.open(repository)
    try:
        wal = repos.flowfiles
        from flowcore.flowfile import FlowFile
        from repositories.records import Transaction

        queue = next(c.id for c in flow.connections)
        ids = wal.next_flowfile_ids(4)
        good = wal.write_segment(queue, [FlowFile.create(i, 0, {"n": "good"}) for i in ids[:2]])
        bad = wal.write_segment(queue, [FlowFile.create(i, 0, {"n": "bad"}) for i in ids[2:]])
        wal.commit(Transaction(enqueued=[good, bad]))
        bad_path = wal.segment_dir / f"{bad.segment_id}.seg"
    finally:
        repos.close()
    data = bytearray(bad_path.read_bytes())
    data[-3] ^= 0xFF
    bad_path.write_bytes(bytes(data))
    before = _tree(repository)
    assert main(["check", "--repository", str(repository)]) == 1
    assert bad.segment_id in capsys.readouterr().out
    assert _tree(repository) == before
    assert main(["check", "--fix", "--repository", str(repository)]) == 0
    out = capsys.readouterr().out
    finding = next(line for line in out.splitlines() if "quarantined" in line)
    assert bad.segment_id in finding  # one line, however long
    assert "2 FlowFile(s)" in finding
    assert (repository / "flowfile" / "quarantine" / bad_path.name).exists()
    result = run_flow(flow, "direct", repository=repository, settings=Settings(sync=False))
    assert result.count("tag", "success") >= 2


def test_a_deleted_provenance_database_refuses_the_start(tmp_path: Path) -> None:
    """provenance.db deleted after events were recorded: the start refuses, naming it and the
    fix, and creates nothing; `check --fix` starts an empty one that continues the ids."""
    repository = tmp_path / "repo"
    settings = Settings(sync=False, parallelism=1)
    first = run_flow(_flow(), "direct", repository=repository, settings=settings)
    assert first.provenance_events > 0
    database = repository / "provenance" / "provenance.db"
    repos = RepositorySet.open(repository)
    last_id = repos.provenance.max_event_id()
    repos.close()
    database.unlink()
    with pytest.raises(RepositoryError, match=r"provenance\.db is missing.*check --fix"):
        RepositorySet.open(repository)
    assert not database.exists()
    check_repositories(repository, fix=True)
    repos = RepositorySet.open(repository)
    try:
        assert repos.provenance.next_event_id > last_id
    finally:
        repos.close()


def test_a_garbled_provenance_database_is_one_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A provenance.db overwritten with garbage: `flowcore status`-style opens refuse in one
    line (exit 2), `check` reports it, `check --fix` sets it aside."""
    repository = tmp_path / "repo"
    run_flow(_flow(), "direct", repository=repository, settings=Settings(sync=False))
    database = repository / "provenance" / "provenance.db"
    database.write_bytes(b"garbage" * 1000)
    assert main(["provenance", "search", "--repository", str(repository)]) == 2
    err = capsys.readouterr().err
    assert "provenance.db" in err
    assert "check --fix" in err
    assert main(["check", "--repository", str(repository)]) == 1
    assert main(["check", "--fix", "--repository", str(repository)]) == 0
    assert list(database.parent.glob("provenance.db.damaged-*"))
    assert main(["provenance", "search", "--repository", str(repository)]) == 0


def test_a_deleted_flowfile_log_with_content_left_is_not_a_new_repository(tmp_path: Path) -> None:
    """The whole flowfile/ directory deleted while content and provenance remain: refused,
    nothing created; `check --fix` starts a new log and says what it dropped."""
    import shutil

    repository = tmp_path / "repo"
    run_flow(_flow(), "direct", repository=repository, settings=Settings(sync=False))
    shutil.rmtree(repository / "flowfile")
    with pytest.raises(WalCorruptionError, match="no checkpoint and no journal"):
        RepositorySet.open(repository)
    assert not (repository / "flowfile").exists()
    findings = check_repositories(repository, fix=True)
    assert any("started a new log" in f.problem for f in findings)
    RepositorySet.open(repository).close()


def test_the_claim_size_setting_reaches_the_driver_and_the_tasks(tmp_path: Path) -> None:
    """content_claim_max_appendable_size sets how much a claim file holds, for the tasks that
    write content too: 64 KiB contents fill 4 files of 1 MB by default, 1 file of 16 MB."""

    def claim_files(settings: Settings, repository: Path) -> int:
        flow = Flow("claims")
        gen = flow.add(
            GenerateFlowFile(batch_size=64, file_size="64 KB", unique_flowfiles=True), name="gen"
        )
        tag = flow.add(UpdateAttribute(k="v"), name="tag")
        flow.connect(gen, tag)
        flow.auto_terminate(tag, "success")
        run_flow(flow, "direct", repository=repository, settings=settings)
        return sum(1 for p in (repository / "content").rglob("*.claim"))

    small = Settings(sync=False, parallelism=1)
    large = Settings(sync=False, parallelism=1, content_claim_max_appendable_size="16 MB")
    repos = RepositorySet.open(tmp_path / "r", large)
    try:
        assert repos.content.max_appendable_size == 16 * 1024 * 1024
    finally:
        repos.close()
    assert claim_files(small, tmp_path / "small") > claim_files(large, tmp_path / "large") == 1


def test_queries_refuse_a_directory_that_holds_no_repository(tmp_path: Path) -> None:
    """A query of a directory with no repository is refused and makes nothing there."""
    with pytest.raises(RepositoryError, match="holds no flowcore repository"):
        open_for_queries(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_queries_open_read_only_beside_the_run_holding_the_repository(tmp_path: Path) -> None:
    """With the repository held, provenance opens read-only without the lock and sees what the
    holder indexes; free, the repository is opened (and recovered) as usual."""
    repository = tmp_path / "repo"
    run_flow(_flow(), "direct", repository=repository, settings=Settings(sync=False))
    assert live_run(repository) is None
    free = open_for_queries(repository)
    assert isinstance(free, RepositorySet)
    free.close()
    held = RepositorySet.open(repository)  # stands in for a live run
    try:
        assert live_run(repository) == os.getpid()
        reader = open_for_queries(repository)
        assert isinstance(reader, RepositoryReader)
        assert reader.holder == os.getpid()
        try:
            before = len(reader.provenance.search(limit=10_000))
            assert before > 0
            held.provenance.register(held.provenance.search(limit=1))  # one more, indexed
            assert len(reader.provenance.search(limit=10_000)) == before + 1
        finally:
            reader.close()
    finally:
        held.close()


def test_check_beside_a_live_run_reads_only_and_refuses_fix(tmp_path: Path) -> None:
    """Beside a run, check judges no file its micro-batch may be writing (an unreferenced
    segment) and refuses --fix with the way out; once the run is gone the segment is an orphan."""
    repository = tmp_path / "repo"
    run_flow(_flow(), "direct", repository=repository, settings=Settings(sync=False))
    held = RepositorySet.open(repository)
    try:
        (held.flowfiles.segment_dir / "in-progress.seg").write_bytes(b"being written")
        assert check_repositories(repository) == []
        with pytest.raises(RepositoryError, match=r"while a run \(pid \d+\) holds it"):
            check_repositories(repository, fix=True)
    finally:
        held.close()
    findings = check_repositories(repository)
    assert [f.problem for f in findings] == ["orphan segment file (no queue references it)"]


def test_a_moved_repository_refuses_commits_and_is_not_made_again(tmp_path: Path) -> None:
    """Once the directory is moved, check_in_place and close name it, and close writes
    nothing at the old path; the moved repository opens at its new place."""
    repos = RepositorySet.open(tmp_path / "repo")
    repos.check_in_place()
    (tmp_path / "repo").rename(tmp_path / "moved")
    with pytest.raises(RepositoryError, match=r"repository .*repo was moved or deleted"):
        repos.check_in_place()
    with pytest.raises(RepositoryError, match="moved or deleted"):
        repos.close()
    assert not (tmp_path / "repo").exists()
    RepositorySet.open(tmp_path / "moved").close()


def _ids(directory: Path) -> tuple[str, tuple[str, ...]]:
    """The repository's id and former ids, as a start in *directory* claims them."""
    repos = RepositorySet.open(directory)
    try:
        return repos.repository_id, repos.former_repository_ids
    finally:
        repos.close()


def test_a_copy_takes_a_new_id_and_a_rename_keeps_it(tmp_path: Path) -> None:
    """A copy (another inode) takes a new id and names the old as former; the original keeps
    its id; a rename within the file system keeps the id; a copy of the copy adds its own."""
    original, _ = _ids(tmp_path / "repo")
    shutil.copytree(tmp_path / "repo", tmp_path / "copy")
    copied, former = _ids(tmp_path / "copy")
    assert copied != original
    assert former == (original,)
    assert _ids(tmp_path / "repo") == (original, ())
    (tmp_path / "copy").rename(tmp_path / "renamed")
    assert _ids(tmp_path / "renamed") == (copied, (original,))
    shutil.copytree(tmp_path / "renamed", tmp_path / "again")
    again, former = _ids(tmp_path / "again")
    assert again not in {original, copied}
    assert former == (original, copied)


def test_a_restore_in_place_keeps_the_id_the_one_set_aside_yields(tmp_path: Path) -> None:
    """The same path with another inode (restored from a backup in place) keeps the id, as do
    another inode or device number recorded at the same path (a remount); the original set
    aside under another path yields the id to the one in its place; a repository recorded
    without an identity (an older flowcore) keeps its id and records one."""
    first, _ = _ids(tmp_path / "repo")
    shutil.copytree(tmp_path / "repo", tmp_path / "backup")
    (tmp_path / "repo").rename(tmp_path / "damaged")
    shutil.copytree(tmp_path / "backup", tmp_path / "repo")
    assert os.stat(tmp_path / "repo").st_ino != os.stat(tmp_path / "damaged").st_ino
    set_aside, former = _ids(tmp_path / "damaged")  # started first: still yields
    assert set_aside != first
    assert former == (first,)
    assert _ids(tmp_path / "repo") == (first, ())
    assert _ids(tmp_path / "damaged") == (set_aside, (first,))
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        recorded = dict(repos.flowfiles.state(REPOSITORY_ID_KEY))
        remounted = {
            **recorded,
            "device": str(int(recorded["device"]) + 1),
            "inode": str(int(recorded["inode"]) + 1),
        }
        repos.flowfiles.commit(Transaction(state={REPOSITORY_ID_KEY: remounted}))
    finally:
        repos.close()
    assert _ids(tmp_path / "repo") == (first, ())


def test_a_move_keeps_the_id_when_nothing_took_its_place(tmp_path: Path) -> None:
    """A directory moved within its file system keeps its id, also with an empty directory
    (no repository) made at its old path; a restore into another path is a copy."""
    first, _ = _ids(tmp_path / "repo")
    shutil.copytree(tmp_path / "repo", tmp_path / "backup")
    (tmp_path / "repo").rename(tmp_path / "moved")
    (tmp_path / "repo").mkdir()
    assert _ids(tmp_path / "moved") == (first, ())
    restored, former = _ids(tmp_path / "backup")
    assert restored != first
    assert former == (first,)


def test_a_move_keeps_the_id_when_another_repository_took_its_place(tmp_path: Path) -> None:
    """A directory moved within its file system keeps its id when a fresh repository (its own
    id) is started at its old path: only a repository there holding the same id replaced it;
    one whose log cannot be read is taken as holding it."""
    first, _ = _ids(tmp_path / "repo")
    (tmp_path / "repo").rename(tmp_path / "moved")
    fresh, _ = _ids(tmp_path / "repo")
    assert fresh != first
    assert _ids(tmp_path / "moved") == (first, ())
    assert _ids(tmp_path / "repo") == (fresh, ())
    second, _ = _ids(tmp_path / "other")
    (tmp_path / "other").rename(tmp_path / "aside")
    _ids(tmp_path / "other")
    (tmp_path / "other" / "flowfile" / "checkpoint").write_bytes(b"not a checkpoint")
    yielded, former = _ids(tmp_path / "aside")  # cannot tell what it holds: yields
    assert yielded != second
    assert former == (second,)


def test_the_id_is_claimed_once_by_threads_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threads asking a fresh repository's id at once all get one id, and none is former."""
    real = repository_set.uuid.uuid4

    def slow_uuid4() -> Any:
        time.sleep(0.05)  # widens the window between reading the record and committing
        return real()

    monkeypatch.setattr(repository_set, "uuid", SimpleNamespace(uuid4=slow_uuid4))
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        with ThreadPoolExecutor(4) as pool:
            ids = list(pool.map(lambda _: repos.repository_id, range(4)))
        assert len(set(ids)) == 1
        assert repos.former_repository_ids == ()
    finally:
        repos.close()
    assert _ids(tmp_path / "repo") == (ids[0], ())


def test_a_repository_without_identity_keeps_its_id(tmp_path: Path) -> None:
    """A repository recorded without an identity (an older flowcore) keeps its id and records
    one; a copy of it takes a new one."""
    repos = RepositorySet.open(tmp_path / "older")
    try:
        repos.flowfiles.commit(Transaction(state={REPOSITORY_ID_KEY: {"id": "0123456789abcdef"}}))
    finally:
        repos.close()
    assert _ids(tmp_path / "older") == ("0123456789abcdef", ())
    shutil.copytree(tmp_path / "older", tmp_path / "older-copy")
    assert _ids(tmp_path / "older-copy")[1] == ("0123456789abcdef",)
