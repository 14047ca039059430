"""The test harness's batch mode: the engine's own kind drivers, run over the harness.

``TestRunner(processor, batches=True)`` triggers a processor the way a task of the engine does
when FlowFiles arrive as :class:`~flowcore.flowfile_batch.FlowFileBatch` values. It does not
copy the engine: each trigger lays the ready FlowFiles out as batches
(:mod:`flowcore.testing._as_batches`) and hands them to the driver of the processor's kind,
the code an engine task runs (:class:`~flowcore.engine._batches.PerFlowFileDriver`,
:class:`~flowcore.engine._bins.BinningDriver`,
:class:`~flowcore.engine._sink_batches.SinkDriver`), through a
:class:`~flowcore.engine._contracts.Member` and
:class:`~flowcore.engine._contracts.BatchTask` over the runner:

* each declared relationship is one place, the runner's transfer list, unless auto-terminated
  (then the driver drops what goes there, a DROP for each FlowFile as one run);
* the events the driver records are registered when the trigger ends, unfolded into single
  events, and claimant counts settle as a commit settles them: the FlowFiles it took whole
  release their claims, those it handed on hold theirs;
* what a batch form staged and reported is carried out at once, as the harness commits a
  session; its state is the runner's;
* what a batch form declines is put back at the front of the queue and triggered one
  FlowFile at a time, as the engine does, and :class:`BatchUse` records why (the driver
  reports it through ``Member.declined``);
* a two-phase sink writes as much at a time as one trigger of its ``on_trigger`` takes, each
  part committed (``commit_at_once``) and published at once;
* sessions take batches, so a processor that makes its children as one (``fork_batch``, as
  SplitText does) transfers them whole; sources are triggered as usual (their batch forms read
  work items in engine tasks: test those through a flow).

A batch form whose routes do not hold each FlowFile exactly once, name an undeclared
relationship, or change more than attributes and contents written through the batch form's
context, fails the engine's own check (:mod:`flowcore.engine._routes`): the engine reports
it as a bulletin and runs those FlowFiles one by one; in the harness a bulletin is an
``AssertionError``, as the processor's other errors are. :mod:`flowcore.testing._agreement`
compares a batch-form run with the one-by-one run of the same input
(``TestRunner.assert_batch_form_agrees``).
"""

from __future__ import annotations

import sys
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from flowcore.compiler.plan import MemberPlan, Route
from flowcore.engine._batches import PerFlowFileDriver
from flowcore.engine._bins import BinningDriver
from flowcore.engine._held import QueuedBatch, ReturnedBatch
from flowcore.engine._sink_batches import SinkDriver
from flowcore.flowfile import FlowFile, ResourceClaim
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.base import Processor, ProcessorKind
from flowcore.processor.binning import Bin, BinLimits, EvictionReason
from flowcore.processor.kinds import HARNESS_WRITE, BinningProcessor, TwoPhaseSink
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun
from flowcore.session._effects import emit
from flowcore.session.host import AfterCommitAction, QueuedFlowFile, StateMap
from flowcore.testing._as_batches import batches_of
from repositories.disposals import dispose
from repositories.effects import publish

if TYPE_CHECKING:
    from flowcore.engine._contracts import Recorded
    from flowcore.engine.wire import ReadyBin
    from flowcore.processor.context import ProcessContext
    from flowcore.session.host import (
        ComponentInfo,
        Disposal,
        LogLine,
        Publication,
        RetryPolicy,
    )
    from flowcore.session.process_session import ProcessSession
    from repositories.memory import MemoryContentRepository, MemoryProvenanceRepository

__all__ = [
    "INPUT_QUEUE",
    "BatchHost",
    "BatchUse",
    "batches_of",
    "drain",
    "trigger_batches",
    "unfolded",
]

#: The harness's one input queue, as provenance names it.
INPUT_QUEUE = "input"


@attrs.define
class BatchUse:
    """How a runner's batch-mode triggers used the processor's batch forms (since it was made).

    Attributes:
        whole: FlowFiles a batch form took whole (``transform_batch`` routes, originals of bins
            merged by ``merge_batches``, FlowFiles ``write_batches`` wrote).
        forked: FlowFiles made as one batch in a session (``fork_batch``) and transferred whole
            (or dropped whole on an auto-terminated relationship).
        declined: why each batch or bin a batch form declined went one FlowFile at a time.
    """

    whole: int = 0
    forked: int = 0
    declined: list[str] = attrs.field(factory=list)

    @property
    def used(self) -> bool:
        """Whether any FlowFile went through a batch form."""
        return bool(self.whole or self.forked)


