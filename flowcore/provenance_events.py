"""Provenance events: NiFi's event types and fields, as frozen values.

Sessions build events at commit (FORK, JOIN, CLONE, DROP, CONTENT_MODIFIED, CREATE,
ATTRIBUTES_MODIFIED) and processors report the rest (RECEIVE, SEND, ROUTE ...) through
:class:`~flowcore.session.process_session.ProvenanceReporter`. The provenance repository assigns
``event_id``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence

import attrs

from flowcore.flowfile import (
    Attributes,
    Content,
    CountedUuids,
    FlowFile,
    sequence_uuid,
    uuid_in_sequence,
)

__all__ = ["ProvenanceEvent", "ProvenanceEventRun", "ProvenanceEventType"]


class ProvenanceEventType(enum.Enum):
    """NiFi's provenance event types, in nifi-api order, with their meaning."""

    CREATE = "CREATE"  # generated from data not received from outside
    RECEIVE = "RECEIVE"  # received from an external system; the first event of a FlowFile
    FETCH = "FETCH"  # content of an existing FlowFile replaced by an external resource
    SEND = "SEND"  # sent to an external system
    UPLOAD = "UPLOAD"  # sent from a file system to an external system
    REMOTE_INVOCATION = "REMOTE_INVOCATION"  # a remote request that transfers no data
    DOWNLOAD = "DOWNLOAD"  # content downloaded by a user
    DROP = "DROP"  # end of life for a reason other than expiration
    EXPIRE = "EXPIRE"  # end of life because it waited too long in a queue
    FORK = "FORK"  # children derived from one parent
    JOIN = "JOIN"  # one child derived from several parents
    CLONE = "CLONE"  # an exact copy of the parent
    CONTENT_MODIFIED = "CONTENT_MODIFIED"
    ATTRIBUTES_MODIFIED = "ATTRIBUTES_MODIFIED"
    ROUTE = "ROUTE"  # routed to a relationship, with a reason
    ADDINFO = "ADDINFO"  # extra information, e.g. an alternate identifier
    REPLAY = "REPLAY"  # a FlowFile replayed from an earlier event
    UNKNOWN = "UNKNOWN"  # placeholder when the type cannot be shown


#: Types that name a transit URI (NiFi's builder requires one).
TRANSIT_TYPES = frozenset(
    {
        ProvenanceEventType.RECEIVE,
        ProvenanceEventType.FETCH,
        ProvenanceEventType.SEND,
        ProvenanceEventType.UPLOAD,
        ProvenanceEventType.REMOTE_INVOCATION,
    }
)


_NO_ATTRIBUTES = Attributes()


def _attributes(value: Mapping[str, str] | None) -> Attributes:
    if isinstance(value, Attributes):
        return value
    return Attributes(value) if value else _NO_ATTRIBUTES


def _uuids(value: Iterable[str]) -> Sequence[str]:
    """A tuple of uuids, or the :class:`CountedUuids` given (runs stay runs)."""
    return value if isinstance(value, CountedUuids) else tuple(value)


