"""ProcessSession: NiFi's unit of work over FlowFiles.

A processor gets FlowFiles from its input queues, creates, clones, modifies, transfers and removes
them, and the session commits all of it at once or rolls all of it back. The session enforces
NiFi's contract (reference ``nifi-framework.md`` §1): every FlowFile touched must be transferred or
removed before commit; ``uuid``, ``filename`` and ``path`` cannot be removed; content is
copy-on-write; provenance events are generated at commit in NiFi's order.

The session never decides where FlowFiles go: its :class:`SessionHost` (the test harness, or a
task of the engine) answers how many connections a relationship has, supplies input, and receives
the :class:`SessionCommit`. The host makes the commit durable; in a Spark task that happens later,
in the driver's write-ahead log transaction.

Rules inherited from NiFi:

* Methods that take a FlowFile resolve it by ``id`` to its newest version in the session, so an
  older reference still works. An unknown, already transferred or already removed FlowFile rolls
  the whole session back and raises :class:`~flowcore.errors.FlowFileHandlingError`.
* Transferring to a relationship the processor does not declare raises
  :class:`~flowcore.errors.RelationshipError` at once ("Relationship 'x' is not known").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from flowcore.errors import (
    FlowFileAccessError,
    FlowFileHandlingError,
    HandedOverError,
    RelationshipError,
)
from flowcore.flowfile import (
    CORE_ATTRIBUTES,
    ContentClaim,
    CountedUuids,
    FlowFile,
    ResourceClaim,
)
from flowcore.provenance_events import ProvenanceEventType
from flowcore.relationship import FAILURE, Relationship
from flowcore.session._batches import BatchOperations, BatchOutputs
from flowcore.session._content import CONTENT_FAILURE_REASON, ContentOperations
from flowcore.session._effects import ExternalEffects
from flowcore.session._provenance import ProvenanceBuilding, ProvenanceReporter
from flowcore.session._spill import Spilling
from flowcore.session._state import StateAndCounters
from flowcore.session._support import NOT_INHERITED, PendingEvent, ReadStream, Record
from flowcore.session._uuids import DerivedUuids
from flowcore.session.host import (
    SELF,
    ComponentInfo,
    FlowFileFilter,
    FlowFileFilterResult,
    QueuedFlowFile,
    SessionCommit,
    SessionHost,
    SessionOutput,
    SessionSpill,
    StateMap,
)

if TYPE_CHECKING:
    from repositories.protocols import ContentOutputStream, ContentWriter

__all__ = [
    "SELF",
    "ComponentInfo",
    "FlowFileFilterResult",
    "ProcessSession",
    "ProvenanceReporter",
    "QueuedFlowFile",
    "SessionCommit",
    "SessionHost",
    "SessionOutput",
    "SessionSpill",
    "StateMap",
]


class ProcessSession(
    ContentOperations,
    ProvenanceBuilding,
    Spilling,
    ExternalEffects,
    DerivedUuids,
    StateAndCounters,
    BatchOperations,
):
    """A unit of work over FlowFiles with NiFi's commit and rollback semantics.

    A session is not thread-safe, like NiFi's. After ``commit()`` or ``rollback()`` it can be used
    again for a new unit of work.
    """

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        self._relationships = frozenset(host.relationships())
        self._records: dict[int, Record] = {}
        self._readers: dict[int, list[ReadStream]] = {}  # shared: reads may overlap
        self._writers: dict[int, ContentOutputStream] = {}  # exclusive
        self._spilled = False
        self._spilled_claims: set[ResourceClaim] = set()  # resource claims spilled outputs use
        self._finished = 0  # FlowFiles created and transferred since the last spill
        self._forks: dict[str, PendingEvent] = {}
        self._generated: list[PendingEvent] = []  # JOIN, CLONE, DROP
        self._reported: list[PendingEvent] = []
        self._written: list[ContentClaim] = []
        self._state: Mapping[str, str] | None = None
        self._counters: dict[str, int] = {}
        self._delete_on_commit: list[str] = []
        self._damaged: dict[int, str] = {}  # FlowFiles whose content a read found damaged
        self._dropped: dict[str, tuple[int, int]] = {}  # auto-terminated: FlowFiles, bytes
        self._publications = []  # files staged to appear after a durable commit
        self._logs = []  # log lines to emit after a durable commit
        self._uuid_seed: str | None = None  # what FlowFiles made from nothing are made of
        self._writer: ContentWriter | None = None
        # Resource claims shared with another session through migrate(): never destroyed on
        # rollback here, since the other session's FlowFiles may point into them.
        self._shared_claims: set[object] = set()
        self._batches = BatchOutputs()
        self._start_ms = host.now()
        self.provenance = ProvenanceReporter(self)

    # --- bookkeeping ------------------------------------------------------------------------

    @property
    def component(self) -> ComponentInfo:
        """The processor this session works for."""
        return self._host.component

    def _now(self) -> int:
        return self._host.now()

    def _record(
        self, flowfile: FlowFile, *, allow_transferred: bool = False, reading: bool = False
    ) -> Record:
        """Resolve *flowfile* to its record, enforcing NiFi's ``validateRecordState``.

        Only provenance reporting and ``migrate`` may name a FlowFile already transferred. A
        FlowFile being read may be read again or cloned (*reading*), never changed; one being
        written may not be touched at all.
        """
        if not isinstance(flowfile, FlowFile):
            msg = f"expected a FlowFile but got {type(flowfile).__name__} {flowfile!r}"
            raise TypeError(msg)
        if flowfile.id in self._writers or (flowfile.id in self._readers and not reading):
            msg = (
                f"{flowfile} is being read or written by an open stream; close it "
                "(leave its 'with' block) before changing the FlowFile"
            )
            raise FlowFileAccessError(msg, flowfile_uuid=flowfile.uuid)
        record = self._records.get(flowfile.id)
        problem = None
        if record is None:
            problem = f"{flowfile} is not known in this session ({self.component.type})"
        elif record.removed:
            problem = f"{record.current} has already been marked for removal"
        elif record.relationship is not None and not allow_transferred:
            problem = f"{record.current} is already marked for transfer"
        if problem:
            self.rollback()
            raise FlowFileHandlingError(problem, flowfile_uuid=flowfile.uuid)
        assert record is not None
        return record

    def _close_reader(self, flowfile_id: int, stream: ReadStream) -> None:
        streams = self._readers.get(flowfile_id, [])
        if stream in streams:
            streams.remove(stream)
        if not streams:
            self._readers.pop(flowfile_id, None)

    def _writer_for_session(self) -> ContentWriter:
        if self._writer is None:
            self._writer = self._host.content.writer(self.component.id)
        return self._writer

    def _new_flowfile(
        self, attributes: Mapping[str, str], uuid: str, *, lineage_from: FlowFile | None = None
    ) -> FlowFile:
        now = self._now()
        flowfile_id = self._host.next_flowfile_id()
        flowfile = FlowFile.create(flowfile_id, now, attributes, uuid=uuid)
        if lineage_from is not None:
            flowfile = flowfile.replace(
                lineage_start_date=lineage_from.lineage_start_date,
                lineage_start_index=lineage_from.lineage_start_index,
            )
        return flowfile

    # --- getting FlowFiles ------------------------------------------------------------------

    def get(self, max_results: int | FlowFileFilter | None = None) -> Any:
        """Take FlowFiles from the input queues.

        ``get()`` returns one FlowFile or ``None``; ``get(n)`` returns a list of up to *n*;
        ``get(filter)`` returns the list a :class:`FlowFileFilterResult` filter accepts.
        """
        if max_results is None:
            taken = self._host.poll(1, None)
            return self._register_polled(taken)[0] if taken else None
        if callable(max_results):
            return self._register_polled(self._host.poll(2**31, max_results))
        if max_results < 1:
            return []
        return self._register_polled(self._host.poll(max_results, None))

    def _register_polled(self, taken: Sequence[QueuedFlowFile]) -> list[FlowFile]:
        now = self._now()
        for item in taken:
            self._records[item.flowfile.id] = Record(
                current=item.flowfile, original=item.flowfile, queue_id=item.queue_id, start_ms=now
            )
        return [item.flowfile for item in taken]

    # --- creating FlowFiles -----------------------------------------------------------------

    def create(self, parent: FlowFile | Sequence[FlowFile] | None = None) -> FlowFile:
        """Create a FlowFile: from nothing, as a child of *parent* (FORK), or of several (JOIN).

        A child copies its parent's attributes except ``uuid``, ``alternate.identifier`` and
        ``discard.reason`` and keeps its lineage. A child of several parents gets the
        attributes every parent shares with equal values and the earliest lineage.
        """
        if parent is None:
            flowfile = self._new_flowfile({}, self._derived_uuid("root"))
            self._records[flowfile.id] = Record(flowfile, start_ms=self._now())
            return flowfile
        if isinstance(parent, FlowFile):
            parent_record = self._record(parent, reading=True)
            source = parent_record.current
            inherited = {k: v for k, v in source.attributes.items() if k not in NOT_INHERITED}
            uuid = self._derived_uuid("fork", source.uuid)
            child = self._new_flowfile(inherited, uuid, lineage_from=source)
            self._records[child.id] = Record(child, start_ms=self._now())
            self._fork_builder(source).children.append(child.uuid)
            return child
        parents = [self._record(p, reading=True).current for p in parent]
        if not parents:
            return self.create()
        common = dict(parents[0].attributes)
        for other in parents[1:]:
            common = {k: v for k, v in common.items() if other.attributes.get(k) == v}
        oldest = min(parents, key=lambda f: (f.lineage_start_date, f.lineage_start_index))
        return self.create_joined([p.uuid for p in parents], common, oldest)

    def create_joined(
        self,
        parent_uuids: Sequence[str],
        attributes: Mapping[str, str],
        lineage_from: FlowFile,
    ) -> FlowFile:
        """:meth:`create` of several parents this session does not hold (a JOIN).

        A batch merge takes its parents as batches, never as session records; it gives their
        shared *attributes* and the parent with the earliest lineage (*lineage_from*) itself.
        """
        inherited = {k: v for k, v in attributes.items() if k not in NOT_INHERITED}
        parents = (
            repr(parent_uuids)
            if isinstance(parent_uuids, CountedUuids)
            else "\0".join(parent_uuids)
        )
        uuid = self._derived_uuid("join", parents)
        child = self._new_flowfile(inherited, uuid, lineage_from=lineage_from)
        self._records[child.id] = Record(child, start_ms=self._now())
        self._generated.append(
            PendingEvent(
                ProvenanceEventType.JOIN,
                child.uuid,
                self._now(),
                parents=parent_uuids
                if isinstance(parent_uuids, CountedUuids)
                else list(parent_uuids),
                children=[child.uuid],
            )
        )
        return child

    def _fork_builder(self, parent: FlowFile) -> PendingEvent:
        builder = self._forks.get(parent.uuid)
        if builder is None:
            builder = PendingEvent(
                ProvenanceEventType.FORK, parent.uuid, self._now(), parents=[parent.uuid]
            )
            self._forks[parent.uuid] = builder
        return builder

    def clone(
        self, flowfile: FlowFile, offset: int | None = None, size: int | None = None
    ) -> FlowFile:
        """Copy a FlowFile, sharing its content; with *offset*/*size* a zero-copy slice (FORK).

        A full clone emits CLONE; a partial clone emits FORK, as NiFi.

        Raises:
            FlowFileHandlingError: the range does not fit inside the FlowFile's content.
        """
        record = self._record(flowfile, reading=True)
        source = record.current
        partial = offset is not None or size is not None
        start = offset or 0
        length = source.size - start if size is None else size
        if start < 0 or length < 0 or start + length > source.size:
            msg = (
                f"cannot clone {length} bytes at offset {start} of {source}: the range must lie "
                f"inside its {source.size} bytes"
            )
            raise FlowFileHandlingError(msg, flowfile_uuid=source.uuid)
        claim = None
        if source.content is not None and length > 0:
            claim = source.content.slice(start, length)
        now = self._now()
        new_id = self._host.next_flowfile_id()
        clone_uuid = self._derived_uuid("clone", source.uuid)
        clone = source.replace(
            id=new_id,
            uuid=clone_uuid,
            attributes=source.attributes.updated({"uuid": clone_uuid}),
            content=claim,
            size=length if claim is not None else 0,
            entry_date=now,
            queue_date=now,
            penalty_expiration=0,
        )
        self._records[new_id] = Record(clone, start_ms=now)
        if partial:
            self._fork_builder(source).children.append(clone_uuid)
        else:
            self._generated.append(PendingEvent.clone(source, clone_uuid, now))
        return clone

    # --- attributes -------------------------------------------------------------------------

    def _update(self, record: Record, flowfile: FlowFile) -> FlowFile:
        record.current = flowfile
        return flowfile

    def put_attribute(self, flowfile: FlowFile, key: str, value: str) -> FlowFile:
        """Set one attribute; setting ``uuid`` is ignored (NiFi's rule). Returns the new version."""
        return self.put_all_attributes(flowfile, {key: value})

    def put_all_attributes(self, flowfile: FlowFile, attributes: Mapping[str, str]) -> FlowFile:
        """Set several attributes; ``uuid`` is ignored. Returns the new version."""
        record = self._record(flowfile)
        changes = {}
        for key, value in attributes.items():
            if key == "uuid":
                continue
            if not isinstance(value, str):
                msg = (
                    f"attribute {key!r} must be a str, got {type(value).__name__} {value!r}; "
                    "convert it with str() first"
                )
                raise TypeError(msg)
            changes[key] = value
        if not changes:
            return record.current
        return self._update(record, record.current.with_attributes(changes))

    def remove_attribute(self, flowfile: FlowFile, key: str) -> FlowFile:
        """Remove one attribute; ``uuid``, ``filename`` and ``path`` are kept (NiFi's rule)."""
        return self.remove_all_attributes(flowfile, [key])

    def remove_all_attributes(
        self, flowfile: FlowFile, keys: Iterable[str] | re.Pattern[str] | str
    ) -> FlowFile:
        """Remove attributes by name, or every attribute whose name fully matches a regex."""
        record = self._record(flowfile)
        current = record.current
        if isinstance(keys, re.Pattern | str):
            pattern = re.compile(keys) if isinstance(keys, str) else keys
            names = [k for k in current.attributes if pattern.fullmatch(k)]
        else:
            names = list(keys)
        names = [k for k in names if k not in CORE_ATTRIBUTES and k in current.attributes]
        if not names:
            return current
        return self._update(record, current.without_attributes(*names))

    # --- routing ----------------------------------------------------------------------------

    def _relationship_name(self, relationship: Relationship | str) -> str:
        name = relationship.name if isinstance(relationship, Relationship) else relationship
        if name != SELF and name not in self._relationships:
            known = sorted(self._relationships)
            msg = (
                f"Relationship '{name}' is not known to {self.component.type}; it declares "
                f"{known!r}"
            )
            raise RelationshipError(msg)
        return name

    def transfer(
        self,
        flowfiles: FlowFile | Iterable[FlowFile],
        relationship: Relationship | str | None = None,
    ) -> None:
        """Route FlowFiles to *relationship*; with none, back to the queue they came from.

        Raises:
            RelationshipError: the processor does not declare *relationship*.
            FlowFileHandlingError: a FlowFile created in this session is sent back to itself.
        """
        name = SELF if relationship is None else self._relationship_name(relationship)
        batch = [flowfiles] if isinstance(flowfiles, FlowFile) else list(flowfiles)
        for flowfile in batch:
            record = self._record(flowfile)
            if name == SELF and record.queue_id is None:
                msg = (
                    "Cannot transfer FlowFiles that are created in this Session back to self "
                    f"({record.current})"
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=flowfile.uuid)
            if name == FAILURE.name and record.current.id in self._damaged:
                reason = self._damaged[record.current.id]
                self._update(
                    record, record.current.with_attributes({CONTENT_FAILURE_REASON: reason})
                )
            record.relationship = name
            if record.created and name != SELF:
                self._finished += 1
        self._maybe_spill()

    def remove(self, flowfiles: FlowFile | Iterable[FlowFile]) -> None:
        """End FlowFiles here.

        A dequeued FlowFile gets a DROP event; one created in this session disappears without a
        trace (its FORK slot and reported events go too).
        """
        batch = [flowfiles] if isinstance(flowfiles, FlowFile) else list(flowfiles)
        for flowfile in batch:
            record = self._record(flowfile)
            record.removed = True
            current = record.current
            if record.created:
                self._forget_created(current.uuid)
            else:
                self._generated.append(
                    PendingEvent(
                        ProvenanceEventType.DROP,
                        current.uuid,
                        self._now(),
                        fields={"details": current.attributes.get("discard.reason")},
                    )
                )

    def _forget_created(self, uuid: str) -> None:
        for builder in self._forks.values():
            if uuid in builder.children:
                builder.children.remove(uuid)
        kept = []
        for event in self._generated:
            if uuid in event.children:
                event.children.remove(uuid)
            if event.flowfile_uuid == uuid or (
                event.event_type in (ProvenanceEventType.CLONE, ProvenanceEventType.JOIN)
                and not event.children
            ):
                continue
            kept.append(event)
        self._generated = kept
        self._reported = [e for e in self._reported if e.flowfile_uuid != uuid]

    def penalize(self, flowfile: FlowFile) -> FlowFile:
        """Keep the FlowFile from being processed again for the processor's penalty duration."""
        record = self._record(flowfile)
        expiry = self._now() + self._host.penalization_ms
        return self._update(record, record.current.replace(penalty_expiration=expiry))

    # --- moving FlowFiles between sessions ---------------------------------------------------

    def migrate(self, other: ProcessSession, flowfiles: Iterable[FlowFile]) -> None:
        """Hand FlowFiles, with their pending events, over to *other* (NiFi's ``migrate``).

        Binning processors use it to keep each bin's FlowFiles in a session of their own until
        the bin is merged; rolling that session back returns them to the queue.

        Raises:
            FlowFileHandlingError: a forked parent would be separated from its children.
        """
        if other is self:
            return
        records = [self._record(f, allow_transferred=True) for f in flowfiles]
        moving = {r.current.uuid for r in records}
        for builder in self._forks.values():
            family = {builder.flowfile_uuid, *builder.children}
            if family & moving and not family <= moving:
                msg = (
                    f"cannot migrate part of the family of {builder.flowfile_uuid}: If any "
                    "FlowFile is forked, the parent and all children must be migrated at the "
                    "same time."
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=builder.flowfile_uuid)
        for record in records:
            del self._records[record.current.id]
            other._records[record.current.id] = record
        for uuid in [u for u in self._forks if u in moving]:
            other._forks[uuid] = self._forks.pop(uuid)
        for name in ("_generated", "_reported"):
            mine: list[PendingEvent] = getattr(self, name)
            theirs: list[PendingEvent] = getattr(other, name)
            theirs.extend(e for e in mine if e.flowfile_uuid in moving)
            setattr(self, name, [e for e in mine if e.flowfile_uuid not in moving])
        claims = {
            c for r in records if r.current.content for c in r.current.content.resource_claims
        }
        moved = [c for c in self._written if c.resource_claim in claims]
        other._written.extend(moved)
        self._shared_claims.update(claims)
        other._shared_claims.update(claims)
        if self._writer is not None:
            # Later writes here must not append to a resource claim the other session now uses.
            self._writer.close()
            self._writer = None

    # --- commit and rollback -----------------------------------------------------------------

    def _check_commit(self) -> None:
        if self._readers or self._writers:
            msg = "Cannot commit session while a FlowFile stream is open; close it first"
            raise FlowFileAccessError(msg)
        if self._batches.untransferred():
            msg = (
                f"{self._batches.untransferred()} FlowFiles of a batch made by fork_batch were "
                "not transferred to any Relationship via ProcessSession.transfer_batch()"
            )
            raise FlowFileHandlingError(msg)
        for record in self._records.values():
            if record.removed:
                continue
            if record.relationship is None:
                created = "was created" if record.created else "was not created"
                msg = (
                    f"{record.current} transfer relationship not specified. This FlowFile "
                    f"{created} in this session and was not transferred to any Relationship "
                    "via ProcessSession.transfer()"
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=record.current.uuid)
            name = record.relationship
            if (
                name != SELF
                and self._host.destinations(name) == 0
                and not self._host.is_auto_terminated(name)
            ):
                msg = (
                    f"Relationship '{name}' does not have any destinations for "
                    f"{self.component.type}; connect it or auto-terminate it"
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=record.current.uuid)

    def commit(self) -> SessionCommit:
        """Commit every change at once; the host makes it effective.

        Raises:
            FlowFileHandlingError: a FlowFile was neither transferred nor removed, or went to a
                relationship without destinations; the session was rolled back.
        """
        try:
            self._check_commit()
        except Exception:
            self.rollback()
            raise
        now = self._now()
        outputs, removed, auto_drops, fan_out_clones = self._route(self._records.values(), now)
        events = self._build_events(now, auto_drops, fan_out_clones)
        referenced = {
            c
            for o in outputs
            if o.flowfile.content is not None
            for c in o.flowfile.content.resource_claims
        }
        referenced |= self._spilled_claims
        publications, logs = self._take_effects()
        result = SessionCommit(
            consumed=tuple(
                QueuedFlowFile(r.original, r.queue_id)
                for r in self._records.values()
                if r.original is not None and r.queue_id is not None
            ),
            outputs=tuple(outputs),
            removed=tuple(removed),
            events=tuple(events),
            state=self._state,
            counters=dict(self._counters),
            transient_claims=tuple(c for c in self._written if c.resource_claim not in referenced),
            delete_on_commit=tuple(self._delete_on_commit),
            auto_terminated=dict(self._dropped),
            publications=publications,
            logs=logs,
            batches=self._batches.outputs(),
        )
        self._host.apply_commit(result)
        self._reset()
        return result

    def _route(
        self, records: Iterable[Record], now: int
    ) -> tuple[list[SessionOutput], list[FlowFile], list[PendingEvent], list[PendingEvent]]:
        """Where each record goes: outputs (with fan-out clones), removals, and their events."""
        outputs: list[SessionOutput] = []
        removed: list[FlowFile] = []
        auto_drops: list[PendingEvent] = []
        fan_out_clones: list[PendingEvent] = []
        for record in records:
            current = record.current
            if record.removed:
                removed.append(current)
                continue
            name = record.relationship
            assert name is not None
            if name == SELF:
                outputs.append(SessionOutput(current, SELF, 0, record.queue_id))
                continue
            if self._host.destinations(name) == 0 and self._host.is_auto_terminated(name):
                removed.append(current)
                count, size = self._dropped.get(name, (0, 0))
                self._dropped[name] = (count + 1, size + current.size)
                auto_drops.append(
                    PendingEvent(
                        ProvenanceEventType.DROP,
                        current.uuid,
                        now,
                        fields={"details": f"Auto-Terminated by {name} Relationship"},
                    )
                )
                continue
            count = self._host.destinations(name)
            for index in range(count - 1):
                clone_id = self._host.next_flowfile_id()
                clone_uuid = self._derived_uuid("fan-out", current.uuid)
                clone = current.replace(
                    id=clone_id,
                    uuid=clone_uuid,
                    attributes=current.attributes.updated({"uuid": clone_uuid}),
                )
                outputs.append(SessionOutput(clone, name, index))
                fan_out_clones.append(PendingEvent.clone(current, clone_uuid, now))
            outputs.append(SessionOutput(current, name, count - 1))
        return outputs, removed, auto_drops, fan_out_clones

    def rollback(self, *, penalize: bool = False) -> None:
        """Undo everything.

        Inputs go back to their queues (penalized if asked); created FlowFiles and written
        content are discarded; staged state, counters and events are dropped.

        Raises:
            HandedOverError: batches made here already went on (a streaming host): the undo
                is done, and the host's whole task must fail.
        """
        handed_over = self._batches.handed_over
        for streams in list(self._readers.values()):
            for reader in list(streams):
                reader.close()
        for target in list(self._writers.values()):
            claim = target.close()
            if claim is not None:
                self._written.append(claim)
        self._readers.clear()
        self._writers.clear()
        if self._spilled:
            self._host.discard_spilled()
        now = self._now()
        restored = []
        for record in self._records.values():
            if record.original is None or record.queue_id is None:
                continue
            original = record.original
            if penalize:
                original = original.replace(penalty_expiration=now + self._host.penalization_ms)
            restored.append(QueuedFlowFile(original, record.queue_id))
        written = list(self._written)
        shared = set(self._shared_claims)
        self._discard_effects()
        self._reset()
        content = self._host.content
        for claim in written:
            resource = claim.resource_claim
            if resource not in shared and content.claimant_count(resource) == 0:
                content.remove(resource)
        if restored:
            self._host.restore(restored)
        if handed_over:
            msg = f"{self.component.type} rolled back after its batches went on; the task fails"
            raise HandedOverError(msg)

    def _reset(self) -> None:
        self._records.clear()
        self._readers.clear()
        self._writers.clear()
        self._spilled = False
        self._spilled_claims.clear()
        self._finished = 0
        self._forks.clear()
        self._generated.clear()
        self._reported.clear()
        self._written.clear()
        self._state = None
        self._counters.clear()
        self._delete_on_commit.clear()
        self._damaged.clear()
        self._dropped.clear()
        self._shared_claims.clear()
        self._batches.clear()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._start_ms = self._now()
