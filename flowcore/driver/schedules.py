"""Run Schedules in a continuous run: when a scheduled member may run next.

NiFi triggers a processor by its Scheduling Strategy: TIMER_DRIVEN every Run Schedule (``0 sec``:
as often as there is work), CRON_DRIVEN at its cron expression's times. Here a source with a
period is triggered at once, then at most once per period; a CRON driven source at each time its
cron expression gives, from the run's start. Any other scheduled processor runs in a stage of its
own (the compiler sees to it), which runs at most once per period, or once per cron time that has
come since it last ran. Batch runs ignore schedules, as a batch run is one pass over what there is
(NiFi's "Run Once").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from flowcore.clock import now_ms
from flowcore.compiler.plan import MemberPlan
from flowcore.cron import CronSchedule, parse_cron

__all__ = ["Schedules"]


class Schedules:
    """The next due time of each scheduled member, from the run's start.

    Args:
        clock: the current time in epoch ms.
    """

    def __init__(self, clock: Callable[[], int] = now_ms) -> None:
        self._clock = clock
        self._started = clock()
        self._ran: dict[str, int] = {}  # component id -> when it last ran (ms)
        self._due: dict[str, int] = {}  # component id -> next cron time (ms)
        self._crons: dict[str, CronSchedule] = {}

    @staticmethod
    def scheduled(member: MemberPlan) -> bool:
        """Whether *member* has a Run Schedule to keep (a period, or a cron)."""
        return member.run_schedule_ms > 0 or member.cron is not None

    def _cron(self, member: MemberPlan) -> CronSchedule:
        assert member.cron is not None
        cron = self._crons.get(member.component_id)
        if cron is None:
            cron = self._crons[member.component_id] = parse_cron(member.cron)
        return cron

    def next_due(self, member: MemberPlan) -> int:
        """When *member* may run next (epoch ms; in the past when it may run now)."""
        cid = member.component_id
        if member.cron is not None:
            due = self._due.get(cid)
            if due is None:
                due = self._due[cid] = self._cron(member).next_after(self._started)
            return due
        last = self._ran.get(cid)
        return self._started if last is None else last + member.run_schedule_ms

    def due(self, member: MemberPlan) -> bool:
        """Whether *member* may run now (always, for one without a schedule)."""
        return not self.scheduled(member) or self._clock() >= self.next_due(member)

    def ran(self, member: MemberPlan) -> None:
        """*member* ran now: its next period starts, or its next cron time is the one after now."""
        now = self._clock()
        self._ran[member.component_id] = now
        if member.cron is not None:
            self._due[member.component_id] = self._cron(member).next_after(now)

    def upcoming(self, members: Iterable[MemberPlan]) -> int | None:
        """The earliest time to come when one of *members* comes due, if any will."""
        now = self._clock()
        times = [t for m in members if self.scheduled(m) and (t := self.next_due(m)) > now]
        return min(times) if times else None
