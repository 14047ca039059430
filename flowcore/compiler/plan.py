"""What a stage's tasks need to run, and what they return: small picklable values.

The driver turns a compiled :class:`~flowcore.compiler.stages.Stage` into a :class:`StagePlan` once
(members with their processors and routing), and each micro-batch into :class:`TaskSpec` values
(which input a task takes, where the repositories are). A task answers with a
:class:`TaskResult` naming the files it wrote; the driver commits those in one transaction.
Everything here crosses the Spark wire, so it holds configuration and names, never open files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from flowcore.flow import FUNNEL_RELATIONSHIP, Prioritizer
from flowcore.flowfile import FlowFile, ResourceClaim
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor import Processor, ProcessorKind
from flowcore.processor_kinds import WorkItem
from flowcore.settings import Settings
from repositories.records import Bulletin, RepositoryPaths, SegmentSummary

if TYPE_CHECKING:  # the compiler (and networkx) stay on the driver; workers load plans only
    pass

__all__ = [
    "MemberPlan",
    "ReadyBin",
    "Route",
    "StagePlan",
    "TaskInput",
    "TaskResult",
    "TaskSpec",
]

#: A queue with no later retry time: run only when new input arrives or the input ends.
NEVER = 2**62


@attrs.frozen
class Route:
    """One connection a relationship leads to.

    Attributes:
        connection_id: the connection (a queue id when durable).
        member: the member it feeds inside the stage (pipelined), or None when it is durable.
    """

    connection_id: str
    member: str | None


@attrs.frozen(eq=False)
class MemberPlan:
    """A component of a stage with its routing.

    Attributes:
        component_id: the flow's component id.
        name: the component's name.
        type_name: the processor class name, or ``Funnel``.
        processor: the configured processor (None for a funnel).
        routes: each relationship's connections, in the order they were made.
        auto_terminated: relationships whose FlowFiles are dropped.
        has_input: whether anything feeds the component.
        concurrent_tasks: triggers of a source per micro-batch (NiFi's Concurrent Tasks).
        run_schedule_ms: a source's Run Schedule in a continuous run (0: as often as there is
            room).
    """

    component_id: str
    name: str
    type_name: str
    processor: Processor | None
    routes: Mapping[str, tuple[Route, ...]]
    auto_terminated: frozenset[str]
    has_input: bool
    concurrent_tasks: int = 1
    run_schedule_ms: int = 0

    @property
    def kind(self) -> ProcessorKind:
        """The processor's kind (a funnel is per-FlowFile)."""
        return self.processor.kind if self.processor is not None else ProcessorKind.PER_FLOWFILE

    @property
    def routes_whole(self) -> bool:
        """Whether every relationship leads to exactly one destination.

        Then nothing is dropped or cloned, so a FlowFile batch can go on whole.
        """
        processor = self.processor
        names = processor.relationship_names() if processor is not None else (FUNNEL_RELATIONSHIP,)
        return all(len(self.routes.get(name, ())) == 1 for name in names)


@attrs.frozen(eq=False)
class StagePlan:
    """A stage ready to ship: members upstream first and where its input queues lead.

    Attributes:
        stage_id: the compiled stage's id.
        members: the members, upstream first.
        queue_members: each input queue (durable connections and park queues) with the member
            it feeds.
        expiration_ms: FlowFile expiration per input queue (absent: never).
        prioritizers: prioritizers per input queue (absent: FIFO).
    """

    stage_id: str
    members: tuple[MemberPlan, ...]
    queue_members: Mapping[str, str]
    expiration_ms: Mapping[str, int]
    prioritizers: Mapping[str, tuple[Prioritizer, ...]]

    def member(self, component_id: str) -> MemberPlan:
        """A member by component id."""
        return next(m for m in self.members if m.component_id == component_id)

    @property
    def binning_members(self) -> tuple[MemberPlan, ...]:
        """Members whose input must be grouped by key (a shuffle on Spark)."""
        return tuple(m for m in self.members if m.kind is ProcessorKind.BINNING)

    @property
    def source_members(self) -> tuple[MemberPlan, ...]:
        """Members that list work on the driver."""
        return tuple(m for m in self.members if m.kind is ProcessorKind.SOURCE)


