"""The repository interfaces the session, runners and controller depend on.

Each repository has a durable implementation and an in-memory one (``repositories.memory``) for
unit tests. The shapes suit Spark: a task on an executor gets a :class:`ContentWriter` and a
:class:`ProvenanceEventSink` of its own (files named by its task attempt, so executors never
coordinate), and the driver alone commits to the :class:`FlowFileRepository`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, BinaryIO, Protocol, runtime_checkable

if TYPE_CHECKING:
    from flowcore.flowfile import Content, ContentClaim, FlowFile, ResourceClaim
    from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
    from repositories.records import Finding, SegmentSummary, Transaction

__all__ = [
    "ContentOutputStream",
    "ContentRepository",
    "ContentWriter",
    "FlowFileRepository",
    "ProvenanceEventSink",
    "ProvenanceRepository",
]


@runtime_checkable
class ContentOutputStream(Protocol):
    """A stream that writes one new content claim; ``close()`` returns it."""

    def write(self, data: bytes | memoryview) -> int:
        """Append *data* (bytes, or a view of bytes it must copy, not keep); return its length."""
        ...

    def close(self) -> ContentClaim | None:
        """Finish the claim and return it (``None`` when nothing was written)."""
        ...

    @property
    def bytes_written(self) -> int:
        """Bytes written so far."""
        ...


@runtime_checkable
class ContentWriter(Protocol):
    """Writes new content claims for one session or task attempt, packing small ones together."""

    def open_stream(self) -> ContentOutputStream:
        """Start a new claim; several streams may be open at once."""
        ...

    def open_named_stream(self, name: str) -> ContentOutputStream:
        """Start a claim of its own named *name*, known to others before it is written."""
        ...

    def close(self) -> None:
        """Flush and release the writer's files; claims already returned stay readable."""
        ...


@runtime_checkable
class ContentRepository(Protocol):
    """Stores content as byte ranges of shared resource claims, with claimant counts."""

    def writer(self, owner: str = "") -> ContentWriter:
        """Return a writer for *owner* (a task attempt id names its files)."""
        ...

    def named_claim(self, name: str) -> ResourceClaim:
        """The resource claim a writer's ``open_named_stream(name)`` writes."""
        ...

    def open(self, claim: Content) -> BinaryIO:
        """Open a readable stream over exactly the claim's bytes.

        Raises:
            ContentNotFoundError: the resource claim no longer exists.
            ContentCorruptionError: the bytes are not what was written (a durable repository
                verifies checksums; reading the stream may raise it too, for a later block).
        """
        ...

    def read(self, claim: Content) -> bytes:
        """Return the claim's bytes (for small content; prefer :meth:`open` for large)."""
        ...

    def export(self, claim: Content, out: BinaryIO) -> int:
        """Copy the claim's bytes into the open file *out*; return how many were copied.

        Raises:
            ContentNotFoundError, ContentCorruptionError: as :meth:`open`.
        """
        ...

    def size_of(self, resource_claim: ResourceClaim) -> int | None:
        """The bytes in a resource claim, None when it is gone."""
        ...

    def exists(self, resource_claim: ResourceClaim) -> bool:
        """Whether the resource claim's data is still stored."""
        ...

    def increment_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        """Add *delta* claimants; return the new count."""
        ...

    def decrement_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        """Remove *delta* claimants; return the new count (never below 0)."""
        ...

    def claimant_count(self, resource_claim: ResourceClaim) -> int:
        """How many FlowFiles reference the resource claim."""
        ...

    def remove(self, resource_claim: ResourceClaim) -> bool:
        """Destroy the resource claim if nothing claims it; return whether it was removed."""
        ...

    def resource_claims(self) -> Iterable[ResourceClaim]:
        """Every resource claim stored."""
        ...

    def check(self, *, fix: bool = False) -> list[Finding]:
        """List every inconsistency, damaged content included; repair what is safe when *fix*.

        Without *fix* nothing on disk changes.
        """
        ...


@runtime_checkable
class ProvenanceEventSink(Protocol):
    """Where a session appends the events of its commits (a task's event file)."""

    def append(self, events: Sequence[ProvenanceEvent]) -> None:
        """Record *events*, in order."""
        ...


@runtime_checkable
class ProvenanceRepository(Protocol):
    """Stores, indexes and searches provenance events."""

    def register(self, events: Iterable[ProvenanceEvent]) -> list[ProvenanceEvent]:
        """Store *events*, assigning event ids; return them with their ids."""
        ...

    def get(self, event_id: int) -> ProvenanceEvent:
        """Return one event by id.

        Raises:
            KeyError: no such event.
        """
        ...

    def search(
        self,
        *,
        flowfile_uuid: str | None = None,
        event_type: ProvenanceEventType | str | None = None,
        component_id: str | None = None,
        filename: str | None = None,
        start: int | None = None,
        end: int | None = None,
        attributes: Mapping[str, str] | None = None,
        limit: int = 1000,
    ) -> list[ProvenanceEvent]:
        """Return matching events, oldest first."""
        ...

    def max_event_id(self) -> int:
        """The largest event id stored, -1 when empty."""
        ...


@runtime_checkable
class FlowFileRepository(Protocol):
    """The durable queues: segments of FlowFile records plus processor state.

    Only atomic transactions change them.
    """

    def next_flowfile_ids(self, count: int) -> range:
        """Reserve *count* FlowFile ids, unique in this repository."""
        ...

    def write_segment(self, queue_id: str, flowfiles: Sequence[FlowFile]) -> SegmentSummary:
        """Store *flowfiles* as an uncommitted segment (a task may call this on an executor)."""
        ...

    def read_segment(self, segment_id: str) -> list[FlowFile]:
        """Return a segment's FlowFiles, in order."""
        ...

    def commit(self, transaction: Transaction) -> int:
        """Apply *transaction* atomically (durably for a durable repository); return its id.

        Raises:
            RepositoryError: the transaction refers to segments that are not queued.
        """
        ...

    def segments(self, queue_id: str) -> tuple[SegmentSummary, ...]:
        """The committed segments of a queue, oldest first."""
        ...

    def queue_ids(self) -> tuple[str, ...]:
        """Every queue that has committed segments."""
        ...

    def state(self, component_id: str) -> Mapping[str, str]:
        """The committed state of a component (empty when none)."""
        ...

    def check(self, *, fix: bool = False) -> list[Finding]:
        """List every inconsistency; repair what is safe when *fix*."""
        ...
