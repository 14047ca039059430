"""The stage task: one function every runner executes, on the driver or on a Spark executor.

A task takes its input (queue segments, shuffled FlowFile records, or source work items), runs
the stage's members in-process (FlowFiles pass between pipelined members by reference; fan-out
clones), and writes files named by its attempt: content claims, output queue segments, FlowFiles
returned to their input queues, and one provenance event file. It returns a
:class:`~flowcore.stage_plan.TaskResult`; nothing it wrote counts until the driver commits it.

A processor that raises has its session rolled back: the FlowFiles go back to their queue,
penalized, and a bulletin records the error. Nothing is lost and the other FlowFiles go on.
"""

from __future__ import annotations

import gc
import itertools
import logging
import time
import uuid
import zlib
from collections import defaultdict, deque
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from flowcore._task_batches import drain_batches, read_work_batch, unpacks, write_deferred
from flowcore._task_bins import bins_batches, merge_batch_bin, takes_batches
from flowcore._task_content import TaskContent
from flowcore.binning import Bin, BinLimits, EvictionReason
from flowcore.errors import ContentNotFoundError, FlowcoreError
from flowcore.flow import FUNNEL_RELATIONSHIP, Prioritizer
from flowcore.flowfile import FlowFile, ResourceClaim
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor import BinningProcessor, ProcessContext, Processor, ProcessorKind
from flowcore.provenance import ProvenanceEvent, ProvenanceEventRun, ProvenanceEventType
from flowcore.relationship import FAILURE
from flowcore.session import ProcessSession
from flowcore.session_host import (
    SELF,
    ComponentInfo,
    FlowFileFilter,
    QueuedFlowFile,
    SessionCommit,
    SessionOutput,
    StateMap,
)
from flowcore.stage_plan import (
    NEVER,
    Bulletin,
    MemberPlan,
    ReadyBin,
    StagePlan,
    TaskResult,
    TaskSpec,
    park_queue_id,
)
from repositories import segments as segment_files
from repositories.content import FileContentRepository
from repositories.event_files import EventFileWriter
from repositories.records import MAX_SEGMENT_RECORDS, SegmentSummary

__all__ = ["ID_BLOCK", "group_records", "queue_order", "read_segment_records", "run_task"]

log = logging.getLogger(__name__)

#: Triggers run in one session for processors that support batching (NiFi's run duration).
BATCH_TRIGGERS = 1_000
#: FlowFile ids reserved per task: more than any task creates.
ID_BLOCK = 1 << 32
_INDEX_SHIFT = 32  # queue_date_index = task index << 32 | position: queue order across tasks


#: Set on a FlowFile routed to ``failure`` because its zero-copy source file is gone or changed.
CONTENT_FAILURE_REASON = "content.failure.reason"


def _external_claim_of(error: BaseException) -> ResourceClaim | None:
    """The gone or changed outside file behind *error* (or what caused it), if any."""
    seen: BaseException | None = error
    for _ in range(16):  # a chain of causes, never a cycle
        if seen is None:
            break
        if isinstance(seen, ContentNotFoundError) and seen.external is not None:
            return seen.external
        seen = seen.__cause__ or seen.__context__
    return None


def _now() -> int:
    return time.time_ns() // 1_000_000


def queue_order(flowfile: FlowFile) -> tuple[int, int, int]:
    """FIFO order (NiFi's FirstInFirstOutPrioritizer): queue date, then index, then id."""
    return (flowfile.queue_date, flowfile.queue_date_index, flowfile.id)


def _priority_key(flowfile: FlowFile) -> tuple[int, int, str]:
    value = flowfile.attributes.get("priority")
    if value is None:
        return (2, 0, "")
    try:
        return (0, int(value.strip()), "")
    except ValueError:
        return (1, 0, value)


_PRIORITIZER_KEYS: dict[Prioritizer, Callable[[FlowFile], Any]] = {
    Prioritizer.FIRST_IN_FIRST_OUT: queue_order,
    Prioritizer.OLDEST_FLOWFILE_FIRST: lambda f: (f.lineage_start_date, f.lineage_start_index),
    Prioritizer.NEWEST_FLOWFILE_FIRST: lambda f: (-f.lineage_start_date, -f.lineage_start_index),
    Prioritizer.PRIORITY_ATTRIBUTE: _priority_key,
}


