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

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from flowcore.errors import (
    FlowFileAccessError,
    FlowFileHandlingError,
    HandedOverError,
    RelationshipError,
)
from flowcore.flowfile import CORE_ATTRIBUTES, CountedUuids, FlowFile
from flowcore.processor.relationship import FAILURE, Relationship
from flowcore.provenance_events import ProvenanceEventType
from flowcore.session._batches import BatchOutputs, BatchWork
from flowcore.session._caches import StagedCaches
from flowcore.session._content import CONTENT_FAILURE_REASON, SessionContent
from flowcore.session._effects import StagedEffects
from flowcore.session._ledger import Ledger
from flowcore.session._provenance import EventBuilder, ProvenanceReporter
from flowcore.session._retry import apply_retries
from flowcore.session._routing import Router, check_commit
from flowcore.session._spill import Spiller
from flowcore.session._state import StagedState
from flowcore.session._support import NOT_INHERITED, PendingEvent, Record
from flowcore.session._uuids import UuidSource
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


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _part(name: str, method: _Method) -> _Method:
    """The session's method *method* of its part *name*: same name, signature and docstring."""

    @functools.wraps(method)
    def forward(self: ProcessSession, *args: Any, **kwargs: Any) -> Any:
        return method(getattr(self, name), *args, **kwargs)

    return forward  # type: ignore[return-value]