class BatchHost(Protocol):
    """What batch mode needs from the harness (``flowcore.testing.TestRunner``)."""

    processor: Processor
    component: ComponentInfo
    content: MemoryContentRepository
    provenance: MemoryProvenanceRepository
    batch_use: BatchUse
    retry_policy: RetryPolicy | None
    uuid_salt: str
    uuid_sequences: dict[str, list[Any]]

    @property
    def context(self) -> ProcessContext:
        """The process context handed to the processor."""
        ...

    def now(self) -> int:
        """The harness clock."""
        ...

    def create_session(self) -> ProcessSession:
        """A new session over the harness."""
        ...

    def controller_service(self, name: str) -> object:
        """The enabled controller service *name*."""
        ...

    def ready_count(self) -> int:
        """How many queued FlowFiles are ready (not penalized)."""
        ...

    def take_ready(self) -> list[FlowFile]:
        """Take every ready FlowFile off the queue, in queue order."""
        ...

    def requeue(self, flowfiles: Sequence[FlowFile]) -> None:
        """Put FlowFiles back at the front of the queue, in the order given."""
        ...

    def take_flowfile_ids(self, count: int) -> int:
        """*count* consecutive new FlowFile ids; the first."""
        ...

    def take_queue_indices(self, count: int) -> int:
        """*count* consecutive queue positions; the first."""
        ...

    def record_transfers(self, outputs: Sequence[tuple[str, FlowFile]], *, claimants: bool) -> None:
        """Record FlowFiles as transferred, in order (counting their claims when new)."""
        ...

    def destinations(self, relationship: str) -> int:
        """How many places *relationship* leads to."""
        ...

    def is_auto_terminated(self, relationship: str) -> bool:
        """Whether FlowFiles sent to *relationship* are dropped."""
        ...

    def record_drops(self, relationship: str, count: int, size: int) -> None:
        """Count FlowFiles as dropped on auto-terminated *relationship*."""
        ...

    def trigger_per_flowfile(self) -> None:
        """One ordinary trigger (``on_trigger_sessions``)."""
        ...

    def get_state(self) -> StateMap:
        """The processor's committed state."""
        ...

    def set_state(self, values: Mapping[str, str]) -> None:
        """Replace the processor's state."""
        ...

    def remove_unclaimed(self, resource_claims: Iterable[ResourceClaim]) -> None:
        """Remove those of *resource_claims* nothing claims any more (as a commit does)."""
        ...

    def reserve(self, target: str) -> bool:
        """Whether a sink may stage *target* (always, in the harness)."""
        ...

    def stage_file(self, directory: Path) -> Path:
        """A hidden temporary in *directory* for a sink to write."""
        ...

    def staged(self, target: str) -> bool:
        """Whether *target* is staged and not yet published."""
        ...

    def lowest_logged_level(self, logger: str) -> int:
        """The lowest level *logger* emits."""
        ...


def unfolded(events: Sequence[ProvenanceEvent | ProvenanceEventRun]) -> list[ProvenanceEvent]:
    """*events* with each run unfolded into its FlowFiles' events, in order.

    The in-memory provenance repository holds single events.
    """
    return [
        single
        for event in events
        for single in (event.events() if isinstance(event, ProvenanceEventRun) else (event,))
    ]


# --- the driver's task and member, over the runner --------------------------------------------


class _HarnessTask:
    """The :class:`~flowcore.engine._contracts.BatchTask` of one trigger: the runner's lists.

    A route's queue is a relationship: what the driver hands on is transferred there.
    """

    #: The harness unpacks every batch a batch form declines: no later micro-batch takes it.
    unpack_limit = sys.maxsize

    def __init__(self, host: BatchHost) -> None:
        self._host = host
        self.events: list[Recorded] = []
        self.ready_bins: list[ReadyBin] = []
        self.sink_messages: list[tuple[str, bytes]] = []
        self.unpacked = 0
        self.batch_time = host.now()
        self.members: Mapping[str, _HarnessMember] = {}  # no member follows: routes end here

    def take_ids(self, count: int) -> int:
        """*count* consecutive FlowFile ids of the runner."""
        return self._host.take_flowfile_ids(count)

    def take_queue_indices(self, count: int) -> int:
        """*count* consecutive queue positions of the runner."""
        return self._host.take_queue_indices(count)

    def enqueue_batch(self, queue_id: str, batch: FlowFileBatch) -> None:
        """Transfer *batch* to relationship *queue_id*, each FlowFile holding its claim."""
        self._host.record_transfers([(queue_id, f) for f in batch.flowfiles()], claimants=True)


