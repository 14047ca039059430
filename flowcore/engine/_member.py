"""One member of a stage inside a task: the session host a processor runs against.

A member holds its pending input (FlowFiles, or whole batches), runs its processor's triggers in
sessions (NiFi's run-duration batching where the processor allows it), routes each committed
output to the next member or to a durable queue, and keeps what goes back to its queue:
FlowFiles returned, penalized or failed, and bins not ready yet. :mod:`flowcore.engine.task` creates
the members and writes what they leave behind.
"""

from __future__ import annotations

import itertools
import logging
from collections import defaultdict, deque
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from traceback import format_exception
from typing import TYPE_CHECKING, Any

import attrs

from flowcore.clock import now_ms
from flowcore.compiler.plan import MemberPlan
from flowcore.definition.component_settings import BackoffMechanism
from flowcore.definition.flow import FUNNEL_RELATIONSHIP
from flowcore.engine._batches import PerFlowFileDriver
from flowcore.engine._bins import BinningDriver, takes_batches
from flowcore.engine._bulletins import log_once_per_reason
from flowcore.engine._contracts import StageTask
from flowcore.engine._driver import BatchDriver
from flowcore.engine._held import QueuedBatch, ReturnedBatch, ReturnedFlowFile
from flowcore.engine._sink_batches import SinkDriver
from flowcore.engine._source_batches import SourceDriver, work_identity
from flowcore.engine.wire import NEVER, ReadyBin
from flowcore.errors import FlowcoreError, HandedOverError
from flowcore.faults import storage_fault
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.parameters import redact
from flowcore.processor.base import Processor, ProcessorKind
from flowcore.processor.binning import Bin, BinLimits, EvictionReason
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import BinningProcessor, SourceProcessor, TwoPhaseSink
from flowcore.processor.relationship import FAILURE
from flowcore.service_order import secrets_with_services
from flowcore.session._content import CONTENT_FAILURE_REASON, damage_of
from flowcore.session.block_views import PAYLOAD_KEY, BlockViews
from flowcore.session.host import (
    SELF,
    AfterCommitAction,
    ComponentInfo,
    Disposal,
    FlowFileFilter,
    LogLine,
    Publication,
    QueuedFlowFile,
    RetryPolicy,
    SessionCommit,
    SessionOutput,
    StateMap,
)
from flowcore.session.process_session import ProcessSession
from flowcore.units import parse_time_period
from repositories.effects import EffectFileError, reserve_target
from repositories.records import MAX_SEGMENT_RECORDS, Bulletin

if TYPE_CHECKING:
    from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun
    from flowcore.services import MapCache

__all__ = ["BATCH_TRIGGERS", "CONTENT_FAILURE_REASON", "TaskMember"]

log = logging.getLogger(__name__)

#: Triggers run in one session for processors that support batching (NiFi's run duration).
BATCH_TRIGGERS = 1_000


def _unpenalized(queued: QueuedFlowFile) -> QueuedFlowFile:
    return QueuedFlowFile(queued.flowfile.replace(penalty_expiration=0), queued.queue_id)


def retry_policy(plan: MemberPlan, penalization_ms: int, yield_ms: int) -> RetryPolicy | None:
    """The member's relationship retry as its sessions apply it (None: no retry)."""
    retry = plan.retry
    if retry is None or not retry.relationships:
        return None
    penalize = retry.backoff_mechanism is BackoffMechanism.PENALIZE_FLOWFILE
    return RetryPolicy(
        component_id=plan.component_id,
        relationships=frozenset(retry.relationships),
        count=retry.count,
        penalize=penalize,
        base_ms=penalization_ms if penalize else yield_ms,
        max_backoff_ms=int(parse_time_period(retry.max_backoff_period, "ms")),
    )


class _FunnelProcessor(Processor):
    """What a funnel does: pass everything on (fan-out clones as any relationship)."""

    relationships = ()

    def relationship_names(self) -> tuple[str, ...]:
        return (FUNNEL_RELATIONSHIP,)

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        flowfiles = session.get(MAX_SEGMENT_RECORDS)
        if flowfiles:
            session.transfer(flowfiles, FUNNEL_RELATIONSHIP)


