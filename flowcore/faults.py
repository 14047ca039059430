"""Storage faults: a full or read-only file system, told apart from other errors.

A run cannot route around a disk that refuses writes; it stops, keeping what it committed,
and says so in one line. These helpers find such an error behind whatever wrapped it.
"""

from __future__ import annotations

import errno

__all__ = ["STORAGE_ERRNOS", "describe_storage_fault", "storage_fault"]


#: errno values that mean the storage itself refuses writes: full, over quota, read-only.
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def storage_fault(error: BaseException) -> OSError | None:
    """The full-disk or read-only-file-system error behind *error*, if there is one.

    Looks through the exception's causes and contexts: a processor may have wrapped it.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in STORAGE_ERRNOS:
            return current
        current = current.__cause__ or current.__context__
    return None


def describe_storage_fault(error: OSError) -> str:
    """One line for a user: what refused the write, where, and what to do."""
    where = f" writing {error.filename}" if error.filename else ""
    if error.errno == errno.EROFS:
        fix = "make it writable (or pass another --repository) and run again"
    else:
        fix = "free space (or pass another --repository) and run again"
    return (
        f"{error.strerror or 'storage error'}{where}; the run stopped and kept everything it "
        f"had committed: {fix}, and the interrupted micro-batch is redone"
    )
