"""What a stage's member and its task need of each other, as two narrow protocols.

The processor kinds' drivers (the :class:`~flowcore.engine._driver.BatchDriver` classes:
``PerFlowFileDriver``, ``BinningDriver``, ``SourceDriver``, ``SinkDriver``) work on a
:class:`Member` and reach the rest of the task only through its :class:`BatchTask`: queue
positions, the events it records, delivery to the next member or a durable queue. A member of
an engine task has a :class:`StageTask`, which adds FlowFile ids, content, effects and the
flow's services. :class:`~flowcore.engine._member.TaskMember` and
:class:`~flowcore.engine.task._Task` implement them; the drivers import neither, so the
engine's modules import one way only. The test harness implements :class:`Member` and
:class:`BatchTask` over its in-memory repositories (``flowcore.testing._batches``), so
``TestRunner(batches=True)`` runs the drivers the engine runs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from flowcore.compiler.plan import MemberPlan
from flowcore.engine._content import TaskContent
from flowcore.engine._held import QueuedBatch, ReturnedBatch
from flowcore.engine.wire import ReadyBin, TaskSpec
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun
from flowcore.services import MapCache
from flowcore.session.block_views import BlockViews
from flowcore.session.host import (
    AfterCommitAction,
    ComponentInfo,
    Disposal,
    LogLine,
    Publication,
    QueuedFlowFile,
    RetryPolicy,
    StateMap,
)
from flowcore.session.process_session import ProcessSession
from repositories.effects import EffectFileWriter
from repositories.records import Bulletin

__all__ = ["BatchTask", "Member", "Recorded", "StageTask"]

#: What a task records: single events and a batch's runs.
Recorded = ProvenanceEvent | ProvenanceEventRun


class BatchTask(Protocol):
    """What a processor kind's driver needs from the task its member runs in."""

    #: the events recorded so far (an engine task writes them to event files as they fill)
    events: list[Recorded]
    ready_bins: list[ReadyBin]
    sink_messages: list[tuple[str, bytes]]
    #: FlowFiles of batches unpacked into objects (bounded by :attr:`unpack_limit`)
    unpacked: int

    @property
    def batch_time(self) -> int:
        """The queue date of what this task hands on (epoch ms)."""
        ...

    @property
    def unpack_limit(self) -> int:
        """How many FlowFiles of batches the task may unpack (``batch_max_flowfiles``)."""
        ...

    @property
    def members(self) -> Mapping[str, Member]:
        """The stage's members by component id, in stage order: where routes deliver."""
        ...

    def take_ids(self, count: int) -> int:
        """Reserve *count* consecutive FlowFile ids (a source's batch); return the first."""
        ...

    def take_queue_indices(self, count: int) -> int:
        """Reserve *count* consecutive queue positions; return the first."""
        ...

    def enqueue_batch(self, queue_id: str, batch: FlowFileBatch) -> None:
        """Add a whole batch to a durable queue."""
        ...


class StageTask(BatchTask, Protocol):
    """What a member needs from its task attempt."""

    spec: TaskSpec
    content: TaskContent
    effects: EffectFileWriter
    block_views: BlockViews
    uuid_salt: str
    bulletins: list[Bulletin]
    #: (source component, work item key) listed but not read: back into its listing
    unread: list[tuple[str, str]]
    #: files committed sessions staged, not yet visible (a sink's conflict check sees them)
    staged_targets: set[str]

    def next_id(self) -> int:
        """A new FlowFile id."""
        ...

    def next_queue_index(self) -> int:
        """A new queue position."""
        ...

    def enqueue(self, queue_id: str, flowfile: FlowFile) -> None:
        """Add a FlowFile to a durable queue."""
        ...

    def pump(self, source: Member) -> None:
        """Process what *source* handed on now through the members after it."""
        ...

    def map_cache(self, name: str) -> MapCache:
        """The cache of the flow's service *name*."""
        ...

    def controller_service(self, name: str) -> object:
        """The flow's service *name*."""
        ...


class Member(Protocol):
    """What a processor kind's driver needs of the stage member it runs."""

    plan: MemberPlan
    processor: Processor
    component: ComponentInfo
    content: TaskContent
    context: ProcessContext
    pending: deque[QueuedFlowFile]
    pending_batches: list[QueuedBatch]
    #: batches over the task's unpacking limit, back to their queue untouched
    deferred_batches: list[QueuedBatch]
    #: FlowFiles of batches binned whole, back to the queue
    returned_batches: list[ReturnedBatch]
    #: relationship -> [FlowFiles, bytes] transferred
    transfers: dict[str, list[int]]
    consumed: int
    state: StateMap
    new_state: dict[str, str] | None
    retry_policy: RetryPolicy | None
    yield_ms: int
    uuid_salt: str
    uuid_sequences: dict[str, list[Any]]

    @property
    def task(self) -> BatchTask:
        """The task the member runs in."""
        ...

    def now(self) -> int:
        """The current time (epoch ms): of events, bins and retries."""
        ...

    def declined(self, why: str, count: int) -> None:
        """A batch form left *count* FlowFiles to the one-by-one path, for reason *why*."""
        ...

    def session(self) -> ProcessSession:
        """A new session over this member."""
        ...

    def carry_out_after_commit(
        self,
        publications: Sequence[Publication],
        logs: Sequence[LogLine],
        disposals: Sequence[Disposal] = (),
        actions: Sequence[AfterCommitAction] = (),
    ) -> None:
        """Record staged files, lines and actions, carried out after the stage run commits."""
        ...

    def refused(self, problem: str) -> None:
        """A batch form returned what the engine cannot take: a bulletin names *problem*.

        Its FlowFiles then go one by one; the test harness fails the test instead.
        """
        ...

    def merge_bins(self, bins: Sequence[ReadyBin]) -> None:
        """Merge ready bins, one session each."""
        ...

    def not_read(self, item: Any, error: Exception) -> None:
        """Source work item *item* could not be read: it is read again later."""
        ...
