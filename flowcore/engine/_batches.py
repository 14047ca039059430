"""FlowFile batches inside a task: made by sources, passed whole between members, queued as one.

Sources make batches (:mod:`flowcore.engine._source_batches`); a member that can process a batch
whole (``transform_batch``) gets it whole, and its provenance is recorded as one
:class:`~flowcore.provenance_events.ProvenanceEventRun`; a durable queue stores it as one segment
record. A batch goes whole only where a relationship has exactly one destination (no fan-out clones,
no auto-termination); anywhere else, and whenever a processor declines or fails, its FlowFiles are
materialized and take the one-by-one path, which gives the same FlowFiles and events.

A batch form that stores state (UpdateAttribute's Store State) sets the state its FlowFiles leave
with ``context.set_state`` as its last step. :func:`drain_batches` stages it and stores it with
the batch's output, as a session's commit stores its state, only when the batch goes whole and
no FlowFile waits ahead of it to go one by one (those must see the state first); otherwise the
state is dropped and the batch takes the one-by-one path.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from flowcore.clock import now_ms
from flowcore.engine._held import QueuedBatch
from flowcore.flowfile import Attributes
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import Column, IntColumn, TextColumn, column_of
from flowcore.processor import BatchRoute
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun, ProvenanceEventType
from flowcore.queues import park_queue_id
from flowcore.session.batch_context import BatchContext, BatchEffects, SentRows
from flowcore.session.host import QueuedFlowFile, StateMap

if TYPE_CHECKING:
    from flowcore.engine._member import TaskMember

__all__ = [
    "attributes_changed",
    "batch_run",
    "drain_batches",
    "drop_whole",
    "event_of",
    "record_attribute_changes",
    "record_effects",
    "route_whole",
    "send_run",
    "unpacks",
    "write_deferred",
]

log = logging.getLogger(__name__)


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


def route_whole(
    member: TaskMember,
    relationship: str,
    batch: FlowFileBatch,
    positions: np.ndarray | None = None,
) -> None:
    """Send a whole batch on: to the next member, or to a durable queue as one segment record.

    *positions* are the FlowFiles' queue positions, when already reserved.
    """
    task = member.task
    counted = member.transfers[relationship]
    counted[0] += batch.count
    counted[1] += batch.bytes
    route = member.plan.routes[relationship][0]
    if positions is None:
        queued = batch.queued(task.spec.batch_time, task.take_queue_indices(batch.count))
    else:
        queued = attrs.evolve(batch, queue_date=task.spec.batch_time, queue_date_indices=positions)
    if route.member is not None:
        task.members[route.member].pending_batches.append(QueuedBatch(queued, route.connection_id))
    else:
        task.enqueue_batch(route.connection_id, queued)


def _same_flowfiles(before: FlowFileBatch, after: FlowFileBatch) -> bool:
    """Whether *after* is *before* with (at most) other attributes."""
    return (
        attrs.evolve(
            after,
            attributes=before.attributes,
            uuid_named=before.uuid_named,
            columns=before.columns,
        )
        == before
    )


def _routes_of(result: Any, batch: FlowFileBatch) -> list[BatchRoute] | None:
    """A batch form's result as routes that hold each FlowFile of *batch* once; else None."""
    if result is None:
        return None
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], str):
        routes = [BatchRoute(result[0], None, result[1])]
    else:
        routes = list(result)
    taken = [np.arange(batch.count) if r.rows is None else np.asarray(r.rows) for r in routes]
    if sum(len(t) for t in taken) != batch.count:
        return None
    if len(taken) > 1 and not np.array_equal(
        np.sort(np.concatenate(taken)), np.arange(batch.count)
    ):
        return None
    for route, rows in zip(routes, taken, strict=True):
        if route.rows is not None and len(rows) != route.batch.count:
            return None
    return routes


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
        member.deferred_batches.append(QueuedBatch(batch, queue_id))
        return False
    task.unpacked += batch.count
    return True


def write_deferred(member: TaskMember) -> None:
    """Write the batches *member* deferred back to their queues, one segment each."""
    task = member.task
    queues = task.spec.plan.queue_members
    for deferred in member.deferred_batches:
        # a pipelined connection's batches wait in the member's park queue
        queue_id = deferred.queue_id
        kept = queue_id if queue_id in queues else park_queue_id(member.plan.component_id)
        task.enqueue_batch(kept, deferred.batch)


