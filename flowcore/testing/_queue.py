"""The harness's input queue: the one connection a processor under test reads from."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from flowcore.session.host import FlowFileFilter

__all__ = ["InputQueue"]


class InputQueue:
    """FIFO FlowFiles, penalized ones set aside until their penalty ends.

    NiFi's queue skips penalized FlowFiles; once their penalty ends they rejoin in queue order.

    Args:
        now: the harness clock in epoch ms (penalties end on it).
    """

    def __init__(self, now: Callable[[], int]) -> None:
        self._now = now
        self._ready: deque[FlowFile] = deque()
        self._penalized: list[FlowFile] = []

    def __len__(self) -> int:
        """Every FlowFile queued, penalized ones included."""
        return len(self._ready) + len(self._penalized)

    def put(self, flowfile: FlowFile, *, front: bool = False) -> None:
        """Queue *flowfile* at the back (or the *front*); aside while it is penalized."""
        if flowfile.is_penalized(self._now()):
            self._penalized.append(flowfile)
        elif front:
            self._ready.appendleft(flowfile)
        else:
            self._ready.append(flowfile)

    def put_back(self, flowfiles: Sequence[FlowFile]) -> None:
        """Return FlowFiles to the front, in the order given (a rollback, a declined batch)."""
        for flowfile in reversed(flowfiles):
            self.put(flowfile, front=True)

    def release_expired(self) -> None:
        """Penalized FlowFiles whose penalty ended rejoin the front, in queue order."""
        if not self._penalized:
            return
        now = self._now()
        expired = [f for f in self._penalized if not f.is_penalized(now)]
        if expired:
            self._penalized = [f for f in self._penalized if f.is_penalized(now)]
            expired.sort(key=lambda f: (f.queue_date, f.queue_date_index))
            self._ready.extendleft(reversed(expired))

    def ready(self) -> list[FlowFile]:
        """The FlowFiles not penalized, in queue order."""
        self.release_expired()
        return list(self._ready)

    def penalized(self) -> list[FlowFile]:
        """The FlowFiles still under penalty."""
        self.release_expired()
        return list(self._penalized)

    def take(self, max_count: int, flowfile_filter: FlowFileFilter | None) -> list[FlowFile]:
        """Up to *max_count* ready FlowFiles in order, those the filter accepts.

        As NiFi's ``session.get(filter)``: rejected ones stay where they were.
        """
        self.release_expired()
        taken: list[FlowFile] = []
        rejected: list[FlowFile] = []
        while self._ready and len(taken) < max_count:
            flowfile = self._ready.popleft()
            verdict = None if flowfile_filter is None else flowfile_filter(flowfile)
            if verdict is None or verdict.accept:
                taken.append(flowfile)
            else:
                rejected.append(flowfile)
            if verdict is not None and not verdict.proceed:
                break
        self._ready.extendleft(reversed(rejected))
        return taken

    def take_ready(self) -> list[FlowFile]:
        """Every ready FlowFile, in queue order."""
        self.release_expired()
        taken = list(self._ready)
        self._ready.clear()
        return taken
