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
import numpy as np

from flowcore.flowfile import (
    Attributes,
    Content,
    ContentClaim,
    CountedUuids,
    FlowFile,
    ResourceClaim,
    sequence_uuid,
    uuid_in_sequence,
)
from flowcore.flowfile_batch.columns import Column, apply_row

__all__ = [
    "TEXT_FIELDS",
    "InterleavedRuns",
    "ProvenanceEvent",
    "ProvenanceEventRun",
    "ProvenanceEventType",
]


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


#: The text fields of an event that name where it happened and why (NiFi's component,
#: relationship, details and the identifiers of outside systems): stored as they are, one value
#: for a whole run of events, and each a string column where events become a table.
TEXT_FIELDS = (
    "component_id",
    "component_type",
    "component_name",
    "relationship",
    "details",
    "transit_uri",
    "source_system_flowfile_identifier",
    "alternate_identifier_uri",
    "source_queue_identifier",
)


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


@attrs.frozen(eq=False)
class ProvenanceEventRun:
    """The same event for each FlowFile of a batch (:mod:`flowcore.flowfile_batch`), as columns.

    ``first`` is FlowFile 0's event, whole; it gives every field the events share (type,
    component, time, relationship, details ...). Event *i* is FlowFile *i*'s: its uuid is
    ``uuid_numbers[i]`` under the first's prefix; its content (and previous content) is
    ``sizes[i]`` bytes at ``offsets[i]`` of the first's resource claim, when those arrays are
    given; its previous and updated attribute maps are the first's with each column's value at
    *i* instead (None: not in the map), and the ``uuid_named`` attributes (previous, updated)
    set to its own uuid; its transit URI is its value in ``transit_uris`` when that column is
    given (PutFile's SEND names each FlowFile's file). The provenance repository stores a run as
    one row per uuid bucket and unfolds it on every query.
    """

    first: ProvenanceEvent
    uuid_numbers: np.ndarray = attrs.field(converter=lambda v: np.asarray(v, dtype=np.int64))
    uuid_named: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    offsets: np.ndarray | None = None
    sizes: np.ndarray | None = None
    previous_offsets: np.ndarray | None = None
    previous_sizes: np.ndarray | None = None
    resource: ResourceClaim | None = None
    previous_resource: ResourceClaim | None = None
    previous_columns: Mapping[str, Column] = attrs.field(factory=dict)
    updated_columns: Mapping[str, Column] = attrs.field(factory=dict)
    transit_uris: Column | None = None

    @property
    def count(self) -> int:
        """How many events."""
        return len(self.uuid_numbers)

    def event(self, index: int) -> ProvenanceEvent:
        """The event of FlowFile *index*."""
        first = self.first
        position = uuid_in_sequence(first.flowfile_uuid)
        assert position is not None, "a batch's FlowFiles have counted uuids"
        uuid = sequence_uuid(position[0], int(self.uuid_numbers[index]))
        previous_named, updated_named = self.uuid_named
        fields: dict[str, object] = {
            "flowfile_uuid": uuid,
            "previous_attributes": _row_map(
                first.previous_attributes, self.previous_columns, index, previous_named, uuid
            ),
            "updated_attributes": _row_map(
                first.updated_attributes, self.updated_columns, index, updated_named, uuid
            ),
        }
        if self.transit_uris is not None:
            fields["transit_uri"] = self.transit_uris.value(index)
        if self.offsets is not None and self.sizes is not None:
            size = int(self.sizes[index])
            fields["file_size"] = size
            fields["content_claim"] = _moved(self.resource, int(self.offsets[index]), size)
        if self.previous_offsets is not None and self.previous_sizes is not None:
            size = int(self.previous_sizes[index])
            fields["previous_file_size"] = size
            fields["previous_content_claim"] = _moved(
                self.previous_resource, int(self.previous_offsets[index]), size
            )
        return attrs.evolve(first, **fields)  # type: ignore[arg-type]

    def events(self) -> list[ProvenanceEvent]:
        """Every event, in order."""
        return [self.event(i) for i in range(self.count)]

    def cut(self, start: int, stop: int) -> ProvenanceEventRun:
        """Events ``start .. stop-1`` as a run of their own."""

        def part(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[start:stop]

        return ProvenanceEventRun(
            first=self.event(start),
            uuid_numbers=self.uuid_numbers[start:stop],
            uuid_named=self.uuid_named,
            offsets=part(self.offsets),
            sizes=part(self.sizes),
            previous_offsets=part(self.previous_offsets),
            previous_sizes=part(self.previous_sizes),
            resource=self.resource,
            previous_resource=self.previous_resource,
            previous_columns={n: c.cut(start, stop) for n, c in self.previous_columns.items()},
            updated_columns={n: c.cut(start, stop) for n, c in self.updated_columns.items()},
            transit_uris=None if self.transit_uris is None else self.transit_uris.cut(start, stop),
        )


@attrs.frozen(eq=False)
class InterleavedRuns:
    """Runs whose events come interleaved, as one by one's sessions record them.

    A member recording a batch makes a run per kind of event (a SEND run, then a DROP run);
    one by one, a session per FlowFile records SEND, DROP, SEND, DROP ... and NiFi's run-duration
    sessions each kind in turn for up to 1,000 FlowFiles. Event *j* of ``runs[i]`` is the
    ``positions[i][j]``-th event of the group: the positions of all runs together are
    ``0 .. count-1``, each once, and rise within a run. The provenance repository gives the
    group consecutive ids in that order and still stores each run as a run.
    """

    runs: tuple[ProvenanceEventRun, ...]
    positions: tuple[np.ndarray, ...]

    @property
    def count(self) -> int:
        """How many events, in all runs."""
        return sum(run.count for run in self.runs)

    def events(self) -> list[ProvenanceEvent]:
        """Every event, in the group's order."""
        placed: list[ProvenanceEvent | None] = [None] * self.count
        for run, positions in zip(self.runs, self.positions, strict=True):
            for event, position in zip(run.events(), positions.tolist(), strict=True):
                placed[position] = event
        return placed  # type: ignore[return-value]  # every position is filled


def _row_map(
    base: Attributes,
    columns: Mapping[str, Column],
    index: int,
    named: Sequence[str],
    uuid: str,
) -> Attributes:
    if not columns and not named:
        return base
    values = dict(base._data)
    apply_row(values, columns, index)  # type: ignore[arg-type]
    for name in named:
        values[name] = uuid
    return Attributes._trusted(values)


def _moved(resource: ResourceClaim | None, offset: int, size: int) -> ContentClaim | None:
    """*size* bytes at *offset* of *resource* (none for an empty FlowFile)."""
    if resource is None or not size:
        return None
    return ContentClaim(resource, offset, size)