def drain_batches(member: TaskMember) -> None:
    """Process the batches that reached a member whole, or hand their FlowFiles on one by one."""
    pending, member.pending_batches = member.pending_batches, []
    whole = member.plan.routes_or_drops_whole
    staged: list[Mapping[str, str]] = []
    context = BatchContext(member.context, member, staged.append)
    for waiting in pending:
        batch, queue_id = waiting.batch, waiting.queue_id
        routes = None
        staged.clear()
        # A batch never overtakes FlowFiles waiting to go one by one (a batch declined before
        # it, single FlowFiles ahead in the queue): queue order, and the state each leaves.
        if whole and not member.deferred_batches and not member.pending:
            try:
                routes = _routes_of(member.processor.transform_batch(context, batch), batch)
            except Exception:  # the one-by-one path runs it again, with bulletins and penalties
                log.debug("%s declined a batch by failing", member.plan.name, exc_info=True)
            member.context.yielded |= context.yielded
        parts = None
        if routes is not None and _retries(member, routes):
            routes = None  # retried FlowFiles go back one by one, through a session
        if routes is not None:
            parts = [(r, batch if r.rows is None else batch.take(r.rows)) for r in routes]
            if not all(_same_flowfiles(before, r.batch) for r, before in parts):
                parts = None
        if parts is None:
            context.discard()
            if unpacks(member, batch, queue_id):
                member.pending.extend(QueuedFlowFile(f, queue_id) for f in batch)
            continue
        if staged:  # stored as a session's commit stores it: with the output
            member.state = StateMap(member.state.version + 1, dict(staged[-1]))
            member.new_state = dict(staged[-1])
        record_effects(member, context.take(), {id(batch): queue_id})
        member.consumed += batch.count
        # Queue positions as the one-by-one path gives them: in input order across the parts.
        first_index = member.task.take_queue_indices(batch.count)
        for route, before in parts:
            dropped = not member.plan.routes.get(route.relationship)
            if route.reported:
                if before.count:
                    member.task.events.append(
                        batch_run(
                            member,
                            ProvenanceEventType.ROUTE,
                            before,
                            route.batch,
                            now_ms(),
                            relationship=route.relationship,
                            source_queue_identifier=queue_id,
                        )
                    )
            else:
                record_attribute_changes(member, before, route.batch, queue_id)
            if dropped:
                drop_whole(member, route.relationship, before, route.batch, queue_id)
                continue
            rows = np.arange(batch.count) if route.rows is None else np.asarray(route.rows)
            route_whole(member, route.relationship, route.batch, first_index + rows)


def _retries(member: TaskMember, routes: list[BatchRoute]) -> bool:
    """Whether a batch form sent FlowFiles to a relationship the member retries."""
    policy = member.retry_policy
    return policy is not None and any(
        r.relationship in policy.relationships and r.batch.count for r in routes
    )


def send_run(
    member: TaskMember, sent: SentRows, now: int, queue_id: str | None
) -> ProvenanceEventRun:
    """The SEND events a batch form reported, as a session's reporter records them: one run.

    Each event has the FlowFile as sent (no attribute updated) and its own transit URI when
    they differ (a column of the run).
    """
    batch = sent.batch if sent.rows is None else sent.batch.take(sent.rows)
    uris = sent.transit_uris
    run = batch_run(
        member,
        ProvenanceEventType.SEND,
        batch,
        batch,
        now,
        transit_uri=uris if isinstance(uris, str) else uris[0],
        details=sent.details,
        source_queue_identifier=queue_id,
    )
    if isinstance(uris, str) or all(u == uris[0] for u in uris):
        return run
    return attrs.evolve(run, transit_uris=column_of(uris))


def record_effects(member: TaskMember, effects: BatchEffects, queues: Mapping[int, str]) -> None:
    """Record what a batch form staged and reported, as a session's commit records it.

    Files and log lines go to the task's effect file, carried out after the stage run's
    write-ahead log transaction; SEND events become runs. *queues* names the queue of each
    batch the batch form was given (by ``id``).
    """
    member.carry_out_after_commit(effects.publications, effects.logs)
    now = now_ms()
    for sent in effects.sends:
        member.task.events.append(send_run(member, sent, now, queues.get(id(sent.batch))))


def drop_whole(
    member: TaskMember,
    relationship: str,
    before: FlowFileBatch,
    after: FlowFileBatch,
    queue_id: str,
) -> None:
    """Auto-terminate a part of a batch: counted, and a DROP event for each, as one run."""
    counted = member.transfers[relationship]
    counted[0] += after.count
    counted[1] += after.bytes
    if after.count:
        member.task.events.append(
            batch_run(
                member,
                ProvenanceEventType.DROP,
                before,
                after,
                now_ms(),
                details=f"Auto-Terminated by {relationship} Relationship",
                source_queue_identifier=queue_id,
            )
        )