class TaskMember:
    """Runs one member inside a task: its pending input, sessions, and routing of outputs."""

    def __init__(self, task: StageTask, plan: MemberPlan) -> None:
        self.task = task
        self.plan = plan
        self.processor: Processor = plan.processor or _FunnelProcessor()
        self.component = ComponentInfo(
            plan.component_id, plan.type_name, plan.name, task.spec.paths.repository_id
        )
        self.content = task.content
        #: the task's block views (a BlockReadingHost: one task reads one block of a file)
        self.block_views: BlockViews = task.block_views
        settings = task.spec.settings
        # NiFi's Penalty and Yield Durations: the component's, else the engine settings'
        self.penalization_ms = (
            plan.penalty_ms if plan.penalty_ms is not None else settings.penalization_ms
        )
        self.yield_ms = plan.yield_ms if plan.yield_ms is not None else settings.yield_ms
        self.retry_policy = retry_policy(plan, self.penalization_ms, self.yield_ms)
        self.backoff_until = 0  # a retry's YIELD_PROCESSOR backoff: no trigger before (ms)
        self.pending: deque[QueuedFlowFile] = deque()
        self.pending_batches: list[QueuedBatch] = []
        # (FlowFile, worth retrying at, waits long: penalized or failed, not worth a batch wait)
        self.returned: list[ReturnedFlowFile] = []
        # (queue, batch, worth retrying at): FlowFiles of batches binned whole, back to the queue
        self.returned_batches: list[ReturnedBatch] = []
        # (queue, batch): batches over the task's unpacking limit, back to the queue untouched
        self.deferred_batches: list[QueuedBatch] = []
        self.takes_batches = takes_batches(self)  # bins batches whole (see _task_bins)
        # FlowFiles of batches a session holds before they go on uncommitted (None: never)
        self.hand_over_at = settings.batch_hand_over_flowfiles if task.spec.hand_over else None
        committed = task.spec.states.get(plan.component_id)
        self.state = StateMap(0, committed) if committed is not None else StateMap()
        self.new_state: dict[str, str] | None = None
        self._restore_to_pending = False
        self._capturing: list[QueuedFlowFile] | None = None
        self._rolled_back: set[int] = set()  # ids restored by rollbacks since the last failure
        self.transfers: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        #: relationships auto-terminated and not connected (NiFi's: a connection wins)
        self.dropped = plan.dropped
        self.uuid_sequences: dict[str, list] = {}  # see flowcore.session._uuids
        self.uuid_salt = task.uuid_salt
        self.consumed = 0
        self.context = ProcessContext(
            self.processor,
            component=self.component,
            clock=now_ms,
            state=lambda: self.state,
            auto_terminated=self.dropped,
            has_incoming_connection=plan.has_input,
            has_non_loop_connection=plan.has_non_loop_input,
            resumed_bins=True,
        )
        if task.spec.defer_bins and self._merges_apart():
            self.context.bin_sink = self._hand_over
        self.unscheduled: str | None = None  # why on_scheduled raised (see schedule)
        self._secrets: list[str] | None = None  # see secrets

    # SessionHost -------------------------------------------------------------------------

    def now(self) -> int:
        return now_ms()

    accepts_batches = True

    def next_flowfile_id(self) -> int:
        return self.task.next_id()

    def take_flowfile_ids(self, count: int) -> int:
        return self.task.take_ids(count)

    def poll(self, max_count: int, flowfile_filter: FlowFileFilter | None) -> list[QueuedFlowFile]:
        taken: list[QueuedFlowFile] = []
        rejected: list[QueuedFlowFile] = []
        now = now_ms()
        pending = self.pending
        while pending and len(taken) < max_count:
            queued = pending.popleft()
            if queued.flowfile.penalty_expiration > now:  # penalized: it waits in the queue
                self.returned.append(self.waiting(queued, now))
                continue
            if flowfile_filter is None:
                taken.append(queued)
                continue
            verdict = flowfile_filter(queued.flowfile)
            (taken if verdict.accept else rejected).append(queued)
            if not verdict.proceed:
                break
        pending.extendleft(reversed(rejected))
        return taken

    def relationships(self) -> Collection[str]:
        return self.processor.relationship_names()

    def destinations(self, relationship: str) -> int:
        return len(self.plan.routes.get(relationship, ()))

    def is_auto_terminated(self, relationship: str) -> bool:
        return relationship in self.dropped

    def get_state(self) -> StateMap:
        return self.state

    def hand_over_batch(
        self,
        batch: FlowFileBatch,
        relationship: str,
        events: Sequence[ProvenanceEvent | ProvenanceEventRun],
    ) -> None:
        """Take a batch a session made on before it commits, and process it downstream now.

        SplitText makes a large input's splits part by part: each goes through the next
        processors of the stage before the next part is made, so a task holds a few parts.
        *events* (the batch's FORK) are recorded first: a FlowFile's events follow its creation.
        A batch dropped (auto-terminated) comes with its DROPs and goes nowhere.
        """
        self.task.events.extend(events)
        if self.plan.routes.get(relationship):
            BatchDriver(self).route_whole(relationship, batch)
            self.task.pump(self)

    def carry_out_after_commit(
        self,
        publications: Sequence[Publication],
        logs: Sequence[LogLine],
        disposals: Sequence[Disposal] = (),
        actions: Sequence[AfterCommitAction] = (),
    ) -> None:
        """Record a sink's staged files and lines: carried out after the stage run commits."""
        if publications or logs or disposals or actions:
            # Source files to delete or move, and the processors' after-commit actions, go
            # with the sinks' effects: carried out after the commit, and again at start-up
            # should a crash come between the two.
            self.task.effects.commit(publications, logs, disposals, actions)
            self.task.staged_targets.update(p.target for p in publications)

    def waiting(self, queued: QueuedFlowFile, now: int) -> ReturnedFlowFile:
        """A penalized FlowFile that reached the member, handed back to wait out its penalty.

        One waiting out a retry's backoff here (it carries the retry counter) is a backoff,
        which a batch run waits for; any other penalty is a long wait, which it does not.
        """
        penalty = queued.flowfile.penalty_expiration
        policy = self.retry_policy
        if policy is not None and policy.in_backoff(queued.flowfile):
            return ReturnedFlowFile(queued, penalty, False, held=True)
        return ReturnedFlowFile(queued, penalty, True)

    def apply_commit(self, commit: SessionCommit) -> None:
        if commit.yield_ms:  # a retry's YIELD_PROCESSOR backoff
            self.context.yielded = True
            self.backoff_until = max(self.backoff_until, now_ms() + commit.yield_ms)
        self.carry_out_after_commit(
            commit.publications, commit.logs, commit.disposals, commit.actions
        )
        self.consumed += len(commit.consumed)
        for output in commit.outputs:
            self._route(output)
        for batch, relationship in commit.batches:
            BatchDriver(self).route_whole(relationship, batch)
        for relationship, (count, size) in commit.auto_terminated.items():
            counted = self.transfers[relationship]
            counted[0] += count
            counted[1] += size
        self.task.events.extend(commit.events)
        if commit.state is not None:
            self.state = StateMap(self.state.version + 1, commit.state)
            self.new_state = dict(commit.state)
            self.task.staged_targets.update(p.target for p in commit.publications)

    def stage_file(self, directory: Path) -> Path:
        return self.task.effects.stage(directory)

    def map_cache(self, name: str) -> MapCache:
        return self.task.map_cache(name)

    def controller_service(self, name: str) -> object:
        return self.task.controller_service(name)

    def staged(self, target: str) -> bool:
        return target in self.task.staged_targets

    def lowest_logged_level(self, logger: str) -> int:
        return self.task.spec.log_levels.get(logger, logging.NOTSET)

    def reserve(self, target: str) -> bool:
        spec = self.task.spec
        return reserve_target(spec.paths.effects, spec.run, target, spec.index)

    def restore(self, flowfiles: Sequence[QueuedFlowFile]) -> None:
        if self._capturing is not None:  # a ready bin being handed over
            self._capturing.extend(flowfiles)
            return
        if self._restore_to_pending:  # a batched session rolled back: retried one by one
            self.pending.extendleft(reversed(flowfiles))
            return
        now = now_ms()
        for queued in flowfiles:
            penalty = queued.flowfile.penalty_expiration
            self.returned.append(ReturnedFlowFile(queued, max(penalty, now), penalty > now))
            self._rolled_back.add(queued.flowfile.id)

    # routing -------------------------------------------------------------------------------

    def _route(self, output: SessionOutput) -> None:
        flowfile, relationship = output.flowfile, output.relationship
        if relationship == SELF:
            queued = QueuedFlowFile(flowfile, output.queue_id)
            now = now_ms()
            policy = self.retry_policy
            if policy is not None and policy.in_backoff(flowfile):  # retried: waits its backoff
                at = max(flowfile.penalty_expiration, self.backoff_until, now)
                self.returned.append(ReturnedFlowFile(queued, at, False, held=at > now))
                return
            self.returned.append(ReturnedFlowFile(queued, now, False))
            return
        route = self.plan.routes[relationship][output.connection_index]
        counted = self.transfers[relationship]
        counted[0] += 1
        counted[1] += flowfile.size
        flowfile = flowfile.replace(
            queue_date=self.task.spec.batch_time, queue_date_index=self.task.next_queue_index()
        )
        if route.member is not None:
            self.task.members[route.member].pending.append(
                QueuedFlowFile(flowfile, route.connection_id)
            )
        else:
            self.task.enqueue(route.connection_id, flowfile)

    # running -------------------------------------------------------------------------------

    def session(self) -> ProcessSession:
        return ProcessSession(self)

    def declined(self, why: str, count: int) -> None:
        """A batch form's decline: its FlowFiles go one by one (the debug log says why)."""
        del why, count

    def refused(self, problem: str) -> None:
        """A batch form's result the engine cannot take: logged once, and a bulletin."""
        message = f"{self.plan.type_name} '{self.plan.name}': {problem}"
        log_once_per_reason(log, message, "")
        self.bulletin(" ".join(message.split()))

    def bulletin(self, message: str, level: str = "ERROR") -> None:
        """Record a bulletin on this member's processor, its secrets masked."""
        self.task.bulletins.append(
            Bulletin(
                now_ms(), self.plan.component_id, self.plan.name, level, self._redacted(message)
            )
        )

    def secrets(self) -> list[str]:
        """The processor's secrets and those of the services it names (found once per member)."""
        if self._secrets is None:
            self._secrets = secrets_with_services(self.processor, self.task.spec.plan.services)
        return self._secrets

    def schedule(self) -> bool:
        """Call ``on_scheduled``; whether it succeeded.

        When it raises, NiFi's way: an ERROR bulletin names the processor and the exception,
        ``on_unscheduled`` and ``on_stopped`` are called quietly, and the member does not run
        in this task; its input goes back to its queue to wait the administrative yield
        (see ``_Task.hold_unscheduled``), and the rest of the stage runs on.
        """
        try:
            self.processor.on_scheduled(self.context)
        except Exception as error:
            fault = storage_fault(error)
            if fault is not None:
                raise fault from error  # see _failed: no processor can route around it
            wait = self.task.spec.settings.administrative_yield_duration
            text = self._redacted(" ".join(str(error).split()) or "(no message)")
            self.unscheduled = f"on_scheduled raised {type(error).__name__}: {text}"
            kept = (
                "what it listed is read again later"
                if self.plan.kind is ProcessorKind.SOURCE
                else "its input stays queued"
            )
            message = (
                f"{self.plan.type_name} '{self.plan.name}' failed to schedule: "
                f"{self.unscheduled}; {kept} and it is scheduled again after the "
                f"administrative yield duration ({wait})"
            )
            log.error("%s", message)  # one line: the bulletin says it all; the trace is for debug
            trace = "".join(format_exception(error))
            log.debug("%s", self._redacted(f"on_scheduled of {self.plan.name} raised\n{trace}"))
            self.bulletin(message)
            for hook in (self.processor.on_unscheduled, self.processor.on_stopped):
                try:
                    hook(self.context)
                except Exception:  # as NiFi: quietly, the failure is already reported
                    log.debug("%s after a failed on_scheduled", hook.__name__, exc_info=True)
            return False
        return True

    def _failed(self, error: BaseException, since: int | None = None) -> None:
        """Report a processor error as a bulletin.

        FlowFiles returned since position *since* of ``returned`` wait long, even with a zero
        penalty: a batch run must not retry a failing FlowFile in a tight loop.
        """
        fault = storage_fault(error)
        if fault is not None:
            # A full or read-only repository: no processor can route around it. The task
            # fails, so the stage run commits nothing and the run stops (redone next run).
            raise fault
        if isinstance(error, (EffectFileError, HandedOverError)):
            # the task's own bookkeeping failed, or its outputs went on: retrying the FlowFile
            # cannot help, the whole attempt fails and its input is taken again
            raise error
        if since is not None:
            self.returned[since:] = [attrs.evolve(r, long_wait=True) for r in self.returned[since:]]
            if self._fail_unreadable(error, since):
                return
        text = self._redacted(str(error) or type(error).__name__)
        message = (
            f"{self.plan.type_name} '{self.plan.name}' failed: {type(error).__name__}: {text}; "
            "its FlowFiles were returned to its input queue, penalized"
        )
        trace = "" if isinstance(error, FlowcoreError) else "\n" + "".join(format_exception(error))
        # Every one is a bulletin; stderr gets the first of each reason (no 1,452 tracebacks).
        log_once_per_reason(log, self._redacted(message), self._redacted(trace))
        self.bulletin(message)

    def _redacted(self, text: str) -> str:
        """*text* without the processor's secrets (sensitive properties and parameters)."""
        return redact(text, self.secrets())

    def _fail_unreadable(self, error: BaseException, since: int) -> bool:
        """Route FlowFiles whose content is damaged to ``failure``; retry the others at once.

        Damaged content (a checksum mismatch, a claim file cut short, a zero-copy source file
        gone or changed) never mends: retrying it cannot succeed, and parking it forever hides
        the problem. So the FlowFiles returned since *since* that the damage hits go to the
        processor's ``failure`` with ``content.failure.reason`` (a processor without
        ``failure`` keeps them queued, penalized, with a bulletin). The others came back only
        because their session rolled back with a damaged one: they go back to the queue
        unpenalized, so the next micro-batch takes them again.

        Returns:
            Whether the error was damage hitting a returned FlowFile (reported here, then).
        """
        damage = damage_of(error)
        rolled_back, self._rolled_back = self._rolled_back, set()
        if damage is None:
            return False
        entries = self.returned[since:]
        hit = [damage.hits(entry.queued.flowfile.content) for entry in entries]
        if not any(hit):
            return False
        culprits = [e.queued for e, h in zip(entries, hit, strict=True) if h]
        now = now_ms()
        kept = [  # innocents of the rollback are worth taking again at once
            ReturnedFlowFile(_unpenalized(e.queued), now, False)
            if e.queued.flowfile.id in rolled_back
            else e
            for e, h in zip(entries, hit, strict=True)
            if not h
        ]
        where = f"{self.plan.type_name} '{self.plan.name}'"
        if FAILURE.name not in self.processor.relationship_names():
            self.returned[since:] = kept + [e for e, h in zip(entries, hit, strict=True) if h]
            self.bulletin(
                f"{where} cannot read the content of {len(culprits)} FlowFile(s): "
                f"{damage.reason}; it has no failure relationship, so they stay in its input "
                "queue, penalized"
            )
            return True
        self.returned[since:] = kept
        self.pending.extendleft(reversed([_unpenalized(q) for q in culprits]))
        session = self.session()
        try:
            for flowfile in session.get(len(culprits)):
                marked = session.put_attribute(flowfile, CONTENT_FAILURE_REASON, damage.reason)
                session.transfer(marked, FAILURE.name)
            session.commit()
        except Exception:  # routing failed too: they are parked like any failed FlowFile
            log.exception("could not route FlowFiles with unreadable content to failure")
            session.rollback(penalize=True)
            return False
        self.bulletin(
            f"{where} routed {len(culprits)} FlowFile(s) to failure: {damage.reason}",
            level="WARNING",
        )
        return True

    def read_work(self, items: Iterable[Any]) -> None:
        """Turn source work items into FlowFiles: all as batches, else each, else a session each.

        See :mod:`flowcore.engine._source_batches` for the batch forms.
        """
        source = self.processor  # a source: the task reads work for its source members only
        assert isinstance(source, SourceProcessor)
        derives_uuids = type(source).capabilities.identifies_work
        items = list(items)
        if SourceDriver(self).read(items):
            return
        for item in items:
            if len(items) > 1 and SourceDriver(self).read([item]):
                continue
            session = self.session()
            if derives_uuids:
                session.derive_uuids_from(work_identity(item))
            try:
                source.read_work(self.context, session, item)
                session.commit()
            except Exception as error:
                session.rollback()
                self.not_read(item, error)

    def not_read(self, item: Any, error: Exception) -> None:
        """Source work item *item* could not be read (*error*): it is read again later.

        Raises:
            OSError: a full disk or a read-only file system behind *error*: the run stops
                (see ``_failed``), nothing is lost.
            EffectFileError: *error* itself.
        """
        fault = storage_fault(error)
        if fault is not None:
            raise fault from error
        if isinstance(error, EffectFileError):
            raise error
        if PAYLOAD_KEY in getattr(item, "payload", {}):
            # One block of a file whose other blocks other tasks read: putting it back in the
            # listing would commit those blocks' splits now and the whole file again later.
            # The task fails instead, and with it the stage run: nothing of the file commits.
            raise error
        # Listed but not read: the driver puts it back in the listing state, so it is not
        # taken as ingested (nor its source deleted) and is read again later.
        self.task.unread.append((self.plan.component_id, item.key))
        self.bulletin(
            f"{self.plan.type_name} '{self.plan.name}' could not read {item.key}: "
            f"{type(error).__name__}: {error}; it will be read again"
        )

    def _merges_apart(self) -> bool:
        """Whether the processor can merge a bin in another task than the one binning it."""
        return type(self.processor).capabilities.merges_apart

    def _hand_over(self, bin_: Bin, session: ProcessSession) -> None:
        """Take a ready bin out of this task: its FlowFiles, as queued, go to a merge task."""
        self._capturing = []
        try:
            session.rollback()
            queued = {q.flowfile.id: q for q in self._capturing}
        finally:
            self._capturing = None
        records = tuple((queued[f.id].queue_id, queued[f.id].flowfile) for f in bin_.flowfiles)
        reason = bin_.reason.value if bin_.reason is not None else EvictionReason.UNSET.value
        self.task.ready_bins.append(
            ReadyBin(self.plan.component_id, bin_.group, reason, bin_.created_ms, records)
        )

    def merge_bins(self, bins: Sequence[ReadyBin]) -> None:
        """Merge bins another task decided, one session each."""
        processor = self.processor
        assert isinstance(processor, BinningProcessor)  # bins are a binning member's
        for ready in bins:
            if ready.batches:
                BinningDriver(self).merge(ready)
                continue
            self.pending.extend(QueuedFlowFile(f, q) for q, f in ready.records)
            session = self.session()
            bin_ = Bin(ready.group, BinLimits(), ready.created_ms)
            for flowfile in session.get(len(ready.records)):
                bin_.add(flowfile)
            bin_.reason = EvictionReason(ready.reason)
            mark = len(self.returned)
            try:
                processor.merge_bin(self.context, session, bin_)
                session.commit()
            except Exception as error:
                session.rollback(penalize=True)
                self._failed(error, since=mark)

    def _batchable(self) -> bool:
        return self.processor.batches_triggers()

    def _drain_batched(self) -> None:
        """NiFi's run-duration batching: many triggers in one session, one commit.

        If a trigger fails, the whole session rolls back (its FlowFiles return to the front of
        the input) and those FlowFiles are retried one session each, so only the FlowFile that
        fails is parked. The triggers before it then run again: only processors whose triggers
        have no effect outside their session batch them (``Processor.batches_triggers``; a
        ``FlowFileTransform`` only with ``failure``, where its errors go, never raising).
        """
        processor, context = self.processor, self.context
        while self.pending:
            triggers = min(len(self.pending), BATCH_TRIGGERS)
            session = self.session()
            self._restore_to_pending = True
            try:
                for _ in range(triggers):
                    before = len(self.pending)
                    processor.on_trigger(context, session)
                    if context.yielded or len(self.pending) == before:
                        break
                session.commit()
            except Exception:
                session.rollback()
                self._restore_to_pending = False
                self._drain_single(limit=triggers)
                continue
            finally:
                self._restore_to_pending = False
            if context.yielded:
                return

    def _drain_two_phase(self) -> None:
        """A two-phase sink writes all of the task's input at once and returns a message."""
        processor = self.processor
        assert isinstance(processor, TwoPhaseSink)  # only sinks drain this way
        session = self.session()
        mark = len(self.returned)
        try:
            flowfiles = session.get(len(self.pending))
            message = processor.write(self.context, session, flowfiles)
            session.commit()
        except Exception as error:
            session.rollback(penalize=True)
            self._failed(error, since=mark)
            return
        self.task.sink_messages.append((self.plan.component_id, message))

    def drain(self, *, end_of_input: bool) -> None:
        """Trigger the processor until its input is used up or it stops taking any."""
        if self.pending_batches and self.processor.kind is ProcessorKind.SINK:
            SinkDriver(self).write()
        elif self.pending_batches and not BinningDriver(self).bin(end_of_input=end_of_input):
            PerFlowFileDriver(self).drain()
        if self.processor.kind is ProcessorKind.SINK and self.pending:
            self._drain_two_phase()
        if self._batchable():
            self._drain_batched()
        if not self.context.yielded:
            self._drain_single()
        self._finish_drain(end_of_input=end_of_input)

    def _drain_single(self, limit: int | None = None) -> None:
        """One session per trigger, the processor's own way (at most *limit* triggers)."""
        processor = self.processor
        triggered = 0
        while self.pending and (limit is None or triggered < limit):
            triggered += 1
            before, mark = len(self.pending), len(self.returned)
            try:
                processor.on_trigger_sessions(self.context, self.session)
            except Exception as error:
                self._failed(error, since=mark)
            if self.context.yielded or len(self.pending) == before:
                break

    def _finish_drain(self, *, end_of_input: bool) -> None:
        processor = self.processor
        if isinstance(processor, BinningProcessor):
            # NiFi triggers binning processors with an empty queue too (@TriggerWhenEmpty):
            # with nothing new binned, bins that reached their minimums are merged.
            try:
                processor.on_trigger_sessions(self.context, self.session)
                if end_of_input:
                    processor.end_of_input(self.context, self.session)
            except Exception as error:
                self._failed(error)
        now = now_ms()
        held_until = self.context.held_until  # ControlRate's window
        retry = now + self.yield_ms if held_until is None else held_until
        retry = max(retry, self.backoff_until)  # yielding out a retry's backoff
        held = held_until is not None or self.backoff_until > now  # a batch run waits for both
        for queued in self.pending:
            self.returned.append(ReturnedFlowFile(queued, retry, False, held=held))
        self.pending.clear()

    def retry_hint(self) -> int:
        """When FlowFiles this member handed back without a penalty are worth taking again."""
        if isinstance(self.processor, BinningProcessor):
            max_age = self.processor.max_bin_age_ms(self.context)
            if max_age is None:
                return NEVER
            oldest = min(
                itertools.chain(
                    (r.queued.flowfile.queue_date for r in self.returned),
                    (r.batch.queue_date for r in self.returned_batches),
                ),
                default=self.task.spec.batch_time,
            )
            return oldest + max_age + 1
        return 0
