"""Repositories on real full and read-only file systems (tmpfs mounts; root only)."""

from __future__ import annotations

import errno
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flowcore.errors import RepositoryError
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.records import Transaction

pytestmark = pytest.mark.stress

FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile, UpdateAttribute

flow = Flow("small")
gen = flow.add(GenerateFlowFile(batch_size=5, unique_flowfiles=True), name="gen")
tag = flow.add(UpdateAttribute(tag="x"), name="tag")
flow.connect(gen, tag, durable=True)
flow.auto_terminate(tag, "success")
"""


@pytest.fixture
def mount(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A 2 MB tmpfs (root only), unmounted afterwards."""
    target = tmp_path / "mnt"
    target.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(target)],
        check=False,
        capture_output=True,
    )
    if done.returncode != 0:
        pytest.skip("mounting a tmpfs needs root on a machine that allows it")
    yield target
    subprocess.run(["umount", "-l", str(target)], check=False)


def _flowcore(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.run(
        [str(script), *args], cwd=cwd, capture_output=True, timeout=300, check=False
    )


def test_a_read_only_repository_is_one_line(tmp_path: Path, mount: Path) -> None:
    """A repository on a read-only mount: `flowcore run` says so in one line, exit 2."""
    (tmp_path / "flow.py").write_text(FLOW)
    repository = mount / "repo"
    assert (
        _flowcore(
            "run", "flow.py", "--runner", "direct", "--repository", str(repository), cwd=tmp_path
        ).returncode
        == 0
    )
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
    done = _flowcore(
        "run", "flow.py", "--runner", "direct", "--repository", str(repository), cwd=tmp_path
    )
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
    assert "Read-only file system" in err


def test_a_journal_write_cut_short_by_a_full_disk_leaves_the_log_whole(mount: Path) -> None:
    """Commits until the disk is full: the failing append is cut back, later commits are
    refused, and recovery finds exactly the transactions that committed."""
    repo = WriteAheadFlowFileRepository(mount / "wal", checkpoint_every=10**9)
    committed = 0
    big = "x" * 50_000
    failure: OSError | None = None
    for number in range(1000):
        try:
            repo.commit(Transaction(state={"c": {"n": str(number), "pad": big}}))
        except OSError as error:
            failure = error
            break
        committed = number + 1
    assert failure is not None
    assert failure.errno == errno.ENOSPC
    with pytest.raises(RepositoryError, match="stopped taking commits"):
        repo.commit(Transaction(state={"c": {"n": "late"}}))
    repo._journal.close()
    subprocess.run(["mount", "-o", "remount,size=8m", str(mount)], check=True)
    again = WriteAheadFlowFileRepository(mount / "wal")
    assert committed > 0
    assert again.state("c")["n"] == str(committed - 1)


BUSY_FLOW = """
from flowcore import Flow
from processors import GenerateFlowFile, UpdateAttribute

flow = Flow("busy")
gen = flow.add(GenerateFlowFile(batch_size=2000, unique_flowfiles=True), name="gen")
tag = flow.add(UpdateAttribute(tag="${random()}${random()}${random()}${random()}"), name="tag")
flow.connect(gen, tag, durable=True)
flow.auto_terminate(tag, "success")
"""


def _one_line(done: subprocess.CompletedProcess) -> str:
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_a_full_disk_under_provenance_is_one_line_naming_the_file(
    tmp_path: Path, mount: Path
) -> None:
    """provenance/ on a full 2 MB tmpfs: one line naming the file under provenance/ that could
    not be written, exit 2; with room again the next run finishes."""
    (tmp_path / "flow.py").write_text(BUSY_FLOW)
    repository = tmp_path / "repo"
    repository.mkdir()
    (repository / "provenance").symlink_to(mount)
    done = _flowcore(
        "run", "flow.py", "--runner", "direct", "--repository", str(repository),
        "--setting", "unbounded_source_batches=40", cwd=tmp_path,
    )  # fmt: skip
    line = _one_line(done)
    assert "No space left on device writing " in line
    assert str(mount) in line or str(repository / "provenance") in line
    subprocess.run(["mount", "-o", "remount,size=64m", str(mount)], check=True)
    again = _flowcore(
        "run", "flow.py", "--runner", "direct", "--repository", str(repository), cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr.decode()


def test_a_full_disk_under_the_provenance_database_names_it(tmp_path: Path, mount: Path) -> None:
    """SQLite's 'database or disk is full' becomes a StorageFaultError naming provenance.db."""
    from flowcore.faults import describe_storage_fault, storage_fault
    from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
    from repositories.provenance import SqlProvenanceRepository

    database = mount / "provenance.db"
    repo = SqlProvenanceRepository(database, event_directory=tmp_path / "events")
    big = {"pad": "x" * 60_000}
    try:
        with pytest.raises(OSError) as caught:  # noqa: PT012 - fills the disk event by event
            for n in range(1000):
                event = ProvenanceEvent(
                    ProvenanceEventType.CREATE, f"u{n}", "c", "T", n, updated_attributes=big
                )
                repo.register([event])
    finally:
        repo.close()
    fault = storage_fault(caught.value)
    assert fault is not None
    assert fault.errno == errno.ENOSPC
    assert str(database) in describe_storage_fault(fault)


def test_provenance_locked_by_another_sqlite_writer_is_one_line(tmp_path: Path) -> None:
    """A second sqlite3 connection holding provenance.db's write lock stops the run in one
    line naming the database; once it lets go, the next run indexes everything."""
    (tmp_path / "flow.py").write_text(BUSY_FLOW)
    repository = tmp_path / "repo"
    first = _flowcore(
        "run", "flow.py", "--runner", "direct", "--repository", str(repository), cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr.decode()
    database = repository / "provenance" / "provenance.db"
    holder = subprocess.Popen(
        [
            sys.executable, "-c",
            "import sqlite3, sys\n"
            f"c = sqlite3.connect({str(database)!r}, isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE')\n"
            "print('locked', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"locked\n"
        done = _flowcore(
            "run", "flow.py", "--runner", "direct", "--repository", str(repository), cwd=tmp_path
        )
        line = _one_line(done)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert f"the provenance database {database} is locked by another program" in line
    again = _flowcore(
        "run", "flow.py", "--runner", "direct", "--repository", str(repository), cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr.decode()
    from repositories.repository_set import RepositorySet

    repositories = RepositorySet.open(repository)
    try:  # every run's CREATE and two ATTRIBUTES_MODIFIED-or-DROP events, none lost
        assert repositories.provenance.count() % 2000 == 0
        assert repositories.provenance.count() >= 3 * 2 * 2000
    finally:
        repositories.close()


def _start_run(tmp_path: Path, repository: Path) -> subprocess.Popen:
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.Popen(
        [
            str(script), "run", "flow.py", "--runner", "direct", "--repository", str(repository),
            "--setting", "unbounded_source_batches=400",
        ],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def _wait_for_commits(repository: Path, run: subprocess.Popen) -> None:
    for _ in range(600):
        if (repository / "status.json").exists() or run.poll() is not None:
            break
        time.sleep(0.05)
    time.sleep(0.5)
    assert run.poll() is None, "the run ended before the repository could be moved"


def _delete_under_a_run(repository: Path, aside: Path) -> None:
    """Delete a repository a run is writing to, all at once from the run's view.

    A plain ``rmtree`` races the run: a file the run makes in a directory ``rmtree`` has
    emptied fails its ``rmdir`` (ENOTEMPTY). The rename takes the whole tree away in one step;
    what the run still writes through descriptors it held goes with it, removed until none is
    left.
    """
    repository.rename(aside)
    deadline = time.monotonic() + 60
    while aside.exists() and time.monotonic() < deadline:
        shutil.rmtree(aside, ignore_errors=True)
        time.sleep(0.05)
    assert not aside.exists(), f"{aside} could not be deleted"


@pytest.mark.parametrize("how", ["moved", "deleted"])
def test_a_repository_moved_or_deleted_mid_run_stops_it_in_one_line(
    tmp_path: Path, how: str
) -> None:
    """Moving (or deleting) the repository under a run ends it with one line naming the
    repository, exit 2; nothing is made again at the old path, and a run at the new place
    finishes the work."""
    (tmp_path / "flow.py").write_text(BUSY_FLOW)
    repository, moved = tmp_path / "repo", tmp_path / "repo.moved"
    run = _start_run(tmp_path, repository)
    _wait_for_commits(repository, run)
    if how == "moved":
        repository.rename(moved)
    else:
        _delete_under_a_run(repository, tmp_path / "repo.deleting")
    run.wait(timeout=300)
    assert run.stderr is not None
    err = run.stderr.read().decode()
    assert run.returncode == 2, err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
    assert f"the repository {repository} was moved or deleted" in err
    assert not repository.exists()
    if how == "moved":
        again = _flowcore(
            "run", "flow.py", "--runner", "direct", "--repository", str(moved), cwd=tmp_path
        )
        assert again.returncode == 0, again.stderr.decode()
        assert not repository.exists()
