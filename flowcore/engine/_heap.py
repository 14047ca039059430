"""A task process keeps the memory it frees for its next allocations, not handing it back at once.

A task's byte work allocates and frees buffers of a few megabytes over and over: a chunk of an
input file, a window of a claim, numpy arrays of line ends. glibc's malloc gives such a block
back to the kernel as soon as it is freed (one above its mmap threshold at once, the top of the
heap past its trim threshold), so the next allocation faults fresh pages in again, zeroed by the
kernel (and on a virtual machine often backed again by the host). The reference flow at 128 MB
on the 2-core VM: its split task took 26,800 page faults and its merge task 62,000 (with a fresh
window per read), a third to two thirds of their time spent in the kernel. With the thresholds
below, a process keeps at most :data:`TRIM_THRESHOLD` freed at the top of its heap: 1,700 and 850
faults, and the run 0.47 s -> 0.32 s on ``local[2]`` (``bench/README.md``, session 8).

Set once per process, in whichever process runs tasks (a Spark Python worker, or the driver for
the direct runner and small runs). Elsewhere than glibc (macOS, musl) nothing changes.
"""

from __future__ import annotations

import ctypes
import functools
import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "keep_freed_memory"]

#: Blocks at least this large get their own mapping (given back whole when freed).
MMAP_THRESHOLD = 16 << 20
#: Freed memory at the top of the heap kept for reuse, up to this much.
TRIM_THRESHOLD = 32 << 20
_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3


@functools.cache
def keep_freed_memory() -> bool:
    """Raise this process's malloc thresholds (once); whether they were set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