class _HarnessMember:
    """The :class:`~flowcore.engine._contracts.Member` of one trigger, over the runner.

    Its context, state and sessions are the runner's; its plan routes each declared
    relationship to the runner's transfers (or to none when auto-terminated). What the
    driver puts back (declined FlowFiles, open bins) goes back to the runner's queue in
    :meth:`finish`, which also registers the events and settles claimant counts.
    """

    def __init__(self, host: BatchHost, flowfiles: Sequence[FlowFile]) -> None:
        self._host = host
        self.task = _HarnessTask(host)
        self.processor = host.processor
        self.component = host.component
        self.content = host.content
        self.context = host.context
        names = self.processor.relationship_names()
        self.plan = MemberPlan(
            component_id=self.component.id,
            name=self.component.name,
            type_name=self.component.type,
            processor=self.processor,
            routes={n: tuple(Route(n, None) for _ in range(host.destinations(n))) for n in names},
            auto_terminated=frozenset(n for n in names if host.is_auto_terminated(n)),
            has_input=True,
        )
        self.pending: deque[QueuedFlowFile] = deque()
        self.deferred_batches: list[QueuedBatch] = []
        self.returned_batches: list[ReturnedBatch] = []
        self.transfers: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        self.consumed = 0
        self.new_state: dict[str, str] | None = None
        self.retry_policy = host.retry_policy
        self.yield_ms = 0  # FlowFiles a binning processor did not take are put back at once
        self.uuid_salt = host.uuid_salt
        self.uuid_sequences = host.uuid_sequences
        #: the claims before this trigger: a new one nothing holds at the end is removed
        self._claims_before = set(host.content.resource_claims())
        held = batches_of(flowfiles, host.content)
        self.pending_batches = [QueuedBatch(batch, INPUT_QUEUE) for batch, _ in held]
        #: the FlowFiles taken, as laid out in batches: what a whole batch releases
        self.taken = [f for _, run in held for f in run]
        #: ids of the taken FlowFiles put back on the queue (declined, in open bins)
        self._put_back: set[int] = set()

    # --- Member -------------------------------------------------------------------------------

    @property
    def state(self) -> StateMap:
        """The runner's state: a batch form's is stored as a session's commit stores it."""
        return self._host.get_state()

    @state.setter
    def state(self, value: StateMap) -> None:
        self._host.set_state(value.values)

    def now(self) -> int:
        """The harness clock."""
        return self._host.now()

    def session(self) -> ProcessSession:
        """A session over the runner."""
        return self._host.create_session()

    def declined(self, why: str, count: int) -> None:
        """Record why *count* FlowFiles went one by one (``TestRunner.batch_use``)."""
        self._host.batch_use.declined.append(f"{why} for {count} FlowFile{'s' * (count != 1)}")

    def refused(self, problem: str) -> None:
        """What the engine reports as a bulletin fails the test: the batch form has a bug."""
        raise AssertionError(problem)

    def carry_out_after_commit(
        self,
        publications: Sequence[Publication],
        logs: Sequence[LogLine],
        disposals: Sequence[Disposal] = (),
        actions: Sequence[AfterCommitAction] = (),
    ) -> None:
        """Publish, dispose, log and act at once: the harness commit is final."""
        for publication in publications:
            publish(publication)
        for disposal in disposals:
            dispose(disposal)
        emit(logs)
        if actions:
            self.processor.run_after_commit_actions(self.context, [a.payload for a in actions])

    def merge_bins(self, bins: Sequence[ReadyBin]) -> None:
        """Merge bins one FlowFile at a time: back on the queue, taken by a session each."""
        processor = self.processor
        assert isinstance(processor, BinningProcessor)  # bins are a binning processor's
        for ready in bins:
            flowfiles = [f for _, f in ready.records]
            self.put_back(flowfiles)
            session = self.session()
            bin_ = Bin(ready.group, BinLimits(), ready.created_ms)
            for flowfile in session.get(len(flowfiles)):
                bin_.add(flowfile)
            bin_.reason = EvictionReason(ready.reason)
            try:
                processor.merge_bin(self.context, session, bin_)
                session.commit()
            except BaseException:
                session.rollback(penalize=True)
                raise

    def not_read(self, item: Any, error: Exception) -> None:
        """Sources are triggered one by one in the harness: no work item is read here."""
        msg = f"source work item {item!r} was not read: {error}"
        raise AssertionError(msg)

    # --- SessionHost, for the batch form's context ------------------------------------------

    def reserve(self, target: str) -> bool:
        """Whether a sink may stage *target* (the runner's answer)."""
        return self._host.reserve(target)

    def stage_file(self, directory: Path) -> Path:
        """A hidden temporary in *directory* (the runner's)."""
        return self._host.stage_file(directory)

    def staged(self, target: str) -> bool:
        """Whether *target* is staged (the runner's answer)."""
        return self._host.staged(target)

    def controller_service(self, name: str) -> object:
        """The enabled controller service *name* (the runner's, as its sessions')."""
        return self._host.controller_service(name)

    def lowest_logged_level(self, logger: str) -> int:
        """The lowest level *logger* emits (the runner's answer)."""
        return self._host.lowest_logged_level(logger)

    # --- the end of the trigger ---------------------------------------------------------------

    def put_back(self, flowfiles: Sequence[FlowFile]) -> None:
        """Put taken FlowFiles back at the front of the queue, in the order given."""
        self._put_back.update(f.id for f in flowfiles)
        self._host.requeue(flowfiles)

    def finish(self) -> bool:
        """Settle the trigger as a commit would; whether FlowFiles went back to go one by one.

        Open bins' FlowFiles and those a binning processor did not take go back in queue
        order; FlowFiles a batch form declined go back ahead of them, in their order.
        """
        host = self._host
        returned = [f for r in self.returned_batches for f in r.batch.flowfiles()]
        returned.sort(key=lambda f: (f.queue_date, f.queue_date_index))
        declined = [queued.flowfile for queued in self.pending]
        self.put_back([*declined, *returned])
        host.provenance.register(unfolded(self.task.events))
        for relationship in self.plan.dropped:
            count, size = self.transfers.get(relationship, (0, 0))
            if count:
                host.record_drops(relationship, count, size)
        released: set[ResourceClaim] = set()
        for flowfile in self.taken:
            if flowfile.id not in self._put_back and flowfile.content is not None:
                for resource_claim in flowfile.content.resource_claims:
                    host.content.decrement_claimant_count(resource_claim)
                    released.add(resource_claim)
        # and contents the batch form wrote for FlowFiles it then dropped, as a commit removes
        released.update(set(host.content.resource_claims()) - self._claims_before)
        host.remove_unclaimed(released)
        host.batch_use.whole += self.consumed
        return bool(declined)


