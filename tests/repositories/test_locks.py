"""Tests for the advisory file locks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from repositories import locks
from repositories.locks import lock_holder, try_lock


def test_a_second_holder_is_refused_until_the_first_releases(tmp_path: Path) -> None:
    """Another process cannot take a held lock; closing the holder frees it."""
    path = tmp_path / "deep" / "lock"
    held = try_lock(path)
    assert held is not None
    probe = [
        sys.executable,
        "-c",
        f"from repositories.locks import try_lock; import pathlib, sys; "
        f"sys.exit(0 if try_lock(pathlib.Path({str(path)!r})) else 3)",
    ]
    assert subprocess.run(probe, check=False).returncode == 3
    held.close()
    assert subprocess.run(probe, check=False).returncode == 0


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    """The kernel drops the lock with its holder, so a lock file left behind means nothing."""
    path = tmp_path / "lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from repositories.locks import try_lock; import pathlib, time; "
            f"h = try_lock(pathlib.Path({str(path)!r})); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == b"held\n"
    assert try_lock(path) is None
    holder.kill()
    holder.wait()
    assert path.exists()
    again = try_lock(path)
    assert again is not None
    again.close()


def _hold(path: Path) -> subprocess.Popen[bytes]:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from repositories.locks import try_lock; import pathlib, time; "
            f"h = try_lock(pathlib.Path({str(path)!r})); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == b"held\n"
    return holder


@pytest.mark.parametrize("proc_locks", [True, False], ids=["proc-locks", "probe"])
def test_lock_holder_names_the_holder_without_taking_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proc_locks: bool
) -> None:
    """lock_holder gives the holding pid (0 when the system cannot name it), None once free."""
    if not proc_locks:
        monkeypatch.setattr(locks, "PROC_LOCKS", tmp_path / "no-such-file")
    elif not locks.PROC_LOCKS.exists():
        pytest.skip("no /proc/locks here")
    path = tmp_path / "lock"
    assert lock_holder(path) is None  # no lock file yet
    holder = _hold(path)
    try:
        assert lock_holder(path) == (holder.pid if proc_locks else 0)
    finally:
        holder.kill()
        holder.wait()
    assert lock_holder(path) is None


def test_a_held_lock_knows_when_its_directory_moved(tmp_path: Path) -> None:
    """`holds` is true while the lock file is at its path, false once moved or replaced."""
    path = tmp_path / "repo" / "lock"
    held = try_lock(path)
    assert held is not None
    try:
        assert locks.holds(held, path)
        (tmp_path / "repo").rename(tmp_path / "moved")
        assert not locks.holds(held, path)
        path.parent.mkdir()
        path.write_bytes(b"")  # another file in its place
        assert not locks.holds(held, path)
    finally:
        held.close()
