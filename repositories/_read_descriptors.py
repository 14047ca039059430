"""The read descriptors a content repository keeps open, one per claim file (an LRU).

Opening a claim file per read cost more than reading a small FlowFile, so a repository keeps
the most recently read files open and hands each reader a private duplicate (``os.dup``): the
reader closes its own, and an evicted descriptor never closes under a reader.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from flowcore.flowfile import ResourceClaim

__all__ = ["OPEN_READERS", "ReadDescriptors"]

OPEN_READERS = 64  # claim file descriptors kept open for reading


class ReadDescriptors:
    """The open read descriptors of claim files, least recently used first; thread-safe.

    Args:
        kept: descriptors kept open at most.
    """

    def __init__(self, kept: int = OPEN_READERS) -> None:
        self.kept = kept
        self._fds: OrderedDict[ResourceClaim, int] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._fds)

    def duplicate(self, claim: ResourceClaim) -> int | None:
        """A private duplicate of *claim*'s kept descriptor, or None when none is kept."""
        with self._lock:
            fd = self._fds.get(claim)
            if fd is None:
                return None
            self._fds.move_to_end(claim)
            return os.dup(fd)

    def keep(self, claim: ResourceClaim, fd: int) -> int:
        """Keep *fd* open on *claim* (the one another thread kept first wins); a duplicate.

        Past :attr:`kept` the least recently used descriptor is closed.
        """
        with self._lock:
            kept = self._fds.get(claim)
            if kept is not None:
                os.close(fd)
                fd = kept
            else:
                self._fds[claim] = fd
                while len(self._fds) > self.kept:
                    os.close(self._fds.popitem(last=False)[1])
            return os.dup(fd)

    def forget(self, claim: ResourceClaim) -> None:
        """Close *claim*'s kept descriptor (its file is moved or deleted)."""
        with self._lock:
            fd = self._fds.pop(claim, None)
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        """Close every kept descriptor; later reads open afresh."""
        with self._lock:
            opened = list(self._fds.values())
            self._fds.clear()
        for fd in opened:
            os.close(fd)
