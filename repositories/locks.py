"""Advisory whole-file locks that say "one process at a time" for a repository or a dataset.

An ``flock`` is released by the kernel when its holder dies, so a run killed with SIGKILL never
leaves a stale lock behind; a lock file that merely exists means nothing.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import BinaryIO


def try_lock(path: Path) -> BinaryIO | None:
    """Take an exclusive lock on *path* (created when missing) without waiting.

    Returns:
        The open file holding the lock (closing it releases the lock), or None when another
        process holds it; the caller names what is busy and what to do in its own error.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "ab")  # noqa: SIM115 - held by the caller until it releases
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle
