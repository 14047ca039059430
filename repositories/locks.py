"""Advisory whole-file locks that say "one process at a time" for a repository or a dataset.

An ``flock`` is released by the kernel when its holder dies, so a run killed with SIGKILL never
leaves a stale lock behind; a lock file that merely exists means nothing.
"""

from __future__ import annotations

import fcntl
import os
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


def holds(handle: BinaryIO, path: Path) -> bool:
    """Whether the lock file open as *handle* is still the file at *path*.

    Not so once its directory was moved or deleted (or another put in its place): the lock
    then guards nothing at *path*.
    """
    try:
        here = path.stat()
    except OSError:
        return False
    held = os.fstat(handle.fileno())
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)


#: The kernel's table of file locks (Linux): who holds what, without touching the locks.
PROC_LOCKS = Path("/proc/locks")


def lock_holder(path: Path) -> int | None:
    """The process id holding the lock on *path*, without taking it; None when it is free.

    Readers beside a run (``flowcore status``, provenance queries, ``check``) ask this. On
    Linux the answer comes from ``/proc/locks``, so asking never blocks a run that starts at
    that moment. Elsewhere a shared lock is tried and released at once, and a held lock is
    reported as 0 (held, holder unknown).
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    if PROC_LOCKS.exists():
        return _holder_in_proc_locks(info)
    with open(path, "rb") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return None


def _holder_in_proc_locks(info: os.stat_result) -> int | None:
    """The pid of the FLOCK on the file *info* describes.

    Lines read ``3: FLOCK  ADVISORY  WRITE 19083 fe:00:2146324 0 EOF`` (pid, then
    major:minor:inode in that form).
    """
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    for line in PROC_LOCKS.read_text().splitlines():
        fields = line.split()
        if "->" in fields:  # a process waiting for the lock, not holding it
            continue
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device:
            return int(fields[4])
    return None
