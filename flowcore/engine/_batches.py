"""FlowFile batches inside a task: made by sources, passed whole between members, queued as one.

A source that can make a work item's FlowFiles as a :class:`~flowcore.flowfile_batch.FlowFileBatch`
(``read_work_batch``) gets a :class:`TaskBatchMaker`; a member that can process a batch whole
(``transform_batch``) gets it whole, and its provenance is recorded as one
:class:`~flowcore.provenance_events.ProvenanceEventRun`; a durable queue stores it as one segment
record. A batch goes whole only where a relationship has exactly one destination (no fan-out clones,
no auto-termination); anywhere else, and whenever a processor declines or fails, its FlowFiles are
materialized and take the one-by-one path, which gives the same FlowFiles and events.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from flowcore.clock import now_ms
from flowcore.flowfile import Attributes, new_uuids
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun, ProvenanceEventType
from flowcore.queues import park_queue_id
from flowcore.session.host import QueuedFlowFile

if TYPE_CHECKING:
    from flowcore.engine._member import TaskMember

__all__ = [
    "TaskBatchMaker",
    "drain_batches",
    "event_of",
    "read_work_batch",
    "record_attribute_changes",
    "route_whole",
    "unpacks",
    "write_deferred",
]

log = logging.getLogger(__name__)

#: Bytes written to the content repository per call when a batch's content is repeated.
_WRITE_CHUNK = 1 << 20


class TaskBatchMaker:
    """Creates FlowFile batches for a source member: ids, uuids, content and CREATE runs."""

    def __init__(self, member: TaskMember) -> None:
        self.member = member
        self.events: list[ProvenanceEventRun] = []

    def create(
        self, count: int, attributes: Mapping[str, str], content: bytes | None
    ) -> FlowFileBatch:
        """*count* new FlowFiles sharing *attributes* and each holding *content*."""
        member, now = self.member, now_ms()
        first_id = member.task.take_ids(count)
        key, first_uuid = new_uuids(count)
        size = len(content) if content else 0
        resource, offset = None, 0
        if content and count:
            stream = member.content.writer(member.component.id).open_stream()
            per_write = max(1, _WRITE_CHUNK // size)
            for start in range(0, count, per_write):
                stream.write(content * min(per_write, count - start))
            claim = stream.close()
            assert claim is not None
            resource, offset = claim.resource_claim, claim.offset
        shared = {"path": "./", **attributes}
        shared.pop("uuid", None)
        named = () if "filename" in shared else ("filename",)
        batch = FlowFileBatch(
            count=count,
            first_id=first_id,
            uuid_key=key,
            uuid_first=first_uuid,
            attributes=Attributes(shared),
            uuid_named=named,
            resource_claim=resource,
            offset=offset,
            stride=size,
            size=size,
            entry_date=now,
            lineage_start_date=now,
            queue_date=now,
        )
        if count:
            flowfile = batch.flowfile(0)
            created = event_of(member, ProvenanceEventType.CREATE, flowfile, now)
            created = attrs.evolve(created, updated_attributes=flowfile.attributes)
            self.events.append(ProvenanceEventRun(created, count, size, ((), (*named, "uuid"))))
        return batch


def event_of(
    member: TaskMember, kind: ProvenanceEventType, flowfile: Any, now: int
) -> ProvenanceEvent:
    """FlowFile *flowfile*'s event as a session would build it (attributes left to the caller)."""
    component = member.component
    return ProvenanceEvent.of(
        kind,
        flowfile,
        component=(component.id, component.type, component.name),
        time=now,
        event_duration=0,
    )


def _whole_routes(member: TaskMember) -> bool:
    """Whether every relationship of the member leads to exactly one destination."""
    return member.plan.routes_whole


def route_whole(member: TaskMember, relationship: str, batch: FlowFileBatch) -> None:
    """Send a whole batch on: to the next member, or to a durable queue as one segment record."""
    task = member.task
    route = member.plan.routes[relationship][0]
    counted = member.transfers[relationship]
    counted[0] += batch.count
    counted[1] += batch.bytes
    queued = batch.queued(task.spec.batch_time, task.take_queue_indices(batch.count))
    if route.member is not None:
        task.members[route.member].pending_batches.append((queued, route.connection_id))
    else:
        task.enqueue_batch(route.connection_id, queued)