class ProcessSession:
    """A unit of work over FlowFiles with NiFi's commit and rollback semantics.

    A session is not thread-safe, like NiFi's. After ``commit()`` or ``rollback()`` it can be used
    again for a new unit of work.

    It is composed of parts, each with the state it alone changes: a :class:`Ledger` of what
    it holds (records, open streams, pending events) that the others share, and the content
    (:class:`SessionContent`), provenance (:class:`EventBuilder`), routing at commit
    (:class:`Router`), spilling (:class:`Spiller`), batch (:class:`BatchWork`), uuid
    (:class:`UuidSource`), staged state (:class:`StagedState`) and staged effects
    (:class:`StagedEffects`) parts. The FlowFile methods (get, create, clone, attributes,
    transfer, remove, migrate, commit, rollback) are here; the others are the parts' own, under
    the same names.
    """

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        self._relationships = frozenset(host.relationships())
        self._ledger = Ledger(host.now())
        # Resource claims shared with another session through migrate(): never destroyed on
        # rollback here, since the other session's FlowFiles may point into them.
        self._shared_claims: set[object] = set()
        self._uuids = UuidSource(host)
        self._effects = StagedEffects(host)
        self._content = SessionContent(
            host, self._ledger, self._resolve, self._effects.delete_after_commit
        )
        outputs = BatchOutputs()
        self._events = EventBuilder(host, self._ledger, outputs, self._resolve)
        self._batches = BatchWork(
            host,
            self._ledger,
            resolve=self._resolve,
            uuids=self._uuids,
            events=self._events,
            outputs=outputs,
        )
        self._router = Router(host, self._uuids)
        self._spiller = Spiller(host, self._ledger, self._events, self._router.route)
        self._staged_state = StagedState(host)
        self._caches = StagedCaches(host)
        self.provenance = ProvenanceReporter(self._events)

    # --- the parts' methods -----------------------------------------------------------------

    read = _part("_content", SessionContent.read)
    read_bytes = _part("_content", SessionContent.read_bytes)
    read_text = _part("_content", SessionContent.read_text)
    write = _part("_content", SessionContent.write)
    rewrite = _part("_content", SessionContent.rewrite)
    append = _part("_content", SessionContent.append)
    keep_range = _part("_content", SessionContent.keep_range)
    merge = _part("_content", SessionContent.merge)
    merge_contents = _part("_content", SessionContent.merge_contents)
    import_from = _part("_content", SessionContent.import_from)
    import_by_reference = _part("_content", SessionContent.import_by_reference)
    import_block = _part("_content", SessionContent.import_block)
    block_view = _part("_content", SessionContent.block_view)
    skip_children = _part("_uuids", UuidSource.skip_children)
    export_to = _part("_content", SessionContent.export_to)
    takes_batches = _part("_batches", BatchWork.takes_batches)
    fork_batch = _part("_batches", BatchWork.fork_batch)
    transfer_batch = _part("_batches", BatchWork.transfer_batch)
    derive_uuids_from = _part("_uuids", UuidSource.derive_uuids_from)
    identifier_for = _part("_uuids", UuidSource.identifier_for)
    spill = _part("_spiller", Spiller.spill)
    get_state = _part("_staged_state", StagedState.get_state)
    set_state = _part("_staged_state", StagedState.set_state)
    replace_state = _part("_staged_state", StagedState.replace_state)
    clear_state = _part("_staged_state", StagedState.clear_state)
    adjust_counter = _part("_staged_state", StagedState.adjust_counter)
    map_cache = _part("_caches", StagedCaches.map_cache)
    stage_file = _part("_effects", StagedEffects.stage_file)
    cancel_staged = _part("_effects", StagedEffects.cancel_staged)
    is_staged = _part("_effects", StagedEffects.is_staged)
    will_log = _part("_effects", StagedEffects.will_log)
    log_after_commit = _part("_effects", StagedEffects.log_after_commit)
    delete_after_commit = _part("_effects", StagedEffects.delete_after_commit)
    move_after_commit = _part("_effects", StagedEffects.move_after_commit)
    after_commit = _part("_effects", StagedEffects.after_commit)

    def controller_service(self, name: str) -> object:
        """The controller service *name* the flow declares (NiFi's ``asControllerService``).

        For services that hold configuration only (StandardSSLContextService); a map cache is
        reached through :meth:`map_cache`, whose changes commit with the session.

        Raises:
            ConfigurationError: the flow declares no such service.
        """
        return self._host.controller_service(name)

    # --- bookkeeping ------------------------------------------------------------------------

    @property
    def component(self) -> ComponentInfo:
        """The processor this session works for."""
        return self._host.component

    def _now(self) -> int:
        return self._host.now()

    def _resolve(
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
        if flowfile.id in self._ledger.writers or (
            flowfile.id in self._ledger.readers and not reading
        ):
            msg = (
                f"{flowfile} is being read or written by an open stream; close it "
                "(leave its 'with' block) before changing the FlowFile"
            )
            raise FlowFileAccessError(msg, flowfile_uuid=flowfile.uuid)
        record = self._ledger.records.get(flowfile.id)
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
            self._ledger.records[item.flowfile.id] = Record(
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
            flowfile = self._new_flowfile({}, self._uuids.next("root"))
            self._ledger.records[flowfile.id] = Record(flowfile, start_ms=self._now())
            self._ledger.roots.add(flowfile.id)
            return flowfile
        if isinstance(parent, FlowFile):
            parent_record = self._resolve(parent, reading=True)
            source = parent_record.current
            inherited = {k: v for k, v in source.attributes.items() if k not in NOT_INHERITED}
            uuid = self._uuids.next("fork", source.uuid)
            child = self._new_flowfile(inherited, uuid, lineage_from=source)
            self._ledger.records[child.id] = Record(child, start_ms=self._now())
            self._ledger.link(source.id, child.id)
            self._ledger.fork_of(source, self._now()).children.append(child.uuid)
            return child
        parents = [self._resolve(p, reading=True).current for p in parent]
        if not parents:
            return self.create()
        common = dict(parents[0].attributes)
        for other in parents[1:]:
            common = {k: v for k, v in common.items() if other.attributes.get(k) == v}
        oldest = min(parents, key=lambda f: (f.lineage_start_date, f.lineage_start_index))
        child = self.create_joined([p.uuid for p in parents], common, oldest)
        for joined in parents:
            self._ledger.link(joined.id, child.id)
        return child

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
        uuid = self._uuids.next("join", parents)
        child = self._new_flowfile(inherited, uuid, lineage_from=lineage_from)
        self._ledger.records[child.id] = Record(child, start_ms=self._now())
        self._ledger.generated.append(
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

    def clone(
        self, flowfile: FlowFile, offset: int | None = None, size: int | None = None
    ) -> FlowFile:
        """Copy a FlowFile, sharing its content; with *offset*/*size* a zero-copy slice (FORK).

        A full clone emits CLONE; a partial clone emits FORK, as NiFi.

        Raises:
            FlowFileHandlingError: the range does not fit inside the FlowFile's content.
        """
        record = self._resolve(flowfile, reading=True)
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
        clone_uuid = self._uuids.next("clone", source.uuid)
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
        self._ledger.records[new_id] = Record(clone, start_ms=now)
        self._ledger.link(source.id, new_id)
        if partial:
            self._ledger.fork_of(source, self._now()).children.append(clone_uuid)
        else:
            self._ledger.generated.append(PendingEvent.clone(source, clone_uuid, now))
        return clone

    # --- attributes -------------------------------------------------------------------------

    def put_attribute(self, flowfile: FlowFile, key: str, value: str) -> FlowFile:
        """Set one attribute; setting ``uuid`` is ignored (NiFi's rule). Returns the new version."""
        return self.put_all_attributes(flowfile, {key: value})

    def put_all_attributes(self, flowfile: FlowFile, attributes: Mapping[str, str]) -> FlowFile:
        """Set several attributes; ``uuid`` is ignored. Returns the new version."""
        record = self._resolve(flowfile)
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
        return record.become(record.current.with_attributes(changes))

    def remove_attribute(self, flowfile: FlowFile, key: str) -> FlowFile:
        """Remove one attribute; ``uuid``, ``filename`` and ``path`` are kept (NiFi's rule)."""
        return self.remove_all_attributes(flowfile, [key])

    def remove_all_attributes(
        self, flowfile: FlowFile, keys: Iterable[str] | re.Pattern[str] | str
    ) -> FlowFile:
        """Remove attributes by name, or every attribute whose name fully matches a regex."""
        record = self._resolve(flowfile)
        current = record.current
        if isinstance(keys, re.Pattern | str):
            pattern = re.compile(keys) if isinstance(keys, str) else keys
            names = [k for k in current.attributes if pattern.fullmatch(k)]
        else:
            names = list(keys)
        names = [k for k in names if k not in CORE_ATTRIBUTES and k in current.attributes]
        if not names:
            return current
        return record.become(current.without_attributes(*names))

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
        finished = 0
        for flowfile in batch:
            record = self._resolve(flowfile)
            if name == SELF and record.queue_id is None:
                msg = (
                    "Cannot transfer FlowFiles that are created in this Session back to self "
                    f"({record.current})"
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=flowfile.uuid)
            reason = self._content.damaged.get(record.current.id)
            if name == FAILURE.name and reason is not None:
                record.become(record.current.with_attributes({CONTENT_FAILURE_REASON: reason}))
            record.relationship = name
            if record.created and name != SELF:
                finished += 1
        self._spiller.finished(finished)

    def remove(self, flowfiles: FlowFile | Iterable[FlowFile]) -> None:
        """End FlowFiles here.

        A dequeued FlowFile gets a DROP event; one created in this session disappears without a
        trace (its FORK slot and reported events go too).
        """
        batch = [flowfiles] if isinstance(flowfiles, FlowFile) else list(flowfiles)
        for flowfile in batch:
            record = self._resolve(flowfile)
            record.removed = True
            current = record.current
            if record.created:
                self._ledger.forget_created(current.uuid)
            else:
                self._ledger.generated.append(
                    PendingEvent(
                        ProvenanceEventType.DROP,
                        current.uuid,
                        self._now(),
                        fields={"details": current.attributes.get("discard.reason")},
                    )
                )

    def penalize(self, flowfile: FlowFile) -> FlowFile:
        """Keep the FlowFile from being processed again for the processor's penalty duration."""
        record = self._resolve(flowfile)
        expiry = self._now() + self._host.penalization_ms
        return record.become(record.current.replace(penalty_expiration=expiry))

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
        records = [self._resolve(f, allow_transferred=True) for f in flowfiles]
        moving = {r.current.uuid for r in records}
        for builder in self._ledger.forks.values():
            family = {builder.flowfile_uuid, *builder.children}
            if family & moving and not family <= moving:
                msg = (
                    f"cannot migrate part of the family of {builder.flowfile_uuid}: If any "
                    "FlowFile is forked, the parent and all children must be migrated at the "
                    "same time."
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=builder.flowfile_uuid)
        self._ledger.move_to(other._ledger, records)
        claims = {
            c for r in records if r.current.content for c in r.current.content.resource_claims
        }
        other._content.written.extend(
            c for c in self._content.written if c.resource_claim in claims
        )
        self._shared_claims.update(claims)
        other._shared_claims.update(claims)
        # Later writes here must not append to a resource claim the other session now uses.
        self._content.close_writer()

    # --- commit and rollback -----------------------------------------------------------------

    def commit(self) -> SessionCommit:
        """Commit every change at once; the host makes it effective.

        Raises:
            FlowFileHandlingError: a FlowFile was neither transferred nor removed, or went to a
                relationship without destinations; the session was rolled back.
        """
        try:
            check_commit(self._host, self._ledger, self._batches.outputs)
        except Exception:
            self.rollback()
            raise
        now = self._now()
        yield_ms = apply_retries(self._host, self._ledger, self._batches.outputs, now)
        outputs, removed, auto_drops, fan_out_clones = self._router.route(
            self._ledger.records.values(), now
        )
        events = self._events.build(now, auto_drops, fan_out_clones)
        referenced = {
            c
            for o in outputs
            if o.flowfile.content is not None
            for c in o.flowfile.content.resource_claims
        }
        referenced |= self._spiller.claims
        publications, logs, disposals = self._effects.take()
        result = SessionCommit(
            consumed=tuple(
                QueuedFlowFile(r.original, r.queue_id)
                for r in self._ledger.records.values()
                if r.original is not None and r.queue_id is not None
            ),
            outputs=tuple(outputs),
            removed=tuple(removed),
            events=tuple(events),
            state=self._staged_state.state,
            counters=dict(self._staged_state.counters),
            transient_claims=tuple(
                c for c in self._content.written if c.resource_claim not in referenced
            ),
            disposals=disposals,
            auto_terminated=self._router.auto_terminated_counts(self._batches.outputs),
            publications=publications,
            logs=logs,
            batches=self._batches.outputs.routed(),
            yield_ms=yield_ms,
            actions=self._effects.take_actions(),
        )
        self._caches.keep()
        self._host.apply_commit(result)
        self._reset()
        return result

    def rollback(self, *, penalize: bool = False) -> None:
        """Undo everything.

        Inputs go back to their queues (penalized if asked); created FlowFiles and written
        content are discarded; staged state, counters and events are dropped.

        Raises:
            HandedOverError: batches made here already went on (a streaming host): the undo
                is done, and the host's whole task must fail.
        """
        handed_over = self._batches.outputs.handed_over
        for streams in list(self._ledger.readers.values()):
            for reader in list(streams):
                reader.close()
        for target in list(self._ledger.writers.values()):
            claim = target.close()
            if claim is not None:
                self._content.written.append(claim)
        self._ledger.readers.clear()
        self._ledger.writers.clear()
        self._spiller.discard()
        now = self._now()
        restored = []
        for record in self._ledger.records.values():
            if record.original is None or record.queue_id is None:
                continue
            original = record.original
            if penalize:
                original = original.replace(penalty_expiration=now + self._host.penalization_ms)
            restored.append(QueuedFlowFile(original, record.queue_id))
        written = list(self._content.written)
        shared = set(self._shared_claims)
        self._effects.discard()
        self._caches.revert()
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
        """Start a new unit of work: every part forgets this one's."""
        self._ledger.clear(self._now())
        self._content.clear()
        self._spiller.clear()
        self._batches.outputs.clear()
        self._staged_state.clear()
        self._router.clear()
        self._shared_claims.clear()
