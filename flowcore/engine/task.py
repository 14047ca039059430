"""The stage task: one function every runner executes, on the driver or on a Spark executor.

A task takes its input (queue segments, shuffled FlowFile records, or source work items), runs
the stage's members in-process (FlowFiles pass between pipelined members by reference; fan-out
clones), and writes files named by its attempt: content claims, output queue segments, FlowFiles
returned to their input queues, and one provenance event file. It returns a
:class:`~flowcore.engine.wire.TaskResult`; nothing it wrote counts until the driver commits it.

A processor that raises has its session rolled back: the FlowFiles go back to their queue,
penalized, and a bulletin records the error. Nothing is lost and the other FlowFiles go on.
"""

from __future__ import annotations

import gc
import itertools
import logging
import math
import os
import time
import uuid
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

import repositories.segments as segment_files
from flowcore.clock import now_ms
from flowcore.controller_service import enabled_service
from flowcore.definition.queues import expired, park_queue_id, prioritized, queue_order
from flowcore.engine._batches import PerFlowFileDriver
from flowcore.engine._block_views import counted_once, recorded_events
from flowcore.engine._bulletins import running
from flowcore.engine._content import TaskContent
from flowcore.engine._heap import keep_freed_memory
from flowcore.engine._held import QueuedBatch, ReturnedFlowFile
from flowcore.engine._member import TaskMember
from flowcore.engine._timing import MemberClock
from flowcore.engine.wire import ReadyBin, SegmentWait, TaskResult, TaskSpec
from flowcore.errors import (
    ConfigurationError,
    HandedOverError,
    RepositoryError,
)
from flowcore.expression._values import set_max_length
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.patterns import set_time_limit
from flowcore.processor.base import ProcessorKind
from flowcore.provenance_events import (
    ProvenanceEvent,
    ProvenanceEventRun,
    ProvenanceEventType,
)
from flowcore.services import MapCache
from flowcore.session._content import CONTENT_FAILURE_REASON
from flowcore.session.block_views import BlockViews
from flowcore.session.host import (
    QueuedFlowFile,
)
from flowcore.settings import Settings
from repositories.content import FileContentRepository
from repositories.effects import (
    EffectFileWriter,
    FileSystemFlush,
    can_sync_whole_file_systems,
)
from repositories.event_files import EventFileWriter
from repositories.records import MAX_SEGMENT_RECORDS, Bulletin, SegmentSummary

__all__ = [
    "CONTENT_FAILURE_REASON",
    "ID_BLOCK",
    "apply_limits",
    "queue_order",
    "read_segment_records",
    "run_task",
]

log = logging.getLogger(__name__)

#: FlowFile ids reserved per task: more than any task creates.
ID_BLOCK = 1 << 32
_INDEX_SHIFT = 32  # queue_date_index = task index << 32 | position: queue order across tasks
#: Events a task holds before writing them to an event file of their own while it streams.
EVENTS_PER_FILE = 200_000


def _identity(record: FlowFile | FlowFileBatch) -> str:
    """What a shuffled record is, as text: the seed of derived uuids (see _Task)."""
    if isinstance(record, FlowFileBatch):
        numbers = zlib.crc32(record.uuid_numbers.tobytes())
        return f"{record.uuid_key}[{record.count}:{numbers:08x}]:{record.queue_date}"
    return f"{record.uuid}:{record.queue_date}"


# --- the task -----------------------------------------------------------------------------


