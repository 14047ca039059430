"""The contract between a ProcessSession and whoever runs it, and the values they exchange.

A session never decides where FlowFiles go or how they become durable. Its host (the test
harness, or a task of the engine) supplies input, answers routing questions, and receives a
:class:`SessionCommit` (and, for bounded memory, :class:`SessionSpill` batches before it).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from flowcore.flowfile import ContentClaim, FlowFile
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun

if TYPE_CHECKING:
    from flowcore.flowfile_batch import FlowFileBatch
    from flowcore.services import MapCache
    from repositories.protocols import ContentRepository

__all__ = [
    "SELF",
    "AfterCommitAction",
    "ComponentInfo",
    "Disposal",
    "FlowFileFilter",
    "FlowFileFilterResult",
    "LogLine",
    "MoveConflict",
    "Publication",
    "QueuedFlowFile",
    "RetryPolicy",
    "SessionCommit",
    "SessionHost",
    "SessionOutput",
    "SessionSpill",
    "SpillingHost",
    "StateMap",
    "StreamingHost",
]

#: The pseudo-relationship that sends a FlowFile back to the queue it came from.
SELF = "__self__"


@attrs.frozen
class ComponentInfo:
    """Identifies the processor a session works for (in provenance and errors).

    Attributes:
        id: the component's stable id in its flow.
        type: the processor type.
        name: its name in the flow.
        repository_id: the random id of the repository the run uses (see
            :attr:`repositories.repository_set.RepositorySet.repository_id`): with *id*, what
            names this component's work outside flowcore (PutDatabaseRecord's prepared
            transactions) apart from another flow's or another repository's against the same
            system. Empty where there is no repository (the test harness gives one per runner).
        former_repository_ids: the ids the repository had in directories it was copied or
            moved from (``RepositorySet.former_repository_ids``); given to the driver's
            contexts only: what they named is never swept, only told.
    """

    id: str
    type: str
    name: str = ""
    repository_id: str = ""
    former_repository_ids: tuple[str, ...] = ()


@attrs.frozen
class RetryPolicy:
    """NiFi's relationship retry, as a session applies it at commit.

    A FlowFile the processor routes to one of *relationships* goes back to the queue it came
    from instead, as it was taken, with the attribute ``retryCount.<component id>`` counting
    the tries, while that count is below *count*; FlowFiles linked to it in the session
    (created from it, its clones, its JOIN's parents) are retried with it. Each retry waits
    ``2**retries`` times *base_ms* (the Penalty Duration, or the Yield Duration when the
    processor yields instead), at most *max_backoff_ms* (NiFi's ``StandardProcessSession``).

    Attributes:
        component_id: the processor's component id (names the counting attribute).
        relationships: the retried relationships.
        count: NiFi's Number of Retry Attempts.
        penalize: PENALIZE_FLOWFILE (True: the FlowFile waits) or YIELD_PROCESSOR (False:
            the processor waits).
        base_ms: the Penalty (or Yield) Duration the backoff starts from.
        max_backoff_ms: NiFi's Max Backoff Period.
    """

    component_id: str
    relationships: frozenset[str] = attrs.field(converter=frozenset)
    count: int
    penalize: bool
    base_ms: int
    max_backoff_ms: int

    @property
    def attribute(self) -> str:
        """The attribute that counts a FlowFile's retries (NiFi's name)."""
        return f"retryCount.{self.component_id}"

    def retries(self, flowfile: FlowFile) -> int:
        """How often *flowfile* was retried here (0 when not, or the attribute is no number)."""
        try:
            return int(flowfile.attributes.get(self.attribute, "0"))
        except ValueError:
            return 0

    def backoff_ms(self, retries: int) -> int:
        """The wait before try ``retries + 1``: doubling from *base_ms*, at most the maximum."""
        return int(min(self.max_backoff_ms, 2**retries * self.base_ms))

    def in_backoff(self, flowfile: FlowFile) -> bool:
        """Whether *flowfile* waits here to be retried (it carries the counting attribute)."""
        return self.attribute in flowfile.attributes


@attrs.frozen
class QueuedFlowFile:
    """A FlowFile as taken from an input queue."""

    flowfile: FlowFile
    queue_id: str


@attrs.frozen
class StateMap:
    """A component's state and its version (NiFi's ``StateMap``); version -1 means never set."""

    version: int = -1
    values: Mapping[str, str] = attrs.field(factory=dict, converter=dict)

    def get(self, key: str, default: str | None = None) -> str | None:
        """Return a value by key."""
        return self.values.get(key, default)


class FlowFileFilterResult(enum.Enum):
    """What a ``session.get(filter)`` filter decides for each queued FlowFile."""

    ACCEPT_AND_CONTINUE = (True, True)
    ACCEPT_AND_TERMINATE = (True, False)
    REJECT_AND_CONTINUE = (False, True)
    REJECT_AND_TERMINATE = (False, False)

    @property
    def accept(self) -> bool:
        """Whether the FlowFile is taken."""
        return self.value[0]

    @property
    def proceed(self) -> bool:
        """Whether to look at further FlowFiles."""
        return self.value[1]


FlowFileFilter = Callable[[FlowFile], FlowFileFilterResult]


@attrs.frozen
class SessionOutput:
    """One FlowFile leaving the session.

    Attributes:
        flowfile: the FlowFile as committed.
        relationship: the relationship name (``SELF`` when returned to its queue).
        connection_index: which of the relationship's connections gets it (fan-out).
        queue_id: for ``SELF``, the queue it returns to.
    """

    flowfile: FlowFile
    relationship: str
    connection_index: int = 0
    queue_id: str | None = None


@attrs.frozen
class SessionSpill:
    """Finished FlowFiles handed to the host before commit (see :meth:`ProcessSession.spill`).

    Attributes:
        outputs: FlowFiles to enqueue when the session commits.
        removed: FlowFiles that ended here (auto-terminated).
        events: their provenance events.
    """

    outputs: tuple[SessionOutput, ...]
    removed: tuple[FlowFile, ...]
    events: tuple[ProvenanceEvent, ...]


@attrs.frozen
class Publication:
    """A file a sink staged: *temporary* becomes *target* once the commit is durable.

    Sinks that write outside the repositories (PutFile) never make a file visible from a task:
    the task may be an attempt that never commits, and its replay would write it again. The
    engine renames after the write-ahead log transaction (and again at start-up after a crash
    in between), so each committed FlowFile's file appears exactly once.

    Attributes:
        temporary: the hidden file written (in the target's directory, so the rename is atomic).
        target: the final name.
        replace: overwrite a *target* that exists by then. When False (Conflict Resolution
            Strategy ``fail`` or ``ignore``, decided when the task checked), a file that
            appeared there in between is kept and the staged one dropped with a warning.
    """

    temporary: str
    target: str
    replace: bool = True


class MoveConflict(enum.Enum):
    """What a move after the commit does if its target exists (Move Conflict Strategy)."""

    RENAME = "Rename"  # moved under the alternative name instead
    REPLACE = "Replace File"  # the target is overwritten
    KEEP = "Keep Existing"  # the target is kept; the source is deleted
    FAIL = "Fail"  # both are kept as they are (a warning names them)


@attrs.frozen
class Disposal:
    """A source file a session is done with: deleted, or moved, once the commit is durable.

    GetFile deletes the files it ingested; FetchFile deletes or moves them (its Completion
    Strategy). Doing so before the commit is durable would lose the file should the process
    die in between, so the engine carries it out after the write-ahead log transaction, and
    again at start-up: it is idempotent (a source already gone is done).

    Attributes:
        source: the file.
        target: where to move it; None deletes it.
        conflict: what to do when *target* exists by then.
        alternative: the name (in *target*'s directory) to move it to on a ``RENAME`` conflict,
            chosen when it was staged, so that carrying it out again picks the same name.
        fingerprint: the version of the file that was read (``size:mtime_ns:inode``; None:
            unknown). A file found at *source* that is another version (rewritten since, or a
            new file of the same name after a crash) was never ingested, and is left alone.
    """

    source: str
    target: str | None = None
    conflict: MoveConflict = MoveConflict.RENAME
    alternative: str | None = None
    fingerprint: str | None = None


@attrs.frozen
class AfterCommitAction:
    """Remote work a processor owes once its session's FlowFiles are durable.

    FetchSFTP deletes or moves the remote file it fetched; GetSFTP deletes what it pulled;
    PutS3Object completes a multipart upload. Done in the task, such work could not be undone
    should the attempt never commit (a kill, a failed task): the file would be gone while its
    FlowFile was never kept. So the session records the action (:meth:`ProcessSession.after_commit
    <flowcore.session.process_session.ProcessSession.after_commit>`), the engine names it in the
    write-ahead log transaction (in the task's effect file), and the driver hands it to the
    processor's :meth:`~flowcore.processor.Processor.run_after_commit_actions` after the commit,
    and again at start-up should a crash come between the two: the action must be idempotent
    (a file already deleted or moved is done).

    Attributes:
        component_id: the processor that recorded it, and will carry it out.
        payload: what it needs, as JSON values (never a secret: the processor's driver-side
            configuration supplies those).
    """

    component_id: str
    payload: Mapping[str, Any]


@attrs.frozen
class LogLine:
    """A log record a sink emits once the commit is durable (LogAttribute's lines).

    Attributes:
        logger: the logger's name.
        level: the ``logging`` level.
        message: the text.
    """

    logger: str
    level: int
    message: str


@attrs.frozen
class SessionCommit:
    """Everything one session commit changes, handed to the host to make durable.

    Attributes:
        consumed: FlowFiles taken from queues that are now acknowledged (dequeued for good).
        outputs: FlowFiles to enqueue, in transfer order (fan-out clones included).
        removed: FlowFiles that ended here (removed or auto-terminated).
        events: provenance events, in NiFi's order (the DROPs of a batch sent to an
            auto-terminated relationship as one run).
        state: the component's new state values, or ``None`` when unchanged.
        counters: counter deltas.
        transient_claims: claims written in the session whose resource claim no output uses.
        disposals: source files to delete or move once the commit is durable.
        auto_terminated: per auto-terminated relationship, the FlowFiles and bytes dropped
            there, batches included (for statistics; their DROP events are in *events*).
        publications: files staged to appear once the commit is durable.
        logs: log lines to emit once the commit is durable.
        batches: FlowFile batches made in the session that go to a connection, each with its
            relationship (those dropped are counted in *auto_terminated*).
        yield_ms: how long the processor yields after this commit: a retry's backoff under
            YIELD_PROCESSOR (0: it does not).
        actions: the processor's remote work to do once the commit is durable.
    """

    consumed: tuple[QueuedFlowFile, ...]
    outputs: tuple[SessionOutput, ...]
    removed: tuple[FlowFile, ...]
    events: tuple[ProvenanceEvent | ProvenanceEventRun, ...]
    state: Mapping[str, str] | None
    counters: Mapping[str, int]
    transient_claims: tuple[ContentClaim, ...]
    disposals: tuple[Disposal, ...]
    auto_terminated: Mapping[str, tuple[int, int]] = attrs.field(factory=dict)
    publications: tuple[Publication, ...] = ()
    logs: tuple[LogLine, ...] = ()
    batches: tuple[tuple[FlowFileBatch, str], ...] = ()
    yield_ms: int = 0
    actions: tuple[AfterCommitAction, ...] = ()


class SessionHost(Protocol):
    """What a session needs from whoever runs it: input, routing facts, time and a commit sink."""

    component: ComponentInfo
    content: ContentRepository
    penalization_ms: int
    #: NiFi's relationship retry of the processor, or None.
    retry_policy: RetryPolicy | None
    #: What the host's committed input is (its queue segments); derived uuids include it, so
    #: a replay of the same input makes the same uuids (see :mod:`flowcore.session._uuids`).
    uuid_salt: str
    #: Derived uuid sequences (scope -> [uuid prefix, next number]) of all its sessions.
    uuid_sequences: dict[str, list]

    def now(self) -> int:
        """The current time in epoch milliseconds."""
        ...

    #: Whether batches made in its sessions (``fork_batch``) can be routed whole.
    accepts_batches: bool

    def next_flowfile_id(self) -> int:
        """A new FlowFile id, unique in the repository."""
        ...

    def take_flowfile_ids(self, count: int) -> int:
        """*count* consecutive new FlowFile ids; the first."""
        ...

    def poll(self, max_count: int, flowfile_filter: FlowFileFilter | None) -> list[QueuedFlowFile]:
        """Take up to *max_count* FlowFiles (that pass *flowfile_filter*) from the input queues."""
        ...

    def relationships(self) -> Collection[str]:
        """The names of the relationships the processor declares."""
        ...

    def destinations(self, relationship: str) -> int:
        """How many connections leave on *relationship* (0 when none)."""
        ...

    def is_auto_terminated(self, relationship: str) -> bool:
        """Whether FlowFiles sent to *relationship* are dropped."""
        ...

    def get_state(self) -> StateMap:
        """The component's committed state."""
        ...

    def apply_commit(self, commit: SessionCommit) -> None:
        """Make *commit* effective (durable, for a durable host)."""
        ...

    def restore(self, flowfiles: Sequence[QueuedFlowFile]) -> None:
        """Put FlowFiles back on their queues after a rollback."""
        ...

    def stage_file(self, directory: Path) -> Path:
        """A new hidden temporary in *directory*, recorded so a crash cannot leave it behind."""
        ...

    def staged(self, target: str) -> bool:
        """Whether an earlier committed session of this host staged *target* (not yet visible)."""
        ...

    def lowest_logged_level(self, logger: str) -> int:
        """The lowest level *logger* emits where lines logged after the commit are emitted."""
        ...

    def reserve(self, target: str) -> bool:
        """Take *target* for this host among those running beside it; False if one has it."""
        ...

    def map_cache(self, name: str) -> MapCache:
        """The map cache of the service *name* the flow declares (shared by its users).

        Raises:
            ConfigurationError: no such service is declared.
        """
        ...

    def controller_service(self, name: str) -> object:
        """The service *name* the flow declares, as declared (an SSL context service).

        Raises:
            ConfigurationError: no such service is declared.
        """
        ...


@runtime_checkable
class SpillingHost(Protocol):
    """A host that takes a session's finished FlowFiles before the commit (bounded memory).

    The session checks once, when it is made, whether its host is one.
    """

    #: finished FlowFiles that make the session spill; None or 0 never spills
    spill_threshold: int | None

    def spill(self, batch: SessionSpill) -> None:
        """Hold *batch* uncommitted until ``apply_commit``."""
        ...

    def discard_spilled(self) -> None:
        """Forget what was spilled: the session rolled back."""
        ...


@runtime_checkable
class StreamingHost(Protocol):
    """A host that takes batches made by ``fork_batch`` on as soon as they are transferred.

    A task streams a split's children to the next processors this way; a session that rolls
    back afterwards raises :class:`~flowcore.errors.HandedOverError` and its host's task fails.
    """

    #: FlowFiles of batches held that make the session hand them on; None never does
    hand_over_at: int | None

    def hand_over_batch(
        self,
        batch: FlowFileBatch,
        relationship: str,
        events: Sequence[ProvenanceEvent | ProvenanceEventRun],
    ) -> None:
        """Take *batch* on to *relationship*, after *events* (its FORK).

        A batch sent to an auto-terminated relationship goes nowhere: *events* hold its DROPs
        too, and its session's commit counts it.
        """
        ...
