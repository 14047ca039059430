"""Tests for flowcore/faults.py: full and read-only disks found behind wrapping errors."""

from __future__ import annotations

import errno

from flowcore.errors import ProcessException
from flowcore.faults import describe_storage_fault, storage_fault


def test_a_storage_fault_is_found_behind_a_wrapper() -> None:
    """ENOSPC raised as the cause of another error is still found; other OSErrors are not."""
    full = OSError(errno.ENOSPC, "No space left on device", "/repo/content/1")
    wrapped = ProcessException("write failed")
    wrapped.__cause__ = full
    assert storage_fault(wrapped) is full
    assert storage_fault(OSError(errno.ENOENT, "gone")) is None
    assert storage_fault(ValueError("x")) is None


def test_the_line_names_the_file_and_the_fix() -> None:
    """The one line says what refused the write, where, and what to do."""
    line = describe_storage_fault(OSError(errno.EROFS, "Read-only file system", "/repo/x"))
    assert "Read-only file system writing /repo/x" in line
    assert "make it writable" in line
    assert "free space" in describe_storage_fault(OSError(errno.ENOSPC, "No space left"))