class _Task:
    """One task attempt of a stage."""

    def __init__(self, spec: TaskSpec) -> None:
        if not os.path.isdir(spec.paths.segments):  # before any directory is made there
            msg = (
                f"the repository's queue directory {spec.paths.segments} is gone: the "
                "repository was moved or deleted while the run used it; the task wrote nothing"
            )
            raise RepositoryError(msg)
        self.spec = spec
        #: the block views its sessions made (a large file's block read here)
        self.block_views = BlockViews()
        self.attempt = f"{spec.plan.stage_id}-t{spec.index}-{uuid.uuid4().hex[:12]}"
        repository = FileContentRepository(
            list(spec.paths.content),
            archive=False,
            max_appendable_size=spec.settings.content_claim_max_appendable_bytes,
        )
        self.content = TaskContent(repository, self.attempt)
        self.segment_dir = Path(spec.paths.segments)
        self._ids = itertools.count(spec.first_id)
        self._positions = itertools.count(spec.index << _INDEX_SHIFT)
        self.events: list[ProvenanceEvent | ProvenanceEventRun] = []
        self.event_files: list[str] = []  # written as events fill them (see pump)
        self._reached: dict[str, frozenset[str]] = {}  # see _downstream
        self.bulletins: list[Bulletin] = []
        self.unread: list[tuple[str, str]] = []  # (source component, work item key) not read
        #: source component -> until when it asked to rest (epoch ms): ``yield_until`` only
        self.yielded: dict[str, int] = {}
        #: source component -> when its plain yield ends, on this process's monotonic clock
        self._yield_ends: dict[str, float] = {}
        # What the task's committed input is (see flowcore.session._uuids): derived uuids
        # are the same when a replay reads the same segments, and new on any other input.
        segments = sorted(segment_id for _, segment_id in spec.input.segments)
        records = sorted(_identity(r) for _, r in spec.input.records)
        self.uuid_salt = "\0".join((*segments, *records))
        self.members = {m.component_id: TaskMember(self, m) for m in spec.plan.members}
        self._outputs: dict[str, list[FlowFile]] = {}
        self.enqueued: list[SegmentSummary] = []
        self.waits: dict[str, SegmentWait] = {}  # segments returned to their queues
        self.ready_bins: list[ReadyBin] = []
        self.sink_messages: list[tuple[str, bytes]] = []
        self.effects = EffectFileWriter(spec.paths.effects, self.attempt)
        # Segments, event files and content claim files are made durable together when the
        # task ends (see FileSystemFlush), each on its own file system: the commit names them
        # all, and the sources are deleted after it (issue 31: content on another disk than
        # the queues). Where the system has no syncfs that reports lost writes, segments and
        # event files are also fsynced as they are written.
        self._sync_each = spec.settings.sync and not can_sync_whole_file_systems()
        self._flush = (
            FileSystemFlush([self.segment_dir, spec.paths.events, *spec.paths.content])
            if spec.settings.sync
            else None
        )
        self.staged_targets: set[str] = set()  # files committed sessions staged (not yet visible)
        self.unpacked = 0  # FlowFiles of batches unpacked into objects (see _task_batches)
        self.caches: dict[str, MapCache] = {}  # the services' caches members used, by name
        self.clock = MemberClock()  # each member's task time (NiFi's Tasks/Time)

    def map_cache(self, name: str) -> MapCache:
        """The cache of service *name*, loaded from its committed state when first used.

        Members naming the same service share it. Its stage is serial (one task per stage
        run), so this task's changes are the only ones its commit carries.

        Raises:
            ConfigurationError: the stage's plan has no such service.
        """
        cache = self.caches.get(name)
        if cache is None:
            service = self.spec.plan.services.get(name)
            if service is None:
                known = sorted(self.spec.plan.services)
                msg = f"no service named {name!r} is declared in the flow (known: {known!r})"
                raise ConfigurationError(msg)
            cache = MapCache(service, self.spec.states.get(service.state_key, {}), now_ms)
            self.caches[name] = cache
        return cache

    def controller_service(self, name: str) -> object:
        """The service *name*, enabled: shipped with the stage's plan, enabled once per process.

        What it names is enabled first (:func:`~flowcore.controller_service.enabled_service`).

        Raises:
            ConfigurationError: the stage's plan has no such service, or it cannot be enabled.
        """
        return enabled_service(name, self.spec.plan.services)

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

    @property
    def batch_time(self) -> int:
        """The queue date of what this task hands on (epoch ms)."""
        return self.spec.batch_time

    @property
    def unpack_limit(self) -> int:
        """How many FlowFiles of batches the task may unpack (``batch_max_flowfiles``)."""
        return self.spec.settings.batch_max_flowfiles

    def pump(self, source: TaskMember) -> None:
        """Process the batches *source* handed on now, through the members after it.

        Then the events made so far are written once there are enough: a split's children
        pass part by part, and memory holds a few parts, not all of them.

        Binning members and two-phase sinks keep what reaches them for their own turn (a
        connection into a binning member is durable: what reaches it is written at once).
        """
        downstream = self._downstream(source.plan.component_id)
        for member in self.members.values():  # in stage order: upstream members drain first
            if (
                member.plan.component_id in downstream
                and member.pending_batches
                and member.processor.kind is ProcessorKind.PER_FLOWFILE
                and member.unscheduled is None
            ):
                with running(member), self.clock.timing(member.plan.component_id):
                    PerFlowFileDriver(member).drain()  # its log records: its bulletins
        self.write_events(EVENTS_PER_FILE)

    def _downstream(self, component_id: str) -> frozenset[str]:
        """The members a member's pipelined connections reach, directly or through others."""
        known = self._reached.get(component_id)
        if known is not None:
            return known
        reached: set[str] = set()
        frontier = [component_id]
        while frontier:
            plan = self.members[frontier.pop()].plan
            for routes in plan.routes.values():
                for route in routes:
                    if route.member is not None and route.member not in reached:
                        reached.add(route.member)
                        frontier.append(route.member)
        self._reached[component_id] = frozenset(reached)
        return self._reached[component_id]

    def discard_outputs(self) -> None:
        """Remove the segments and event files this attempt wrote (it will not be committed)."""
        if self._flush is not None:
            self._flush.close()
        for summary in self.enqueued:
            segment_files.segment_path(self.segment_dir, summary.segment_id).unlink(missing_ok=True)
        for name in self.event_files:
            (Path(self.spec.paths.events) / name).unlink(missing_ok=True)

    def write_events(self, at_least: int = 1) -> None:
        """Write the events held so far to an event file of their own.

        Only when they are *at_least* (counting each event of a run).
        """
        self.events = recorded_events(self.block_views, self.events)
        held = sum(1 if isinstance(e, ProvenanceEvent) else e.count for e in self.events)
        if not held or held < at_least:
            return
        settings = self.spec.settings
        writer = EventFileWriter(
            self.spec.paths.events,
            self.attempt,
            settings.provenance_indexed_attributes,
            settings.provenance_max_attribute_length,
        )
        writer.append(self.events)
        self.events = []
        name = writer.close(sync=self._sync_each)
        if name is not None:
            self.event_files.append(name)
            if self._flush is not None and not self._sync_each:
                self._flush.add(Path(self.spec.paths.events) / name)

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
        self,
        queue_id: str,
        flowfiles: Sequence[FlowFile] | FlowFileBatch,
        wait: SegmentWait | None = None,
    ) -> SegmentSummary:
        """Write a segment of *flowfiles* to *queue_id*; *wait*: why it waits there, if it does."""
        summary = segment_files.write_segment(
            self.segment_dir, queue_id, flowfiles, owner=self.attempt, sync=self._sync_each
        )
        if self._flush is not None and not self._sync_each:
            self._flush.add(segment_files.segment_path(self.segment_dir, summary.segment_id))
        self.enqueued.append(summary)
        if wait is not None:
            self.waits[summary.segment_id] = wait
        return summary

    # input ---------------------------------------------------------------------------------

    def _admit(self, queue_id: str, flowfiles: list[FlowFile], now: int) -> None:
        plan = self.spec.plan
        member = self.members[plan.queue_members[queue_id]]
        expiration = plan.expiration_ms.get(queue_id)
        kept = []
        for flowfile in flowfiles:
            if expired(flowfile, expiration, now):
                self._expire(queue_id, flowfile, expiration, now)
                member.consumed += 1
            elif flowfile.penalty_expiration > now:
                member.returned.append(member.waiting(QueuedFlowFile(flowfile, queue_id), now))
            else:
                kept.append(flowfile)
        ordered = prioritized(kept, plan.prioritizers.get(queue_id, ()))
        member.pending.extend(QueuedFlowFile(f, queue_id) for f in ordered)

    def _expire(self, queue_id: str, flowfile: FlowFile, expiration: int, now: int) -> None:
        self.events.append(
            ProvenanceEvent.of(
                ProvenanceEventType.EXPIRE,
                flowfile,
                component=(queue_id, "Connection", queue_id),
                time=now,
                details=f"Expiration Threshold = {expiration} millis",
                source_queue_identifier=queue_id,
                previous_attributes=flowfile.attributes,
                previous_content_claim=flowfile.content,
                previous_file_size=flowfile.size,
            )
        )

    def _read_input(self) -> None:
        """Admit the input, in queue order; batches stay whole for members that bin them."""
        spec, plan = self.spec, self.spec.plan
        now = now_ms()
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
                member.pending_batches.extend(QueuedBatch(b, queue_id) for b in read)  # type: ignore[arg-type]
                continue
            flowfiles = []
            for r in read:
                if not isinstance(r, FlowFileBatch):
                    flowfiles.append(r)
                elif PerFlowFileDriver(member).unpacks(r, queue_id):
                    flowfiles.extend(r.flowfiles())
            if spec.input.records:  # shuffled batches: their FlowFiles in FIFO order, as records
                flowfiles.sort(key=queue_order)
            self._admit(queue_id, flowfiles, now)

    def _whole_batches(self, queue_id: str) -> bool:
        """Whether batches read from *queue_id* may stay whole.

        They may when the queue neither expires nor reorders FlowFiles, and its member is not
        a binning processor that bins FlowFile by FlowFile. A per-FlowFile member (or a sink)
        takes them as it takes batches from a pipelined connection: through its batch form,
        or unpacked one by one when it declines them.
        """
        plan = self.spec.plan
        if queue_id in plan.expiration_ms or plan.prioritizers.get(queue_id):
            return False
        member = self.members[plan.queue_members[queue_id]]
        return member.takes_batches or member.plan.kind is not ProcessorKind.BINNING

    # running -------------------------------------------------------------------------------

    def run(self) -> TaskResult:
        spec = self.spec
        scheduled = []
        work: dict[str, list[Any]] = {}
        for component_id, item in spec.input.work:
            work.setdefault(component_id, []).append(item)
        try:
            for member in self.members.values():
                if member.plan.disabled:
                    continue  # never scheduled; its input waits in its queues
                if (
                    member.plan.kind is ProcessorKind.SOURCE
                    and member.plan.component_id not in work
                    and not member.plan.has_input
                ):
                    continue  # nothing to read here: the driver lists (and schedules) it
                with running(member):
                    if member.schedule():
                        scheduled.append(member)
            self._read_input()
            bins: dict[str, list[ReadyBin]] = {}
            for ready in spec.input.bins:
                bins.setdefault(ready.member, []).append(ready)
            for member in self.members.values():
                if member.plan.disabled:
                    continue
                if member.unscheduled is not None:
                    self._skip_unscheduled(member, work, bins)
                    continue
                with running(member), self.clock.timing(member.plan.component_id):
                    if member.plan.kind is ProcessorKind.SOURCE:
                        member.read_work(work.get(member.plan.component_id, ()))
                        self._hand_back_penalized(member)
                        if member.pending or member.pending_batches:
                            # come back on a self-loop: ExecuteSQL, a source when its only
                            # connections in loop back to it, takes them one per trigger
                            member.drain(end_of_input=spec.end_of_input)
                        self._note_yield(member)
                        continue
                    if member.plan.component_id in bins:
                        member.merge_bins(bins[member.plan.component_id])
                    member.drain(end_of_input=spec.end_of_input)
                    self._merge_a_lone_bin(member)
        finally:
            for member in scheduled:
                try:
                    with running(member):  # what they log loses the secrets too
                        member.processor.on_unscheduled(member.context)
                        member.processor.on_stopped(member.context)
                except Exception as error:
                    member.bulletin(f"stopping failed: {type(error).__name__}: {error}")
            self.content.close()
        return self._finish()

    @staticmethod
    def _hand_back_penalized(member: TaskMember) -> None:
        """Hand a source member's penalized input back before it drains: it drains takeable ones.

        ExecuteSQL fed only by self-loops runs its query as a source when ``session.get()``
        gives nothing; triggered on penalized FlowFiles alone it would run a query the driver
        never listed. With only takeable FlowFiles pending, each trigger of the drain gets one
        (what it routes back round the loop goes to its queue, not to ``pending``).
        """
        now = now_ms()
        if all(q.flowfile.penalty_expiration <= now for q in member.pending):
            return
        queued = list(member.pending)
        member.pending.clear()
        for each in queued:
            if each.flowfile.penalty_expiration > now:
                member.returned.append(member.waiting(each, now))
            else:
                member.pending.append(each)

    def _note_yield(self, member: TaskMember) -> None:
        """Keep, for the driver, how long a source that yielded while reading asked to rest.

        Its listing runs on the driver, which alone can hold its next trigger back: its
        ``yield_until`` time as asked (an absolute time), else its Yield Duration, which
        travels as the milliseconds left of it when the task ends (``yielded_for``), so that
        an executor's clock running ahead of the driver's cannot stretch it.
        """
        context = member.context
        if not context.yielded:
            return
        component_id = member.plan.component_id
        until = context.held_until
        if until is None:
            ends = time.monotonic() + member.yield_ms / 1000
            self._yield_ends[component_id] = max(ends, self._yield_ends.get(component_id, 0.0))
            return
        self.yielded[component_id] = max(until, self.yielded.get(component_id, 0))

    def _skip_unscheduled(
        self, member: TaskMember, work: dict[str, list[Any]], bins: dict[str, list[ReadyBin]]
    ) -> None:
        """Keep the input of a member whose ``on_scheduled`` raised for a later task.

        Its work items are put back in its listing (read again later); the FlowFiles of
        bins it was to merge join what waits in its queue (see :meth:`hold_unscheduled`).
        """
        component_id = member.plan.component_id
        self.unread.extend((component_id, item.key) for item in work.get(component_id, ()))
        for ready in bins.get(component_id, ()):
            member.pending.extend(QueuedFlowFile(f, q) for q, f in ready.materialized().records)

    def hold_unscheduled(self) -> None:
        """Return what reached members whose ``on_scheduled`` raised to their queues.

        It waits the administrative yield, as a long wait: a batch run ends with it queued
        (``stuck:``, naming the failure), a continuous run schedules the member again then.
        What came from a member before it in the stage goes to its park queue.
        """
        retry = now_ms() + self.spec.settings.administrative_yield_ms
        queues = self.spec.plan.queue_members
        for member in self.members.values():
            if member.unscheduled is None:
                continue
            member.returned.extend(ReturnedFlowFile(q, retry, True) for q in member.pending)
            member.pending.clear()
            waiting = [*member.pending_batches, *member.deferred_batches]
            member.pending_batches, member.deferred_batches = [], []
            for held in waiting:
                queue_id = held.queue_id
                if queue_id not in queues:
                    queue_id = park_queue_id(member.plan.component_id)
                for start in range(0, held.batch.count, MAX_SEGMENT_RECORDS):
                    cut = held.batch.cut(start, start + MAX_SEGMENT_RECORDS)
                    self._write(queue_id, cut, SegmentWait(retry, long=True))

    def _write_returned_batches(self, member: TaskMember) -> None:
        """Write the batches a binning member returned to its queues, one segment each."""
        if not member.returned_batches:
            return
        hint = member.retry_hint()
        member.returned_batches.sort(
            key=lambda r: (
                r.batch.queue_date,
                int(r.batch.queue_date_indices[0]) if r.batch.count else 0,
            )
        )
        for returned in member.returned_batches:  # a binning member's: as _finish does
            wait = SegmentWait(max(returned.retry_at, hint), long=True, in_bins=True)
            self._write(returned.queue_id, returned.batch, wait)

    def _write_deferred(self, member: TaskMember) -> None:
        """Write the batches *member* deferred (over ``unpack_limit``) back, one segment each."""
        queues = self.spec.plan.queue_members
        for deferred in member.deferred_batches:
            # a pipelined connection's batches wait in the member's park queue
            queue_id = deferred.queue_id
            kept = queue_id if queue_id in queues else park_queue_id(member.plan.component_id)
            self.enqueue_batch(kept, deferred.batch)

    def _merge_a_lone_bin(self, member: TaskMember) -> None:
        """Merge here a ready bin that has no sibling: a second pass would gain nothing."""
        mine = [b for b in self.ready_bins if b.member == member.plan.component_id]
        if len(mine) == 1:
            self.ready_bins.remove(mine[0])
            member.merge_bins(mine)

    def _finish(self) -> TaskResult:
        for queue_id, flowfiles in self._outputs.items():
            if flowfiles:
                self._write(queue_id, flowfiles)
        self.hold_unscheduled()
        plan = self.spec.plan
        for member in self.members.values():
            self._write_returned_batches(member)
            if not member.returned:
                continue
            hint = member.retry_hint()
            binning = member.processor.kind is ProcessorKind.BINNING
            now = now_ms()
            by_queue: dict[tuple[str, bool, bool], list[tuple[FlowFile, int]]] = {}
            for returned in member.returned:
                flowfile, queue_id = returned.queued.flowfile, returned.queued.queue_id
                if queue_id not in plan.queue_members:
                    queue_id = park_queue_id(member.plan.component_id)
                # A held FlowFile (a retry's backoff penalizes it) is not a long wait:
                # a batch run waits for it.
                held = returned.held and not binning
                waits_long = not held and (
                    binning or returned.long_wait or flowfile.penalty_expiration > now
                )
                by_queue.setdefault((queue_id, waits_long, held), []).append(
                    (flowfile, max(returned.retry_at, hint))
                )
            for (queue_id, waits_long, held), entries in by_queue.items():
                entries.sort(key=lambda e: queue_order(e[0]))
                for start in range(0, len(entries), MAX_SEGMENT_RECORDS):
                    chunk = entries[start : start + MAX_SEGMENT_RECORDS]
                    at = min(r for _, r in chunk)
                    wait = SegmentWait(at, long=waits_long, in_bins=binning, held=held)
                    self._write(queue_id, [f for f, _ in chunk], wait)
        for member in self.members.values():  # after what they return: later in queue order
            self._write_deferred(member)
        self.write_events()
        if self._flush is not None:
            try:
                for claim in self.content.written:
                    self._flush.add(self.content.repository.path_of(claim))
                self._flush.flush()
            finally:
                self._flush.close()
        return TaskResult(
            index=self.spec.index,
            attempt=self.attempt,
            enqueued=tuple(self.enqueued),
            waits=self.waits,
            provenance_files=tuple(self.event_files),
            written_claims=tuple(sorted(self.content.written, key=lambda c: (c.section, c.id))),
            states={
                **{
                    m.plan.component_id: m.new_state
                    for m in self.members.values()
                    if m.new_state is not None
                },
                **{c.service.state_key: c.to_state() for c in self.caches.values() if c.changed},
            },
            transfers=counted_once(self.block_views, self.spec.plan, self.members),
            consumed={m.plan.component_id: m.consumed for m in self.members.values()},
            nanos=dict(self.clock.nanos),
            bulletins=tuple(self.bulletins),
            ready_bins=tuple(self.ready_bins),
            sink_messages=tuple(self.sink_messages),
            effects_file=self.effects.close(sync=self.spec.settings.sync),
            unread=tuple(self.unread),
            unscheduled={
                m.plan.component_id: m.unscheduled
                for m in self.members.values()
                if m.unscheduled is not None
            },
            yielded=dict(self.yielded),
            yielded_for={
                c: max(0, math.ceil((ends - time.monotonic()) * 1000))
                for c, ends in self._yield_ends.items()
            },
        )