def read_work_batch(member: TaskMember, item: Any) -> bool:
    """Read one source work item as a batch, if the source can; whether it did."""
    if not _whole_routes(member):
        return False
    maker = TaskBatchMaker(member)
    try:
        made = member.processor.read_work_batch(member.context, item, maker)  # type: ignore[attr-defined]
    except Exception:  # the one-by-one path reads it again and reports what goes wrong
        log.debug("reading %s as a batch failed; reading it FlowFile by FlowFile", item.key)
        return False
    if made is None:
        return False
    relationship, batch = made
    member.task.events.extend(maker.events)
    route_whole(member, relationship, batch)
    return True


def _same_flowfiles(before: FlowFileBatch, after: FlowFileBatch) -> bool:
    """Whether *after* is *before* with (at most) other attributes."""
    return attrs.evolve(after, attributes=before.attributes, uuid_named=before.uuid_named) == before


def unpacks(member: TaskMember, batch: FlowFileBatch, queue_id: str) -> bool:
    """Whether the task may unpack *batch* into FlowFiles for *member*; else it is deferred.

    Batches are taken by the larger ``batch_max_batched_flowfiles`` because they cost a task
    bytes, not objects. Unpacked, each FlowFile is an object of a few KB, so a task unpacks at
    most ``batch_max_flowfiles`` of them (at least one batch); the others go back to their
    queue whole (:func:`write_deferred`), ready for the next micro-batch.
    """
    task = member.task
    limit = task.spec.settings.batch_max_flowfiles
    if member.deferred_batches or (task.unpacked and task.unpacked + batch.count > limit):
        member.deferred_batches.append((queue_id, batch))
        return False
    task.unpacked += batch.count
    return True


def write_deferred(member: TaskMember) -> None:
    """Write the batches *member* deferred back to their queues, one segment each."""
    task = member.task
    queues = task.spec.plan.queue_members
    for queue_id, batch in member.deferred_batches:
        # a pipelined connection's batches wait in the member's park queue
        kept = queue_id if queue_id in queues else park_queue_id(member.plan.component_id)
        task.enqueue_batch(kept, batch)


def drain_batches(member: TaskMember) -> None:
    """Process the batches that reached a member whole, or hand their FlowFiles on one by one."""
    pending, member.pending_batches = member.pending_batches, []
    whole = _whole_routes(member)
    for batch, queue_id in pending:
        result = None
        if whole and not member.deferred_batches:
            try:
                result = member.processor.transform_batch(member.context, batch)
            except Exception:  # the one-by-one path runs it again, with bulletins and penalties
                log.debug("%s declined a batch by failing", member.plan.name, exc_info=True)
        if result is None or not _same_flowfiles(batch, result[1]):
            if unpacks(member, batch, queue_id):
                member.pending.extend(QueuedFlowFile(f, queue_id) for f in batch)
            continue
        relationship, changed = result
        member.consumed += batch.count
        record_attribute_changes(member, batch, changed, queue_id)
        route_whole(member, relationship, changed)


def record_attribute_changes(
    member: TaskMember, before: FlowFileBatch, after: FlowFileBatch, queue_id: str
) -> None:
    """ATTRIBUTES_MODIFIED for each FlowFile, as one run, when the attributes changed."""
    if not before.count:
        return
    old, new = before.flowfile(0), after.flowfile(0)
    updated = {k: v for k, v in new.attributes.items() if old.attributes.get(k) != v}
    if not updated:
        return
    event = attrs.evolve(
        event_of(member, ProvenanceEventType.ATTRIBUTES_MODIFIED, new, now_ms()),
        previous_attributes=old.attributes,
        updated_attributes=updated,
        previous_content_claim=old.content,
        previous_file_size=old.size,
        source_queue_identifier=queue_id,
    )
    named = ((*before.uuid_named, "uuid"), ())
    member.task.events.append(ProvenanceEventRun(event, before.count, before.stride, named))
