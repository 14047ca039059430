"""What a session holds between commits: its FlowFile records, open streams and pending events.

The session's parts (content, provenance, spilling, batches) all read and change this one
value; it is declared here once, and :meth:`Ledger.clear` starts a new unit of work. State only
one part uses stays in that part (staged files in :mod:`flowcore.session._effects`, processor
state in :mod:`flowcore.session._state`, the content writer and written claims in
:mod:`flowcore.session._content`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from flowcore.provenance_events import ProvenanceEventType
from flowcore.session._support import PendingEvent, ReadStream, Record

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from repositories.protocols import ContentOutputStream

__all__ = ["Ledger"]


@attrs.define(eq=False)
class Ledger:
    """The FlowFiles a session knows and the events it will record at commit.

    Attributes:
        records: FlowFile id -> what the session knows of it (newest version, original, queue,
            relationship).
        readers: FlowFile id -> its open read streams (reads may overlap).
        writers: FlowFile id -> its open write stream (exclusive).
        forks: parent uuid -> its FORK event, children added as they are made.
        generated: JOIN, CLONE and DROP events the framework makes.
        reported: events the processor reported (``session.provenance``).
        start_ms: when this unit of work began (events' default duration).
        links: FlowFile id -> ids it is linked to by create(parent), a JOIN or a clone
            (NiFi's ``FlowFileLinkage``: a relationship retry takes them back together).
        roots: ids of FlowFiles created without a parent (never retried: nothing to go back to).
    """

    start_ms: int
    records: dict[int, Record] = attrs.field(factory=dict)
    readers: dict[int, list[ReadStream]] = attrs.field(factory=dict)
    writers: dict[int, ContentOutputStream] = attrs.field(factory=dict)
    forks: dict[str, PendingEvent] = attrs.field(factory=dict)
    generated: list[PendingEvent] = attrs.field(factory=list)
    reported: list[PendingEvent] = attrs.field(factory=list)
    links: dict[int, set[int]] = attrs.field(factory=dict)
    roots: set[int] = attrs.field(factory=set)

    def link(self, one: int, other: int) -> None:
        """Record that FlowFiles *one* and *other* came from one another."""
        if one != other:
            self.links.setdefault(one, set()).add(other)
            self.links.setdefault(other, set()).add(one)

    def linked(self, flowfile_id: int) -> set[int]:
        """The ids linked to *flowfile_id*, and those linked to them (NiFi's two steps)."""
        near = self.links.get(flowfile_id, set())
        found = set(near)
        for other in near:
            found |= self.links.get(other, set())
        found.discard(flowfile_id)
        return found

    def forget_events(self, uuid: str) -> None:
        """Drop every event about *uuid* (a FlowFile the retry sends back as it was taken)."""
        self.forks.pop(uuid, None)
        self.generated = [e for e in self.generated if e.flowfile_uuid != uuid]
        self.reported = [e for e in self.reported if e.flowfile_uuid != uuid]

    def clear(self, now: int) -> None:
        """Forget everything: the unit of work was committed or rolled back at *now*."""
        self.records.clear()
        self.readers.clear()
        self.writers.clear()
        self.forks.clear()
        self.generated.clear()
        self.reported.clear()
        self.links.clear()
        self.roots.clear()
        self.start_ms = now

    def close_reader(self, flowfile_id: int, stream: ReadStream) -> None:
        """Forget a read stream once it is closed."""
        streams = self.readers.get(flowfile_id, [])
        if stream in streams:
            streams.remove(stream)
        if not streams:
            self.readers.pop(flowfile_id, None)

    def fork_of(self, parent: FlowFile, now: int) -> PendingEvent:
        """*parent*'s FORK event, started at *now* if it has none yet."""
        builder = self.forks.get(parent.uuid)
        if builder is None:
            builder = PendingEvent(
                ProvenanceEventType.FORK, parent.uuid, now, parents=[parent.uuid]
            )
            self.forks[parent.uuid] = builder
        return builder

    def forget_created(self, uuid: str) -> None:
        """A FlowFile made here and removed leaves no trace: no FORK slot, no events."""
        for builder in self.forks.values():
            if uuid in builder.children:
                builder.children.remove(uuid)
        kept = []
        for event in self.generated:
            if uuid in event.children:
                event.children.remove(uuid)
            if event.flowfile_uuid == uuid or (
                event.event_type in (ProvenanceEventType.CLONE, ProvenanceEventType.JOIN)
                and not event.children
            ):
                continue
            kept.append(event)
        self.generated = kept
        self.reported = [e for e in self.reported if e.flowfile_uuid != uuid]

    def join_parents(self) -> set[str]:
        """Uuids a pending FORK or JOIN still names as a parent."""
        return set(self.forks) | {
            p for e in self.generated if e.event_type is ProvenanceEventType.JOIN for p in e.parents
        }

    def move_to(self, other: Ledger, records: list[Record]) -> None:
        """Hand *records*, with their FORKs and pending events, to *other* (``migrate``)."""
        moving = {r.current.uuid for r in records}
        for record in records:
            flowfile_id = record.current.id
            del self.records[flowfile_id]
            other.records[flowfile_id] = record
            for linked in self.links.get(flowfile_id, ()):
                other.link(flowfile_id, linked)
            if flowfile_id in self.roots:
                other.roots.add(flowfile_id)
        for uuid in [u for u in self.forks if u in moving]:
            other.forks[uuid] = self.forks.pop(uuid)
        other.generated.extend(e for e in self.generated if e.flowfile_uuid in moving)
        self.generated = [e for e in self.generated if e.flowfile_uuid not in moving]
        other.reported.extend(e for e in self.reported if e.flowfile_uuid in moving)
        self.reported = [e for e in self.reported if e.flowfile_uuid not in moving]