def apply_limits(settings: Settings) -> None:
    """Set this process's limits on a flow's regexes and expressions from *settings*."""
    set_time_limit(settings.regex_time_limit_seconds)
    set_max_length(settings.expression_max_chars)


def run_task(spec: TaskSpec) -> TaskResult:
    """Run one task of a stage; the same function on every runner.

    The cyclic garbage collector is paused while the task runs: a task of many small FlowFiles
    builds a great many objects that all live until it ends, and repeated full collections over
    them took a fifth of its time. A task's input is bounded by the batch limits, so garbage in
    cycles waits at most one task for the next collection.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    apply_limits(spec.settings)
    keep_freed_memory()
    try:
        task = _Task(spec)
        try:
            return task.run()
        except HandedOverError:
            # A session failed after its batches went on, so it could not roll back: this
            # attempt's outputs are dropped and the task runs again holding every batch until
            # its session commits, where that failure rolls back, penalizes and reports its
            # FlowFile as any other does.
            task.discard_outputs()
            result = _Task(attrs.evolve(spec, hand_over=False)).run()
            # The first attempt's time was spent all the same (NiFi counts a rolled back task's).
            spent = dict(result.nanos)
            for component_id, nanos in task.clock.nanos.items():
                spent[component_id] = spent.get(component_id, 0) + nanos
            return attrs.evolve(result, nanos=spent)
    finally:
        if was_enabled:
            gc.enable()


def read_segment_records(segment_dir: str | Path, segment_id: str) -> list[FlowFile]:
    """A committed segment's FlowFiles, in order."""
    return segment_files.read_segment(segment_files.segment_path(segment_dir, segment_id))