def _ordered(flowfiles: list[FlowFile], prioritizers: Sequence[Prioritizer]) -> list[FlowFile]:
    """Queue order: the prioritizers in turn, then FIFO (NiFi's QueuePrioritizer)."""
    keys = [_PRIORITIZER_KEYS[p] for p in prioritizers]
    return sorted(flowfiles, key=lambda f: (*(k(f) for k in keys), queue_order(f)))


# --- one member of the stage, as a session host -------------------------------------------


class _FunnelProcessor(Processor):
    """What a funnel does: pass everything on (fan-out clones as any relationship)."""

    relationships = ()

    def relationship_names(self) -> tuple[str, ...]:
        return (FUNNEL_RELATIONSHIP,)

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        flowfiles = session.get(MAX_SEGMENT_RECORDS)
        if flowfiles:
            session.transfer(flowfiles, FUNNEL_RELATIONSHIP)


class _Member:
    """Runs one member inside a task: its pending input, sessions, and routing of outputs."""

    def __init__(self, task: _Task, plan: MemberPlan) -> None:
        self.task = task
        self.plan = plan
        self.processor: Processor = plan.processor or _FunnelProcessor()
        self.component = ComponentInfo(plan.component_id, plan.type_name, plan.name)
        self.content = task.content
        self.penalization_ms = task.spec.settings.penalization_ms
        self.pending: deque[QueuedFlowFile] = deque()
        self.pending_batches: list[tuple[FlowFileBatch, str]] = []  # (batch, its connection)
        # (FlowFile, worth retrying at, waits long: penalized or failed, not worth a batch wait)
        self.returned: list[tuple[QueuedFlowFile, int, bool]] = []
        # (queue, batch, worth retrying at): FlowFiles of batches binned whole, back to the queue
        self.returned_batches: list[tuple[str, FlowFileBatch, int]] = []
        # (queue, batch): batches over the task's unpacking limit, back to the queue untouched
        self.deferred_batches: list[tuple[str, FlowFileBatch]] = []
        self.takes_batches = takes_batches(self)  # bins batches whole (see _task_bins)
        committed = task.spec.states.get(plan.component_id)
        self.state = StateMap(0, committed) if committed is not None else StateMap()
        self.new_state: dict[str, str] | None = None
        self._restore_to_pending = False
        self._capturing: list[QueuedFlowFile] | None = None
        self.transfers: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.consumed = 0
        self.context = ProcessContext(
            self.processor,
            component=self.component,
            clock=_now,
            state=lambda: self.state,
            auto_terminated=plan.auto_terminated,
            has_incoming_connection=plan.has_input,
            resumed_bins=True,
        )
        if task.spec.defer_bins and self._merges_apart():
            self.context.bin_sink = self._hand_over

    # SessionHost -------------------------------------------------------------------------

    def now(self) -> int:
        return _now()

    def next_flowfile_id(self) -> int:
        return self.task.next_id()

    def poll(self, max_count: int, flowfile_filter: FlowFileFilter | None) -> list[QueuedFlowFile]:
        taken: list[QueuedFlowFile] = []
        rejected: list[QueuedFlowFile] = []
        now = _now()
        pending = self.pending
        while pending and len(taken) < max_count:
            queued = pending.popleft()
            penalty = queued.flowfile.penalty_expiration
            if penalty > now:  # penalized on its way here: it waits in the queue
                self.returned.append((queued, penalty, True))
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
        return relationship in self.plan.auto_terminated

    def get_state(self) -> StateMap:
        return self.state

    def apply_commit(self, commit: SessionCommit) -> None:
        self.consumed += len(commit.consumed)
        for output in commit.outputs:
            self._route(output)
        for relationship, (count, size) in commit.auto_terminated.items():
            counted = self.transfers[relationship]
            counted[0] += count
            counted[1] += size
        self.task.events.extend(commit.events)
        if commit.state is not None:
            self.state = StateMap(self.state.version + 1, commit.state)
            self.new_state = dict(commit.state)
        self.task.delete_on_commit.extend(commit.delete_on_commit)

    def restore(self, flowfiles: Sequence[QueuedFlowFile]) -> None:
        if self._capturing is not None:  # a ready bin being handed over
            self._capturing.extend(flowfiles)
            return
        if self._restore_to_pending:  # a batched session rolled back: retried one by one
            self.pending.extendleft(reversed(flowfiles))
            return
        now = _now()
        for queued in flowfiles:
            penalty = queued.flowfile.penalty_expiration
            self.returned.append((queued, max(penalty, now), penalty > now))

    # routing -------------------------------------------------------------------------------

    def _route(self, output: SessionOutput) -> None:
        flowfile, relationship = output.flowfile, output.relationship
        if relationship == SELF:
            self.returned.append((QueuedFlowFile(flowfile, output.queue_id), _now(), False))
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

    def bulletin(self, message: str, level: str = "ERROR") -> None:
        self.task.bulletins.append(
            Bulletin(_now(), self.plan.component_id, self.plan.name, level, message)
        )

    def _failed(self, error: BaseException, since: int | None = None) -> None:
        """Report a processor error as a bulletin.

        FlowFiles returned since position *since* of ``returned`` wait long, even with a zero
        penalty: a batch run must not retry a failing FlowFile in a tight loop.
        """
        if since is not None:
            self.returned[since:] = [(q, at, True) for q, at, _ in self.returned[since:]]
            if self._fail_unreadable(error, since):
                return
        text = str(error) or type(error).__name__
        message = (
            f"{self.plan.type_name} '{self.plan.name}' failed: {type(error).__name__}: {text}; "
            "its FlowFiles were returned to its input queue, penalized"
        )
        log.error("%s", message, exc_info=not isinstance(error, FlowcoreError))
        self.bulletin(message)

    def _fail_unreadable(self, error: BaseException, since: int) -> bool:
        """Route FlowFiles whose zero-copy source file is gone or changed to ``failure``.

        Retrying them can never succeed, and parking them forever hides the problem, so the
        FlowFiles returned since *since* that point into that file go to the processor's
        ``failure`` with ``content.failure.reason``; the others stay returned as usual.

        Returns:
            Whether any FlowFile was routed (the error is then reported here).
        """
        claim = _external_claim_of(error)
        if claim is None or FAILURE.name not in self.processor.relationship_names():
            return False
        kept: list[tuple[QueuedFlowFile, int, bool]] = []
        culprits: list[QueuedFlowFile] = []
        for entry in self.returned[since:]:
            queued = entry[0]
            content = queued.flowfile.content
            if content is not None and claim in content.resource_claims:
                unpenalized = queued.flowfile.replace(penalty_expiration=0)
                culprits.append(QueuedFlowFile(unpenalized, queued.queue_id))
            else:
                kept.append(entry)
        if not culprits:
            return False
        self.returned[since:] = kept
        self.pending.extendleft(reversed(culprits))
        session = self.session()
        reason = str(error)
        try:
            for flowfile in session.get(len(culprits)):
                marked = session.put_attribute(flowfile, CONTENT_FAILURE_REASON, reason)
                session.transfer(marked, FAILURE.name)
            session.commit()
        except Exception:  # routing failed too: they are parked like any failed FlowFile
            log.exception("could not route FlowFiles with unreadable content to failure")
            session.rollback(penalize=True)
            return False
        self.bulletin(
            f"{self.plan.type_name} '{self.plan.name}' routed {len(culprits)} FlowFile(s) to "
            f"failure: {reason}",
            level="WARNING",
        )
        return True

    def read_work(self, items: Iterable[Any]) -> None:
        """Turn source work items into FlowFiles, one session per item."""
        reader = getattr(self.processor, "read_work", None)
        assert reader is not None
        for item in items:
            if read_work_batch(self, item):
                continue
            session = self.session()
            try:
                reader(self.context, session, item)
                session.commit()
            except Exception as error:
                session.rollback()
                self.bulletin(
                    f"{self.plan.type_name} '{self.plan.name}' could not read {item.key}: "
                    f"{type(error).__name__}: {error}"
                )

    def _merges_apart(self) -> bool:
        """Whether the processor can merge a bin in another task than the one binning it."""
        processor = self.processor
        if processor.kind is not ProcessorKind.BINNING:
            return False
        return type(processor).merge_bin is not BinningProcessor.merge_bin  # type: ignore[attr-defined]

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
        for ready in bins:
            if ready.batches:
                merge_batch_bin(self, ready)
                continue
            self.pending.extend(QueuedFlowFile(f, q) for q, f in ready.records)
            session = self.session()
            bin_ = Bin(ready.group, BinLimits(), ready.created_ms)
            for flowfile in session.get(len(ready.records)):
                bin_.add(flowfile)
            bin_.reason = EvictionReason(ready.reason)
            mark = len(self.returned)
            try:
                processor.merge_bin(self.context, session, bin_)  # type: ignore[attr-defined]
                session.commit()
            except Exception as error:
                session.rollback(penalize=True)
                self._failed(error, since=mark)

    def _batchable(self) -> bool:
        processor = self.processor
        own = type(processor).on_trigger_sessions is Processor.on_trigger_sessions
        return processor.supports_batching and own

    def _drain_batched(self) -> None:
        """NiFi's run-duration batching: many triggers in one session, one commit.

        If a trigger fails, the whole session rolls back (its FlowFiles return to the front of
        the input) and those FlowFiles are retried one session each, so only the FlowFile that
        fails is parked.
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
        session = self.session()
        mark = len(self.returned)
        try:
            flowfiles = session.get(len(self.pending))
            message = processor.write(self.context, session, flowfiles)  # type: ignore[attr-defined]
            session.commit()
        except Exception as error:
            session.rollback(penalize=True)
            self._failed(error, since=mark)
            return
        self.task.sink_messages.append((self.plan.component_id, message))

    def drain(self, *, end_of_input: bool) -> None:
        """Trigger the processor until its input is used up or it stops taking any."""
        if self.pending_batches and not bins_batches(self, end_of_input=end_of_input):
            drain_batches(self)
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
        if processor.kind is ProcessorKind.BINNING:
            # NiFi triggers binning processors with an empty queue too (@TriggerWhenEmpty):
            # with nothing new binned, bins that reached their minimums are merged.
            try:
                processor.on_trigger_sessions(self.context, self.session)
                if end_of_input:
                    processor.end_of_input(self.context, self.session)  # type: ignore[attr-defined]
            except Exception as error:
                self._failed(error)
        retry = _now() + self.task.spec.settings.yield_ms
        for queued in self.pending:
            self.returned.append((queued, retry, False))
        self.pending.clear()

    def retry_hint(self) -> int:
        """When FlowFiles this member handed back without a penalty are worth taking again."""
        if self.processor.kind is ProcessorKind.BINNING:
            max_age = self.processor.max_bin_age_ms(self.context)  # type: ignore[attr-defined]
            if max_age is None:
                return NEVER
            oldest = min(
                itertools.chain(
                    (q.flowfile.queue_date for q, _, _ in self.returned),
                    (b.queue_date for _, b, _ in self.returned_batches),
                ),
                default=self.task.spec.batch_time,
            )
            return oldest + max_age + 1
        return 0


# --- the task -----------------------------------------------------------------------------


class _Task:
    """One task attempt of a stage."""

    def __init__(self, spec: TaskSpec) -> None:
        self.spec = spec
        self.attempt = f"{spec.plan.stage_id}-t{spec.index}-{uuid.uuid4().hex[:12]}"
        repository = FileContentRepository(list(spec.paths.content), archive=False)
        self.content = TaskContent(repository, self.attempt)
        self.segment_dir = Path(spec.paths.segments)
        self._ids = itertools.count(spec.first_id)
        self._positions = itertools.count(spec.index << _INDEX_SHIFT)
        self.events: list[ProvenanceEvent | ProvenanceEventRun] = []
        self.bulletins: list[Bulletin] = []
        self.delete_on_commit: list[str] = []
        self.members = {m.component_id: _Member(self, m) for m in spec.plan.members}
        self._outputs: dict[str, list[FlowFile]] = {}
        self.enqueued: list[SegmentSummary] = []
        self.retry_at: dict[str, int] = {}
        self.ready_bins: list[ReadyBin] = []
        self.sink_messages: list[tuple[str, bytes]] = []
        self.long_waits: set[str] = set()
        self.in_bins: set[str] = set()
        self.unpacked = 0  # FlowFiles of batches unpacked into objects (see _task_batches)

    def next_id(self) -> int:
        return next(self._ids)

    def next_queue_index(self) -> int:
        return next(self._positions)

    def take_ids(self, count: int) -> int:
        """Reserve *count* consecutive FlowFile ids; return the first."""
        first = next(self._ids)
        self._ids = itertools.count(first + count)
        return first

    def take_queue_indices(self, count: int) -> int:
        """Reserve *count* consecutive queue positions; return the first."""
        first = next(self._positions)
        self._positions = itertools.count(first + count)
        return first

    def enqueue_batch(self, queue_id: str, batch: FlowFileBatch) -> None:
        """Add a whole batch to a durable queue: one segment record per segment's worth."""
        for start in range(0, batch.count, MAX_SEGMENT_RECORDS):
            self._write(queue_id, batch.cut(start, start + MAX_SEGMENT_RECORDS))

    def enqueue(self, queue_id: str, flowfile: FlowFile) -> None:
        """Add an output to a durable queue, writing a segment whenever one fills up."""
        batch = self._outputs.setdefault(queue_id, [])
        batch.append(flowfile)
        if len(batch) >= MAX_SEGMENT_RECORDS:
            self._write(queue_id, batch)
            self._outputs[queue_id] = []

    def _write(
        self, queue_id: str, flowfiles: Sequence[FlowFile] | FlowFileBatch
    ) -> SegmentSummary:
        summary = segment_files.write_segment(
            self.segment_dir, queue_id, flowfiles, owner=self.attempt, sync=self.spec.settings.sync
        )
        self.enqueued.append(summary)
        return summary

    # input ---------------------------------------------------------------------------------

    def _admit(self, queue_id: str, flowfiles: list[FlowFile], now: int) -> None:
        plan = self.spec.plan
        member = self.members[plan.queue_members[queue_id]]
        expiration = plan.expiration_ms.get(queue_id)
        kept = []
        for flowfile in flowfiles:
            if expiration is not None and now - flowfile.entry_date > expiration:
                self._expire(queue_id, flowfile, expiration, now)
                member.consumed += 1
            elif flowfile.penalty_expiration > now:
                member.returned.append(
                    (QueuedFlowFile(flowfile, queue_id), flowfile.penalty_expiration, True)
                )
            else:
                kept.append(flowfile)
        ordered = _ordered(kept, plan.prioritizers.get(queue_id, ()))
        member.pending.extend(QueuedFlowFile(f, queue_id) for f in ordered)

    def _expire(self, queue_id: str, flowfile: FlowFile, expiration: int, now: int) -> None:
        self.events.append(
            ProvenanceEvent(
                event_type=ProvenanceEventType.EXPIRE,
                flowfile_uuid=flowfile.uuid,
                component_id=queue_id,
                component_type="Connection",
                event_time=now,
                file_size=flowfile.size,
                component_name=queue_id,
                entry_date=flowfile.entry_date,
                lineage_start_date=flowfile.lineage_start_date,
                details=f"Expiration Threshold = {expiration} millis",
                source_queue_identifier=queue_id,
                previous_attributes=flowfile.attributes,
                content_claim=flowfile.content,
                previous_content_claim=flowfile.content,
                previous_file_size=flowfile.size,
            )
        )

    def _read_input(self) -> None:
        """Admit the input, in queue order; batches stay whole for members that bin them."""
        spec, plan = self.spec, self.spec.plan
        now = _now()
        by_queue: dict[str, list[FlowFile | FlowFileBatch]] = {}
        for queue_id, segment_id in spec.input.segments:
            path = segment_files.segment_path(self.segment_dir, segment_id)
            read = segment_files.read_segment_whole(path)
            by_queue.setdefault(queue_id, []).extend(
                [read] if isinstance(read, FlowFileBatch) else read
            )
        for queue_id, flowfile in spec.input.records:
            by_queue.setdefault(queue_id, []).append(flowfile)
        member_of = plan.queue_members
        one_by_one = {
            member_of[q]
            for q, read in by_queue.items()
            if not self._whole_batches(q) or not all(isinstance(r, FlowFileBatch) for r in read)
        }
        for queue_id, read in by_queue.items():
            member = self.members[member_of[queue_id]]
            if member_of[queue_id] not in one_by_one:
                member.pending_batches.extend((b, queue_id) for b in read)  # type: ignore[misc]
                continue
            flowfiles = []
            for r in read:
                if not isinstance(r, FlowFileBatch):
                    flowfiles.append(r)
                elif unpacks(member, r, queue_id):
                    flowfiles.extend(r.flowfiles())
            self._admit(queue_id, flowfiles, now)

    def _whole_batches(self, queue_id: str) -> bool:
        """Whether batches read from *queue_id* may stay whole.

        They may when a member that bins batches takes them, and the queue neither expires
        nor reorders FlowFiles.
        """
        plan = self.spec.plan
        if queue_id in plan.expiration_ms or plan.prioritizers.get(queue_id):
            return False
        return self.members[plan.queue_members[queue_id]].takes_batches

    # running -------------------------------------------------------------------------------

    def run(self) -> TaskResult:
        spec = self.spec
        scheduled = []
        try:
            for member in self.members.values():
                member.processor.on_scheduled(member.context)
                scheduled.append(member)
            self._read_input()
            work: dict[str, list[Any]] = {}
            for component_id, item in spec.input.work:
                work.setdefault(component_id, []).append(item)
            bins: dict[str, list[ReadyBin]] = {}
            for ready in spec.input.bins:
                bins.setdefault(ready.member, []).append(ready)
            for member in self.members.values():
                if member.plan.kind is ProcessorKind.SOURCE:
                    member.read_work(work.get(member.plan.component_id, ()))
                    continue
                if member.plan.component_id in bins:
                    member.merge_bins(bins[member.plan.component_id])
                member.drain(end_of_input=spec.end_of_input)
                self._merge_a_lone_bin(member)
        finally:
            for member in scheduled:
                try:
                    member.processor.on_unscheduled(member.context)
                    member.processor.on_stopped(member.context)
                except Exception as error:
                    member.bulletin(f"stopping failed: {type(error).__name__}: {error}")
            self.content.close()
        return self._finish()

    def _write_returned_batches(self, member: _Member) -> None:
        """Write the batches a binning member returned to its queues, one segment each."""
        if not member.returned_batches:
            return
        hint = member.retry_hint()
        member.returned_batches.sort(key=lambda r: (r[1].queue_date, r[1].queue_date_index))
        for queue_id, batch, retry in member.returned_batches:
            summary = self._write(queue_id, batch)
            self.retry_at[summary.segment_id] = max(retry, hint)
            self.long_waits.add(summary.segment_id)  # a binning member's: as _finish does
            self.in_bins.add(summary.segment_id)

    def _merge_a_lone_bin(self, member: _Member) -> None:
        """Merge here a ready bin that has no sibling: a second pass would gain nothing."""
        mine = [b for b in self.ready_bins if b.member == member.plan.component_id]
        if len(mine) == 1:
            self.ready_bins.remove(mine[0])
            member.merge_bins(mine)

    def _finish(self) -> TaskResult:
        for queue_id, flowfiles in self._outputs.items():
            if flowfiles:
                self._write(queue_id, flowfiles)
        plan = self.spec.plan
        for member in self.members.values():
            self._write_returned_batches(member)
            if not member.returned:
                continue
            hint = member.retry_hint()
            binning = member.processor.kind is ProcessorKind.BINNING
            now = _now()
            by_queue: dict[tuple[str, bool], list[tuple[FlowFile, int]]] = {}
            for queued, retry, long_wait in member.returned:
                queue_id = queued.queue_id
                if queue_id not in plan.queue_members:
                    queue_id = park_queue_id(member.plan.component_id)
                waits_long = binning or long_wait or queued.flowfile.penalty_expiration > now
                by_queue.setdefault((queue_id, waits_long), []).append(
                    (queued.flowfile, max(retry, hint))
                )
            for (queue_id, waits_long), entries in by_queue.items():
                entries.sort(key=lambda e: queue_order(e[0]))
                for start in range(0, len(entries), MAX_SEGMENT_RECORDS):
                    chunk = entries[start : start + MAX_SEGMENT_RECORDS]
                    summary = self._write(queue_id, [f for f, _ in chunk])
                    self.retry_at[summary.segment_id] = min(r for _, r in chunk)
                    if waits_long:
                        self.long_waits.add(summary.segment_id)
                    if binning:
                        self.in_bins.add(summary.segment_id)
        for member in self.members.values():  # after what they return: later in queue order
            write_deferred(member)
        events_file = None
        if self.events:
            writer = EventFileWriter(self.spec.paths.events, self.attempt)
            writer.append(self.events)
            events_file = writer.close(sync=self.spec.settings.sync)
        return TaskResult(
            index=self.spec.index,
            attempt=self.attempt,
            enqueued=tuple(self.enqueued),
            retry_at=self.retry_at,
            long_waits=frozenset(self.long_waits),
            in_bins=frozenset(self.in_bins),
            provenance_file=events_file,
            written_claims=tuple(sorted(self.content.written, key=lambda c: (c.section, c.id))),
            delete_on_commit=tuple(self.delete_on_commit),
            states={
                m.plan.component_id: m.new_state
                for m in self.members.values()
                if m.new_state is not None
            },
            transfers={
                m.plan.component_id: {k: (v[0], v[1]) for k, v in m.transfers.items()}
                for m in self.members.values()
                if m.transfers
            },
            consumed={m.plan.component_id: m.consumed for m in self.members.values()},
            bulletins=tuple(self.bulletins),
            ready_bins=tuple(self.ready_bins),
            sink_messages=tuple(self.sink_messages),
        )


