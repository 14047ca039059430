"""What travels between the driver and a task: its spec and input, its result, its ready bins.

The driver turns each micro-batch of a stage into :class:`TaskSpec` values (the stage's plan,
which input a task takes, where the repositories are). A task answers with a
:class:`TaskResult` naming the files it wrote; the driver commits those in one transaction.
Everything here crosses the Spark wire: small picklable values, never open files.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from flowcore.compiler.plan import StagePlan
from flowcore.flowfile import FlowFile, ResourceClaim
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.kinds import WorkItem
from flowcore.settings import Settings
from repositories.records import Bulletin, RepositoryPaths, SegmentSummary

__all__ = ["NEVER", "ReadyBin", "SegmentWait", "TaskInput", "TaskResult", "TaskSpec"]

#: A queue with no later retry time: run only when new input arrives or the input ends.
NEVER = 2**62


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
        hand_over: sessions' batches may go on before they commit (see
            ``TaskMember.hand_over_batch``); off for the rerun of an attempt whose session
            failed after handing over.
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
    hand_over: bool = True


@attrs.frozen
class SegmentWait:
    """Why a segment a task handed back to its queue waits there, and until when.

    Attributes:
        retry_at: when it is worth taking again (epoch ms; :data:`NEVER`: at the end of input).
        long: it waits on a penalty (after an error, or penalized by its processor) or on a
            bin's age. Batch runs do not wait for it: open bins are merged at the end of
            input, penalized FlowFiles stay queued for the next run.
        in_bins: its FlowFiles are held by open bins. Back pressure does not count them, as
            NiFi does not count FlowFiles its bins hold.
        held: it is held until *retry_at*: its processor takes it then
            (``ProcessContext.yield_until``: ControlRate's window opening), or it waits out a
            relationship retry's backoff (or is input of a processor yielding for one). A
            batch run waits for it: it is part of what the flow does.
    """

    retry_at: int
    long: bool = False
    in_bins: bool = False
    held: bool = False


@attrs.frozen
class TaskResult:
    """What a task wrote and did; the driver commits it.

    Attributes:
        index: the task's index.
        attempt: the attempt's unique name (its files carry it).
        enqueued: segments written, in order: outputs, then FlowFiles returned to input queues.
        waits: for each segment returned to an input queue, why and until when it waits.
        provenance_files: the event files, in order (none when there were no events).
        written_claims: resource claims the task wrote (unreferenced ones are removed).
        states: new state of members whose sessions changed it.
        transfers: per component, per relationship: ``[FlowFiles, bytes]``.
        consumed: per component, FlowFiles taken from its input.
        nanos: per component, the nanoseconds it ran in this task, without the members after
            it that ran inside its calls (NiFi's task time; see :mod:`flowcore.engine._timing`).
        bulletins: processor errors.
        ready_bins: bins handed over for merging elsewhere (with ``defer_bins``).
        sink_messages: ``(component id, message)`` of each two-phase sink write, in order.
        effects_file: the attempt's effect file (files to publish, lines to log after the
            commit), or None when it staged none.
        unread: ``(source component id, work item key)`` of listed items whose read failed;
            the driver puts them back in the listing state before committing it.
        unscheduled: per component id, why its ``on_scheduled`` raised (its input went back
            to its queue, to wait the administrative yield).
        yielded: per source component id that asked, while reading its work, not to be
            triggered before a time (``yield_until``), that time (epoch ms): the driver lists
            it no sooner, as NiFi schedules it no sooner.
        yielded_for: per source component id that yielded while reading its work (ExecuteSQL
            without input whose query failed), the ms of its Yield Duration left when the task
            ended: a duration, not a time, so the executor's clock does not matter; the
            driver lists it no sooner than that from when it has the result.
    """

    index: int
    attempt: str
    enqueued: tuple[SegmentSummary, ...]
    waits: Mapping[str, SegmentWait]
    provenance_files: tuple[str, ...]
    written_claims: tuple[ResourceClaim, ...]
    states: Mapping[str, Mapping[str, str]]
    transfers: Mapping[str, Mapping[str, tuple[int, int]]]
    consumed: Mapping[str, int]
    bulletins: tuple[Bulletin, ...]
    ready_bins: tuple[ReadyBin, ...] = ()
    sink_messages: tuple[tuple[str, bytes], ...] = ()
    effects_file: str | None = None
    unread: tuple[tuple[str, str], ...] = ()
    unscheduled: Mapping[str, str] = attrs.field(factory=dict)
    yielded: Mapping[str, int] = attrs.field(factory=dict)
    yielded_for: Mapping[str, int] = attrs.field(factory=dict)
    nanos: Mapping[str, int] = attrs.field(factory=dict)
