"""Batch outputs of a session: children made as one FlowFile batch instead of one object each.

A processor with a batch form for one FlowFile in, many out (SplitText's splits) takes its
input through the session as usual and makes the children with
:meth:`~flowcore.session.process_session.ProcessSession.fork_batch`: one
:class:`~flowcore.flowfile_batch.FlowFileBatch` whose contents are ranges of the parent's claim
(zero-copy, as partial clones are) and whose attributes are the parent's plus columns. The
parent's FORK event names them as uuid runs; they need no event of their own, as clones made
in a FORK do not. A batch goes whole to a relationship with exactly one destination, or to an
auto-terminated one without any
(:meth:`~flowcore.session.process_session.ProcessSession.takes_batches`): the host routes the
first as one; the second is dropped as one, counted as the session counts the FlowFiles it
auto-terminates, with a DROP for each FlowFile as one run
(:class:`~flowcore.provenance_events.ProvenanceEventRun`), placed among the session's other
DROPs where one by one would record them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import numpy as np

from flowcore.errors import FlowFileHandlingError
from flowcore.flowfile import Attributes, ContentClaim, CountedUuids, Rope
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.relationship import Relationship
from flowcore.provenance_events import ProvenanceEventRun, ProvenanceEventType
from flowcore.session._runs import auto_terminated_details, run_of
from flowcore.session.host import StreamingHost

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from flowcore.flowfile_batch.columns import Column
    from flowcore.provenance_events import ProvenanceEvent
    from flowcore.session._ledger import Ledger
    from flowcore.session._support import PendingEvent, Record, Resolve
    from flowcore.session._uuids import UuidSource
    from flowcore.session.host import ComponentInfo, SessionHost

__all__ = ["BatchOutputs", "BatchWork", "drop_run", "forked_batch"]


class _Enriches(Protocol):
    """What the batch half needs of the session's event builder: a FORK made whole.

    The builder (``_provenance.EventBuilder``) reads :class:`BatchOutputs` for its FORKs and
    DROPs, so it sits above this module.
    """

    def enrich(
        self, pending: PendingEvent, by_uuid: Mapping[str, Record], now: int
    ) -> ProvenanceEvent: ...


@attrs.define
class _Made:
    """A batch made by ``fork_batch``.

    Where it goes (None until transferred), its parent's uuid and the uuid run ``(prefix,
    first, count)`` its FlowFiles hold; whether it is dropped (its relationship is
    auto-terminated), when it was made, and the id of the last FlowFile the session held then
    (its DROPs follow that FlowFile's, as one by one's would).
    """

    batch: FlowFileBatch
    relationship: str | None
    parent: str
    run: tuple[str, int, int]
    made_ms: int = 0
    after: int | None = None
    dropped: bool = False


@attrs.define
class BatchOutputs:
    """The batches a session made, and where they go, until it commits or rolls back."""

    #: batches made, in the order they were made
    made: list[_Made] = attrs.field(factory=list)
    #: parent uuid -> uuid runs ``(prefix, first, count)`` of the batch children it forked
    #: and still holds (a batch handed on takes its run with it, in a FORK of its own)
    children: dict[str, list[tuple[str, int, int]]] = attrs.field(factory=dict)
    #: parents whose children went on before the commit, each with a FORK of its own (the
    #: session can then no longer roll back)
    forked: set[str] = attrs.field(factory=set)
    #: auto-terminated relationship -> FlowFiles and bytes of the batches dropped there that
    #: went on before the commit (their DROPs are recorded; the counts come with the commit)
    handed_drops: dict[str, tuple[int, int]] = attrs.field(factory=dict)

    @property
    def handed_over(self) -> bool:
        """Whether batches went on before the commit."""
        return bool(self.forked)

    def clear(self) -> None:
        """Forget everything (commit done, or rolled back)."""
        self.made.clear()
        self.children.clear()
        self.forked.clear()
        self.handed_drops.clear()

    def held(self) -> int:
        """How many FlowFiles the batches made here hold."""
        return sum(entry.batch.count for entry in self.made)

    def take_transferred(self) -> list[_Made]:
        """Remove and return the batches transferred so far that no earlier one waits behind.

        Their uuid runs leave their parents' FORK: each goes on with a FORK of its own.
        """
        taken = []
        while self.made and self.made[0].relationship is not None:
            entry = self.made.pop(0)
            runs = self.children.get(entry.parent, [])
            if entry.run in runs:
                runs.remove(entry.run)
            taken.append(entry)
        return taken

    def transfer(self, batch: FlowFileBatch, relationship: str, *, dropped: bool) -> None:
        """Send *batch*, made in this session, to *relationship* (*dropped*: auto-terminated)."""
        for entry in self.made:
            if entry.batch is batch or (
                entry.relationship is None and entry.batch.uuid_key == batch.uuid_key
            ):
                entry.batch, entry.relationship, entry.dropped = batch, relationship, dropped
                return
        msg = "only a batch made in this session (fork_batch) can be transferred as a batch"
        raise FlowFileHandlingError(msg)

    def untransferred(self) -> int:
        """How many FlowFiles of batches made here go nowhere yet."""
        return sum(entry.batch.count for entry in self.made if entry.relationship is None)

    def routed(self) -> tuple[tuple[FlowFileBatch, str], ...]:
        """Every batch that goes to a connection, with its relationship."""
        return tuple((e.batch, e.relationship) for e in self.made if not e.dropped)  # type: ignore[misc]

    def handed_drop(self, made: _Made) -> None:
        """Count *made*, dropped, as gone on before the commit."""
        count, size = self.handed_drops.get(made.relationship, (0, 0))  # type: ignore[arg-type]
        self.handed_drops[made.relationship] = (count + made.batch.count, size + made.batch.bytes)  # type: ignore[index]

    def drop_counts(self) -> dict[str, tuple[int, int]]:
        """Per auto-terminated relationship, the FlowFiles and bytes of the batches dropped."""
        counts = dict(self.handed_drops)
        for entry in self.made:
            if entry.dropped:
                count, size = counts.get(entry.relationship, (0, 0))  # type: ignore[arg-type]
                counts[entry.relationship] = (count + entry.batch.count, size + entry.batch.bytes)  # type: ignore[index]
        return counts

    def drop_runs(
        self, component: ComponentInfo, now: int
    ) -> list[tuple[int | None, ProvenanceEventRun]]:
        """The DROPs of the batches dropped, one run each, with the FlowFile each follows."""
        return [
            (e.after, drop_run(component, e, now)) for e in self.made if e.dropped and e.batch.count
        ]

    def child_uuids(self, parent_uuid: str, listed: list[str]) -> list[str] | CountedUuids:
        """The FORK event's children: those made one by one (*listed*), then the batches'."""
        runs = self.children.get(parent_uuid)
        if not runs:
            return listed
        if listed:
            return [*listed, *CountedUuids(runs)]
        return CountedUuids(runs)


class BatchWork:
    """A session's batch half: children made as one batch, and batches sent whole.

    Args:
        host: the session's host (routing facts; a
            :class:`~flowcore.session.host.StreamingHost` takes batches on early).
        ledger: what the session holds (the parent's FORK).
        resolve: the session's check of a FlowFile it is given.
        uuids: the uuids of the FlowFiles the session makes.
        events: the session's event builder (FORKs of batches handed on early).
        outputs: where the batches made are kept until the commit (the event builder reads
            it too, for FORKs).
    """

    def __init__(
        self,
        host: SessionHost,
        ledger: Ledger,
        *,
        resolve: Resolve,
        uuids: UuidSource,
        events: _Enriches,
        outputs: BatchOutputs,
    ) -> None:
        self._host = host
        self._stream = host if isinstance(host, StreamingHost) else None
        self._ledger = ledger
        self._resolve = resolve
        self._uuids = uuids
        self._events = events
        #: the batches made, and where they go, until the session commits or rolls back
        self.outputs = outputs

    def takes_batches(self, relationship: str) -> bool:
        """Whether a batch made here can go whole to *relationship*.

        It can when the relationship has exactly one destination (no fan-out clones), or none
        and is auto-terminated (NiFi's rule: a connected relationship is never auto-terminated),
        and is not retried (a retry takes FlowFiles back one by one, with their parent).
        """
        host = self._host
        if not host.accepts_batches:
            return False
        policy = host.retry_policy
        if policy is not None and relationship in policy.relationships:
            return False
        destinations = host.destinations(relationship)
        return destinations == 1 or (destinations == 0 and host.is_auto_terminated(relationship))

    def fork_batch(
        self,
        parent: FlowFile,
        starts: Any,
        sizes: Any,
        attributes: Mapping[str, str],
        columns: Mapping[str, Column],
    ) -> FlowFileBatch:
        """Children of *parent* as one batch: zero-copy ranges of its content (FORK).

        Child *i* holds ``sizes[i]`` bytes at ``starts[i]`` of the parent's content and the
        parent's attributes with *attributes* and *columns* over them: the FlowFiles
        ``clone(parent, start, size)`` and ``put_all_attributes`` would make, in order, without
        an object each. Transfer it with :meth:`transfer_batch`.

        Raises:
            FlowFileHandlingError: a range lies outside the content, or the content is not one
                claim range (a rope).
        """
        record = self._resolve(parent, reading=True)
        source = record.current
        count = len(starts)
        uuids = self._uuids.run("clone", count, source.uuid)
        if uuids is None:
            msg = f"cannot number {count} children of {source} as one batch"
            raise FlowFileHandlingError(msg, flowfile_uuid=source.uuid)
        batch = forked_batch(
            source,
            np.asarray(starts, dtype=np.int64),
            np.asarray(sizes, dtype=np.int64),
            attributes,
            columns,
            first_id=self._host.take_flowfile_ids(count) if count else 0,
            uuids=uuids,
            now=self._host.now(),
        )
        run = (*uuids, count)
        now = self._host.now()
        if count:
            self._ledger.fork_of(source, now)
            self.outputs.children.setdefault(source.uuid, []).append(run)
        after = next(reversed(self._ledger.records), None)
        self.outputs.made.append(_Made(batch, None, source.uuid, run, now, after))
        return batch

    def transfer_batch(self, batch: FlowFileBatch, relationship: Relationship | str) -> None:
        """Send a batch made by :meth:`fork_batch` to *relationship*, whole.

        To an auto-terminated relationship, the batch is dropped: counted, and a DROP for each
        of its FlowFiles, as one run.

        Raises:
            FlowFileHandlingError: the relationship cannot take a batch whole
                (:meth:`takes_batches`), or the batch was not made in this session.
        """
        name = relationship.name if isinstance(relationship, Relationship) else relationship
        if not self.takes_batches(name):
            msg = (
                f"relationship {name!r} of {self._host.component.type} cannot take a batch whole "
                "(ask takes_batches first)"
            )
            raise FlowFileHandlingError(msg)
        self.outputs.transfer(batch, name, dropped=self._host.destinations(name) == 0)
        # A host that streams takes the batches on once they are many (memory bounded by a
        # few batches, not by all of a split's children), each after a FORK naming its
        # FlowFiles, so a child's events never come before its creation; the session then
        # cannot roll back (HandedOverError). A dropped batch goes with its DROPs after its
        # FORK. Below the host's threshold they wait for the commit, as FlowFiles do, and
        # their events come in one by one's order.
        stream = self._stream
        if stream is None or stream.hand_over_at is None:
            return
        if self.outputs.held() >= stream.hand_over_at:
            for made in self.outputs.take_transferred():
                events: list[ProvenanceEvent | ProvenanceEventRun] = []
                if made.run[2]:  # an empty batch makes no FlowFile, and no FORK
                    self.outputs.forked.add(made.parent)
                    events.append(self._fork_of(made))
                if made.dropped:
                    self.outputs.handed_drop(made)
                    if made.batch.count:
                        events.append(drop_run(self._host.component, made, self._host.now()))
                stream.hand_over_batch(made.batch, made.relationship, events)  # type: ignore[arg-type]

    def _fork_of(self, made: _Made) -> ProvenanceEvent:
        """The FORK of a batch handed on: its parent, as this session holds it, and its run.

        The parent's attributes are recorded as they are now: set them before making the
        children (as SplitText does), since a later change is in no event of its own.
        """
        builder = self._ledger.forks[made.parent]
        pending = attrs.evolve(builder, children=CountedUuids([made.run]))
        parent = {
            r.current.uuid: r
            for r in self._ledger.records.values()
            if r.current.uuid == made.parent
        }
        return self._events.enrich(pending, parent, self._host.now())


def drop_run(component: ComponentInfo, made: _Made, now: int) -> ProvenanceEventRun:
    """The DROP of each FlowFile of a batch sent to an auto-terminated relationship, as a run.

    Each event is the one a session records for a FlowFile it made and auto-terminated: no
    previous attributes or content, every attribute updated, NiFi's details naming the
    relationship, and the time since the FlowFile was made as its duration.
    """
    return run_of(
        component,
        ProvenanceEventType.DROP,
        None,
        made.batch,
        now,
        details=auto_terminated_details(made.relationship),  # type: ignore[arg-type]
        event_duration=max(0, now - made.made_ms),
    )


def forked_batch(
    parent: FlowFile,
    starts: np.ndarray,
    sizes: np.ndarray,
    attributes: Mapping[str, str],
    columns: Mapping[str, Column],
    *,
    first_id: int,
    uuids: tuple[str, int],
    now: int,
) -> FlowFileBatch:
    """Children of *parent*, each ``sizes[i]`` bytes at ``starts[i]`` of its content.

    They carry the parent's attributes (its uuid aside) with *attributes* and *columns* over
    them, as partial clones given those attributes would.

    Raises:
        FlowFileHandlingError: a range does not lie inside the parent's content, or the content
            is not one claim range.
    """
    count = len(starts)
    if count and (starts.min() < 0 or sizes.min() < 0 or (starts + sizes).max() > parent.size):
        msg = f"cannot fork ranges outside the {parent.size} bytes of {parent}"
        raise FlowFileHandlingError(msg, flowfile_uuid=parent.uuid)
    content = parent.content
    if isinstance(content, Rope) and count:
        content, starts = _piece_holding(parent, content, starts, sizes)
    if content is not None and not isinstance(content, ContentClaim):
        msg = f"cannot fork a batch of ranges from {parent}: its content is not one claim range"
        raise FlowFileHandlingError(msg, flowfile_uuid=parent.uuid)
    inherited = {k: v for k, v in parent.attributes.items() if k != "uuid" and k not in columns}
    inherited.update({k: v for k, v in attributes.items() if k != "uuid"})
    steps = np.arange(count, dtype=np.int64)
    prefix, first_number = uuids
    return FlowFileBatch(
        ids=first_id + steps,
        uuid_key=prefix,
        uuid_numbers=first_number + steps,
        attributes=Attributes._trusted(inherited),
        uuid_named=(),
        resource_claim=content.resource_claim if content is not None else None,
        offsets=(content.offset if content is not None else 0) + starts,
        sizes=sizes if content is not None else np.zeros(count, dtype=np.int64),
        entry_date=now,
        lineage_start_date=parent.lineage_start_date,
        lineage_start_indices=np.full(count, parent.lineage_start_index, dtype=np.int64),
        queue_date=now,
        queue_date_indices=np.full(count, parent.queue_date_index, dtype=np.int64),
        columns=dict(columns),
    )


def _piece_holding(
    parent: FlowFile, rope: Rope, starts: np.ndarray, sizes: np.ndarray
) -> tuple[ContentClaim, np.ndarray]:
    """The one piece of *rope* holding every range, and the ranges' starts in it.

    A block of a file read by parallel tasks is one piece of the file's rope, and its splits
    lie in it (:mod:`flowcore.session.block_views`).

    Raises:
        FlowFileHandlingError: the ranges span more than one piece.
    """
    low, high = int(starts.min()), int((starts + sizes).max())
    at = 0
    for piece in rope.pieces:
        if at <= low and high <= at + piece.length:
            return piece, starts - at
        at += piece.length
    msg = f"cannot fork a batch of ranges from {parent}: they span several pieces of its content"
    raise FlowFileHandlingError(msg, flowfile_uuid=parent.uuid)
