"""Tests for the advisory file locks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from repositories.locks import try_lock


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