def record_attribute_changes(
    member: TaskMember, before: FlowFileBatch, after: FlowFileBatch, queue_id: str
) -> None:
    """ATTRIBUTES_MODIFIED for each FlowFile whose attributes changed, as one run."""
    if not before.count:
        return
    changed = attributes_changed(before, after)
    if changed is None:
        return
    if changed is not True:
        before, after = before.where(changed), after.where(changed)
    member.task.events.append(
        batch_run(
            member,
            ProvenanceEventType.ATTRIBUTES_MODIFIED,
            before,
            after,
            now_ms(),
            source_queue_identifier=queue_id,
        )
    )


def attributes_changed(before: FlowFileBatch, after: FlowFileBatch) -> np.ndarray | bool | None:
    """Which FlowFiles' attributes differ between *before* and *after* (the same FlowFiles).

    True when all of them do, None when none does, else a mask.
    """
    mask = np.zeros(after.count, dtype=bool)
    for name in {*before.attributes, *before.columns, *after.attributes, *after.columns}:
        if name == "uuid" or (name in before.uuid_named and name in after.uuid_named):
            continue
        old, new = before.column(name), after.column(name)
        if old is None or new is None:
            # added or removed: for the FlowFiles that have it on the other side (a column
            # may leave some of them without it)
            side = new if old is None else old
            assert side is not None  # the name comes from one side or the other
            present = _present(side)
            if present is True:
                return True
            mask |= present
            continue
        if name in before.attributes and name in after.attributes:
            if before.attributes[name] != after.attributes[name]:
                return True
            continue
        mask |= ~new.equals(old)
    if mask.all():
        return True
    return mask if mask.any() else None


def _present(column: Column) -> np.ndarray | bool:
    """Where the FlowFiles have the attribute (True: all of them, as whole numbers always do)."""
    if isinstance(column, IntColumn) or None not in column.dictionary:
        return True
    has = np.array([v is not None for v in column.dictionary], dtype=bool)
    return has[column.codes]


def _updated_column(old: Column | None, new: Column) -> Column | None:
    """*new*'s value where it differs from *old*'s, None (not updated) elsewhere.

    None when no FlowFile's value changed. Only the changed values are rendered: a column
    passed on unchanged costs nothing, however many distinct values it holds.
    """
    if old is None:
        return new
    if old is new:
        return None
    changed = ~new.equals(old)
    if not changed.any():
        return None
    if changed.all():
        return new
    codes, values = new.encoded()
    used = np.unique(codes[changed])
    remap = np.full(len(values), len(used), dtype=codes.dtype)
    remap[used] = np.arange(len(used), dtype=codes.dtype)
    kept = [values[i] for i in used.tolist()]
    return TextColumn(np.where(changed, remap[codes], len(used)), (*kept, None))


def batch_run(
    member: TaskMember,
    kind: ProvenanceEventType,
    before: FlowFileBatch | None,
    after: FlowFileBatch,
    now: int,
    **fields: Any,
) -> ProvenanceEventRun:
    """The events a session would record for each FlowFile of *after*, as one run.

    *before* is the FlowFiles as the session took them (None: created in it): an event's
    previous attributes and content are *before*'s, its updated attributes what differs.
    """
    flowfile = after.flowfile(0)
    original = before.flowfile(0) if before is not None else None
    previous = original.attributes if original is not None else Attributes()
    get = previous.get
    updated = {k: v for k, v in flowfile.attributes.items() if get(k) != v}
    event = attrs.evolve(
        event_of(member, kind, flowfile, now),
        previous_attributes=previous,
        updated_attributes=updated,
        previous_content_claim=original.content if original is not None else None,
        previous_file_size=original.size if original is not None else None,
        **fields,
    )
    if before is None:
        return ProvenanceEventRun(
            event,
            after.uuid_numbers,
            uuid_named=((), (*after.uuid_named, "uuid")),
            offsets=after.offsets,
            sizes=after.sizes,
            resource=after.resource_claim,
            updated_columns=dict(after.columns),
        )
    varying = {*before.columns, *after.columns}
    updated_columns = {}
    for name in varying:
        if name in after.columns or name in after.attributes:  # else removed: not an update
            new = after.column(name)
            assert new is not None
            updated = _updated_column(before.column(name), new)
            if updated is not None:
                updated_columns[name] = updated
    return ProvenanceEventRun(
        event,
        after.uuid_numbers,
        uuid_named=(
            (*before.uuid_named, "uuid"),
            tuple(n for n in after.uuid_named if n not in before.uuid_named),
        ),
        offsets=after.offsets,
        sizes=after.sizes,
        previous_offsets=before.offsets,
        previous_sizes=before.sizes,
        resource=after.resource_claim,
        previous_resource=before.resource_claim,
        previous_columns=dict(before.columns),
        updated_columns=updated_columns,
    )
