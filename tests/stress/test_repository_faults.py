"""Repositories on real full and read-only file systems (tmpfs mounts; root only)."""

from __future__ import annotations

import errno
import subprocess
import sys
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