@attrs.frozen
class ProvenanceEvent:
    """One provenance event with NiFi's fields.

    ``attributes`` is NiFi's ``getAttributes()``: the previous attributes overlaid with the
    updated ones. Content is recorded as claim pointers, never bytes.
    """

    event_type: ProvenanceEventType
    flowfile_uuid: str
    component_id: str
    component_type: str
    event_time: int
    file_size: int = 0
    component_name: str = ""
    event_id: int = -1
    event_duration: int = -1
    entry_date: int = 0
    lineage_start_date: int = 0
    parent_uuids: Sequence[str] = attrs.field(default=(), converter=_uuids)
    child_uuids: Sequence[str] = attrs.field(default=(), converter=_uuids)
    relationship: str | None = None
    details: str | None = None
    transit_uri: str | None = None
    source_system_flowfile_identifier: str | None = None
    alternate_identifier_uri: str | None = None
    source_queue_identifier: str | None = None
    previous_attributes: Attributes = attrs.field(factory=Attributes, converter=_attributes)
    updated_attributes: Attributes = attrs.field(factory=Attributes, converter=_attributes)
    previous_content_claim: Content | None = None
    content_claim: Content | None = None
    previous_file_size: int | None = None

    @classmethod
    def of(
        cls,
        event_type: ProvenanceEventType,
        flowfile: FlowFile,
        *,
        component: tuple[str, str, str],
        time: int,
        **fields: object,
    ) -> ProvenanceEvent:
        """*flowfile*'s event: its uuid, size, dates and content taken from it.

        Args:
            event_type: what happened.
            flowfile: the FlowFile it happened to (as it is after the event).
            component: ``(id, type, name)`` of the component that reported it.
            time: when, in epoch ms.
            **fields: any other field (details, relationship, previous attributes ...).
        """
        component_id, component_type, component_name = component
        values: dict[str, object] = {
            "file_size": flowfile.size,
            "entry_date": flowfile.entry_date,
            "lineage_start_date": flowfile.lineage_start_date,
            "content_claim": flowfile.content,
            "component_name": component_name,
            **fields,
        }
        return cls(
            event_type=event_type,
            flowfile_uuid=flowfile.uuid,
            component_id=component_id,
            component_type=component_type,
            event_time=time,
            **values,  # type: ignore[arg-type]
        )

    @property
    def attributes(self) -> Attributes:
        """The attributes after the event: previous overlaid with updated."""
        return self.previous_attributes.updated(self.updated_attributes)

    @property
    def filename(self) -> str | None:
        """The FlowFile's ``filename`` after the event."""
        return self.attributes.get("filename")

    def __str__(self) -> str:
        extra = f" -> {self.relationship}" if self.relationship else ""
        return (
            f"{self.event_type.value} {self.flowfile_uuid} by {self.component_type}"
            f"[{self.component_id}]{extra}"
        )


@attrs.frozen
class ProvenanceEventRun:
    """The same event for each FlowFile of a batch (:mod:`flowcore.flowfile_batch`).

    ``first`` is FlowFile 0's event. Event *i* is FlowFile *i*'s: its uuid counts up from the
    first's, its content offsets move by ``content_step`` per FlowFile, and the attributes named
    in ``uuid_named`` (previous, updated) hold its own uuid; everything else is the same. The
    provenance repository stores it as one run and unfolds it on every query.
    """

    first: ProvenanceEvent
    count: int
    content_step: int
    uuid_named: tuple[tuple[str, ...], tuple[str, ...]]

    def event(self, index: int) -> ProvenanceEvent:
        """The event of FlowFile *index*."""
        first = self.first
        position = uuid_in_sequence(first.flowfile_uuid)
        assert position is not None, "a batch's FlowFiles have counted uuids"
        uuid = sequence_uuid(position[0], position[1] + index)
        previous_named, updated_named = self.uuid_named
        step = index * self.content_step

        def moved(claim: Content | None) -> Content | None:
            if claim is None or not step:
                return claim
            return attrs.evolve(claim, offset=claim.offset + step)  # type: ignore[misc]

        return attrs.evolve(
            first,
            flowfile_uuid=uuid,
            previous_attributes=first.previous_attributes.updated(
                dict.fromkeys(previous_named, uuid)
            ),
            updated_attributes=first.updated_attributes.updated(dict.fromkeys(updated_named, uuid)),
            content_claim=moved(first.content_claim),
            previous_content_claim=moved(first.previous_content_claim),
        )

    def events(self) -> list[ProvenanceEvent]:
        """Every event, in order."""
        return [self.event(i) for i in range(self.count)]

    def cut(self, start: int, stop: int) -> ProvenanceEventRun:
        """Events ``start .. stop-1`` as a run of their own."""
        return attrs.evolve(self, first=self.event(start), count=min(stop, self.count) - start)
