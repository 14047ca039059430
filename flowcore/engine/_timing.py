"""Each member's task time: NiFi's "Tasks/Time", measured where a fused stage's members run.

NiFi shows, per processor, the time its tasks took over the last five minutes. A flowcore task
runs a whole fused stage: a source's session hands its batches on to the members after it, which
run inside the source's call (:meth:`~flowcore.engine.task._Task.pump`). So a member's time is
its own, exclusive of the members it handed batches to: :class:`MemberClock` keeps a stack of
the members running, and a member entered pauses the one it runs inside. Two clock reads per
entry and exit of a member (once per batch or drain, never per FlowFile) keep it cheap.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

__all__ = ["MemberClock"]


class MemberClock:
    """Nanoseconds each member of one task ran, without those that ran inside its calls.

    Args:
        clock: nanoseconds from any fixed point (tests pass their own).

    Attributes:
        nanos: per component id, the nanoseconds it ran.
    """

    def __init__(self, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self._clock = clock
        self.nanos: dict[str, int] = {}
        self._running: list[tuple[str, int]] = []  # (component id, since) of those entered

    @contextlib.contextmanager
    def timing(self, component_id: str) -> Iterator[None]:
        """Count the block's time as *component_id*'s (a member entered inside is its own)."""
        now = self._clock()
        running = self._running
        if running:
            outer, since = running[-1]
            self._add(outer, now - since)
        running.append((component_id, now))
        try:
            yield
        finally:
            now = self._clock()
            _, since = running.pop()
            self._add(component_id, now - since)
            if running:
                running[-1] = (running[-1][0], now)  # the outer member runs again from now

    def _add(self, component_id: str, nanos: int) -> None:
        self.nanos[component_id] = self.nanos.get(component_id, 0) + nanos