@attrs.frozen
class ReadyBin:
    """A bin a binning task decided is ready, to be merged by another task.

    Attributes:
        member: the binning component's id.
        group: the bin's group key.
        reason: why it is ready (an ``EvictionReason`` value).
        created_ms: the bin's creation time.
        records: its FlowFiles in bin order, each with the queue it came from.
        batches: or, for a bin packed from FlowFile batches, its batch cuts in bin order,
            each with the queue it came from (``records`` is then empty).
    """

    member: str
    group: str | None
    reason: str
    created_ms: int
    records: tuple[tuple[str, FlowFile], ...]
    batches: tuple[tuple[str, FlowFileBatch], ...] = ()

    def materialized(self) -> ReadyBin:
        """The bin with its batches' FlowFiles as records (for the one-by-one merge)."""
        if not self.batches:
            return self
        records = tuple((q, f) for q, batch in self.batches for f in batch.flowfiles())
        return attrs.evolve(self, records=records, batches=())


@attrs.frozen
class TaskInput:
    """What one task takes.

    Attributes:
        segments: ``(queue_id, segment_id)`` pairs to read, in queue order.
        records: ``(queue_id, FlowFile)`` pairs already read (a binning stage's shuffle output).
        work: ``(component_id, WorkItem)`` pairs of source work.
        bins: ready bins to merge (the second pass of a binning stage).
    """

    segments: tuple[tuple[str, str], ...] = ()
    records: tuple[tuple[str, FlowFile], ...] = ()
    work: tuple[tuple[str, WorkItem], ...] = ()
    bins: tuple[ReadyBin, ...] = ()


@attrs.frozen
class TaskSpec:
    """Everything a task needs.

    Attributes:
        plan: the stage.
        index: the task's position in the stage run; orders its outputs among the others'.
        input: what it takes.
        paths: where it writes.
        settings: engine settings.
        batch_time: the micro-batch's clock in epoch ms: the queue date of every output, so
            queue order (batch, task, position) is the same on every runner.
        first_id: the first of the FlowFile ids reserved for the task.
        states: committed state of the members that have any.
        end_of_input: the run is draining: binning members merge their open bins.
        defer_bins: binning members that can hand ready bins over do (into
            ``TaskResult.ready_bins``), so the bins are merged in parallel by later tasks.
        run: the stage run's unique name, shared by its tasks (and a runner's retries of
            them): sinks reserve target names among them (see
            :func:`repositories.effects.reserve_target`).
        log_levels: the lowest level each member's logger emits on the driver, where lines
            logged after the commit are emitted: a task renders no line nobody would see.
    """

    plan: StagePlan
    index: int
    input: TaskInput
    paths: RepositoryPaths
    settings: Settings
    batch_time: int
    first_id: int
    states: Mapping[str, Mapping[str, str]] = attrs.field(factory=dict)
    end_of_input: bool = False
    defer_bins: bool = False
    run: str = ""
    log_levels: Mapping[str, int] = attrs.field(factory=dict)


@attrs.frozen
class TaskResult:
    """What a task wrote and did; the driver commits it.

    Attributes:
        index: the task's index.
        attempt: the attempt's unique name (its files carry it).
        enqueued: segments written, in order: outputs, then FlowFiles returned to input queues.
        retry_at: for returned segments, when they are worth taking again (epoch ms).
        long_waits: returned segments waiting on a penalty (after an error, or penalized by
            their processor) or on a bin's age. Batch runs do not wait for them: open bins
            are merged at the end of input, penalized FlowFiles stay queued for the next run.
        in_bins: returned segments of FlowFiles held by open bins. Back pressure does not
            count them, as NiFi does not count FlowFiles its bins hold.
        provenance_file: the event file, or None when there were no events.
        written_claims: resource claims the task wrote (unreferenced ones are removed).
        states: new state of members whose sessions changed it.
        transfers: per component, per relationship: ``[FlowFiles, bytes]``.
        consumed: per component, FlowFiles taken from its input.
        bulletins: processor errors.
        ready_bins: bins handed over for merging elsewhere (with ``defer_bins``).
        sink_messages: ``(component id, message)`` of each two-phase sink write, in order.
        effects_file: the attempt's effect file (files to publish, lines to log after the
            commit), or None when it staged none.
        unread: ``(source component id, work item key)`` of listed items whose read failed;
            the driver puts them back in the listing state before committing it.
    """

    index: int
    attempt: str
    enqueued: tuple[SegmentSummary, ...]
    retry_at: Mapping[str, int]
    long_waits: frozenset[str]
    in_bins: frozenset[str]
    provenance_file: str | None
    written_claims: tuple[ResourceClaim, ...]
    states: Mapping[str, Mapping[str, str]]
    transfers: Mapping[str, Mapping[str, tuple[int, int]]]
    consumed: Mapping[str, int]
    bulletins: tuple[Bulletin, ...]
    ready_bins: tuple[ReadyBin, ...] = ()
    sink_messages: tuple[tuple[str, bytes], ...] = ()
    effects_file: str | None = None
    unread: tuple[tuple[str, str], ...] = ()