def run_task(spec: TaskSpec) -> TaskResult:
    """Run one task of a stage; the same function on every runner.

    The cyclic garbage collector is paused while the task runs: a task of many small FlowFiles
    builds a great many objects that all live until it ends, and repeated full collections over
    them took a fifth of its time. A task's input is bounded by the batch limits, so garbage in
    cycles waits at most one task for the next collection.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Task(spec).run()
    finally:
        if was_enabled:
            gc.enable()


def read_segment_records(segment_dir: str | Path, segment_id: str) -> list[FlowFile]:
    """A committed segment's FlowFiles, in order."""
    return segment_files.read_segment(segment_files.segment_path(segment_dir, segment_id))


def _stable_hash(text: str) -> int:
    """A hash that is the same in every process (Python's ``hash`` is salted per process)."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def _binning_context(member: MemberPlan) -> ProcessContext:
    """A context to ask a binning member about groups, outside a task's run."""
    assert member.processor is not None
    return ProcessContext(
        member.processor,
        component=ComponentInfo(member.component_id, member.type_name, member.name),
        clock=_now,
        state=StateMap,
    )


def single_group(plan: StagePlan) -> bool:
    """Whether each binning member of *plan* puts all its FlowFiles in one group.

    Then a shuffle by group key would bring everything to one partition: one task reading the
    segments itself does the same work without the shuffle.
    """
    members = plan.binning_members
    return bool(members) and all(
        m.processor.single_group(_binning_context(m))  # type: ignore[union-attr]
        for m in members
    )


def group_records(
    plan: StagePlan, segment_dir: str | Path, queue_id: str, segment_id: str, partitions: int
) -> list[tuple[int, tuple[str, FlowFile]]]:
    """A binning stage's shuffle map side: a segment's records keyed by partition.

    FlowFiles for a binning member go to the partition of their group key, so a group's
    FlowFiles meet in one task; others spread by id. Only records travel, never content. A
    group key that cannot be computed sends the FlowFile to partition 0, where the processor
    meets the same error and routes it to failure.
    """
    member = plan.member(plan.queue_members[queue_id])
    processor = member.processor
    binning = processor is not None and processor.kind is ProcessorKind.BINNING
    context = _binning_context(member) if binning else None
    keyed = []
    for flowfile in read_segment_records(segment_dir, segment_id):
        if binning:
            try:
                key = processor.group_key(context, flowfile)  # type: ignore[union-attr]
            except FlowcoreError:
                key = None
            partition = _stable_hash(f"{member.component_id}\0{key}") % partitions
        else:
            partition = flowfile.id % partitions
        keyed.append((partition, (queue_id, flowfile)))
    return keyed
