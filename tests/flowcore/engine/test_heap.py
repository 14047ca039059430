"""Tests for flowcore/engine/_heap.py: a task process keeps freed memory for reuse."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

_CHURN = """
import resource, sys
if sys.argv[1] == "keep":
    from flowcore.engine._heap import keep_freed_memory
    assert keep_freed_memory()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
before = faults()
for _ in range(20):  # a task's rounds: a window of a claim and a few arrays, then all freed
    window = bytearray(8 << 20)
    arrays = [bytearray(3 << 20) for _ in range(3)]
    del window, arrays
print(faults() - before)
"""


def _faults(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _CHURN, mode], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_freed_windows_are_reused_without_faulting_pages_in_again() -> None:
    """Rounds of a window and a few arrays, all freed at the end of each, fault fresh pages
    in again round after round with glibc's defaults (17 MB freed at the top of the heap is
    trimmed: 22,000-86,000 faults over 20 rounds here, as its adaptive thresholds go), and
    only the first round's once the process keeps freed memory."""
    default, kept = _faults("default"), _faults("keep")
    per_round = (8 + 3 * 3) * 256  # 4 KiB pages
    assert kept < 2 * per_round  # the first round's, then reused
    assert default > 2 * kept  # the defaults fault in the same memory again