# --- triggers ---------------------------------------------------------------------------------


def trigger_batches(host: BatchHost) -> None:
    """One batch-mode trigger: every ready FlowFile through the driver of the processor's kind.

    Sources, and a trigger with nothing ready, are triggered as usual (their sessions take
    batches).
    """
    context = host.context
    fed = host.processor.is_fed(
        context.has_incoming_connection(), context.has_non_loop_connection()
    )
    kind = host.processor.kind_for(fed)
    flowfiles = host.take_ready() if kind is not ProcessorKind.SOURCE else []
    if not flowfiles:
        host.trigger_per_flowfile()
    elif kind is ProcessorKind.SINK:
        _write(host, flowfiles)
    elif kind is ProcessorKind.BINNING:
        member = _HarnessMember(host, flowfiles)
        if not BinningDriver(member).bin(end_of_input=False):
            member.put_back(member.taken)
            member.finish()
            drain(host, once_more=True)
            return
        member.finish()
    else:
        member = _HarnessMember(host, flowfiles)
        PerFlowFileDriver(member).drain()
        if member.finish():
            drain(host, once_more=False)


def drain(host: BatchHost, *, once_more: bool) -> None:
    """Trigger one FlowFile at a time while the ready queue shrinks, as an engine task does.

    *once_more* adds the trigger with the input exhausted that a binning processor gets (NiFi's
    ``@TriggerWhenEmpty``): it is when bins that met their minimum are merged.
    """
    while before := host.ready_count():
        host.trigger_per_flowfile()
        if host.ready_count() >= before:
            break
    if once_more:
        host.trigger_per_flowfile()


def _write(host: BatchHost, flowfiles: list[FlowFile]) -> None:
    """A two-phase sink's ``write_batches``, as much at a time as its ``on_trigger`` takes.

    Each part is committed and published at once, as ``on_trigger`` does; a part the batch
    form declines is written by one ordinary trigger.
    """
    sink = host.processor
    assert isinstance(sink, TwoPhaseSink)  # a sink's kind
    host.requeue(flowfiles)
    while host.ready_count():
        taken = host.take_ready()
        host.requeue(taken[HARNESS_WRITE:])
        member = _HarnessMember(host, taken[:HARNESS_WRITE])
        SinkDriver(member).write()
        if member.finish():
            host.trigger_per_flowfile()
            continue
        for _, message in member.task.sink_messages:
            host.set_state(sink.commit_at_once(host.context, message, host.get_state().values))
