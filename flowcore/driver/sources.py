"""Sources in the driver: listing their work for a micro-batch, and settling what was not read.

A source lists work items on the driver (DESIGN §4); its listing state marks them done, and is
committed in the same transaction as their FlowFiles. This module decides how often a source is
triggered in a micro-batch (Concurrent Tasks, filling a micro-batch, Run Schedule in a
continuous run, a batch run's end), and puts back the items a task could not read, so that only
what a transaction commits is ever marked done.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from traceback import format_exception

from flowcore.clock import now_ms
from flowcore.compiler.plan import MemberPlan, StagePlan
from flowcore.driver.schedules import Schedules
from flowcore.engine._bulletins import log_once_per_reason, redacting, secrets_for
from flowcore.engine.wire import TaskResult
from flowcore.errors import FlowcoreError
from flowcore.parameters import redact
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import PendingWork, SourceProcessor, WorkItem, WorkListing
from flowcore.settings import Settings
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.records import Bulletin

__all__ = ["FIX_LISTING", "MAX_SOURCE_TRIGGERS", "MAX_YIELDED_EMPTY_LISTINGS", "SourceLister"]

log = logging.getLogger(__name__)

#: Triggers of a source in one micro-batch, at most, when filling it; past them a source that
#: fills micro-batches (GetFile) only hands out what it has already listed.
MAX_SOURCE_TRIGGERS = 64

#: A bounded source whose listing yielded with nothing listed this many times in a row ends
#: its part of a batch run: it is not exhausted (its database may be down), so the run reports
#: it (``RunResult.yielded``) rather than end as finished having read nothing, and it does not
#: wait for ever either. Each of those listings waits out the source's Yield Duration first.
MAX_YIELDED_EMPTY_LISTINGS = 10


#: What a batch run's line for a source whose listing raised a library's error ends with.
FIX_LISTING = "; fix its properties (or what they name) and run again"


class _LastError(logging.Handler):
    """The last ERROR record a processor logs in this thread while the driver lists it."""

    observes_only = True  # writes nothing: stderr still gets the record once per reason

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self._thread = threading.get_ident()
        self.message: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self._thread:
            self.message = " ".join(record.getMessage().split())


class SourceLister:
    """The flow's sources as the driver triggers them, run after run of micro-batches.

    Args:
        plans: the flow's stage plans.
        flowfiles: the FlowFile repository (each source's committed listing state).
        settings: engine settings (batch limits, unbounded source batches).
        context_of: the driver-side context of a member (scheduled at first use).
        report: records a bulletin (a source whose ``on_scheduled`` raised).
        schedules: when scheduled members come due (shared with the controller).
    """

    def __init__(
        self,
        plans: Sequence[StagePlan],
        flowfiles: WriteAheadFlowFileRepository,
        settings: Settings,
        context_of: Callable[[MemberPlan], ProcessContext],
        report: Callable[[Bulletin], None] = lambda _: None,
        *,
        schedules: Schedules | None = None,
        before_listing: Callable[[str], object] = lambda _: None,
    ) -> None:
        self._plans = list(plans)
        #: source id -> the services its stage ships (their secrets are masked in its logs)
        self._services = {m.component_id: p.services for p in self._plans for m in p.members}
        #: waits (bounded) for a source's after-commit actions still running (GetSFTP's
        #: deletes), so it never lists again what its committed FlowFiles already hold;
        #: False: they still run, and the source does not list this time
        self._before_listing = before_listing
        self._flowfiles = flowfiles
        self.settings = settings
        self._context_of = context_of
        self._report = report
        #: source id -> why its on_scheduled raised on the driver (until it is scheduled)
        self.unscheduled: dict[str, str] = {}
        self._schedule_at: dict[str, int] = {}  # source id -> when to schedule it again (ms)
        self._triggers: Counter[str] = Counter()
        self._exhausted: set[str] = set()
        self._yielded_empty: Counter[str] = Counter()  # consecutive yielded empty listings
        #: source id -> the last ERROR its listing logged (a yielded listing's reason)
        self._last_error: dict[str, str] = {}
        #: source id -> why a batch run stopped listing a source that was not exhausted
        self.yielded: dict[str, str] = {}
        #: source id -> why its listing raised, for a batch run's one-line end (exit 2)
        self.list_failed: dict[str, str] = {}
        # (source, item key) whose read failed in this run: a batch run lists them no more
        # (they stay unmarked, for the next run), so a file that cannot be read cannot
        # keep a batch run going for ever.
        self._unread: set[tuple[str, str]] = set()
        #: when sources with a Run Schedule (a period or a cron) come due
        self.schedules = schedules or Schedules()
        #: source id -> until when it yielded (epoch ms): in its listing or in a task reading
        self._yielded_until: dict[str, int] = {}

    def _secrets(self, member: MemberPlan) -> Callable[[], list[str]]:
        """What *member*'s messages must not show: its secrets and its services'."""
        return secrets_for(member.processor, self._services.get(member.component_id, {}))

    def active(self, member: MemberPlan, continuous: bool) -> bool:
        """Whether *member* (a source) may still list work in this run."""
        if continuous:
            return True
        if member.component_id in self.list_failed:
            return False  # its listing raised: a batch run lists it no more
        processor = member.processor
        if isinstance(processor, SourceProcessor) and processor.unbounded:
            limit = self.settings.unbounded_source_batches
            return self._triggers[member.component_id] < limit
        return member.component_id not in self._exhausted

    def list_work(
        self,
        plan: StagePlan,
        continuous: bool,
        room: tuple[int, int],
    ) -> tuple[list[tuple[str, WorkItem]], dict[str, dict[str, str]]]:
        """List each source's work for one micro-batch: ``concurrent_tasks`` triggers.

        An unbounded source whose work items say how many FlowFiles they make is triggered
        again while its items make fewer than ``room[0]`` FlowFiles (at most
        :data:`MAX_SOURCE_TRIGGERS` times; in a batch run ``unbounded_source_batches``
        triggers in all, as ever): a micro-batch of one 10,000-FlowFile trigger would spend
        more on scheduling its Spark jobs than on its FlowFiles. A source that fills
        micro-batches (``fills_micro_batch``: GetFile, ListFile) is triggered the same way, and
        past :data:`MAX_SOURCE_TRIGGERS` triggers goes on handing out what it had listed by
        then (its ``pending_work``), as NiFi's GetFile takes Batch Size files per trigger as
        often as the scheduler allows: 20,000 files at Batch Size 10 are one micro-batch, not
        33, each with its commit; it does not list anew until the next micro-batch, so a
        directory that keeps changing cannot hold a micro-batch open. Items made as whole batches
        (``WorkItem.batched``) by a source whose relationships each lead to one place (or are
        auto-terminated) fill up to ``room[1]`` instead (see the controller's ``_room``). In a
        continuous run a source with a Run Schedule is triggered ``concurrent_tasks`` times once
        per period (or at each time of its cron), and not filled: the schedule is what the user
        asked for. A source whose ``on_scheduled`` raises lists nothing (see
        :meth:`_scheduled`).
        """
        work: list[tuple[str, WorkItem]] = []
        states: dict[str, dict[str, str]] = {}
        for member in plan.source_members:
            if self._resting(member.component_id) or not self._scheduled(member):
                continue
            processor = member.processor
            assert isinstance(processor, SourceProcessor)
            if self._before_listing(member.component_id) is False:
                log.debug("%s: after-commit actions still running; not listed now", member.name)
                continue
            scheduled = continuous and self.schedules.scheduled(member)
            if scheduled:
                if not self.schedules.due(member):
                    continue
                self.schedules.ran(member)
            committed = self._flowfiles.state(member.component_id)
            state: Mapping[str, str] = committed
            listed = len(work)
            made: int | None = 0  # FlowFiles the listed items make (None: unknown)
            made_bytes = 0
            limit = room[1] if member.routes_or_drops_whole else room[0]
            triggers = 0
            listed_until = 0  # past MAX_SOURCE_TRIGGERS: FlowFiles made once the listing is out
            # Concurrent tasks: each trigger lists from the state the one before it left.
            while triggers < member.concurrent_tasks or (
                (processor.unbounded or processor.fills_micro_batch)
                and not scheduled
                and made is not None
                and made < limit
                and made_bytes < self.settings.batch_max_bytes_value
                and (triggers < MAX_SOURCE_TRIGGERS or made < listed_until)
            ):
                if not self.active(member, continuous) or self._resting(member.component_id):
                    break  # a source that yielded is not triggered again until its yield ends
                with redacting(self._secrets(member)):
                    listing, yielded = self._list(member, state, continuous)
                self._triggers[member.component_id] += 1
                triggers += 1
                state = listing.state
                items = listing.items
                failed = [i for i in items if (member.component_id, i.key) in self._unread]
                if failed and not continuous:
                    items = tuple(i for i in items if i not in failed)
                    state = processor.requeue_work(state, failed, committed)
                if not items:
                    if not yielded or continuous:
                        self._exhausted.add(member.component_id)
                    elif member.component_id not in self.list_failed:
                        self._yielded_nothing(member)
                    break
                self._yielded_empty.pop(member.component_id, None)
                work.extend((member.component_id, item) for item in items)
                for item in items:
                    made = None if made is None or item.flowfiles is None else made + item.flowfiles
                    made_bytes += item.size
                    if not item.batched:
                        limit = room[0]
                if triggers == MAX_SOURCE_TRIGGERS and made is not None:
                    per_item = made / (len(work) - listed)  # FlowFiles an item made so far
                    listed_until = made + self._listed_ahead(member, state, per_item)
            if len(work) > listed or dict(state) != dict(committed):
                states[member.component_id] = dict(state)
        return work, states

    def _listed_ahead(self, member: MemberPlan, state: Mapping[str, str], per_item: float) -> int:
        """The FlowFiles a source that fills micro-batches has listed and not handed out yet.

        Its ``pending_work`` counts work items (GetFile's and ListFile's files, FileSplitter's
        blocks, ConsumeKafka's ranges of up to Max Poll Records messages), so the items left
        after *state* count as *per_item* FlowFiles each, what its items handed out this
        micro-batch made on average, as the bound they are added to counts FlowFiles (for
        GetFile an item is one; counted as one each, a source whose items make many stopped a
        few items past the cap, not once it had handed out what it had listed). 0 for any other
        source, or one that cannot say.
        """
        processor = member.processor
        assert isinstance(processor, SourceProcessor)
        if not processor.fills_micro_batch:
            return 0
        try:
            left = processor.pending_work(self._context_of(member), state)
        except Exception:  # then it stops at MAX_SOURCE_TRIGGERS, as before it could say
            log.debug("%s cannot say what it has listed", member.name, exc_info=True)
            return 0
        return 0 if left is None else math.ceil(left.items * per_item)

    def _scheduled(self, member: MemberPlan) -> bool:
        """Whether *member* is scheduled on the driver, scheduling it now if it is time.

        NiFi's way when ``on_scheduled`` raises: an ERROR bulletin names the source and the
        exception, and it is scheduled again after the administrative yield; the rest of
        the flow runs on. A batch run that ends before then reports it (``RunResult``).
        """
        cid = member.component_id
        if cid in self.unscheduled and now_ms() < self._schedule_at[cid]:
            return False
        try:
            with redacting(self._secrets(member)):
                self._context_of(member)
        except Exception as error:
            now = now_ms()
            text = " ".join(str(error).split()) or "(no message)"
            secrets = self._secrets(member)()
            text = redact(text, secrets)
            self.unscheduled[cid] = f"on_scheduled raised {type(error).__name__}: {text}"
            self._schedule_at[cid] = now + self.settings.administrative_yield_ms
            message = (
                f"{member.type_name} '{member.name}' failed to schedule: {self.unscheduled[cid]}; "
                "it is scheduled again after the administrative yield duration "
                f"({self.settings.administrative_yield_duration})"
            )
            log.error("%s", message)
            trace = "".join(format_exception(error))
            log.debug("%s", redact(f"on_scheduled of {member.name} raised\n{trace}", secrets))
            self._report(Bulletin(now, cid, member.name, "ERROR", message))
            return False
        self.unscheduled.pop(cid, None)
        return True

    def _yielded_nothing(self, member: MemberPlan) -> None:
        """*member*'s listing yielded with nothing listed: it rests, it is not exhausted.

        QueryDatabaseTable yields so while its database is down; a batch run that took that
        for the end of its table would finish having read nothing. It lists again after its
        yield, and after :data:`MAX_YIELDED_EMPTY_LISTINGS` such listings in a row the run
        stops listing it and reports it (``RunResult.yielded``): the run did not finish.
        """
        cid = member.component_id
        self._yielded_empty[cid] += 1
        if self._yielded_empty[cid] < MAX_YIELDED_EMPTY_LISTINGS:
            return
        self._exhausted.add(cid)
        last = self._last_error.get(cid)
        self.yielded[cid] = (
            f"its listing yielded with nothing listed {MAX_YIELDED_EMPTY_LISTINGS} times in a "
            "row (see the bulletins): it was not exhausted; "
            + ("fix what it reads and run again" if last is None else f"last error: {last}")
        )
        # the batch run's end prints it (a stuck: line): not twice on stderr
        log.info("%s '%s': %s", member.type_name, member.name, self.yielded[cid])

    def _list(
        self, member: MemberPlan, state: Mapping[str, str], continuous: bool = False
    ) -> tuple[WorkListing, bool]:
        """One trigger of *member*'s listing, and whether it yielded; a yield holds it back.

        NiFi does not trigger a processor that called ``yield`` again for its Yield Duration
        (QueryDatabaseTable while its database is down): the items it listed still go on.
        A listing that raises (S3's NoSuchBucket, SFTP's refused password, Kafka's brokers
        unreachable, or any other exception) is NiFi's ``onTrigger`` that throws: an ERROR
        bulletin names the processor and the system's message, the processor yields, and
        the listing lists nothing (see :meth:`_listing_failed`).
        """
        processor = member.processor
        assert isinstance(processor, SourceProcessor)
        context = self._context_of(member)
        context.yielded, context.held_until = False, None
        caught = _LastError()
        logging.getLogger("flowcore.processors").addHandler(caught)
        try:
            listing = processor.list_work(context, state)
        except Exception as error:
            context.yielded, context.held_until = True, None
            self._listing_failed(member, error, continuous)
            listing = WorkListing((), state)
        finally:
            logging.getLogger("flowcore.processors").removeHandler(caught)
        if caught.message is not None:  # QueryDatabaseTable's refused connection: it yielded
            self._last_error[member.component_id] = caught.message
            self._report(
                Bulletin(now_ms(), member.component_id, member.name, "ERROR", caught.message)
            )
        yielded = context.yielded
        if yielded:
            until = context.held_until
            self.hold(
                member.component_id, now_ms() + self._yield_ms(member) if until is None else until
            )
            context.yielded, context.held_until = False, None
        return listing, yielded

    def _listing_failed(self, member: MemberPlan, error: Exception, continuous: bool) -> None:
        """*member*'s listing raised *error*: a bulletin, and a batch run stops listing it.

        The bulletin names the processor and the system's message (secrets masked); the
        traceback is logged at DEBUG only, never on stderr. A continuous run lists it again after
        its yield, as NiFi triggers it again; a batch run stops listing it at once (the
        mistake, a missing bucket or a refused password, is not fixed by waiting) and ends
        with one line naming it (``RunResult.list_failed``): ``flowcore run`` exits with 2,
        or 3 when FlowFiles are left queued.
        """
        cid = member.component_id
        secrets = self._secrets(member)()
        text = " ".join(str(error).split()) or "(no message)"
        if not isinstance(error, FlowcoreError):
            text = f"{type(error).__name__}: {text}"
        text = redact(text, secrets)
        message = f"{member.type_name} '{member.name}' could not list: {text}"
        if continuous:  # stderr gets each reason once: the bulletins count every one
            log_once_per_reason(log, message)
        else:  # the run ends with this line (flowcore run): not twice on stderr
            log.info("%s", message)
        trace = "".join(format_exception(error))
        log.debug("%s", redact(f"the listing of {member.name} raised\n{trace}", secrets))
        self._report(Bulletin(now_ms(), cid, member.name, "ERROR", message))
        if not continuous:
            self._exhausted.add(cid)
            # flowcore's own errors say what to fix already; a library's say what failed
            fix = "" if isinstance(error, FlowcoreError) else FIX_LISTING
            self.list_failed[cid] = (
                f"{member.type_name} '{member.name}' could not list: {text}{fix}"
            )

    def _yield_ms(self, member: MemberPlan) -> int:
        """*member*'s Yield Duration in ms: its own, else the engine's."""
        return member.yield_ms if member.yield_ms is not None else self.settings.yield_ms

    def hold(self, component_id: str, until: int) -> None:
        """Do not list source *component_id* before *until* (epoch ms): it yielded."""
        if until > self._yielded_until.get(component_id, 0):
            self._yielded_until[component_id] = until
            log.debug("%s yielded: not listed again before %d", component_id, until)

    def note_yields(self, results: Sequence[TaskResult]) -> None:
        """Hold back the sources that yielded while their tasks read their work.

        A source's read runs in a task (ExecuteSQL without input whose query failed yields
        there); only the driver triggers it again, so its yield comes back in the task's
        result, and the source is listed no sooner than the yield asked.
        """
        now = now_ms()
        for result in results:
            for component_id, until in result.yielded.items():
                self.hold(component_id, until)
            for component_id, left_ms in result.yielded_for.items():
                self.hold(component_id, now + left_ms)  # a duration: the driver's clock

    def _resting(self, component_id: str) -> bool:
        """Whether source *component_id* yielded and its yield is not over yet."""
        until = self._yielded_until.get(component_id)
        if until is None:
            return False
        if now_ms() < until:
            return True
        del self._yielded_until[component_id]
        return False

    def yield_ends(self, continuous: bool) -> int | None:
        """When the first source resting after a yield (and still listing in this run) may list.

        A batch run waits for it: a yield delays a source's triggers, it takes none away (an
        unbounded one still has ``unbounded_source_batches`` in all, a bounded one lists
        until it runs out), so the run still ends.
        """
        now = now_ms()
        # A batch run also counts a rest already over whose source has not listed since (the
        # yield ended between the stage's run and this check): it is due now, not done.
        ends = [
            until
            for plan in self._plans
            for member in plan.source_members
            if (until := self._yielded_until.get(member.component_id, 0))
            and (until > now or not continuous)
            and self.active(member, continuous)
        ]
        return min(ends) if ends else None

    def requeue_unread(
        self,
        plan: StagePlan,
        work: Sequence[tuple[str, WorkItem]],
        results: Sequence[TaskResult],
        states: dict[str, dict[str, str]],
    ) -> dict[str, dict[str, str]]:
        """The listing states to commit: items whose read failed are put back to be listed again.

        A source's listing marks what it listed as done; only the items whose FlowFiles this
        transaction commits may stay marked (and be deleted at the source after it).
        """
        unread = {entry for result in results for entry in result.unread}
        if not unread:
            return states
        self._unread |= unread
        adjusted = dict(states)
        for member in plan.source_members:
            cid = member.component_id
            items = [item for c, item in work if c == cid and (c, item.key) in unread]
            if items and cid in adjusted:
                processor = member.processor
                assert isinstance(processor, SourceProcessor)
                committed = self._flowfiles.state(cid)
                adjusted[cid] = dict(processor.requeue_work(adjusted[cid], items, committed))
        return adjusted

    def after_commit(
        self,
        plan: StagePlan,
        work: Sequence[tuple[str, WorkItem]],
        results: Sequence[TaskResult],
    ) -> None:
        """Tell each source which of its items the stage run just committed (``after_commit``).

        An error there is logged: the FlowFiles are durable whatever the source does after.
        """
        unread = {entry for result in results for entry in result.unread}
        for member in plan.source_members:
            cid = member.component_id
            items = [item for c, item in work if c == cid and (c, item.key) not in unread]
            if not items:
                continue
            processor = member.processor
            assert isinstance(processor, SourceProcessor)
            try:
                with redacting(self._secrets(member)):
                    processor.after_commit(self._context_of(member), items)
            except Exception:
                log.exception("%s failed after its commit", member.name)

    def pending(self) -> PendingWork | None:
        """What the sources have left to read, summed (for progress); None when one cannot say.

        Asked after a commit, so each source sees its committed listing state.
        """
        items = size = 0
        known_bytes = True
        for plan in self._plans:
            for member in plan.source_members:
                processor = member.processor
                assert isinstance(processor, SourceProcessor)
                if member.component_id in self.unscheduled:
                    return None  # not scheduled (on_scheduled raised): it cannot say
                state = self._flowfiles.state(member.component_id)
                try:
                    left = processor.pending_work(self._context_of(member), state)
                except Exception:  # scheduling it reports why (_scheduled); progress does not
                    log.debug("%s cannot say what it has left", member.name, exc_info=True)
                    return None
                if left is None:
                    return None
                items += left.items
                known_bytes = known_bytes and left.bytes is not None
                size += left.bytes or 0
        return PendingWork(items, size if known_bytes else None)

    def next_scheduled(self) -> int | None:
        """When the next member with a Run Schedule comes due, if one will."""
        return self.schedules.upcoming(m for plan in self._plans for m in plan.members)
