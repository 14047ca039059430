"""FlowFile batches: many FlowFiles made together, held as one value instead of one object each.

A source that creates 10,000 FlowFiles at once (GenerateFlowFile) makes FlowFiles that differ
only by position: consecutive ids and uuids, contents at equal steps through one claim, the same
dates and attributes (but for the ones whose value is the FlowFile's own uuid, like a default
``filename``). Python objects per FlowFile, a session record per FlowFile and a provenance event
per FlowFile cost far more than the work itself. A :class:`FlowFileBatch` is all of them at
once; processors that can treat a batch as a whole (UpdateAttribute with fixed values) do so,
queues store it as one record, and provenance records it as runs
(:mod:`repositories._provenance_runs`). Anywhere a batch is not understood it is *materialized*:
:meth:`FlowFileBatch.flowfiles` gives exactly the FlowFiles the one-by-one path would have made.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

import attrs

from flowcore.flowfile import Attributes, ContentClaim, FlowFile, ResourceClaim, sequence_uuid

__all__ = ["BatchMaker", "FlowFileBatch"]


@attrs.frozen
class FlowFileBatch:
    """FlowFiles ``0 .. count-1`` that differ only by position.

    FlowFile *i* has id ``first_id + i``, uuid ``uuid_key`` with ``uuid_first + i`` as its last
    8 hex digits, the shared ``attributes`` plus ``uuid_named`` names set to its uuid, content
    ``size`` bytes at ``offset + i * stride`` of ``resource_claim`` (none when ``size`` is 0),
    lineage start index ``first_id + i`` and queue date index ``queue_date_index + i``.
    """

    count: int
    first_id: int
    uuid_key: str  # the 28 characters before the counting digits
    uuid_first: int
    attributes: Attributes
    uuid_named: tuple[str, ...]
    resource_claim: ResourceClaim | None
    offset: int
    stride: int
    size: int
    entry_date: int
    lineage_start_date: int
    queue_date: int = 0
    queue_date_index: int = 0

    def __len__(self) -> int:
        return self.count

    @property
    def bytes(self) -> int:
        """The FlowFiles' total size."""
        return self.count * self.size

    def uuid(self, index: int) -> str:
        """FlowFile *index*'s uuid."""
        return sequence_uuid(self.uuid_key, self.uuid_first + index)

    def content(self, index: int) -> ContentClaim | None:
        """FlowFile *index*'s content claim."""
        if self.resource_claim is None or self.size == 0:
            return None
        return ContentClaim(self.resource_claim, self.offset + index * self.stride, self.size)

    def flowfile(self, index: int) -> FlowFile:
        """FlowFile *index*, as the one-by-one path makes it."""
        uuid = self.uuid(index)
        attributes = {**dict.fromkeys(self.uuid_named, uuid), **self.attributes, "uuid": uuid}
        return FlowFile(
            id=self.first_id + index,
            uuid=uuid,
            attributes=Attributes._trusted(attributes),
            content=self.content(index),
            size=self.size,
            entry_date=self.entry_date,
            lineage_start_date=self.lineage_start_date,
            lineage_start_index=self.first_id + index,
            queue_date=self.queue_date,
            queue_date_index=self.queue_date_index + index,
        )

    def flowfiles(self) -> list[FlowFile]:
        """Every FlowFile, in order.

        FlowFile 0 is built and checked as usual; the others copy it field by field, as
        :meth:`FlowFile.replace` does, since only the positional fields differ (a batch read
        from a queue becomes its FlowFiles here, 10,000 at a time).
        """
        if not self.count:
            return []
        first = self.flowfile(0)
        made = [first]
        new, setter = object.__new__, object.__setattr__
        trusted = Attributes._trusted
        shared, named = dict(self.attributes), self.uuid_named
        rc, size, stride = self.resource_claim, self.size, self.stride
        offset = self.offset
        for index in range(1, self.count):
            uuid = sequence_uuid(self.uuid_key, self.uuid_first + index)
            flowfile = new(FlowFile)
            setter(flowfile, "id", self.first_id + index)
            setter(flowfile, "uuid", uuid)
            attributes = {**dict.fromkeys(named, uuid), **shared, "uuid": uuid}
            setter(flowfile, "attributes", trusted(attributes))
            content = None
            if rc is not None and size:
                content = ContentClaim(rc, offset + index * stride, size)
            setter(flowfile, "content", content)
            setter(flowfile, "size", size)
            setter(flowfile, "entry_date", first.entry_date)
            setter(flowfile, "lineage_start_date", first.lineage_start_date)
            setter(flowfile, "lineage_start_index", self.first_id + index)
            setter(flowfile, "queue_date", first.queue_date)
            setter(flowfile, "queue_date_index", self.queue_date_index + index)
            setter(flowfile, "penalty_expiration", 0)
            made.append(flowfile)
        return made

    def __iter__(self) -> Iterator[FlowFile]:
        return iter(self.flowfiles())

    def cut(self, start: int, stop: int) -> FlowFileBatch:
        """FlowFiles ``start .. stop-1`` as a batch of their own."""
        stop = min(stop, self.count)
        return attrs.evolve(
            self,
            count=stop - start,
            first_id=self.first_id + start,
            uuid_first=self.uuid_first + start,
            offset=self.offset + start * self.stride,
            queue_date_index=self.queue_date_index + start,
        )

    def with_attributes(self, changes: Mapping[str, str]) -> FlowFileBatch:
        """Every FlowFile with *changes* applied; ``uuid`` cannot change and is ignored."""
        updates = {k: v for k, v in changes.items() if k != "uuid"}
        named = tuple(n for n in self.uuid_named if n not in updates)
        return attrs.evolve(self, attributes=self.attributes.updated(updates), uuid_named=named)

    def queued(self, queue_date: int, queue_date_index: int) -> FlowFileBatch:
        """The batch as enqueued at *queue_date*, its FlowFiles numbered from the index given."""
        return attrs.evolve(self, queue_date=queue_date, queue_date_index=queue_date_index)

    def claim_counts(self) -> dict[ResourceClaim, int]:
        """How many FlowFiles reference each resource claim."""
        if self.resource_claim is None or self.size == 0:
            return {}
        return {self.resource_claim: self.count}


class BatchMaker(Protocol):
    """What a source's ``read_work_batch`` is given.

    See :meth:`~flowcore.processor_kinds.SourceProcessor.read_work_batch`.
    """

    def create(
        self, count: int, attributes: Mapping[str, str], content: bytes | None
    ) -> FlowFileBatch:
        """*count* new FlowFiles, each with *content* (None or empty: none), as CREATE events.

        *attributes* go over the defaults ``filename`` (the uuid) and ``path`` (``./``).
        """
        ...
