"""What every processor kind's driver does with whole batches: route, drop, record runs.

A member that gets FlowFile batches whole (read whole from a queue's segments, handed on whole
by the member before it, or made by a source) is driven by its kind's driver, a subclass of
:class:`BatchDriver`: :class:`~flowcore.engine._batches.PerFlowFileDriver`
(``transform_batch``), :class:`~flowcore.engine._bins.BinningDriver` (``bin_batches``,
``merge_batches``), :class:`~flowcore.engine._source_batches.SourceDriver`
(``read_work_batches``) and :class:`~flowcore.engine._sink_batches.SinkDriver`
(``write_batches``). Each works on a :class:`~flowcore.engine._contracts.Member` and reaches its
task only through :class:`~flowcore.engine._contracts.BatchTask`, so an engine task and the test
harness (``flowcore.testing._batches``) drive the same classes.

A batch goes whole only where a relationship has exactly one destination (no fan-out clones), or
none and is auto-terminated (dropped whole: counted, and a DROP for each FlowFile as one run,
:meth:`BatchDriver.drop_whole`); anywhere else, and whenever a processor declines or fails, its
FlowFiles are materialized and take the one-by-one path, which gives the same FlowFiles and
events. :meth:`BatchDriver.route_runs` records what a session's commit would for each route:
reported ROUTE or CONTENT_MODIFIED events, CONTENT_MODIFIED where a content changed (its previous
content the one taken, for replay), ATTRIBUTES_MODIFIED elsewhere.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

import flowcore.session._runs as runs
from flowcore.engine._contracts import Member
from flowcore.engine._held import QueuedBatch
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import Column, IntColumn, column_of
from flowcore.provenance_events import ProvenanceEventRun, ProvenanceEventType
from flowcore.session.batch_context import BatchEffects, BatchRoute, SentRows

__all__ = ["BatchDriver", "attributes_changed", "content_changed", "with_transit_uris"]


class BatchDriver:
    """Drives one member's whole batches: the routing and event recording all kinds share.

    Args:
        member: the member driven (an engine task's, or the test harness's).
    """

    def __init__(self, member: Member) -> None:
        self.member = member

    def route_whole(
        self,
        relationship: str,
        batch: FlowFileBatch,
        positions: np.ndarray | None = None,
    ) -> None:
        """Send a whole batch on: to the next member, or to a durable queue as one segment record.

        *positions* are the FlowFiles' queue positions, when already reserved.
        """
        member = self.member
        counted = member.transfers[relationship]
        counted[0] += batch.count
        counted[1] += batch.bytes
        self._hand_on(relationship, batch, positions)

    def _hand_on(
        self, relationship: str, batch: FlowFileBatch, positions: np.ndarray | None
    ) -> None:
        """:meth:`route_whole` without counting the transfer."""
        member = self.member
        task = member.task
        route = member.plan.routes[relationship][0]
        if positions is None:
            queued = batch.queued(task.batch_time, task.take_queue_indices(batch.count))
        else:
            queued = attrs.evolve(batch, queue_date=task.batch_time, queue_date_indices=positions)
        if route.member is not None:
            task.members[route.member].pending_batches.append(
                QueuedBatch(queued, route.connection_id)
            )
        else:
            task.enqueue_batch(route.connection_id, queued)

    def route_runs(
        self,
        route: BatchRoute,
        before: FlowFileBatch,
        now: int,
        queue_id: str,
        reported: np.ndarray | None = None,
    ) -> list[ProvenanceEventRun]:
        """The events a session's commit records for a route's FlowFiles, as runs, in its order.

        Reported events first (ROUTE, CONTENT_MODIFIED, ATTRIBUTES_MODIFIED: ``route.reported``,
        ``route.content_modified``, ``route.attributes_modified``), then CONTENT_MODIFIED for each
        FlowFile whose content changed, then ATTRIBUTES_MODIFIED for each other one whose
        attributes changed, when nothing was reported for it. *before* is the route's FlowFiles
        as the batch form was given them; *reported* marks those with an event reported through
        the context (a SEND), which get no ATTRIBUTES_MODIFIED either.
        """
        after = route.batch
        if not before.count:
            return []
        runs = []
        if route.reported:
            runs.append(
                self.batch_run(
                    ProvenanceEventType.ROUTE,
                    before,
                    after,
                    now,
                    relationship=route.relationship,
                    source_queue_identifier=queue_id,
                )
            )
        if route.content_modified:
            runs.append(
                self.batch_run(
                    ProvenanceEventType.CONTENT_MODIFIED,
                    before,
                    after,
                    now,
                    source_queue_identifier=queue_id,
                )
            )
        if route.attributes_modified:
            runs.append(
                self.batch_run(
                    ProvenanceEventType.ATTRIBUTES_MODIFIED,
                    before,
                    after,
                    now,
                    source_queue_identifier=queue_id,
                )
            )
        changed = content_changed(before, after)
        if changed is not None:
            old, new = (
                (before, after)
                if changed is True
                else (before.where(changed), after.where(changed))
            )
            runs.append(
                self.batch_run(
                    ProvenanceEventType.CONTENT_MODIFIED,
                    old,
                    new,
                    now,
                    source_queue_identifier=queue_id,
                )
            )
        if route.reported or route.content_modified or route.attributes_modified or changed is True:
            return runs
        keep = None if changed is None else ~changed
        if reported is not None:
            keep = ~reported if keep is None else keep & ~reported
        if keep is not None:
            before, after = before.where(keep), after.where(keep)
        runs.extend(self.attribute_runs(before, after, now, queue_id))
        return runs

    def unpacks(self, batch: FlowFileBatch, queue_id: str) -> bool:
        """Whether the task may unpack *batch* into FlowFiles for *member*; else it is deferred.

        Batches are taken by the larger ``batch_max_batched_flowfiles`` because they cost a task
        bytes, not objects. Unpacked, each FlowFile is an object of a few KB, so a task unpacks at
        most ``batch_max_flowfiles`` of them (at least one batch); the others go back to their
        queue whole (``_Task`` writes them back), ready for the next micro-batch.
        """
        member = self.member
        task = member.task
        limit = task.unpack_limit
        if member.deferred_batches or (task.unpacked and task.unpacked + batch.count > limit):
            member.deferred_batches.append(QueuedBatch(batch, queue_id))
            return False
        task.unpacked += batch.count
        return True

    def route_in_input_order(
        self, parts: list[tuple[str, FlowFileBatch, np.ndarray]], first_index: int
    ) -> None:
        """Send a batch form's parts on, each FlowFile reaching its next member in input order.

        Each part is ``(relationship, batch, rows)``: its FlowFiles were input rows *rows*. The
        next member takes its pending batches in turn, and a queue keeps its batches in the order
        they came, so parts bound for the same place whose rows interleave (ReplaceText's rewritten
        and unchanged FlowFiles, two relationships on one connection) are cut into runs of
        consecutive rows, handed on in input order, as one by one hands each FlowFile on. Parts of
        one connection cut from one batch (RouteOnAttribute's relationships on one connection)
        become one batch again instead.
        """
        member = self.member
        bound: dict[str, list[tuple[str, FlowFileBatch, np.ndarray]]] = {}
        for part in parts:
            route = member.plan.routes[part[0]][
                0
            ]  # a member's, whatever the connection; or a queue
            place = route.member if route.member is not None else f"queue {route.connection_id}"
            bound.setdefault(place, []).append(part)
        for group in bound.values():
            if _in_turn(group):
                for relationship, batch, rows in group:
                    self.route_whole(relationship, batch, first_index + rows)
                continue
            if self._one_connection(group):  # one batch again, in input order (RouteOnAttribute's)
                joined = FlowFileBatch.interleaved(
                    [b for _, b, _ in group], [r for _, _, r in group]
                )
                if joined is not None:
                    for relationship, batch, _ in group:
                        counted = member.transfers[relationship]
                        counted[0] += batch.count
                        counted[1] += batch.bytes
                    every = np.sort(np.concatenate([rows for _, _, rows in group]))
                    self._hand_on(group[0][0], joined, first_index + every)
                    continue
            owner = np.concatenate([np.full(len(rows), n) for n, (_, _, rows) in enumerate(group)])
            local = np.concatenate([np.arange(len(rows)) for _, _, rows in group])
            every = np.concatenate([rows for _, _, rows in group])
            order = np.argsort(every, kind="stable")
            owner, local, every = owner[order], local[order], every[order]
            cuts = [0, *(np.flatnonzero(np.diff(owner)) + 1).tolist(), len(owner)]
            for start, stop in itertools.pairwise(cuts):
                relationship, batch, _ = group[int(owner[start])]
                pick = local[start:stop]
                whole = len(pick) == batch.count and bool(np.all(pick == np.arange(batch.count)))
                piece = batch if whole else batch.take(pick)
                self.route_whole(relationship, piece, first_index + every[start:stop])

    def _one_connection(self, group: list[tuple[str, FlowFileBatch, np.ndarray]]) -> bool:
        """Whether the parts' relationships share one connection (``connect(a, b, [r1, r2])``)."""
        member = self.member
        return len({member.plan.routes[r][0].connection_id for r, _, _ in group}) == 1

    def send_run(self, sent: SentRows, now: int, queue_id: str | None) -> ProvenanceEventRun:
        """The SEND events a batch form reported, as a session's reporter records them: one run.

        Each event has the FlowFile as given and as sent (the attributes the batch form changed
        before sending, if any) and its own transit URI when they differ (a column of the run).
        """
        after = sent.batch if sent.as_sent is None else sent.as_sent
        batch = sent.batch if sent.rows is None else sent.batch.take(sent.rows)
        after = after if sent.rows is None else after.take(sent.rows)
        uris = sent.transit_uris
        run = self.batch_run(
            ProvenanceEventType.SEND,
            batch,
            after,
            now,
            transit_uri=uris if isinstance(uris, str) else uris[0],
            details=sent.details,
            source_queue_identifier=queue_id,
        )
        return with_transit_uris(run, uris)

    def record_effects(self, effects: BatchEffects, queues: Mapping[int, str]) -> None:
        """Record what a batch form staged and reported, as a session's commit records it.

        Files and log lines go to the task's effect file, carried out after the stage run's
        write-ahead log transaction; SEND events become runs. *queues* names the queue of each
        batch the batch form was given (by ``id``).
        """
        member = self.member
        member.task.events.extend(self.sent_runs(effects, queues))

    def sent_runs(
        self, effects: BatchEffects, queues: Mapping[int, str]
    ) -> list[ProvenanceEventRun]:
        """:meth:`record_effects`, the SEND runs returned instead of recorded."""
        member = self.member
        member.carry_out_after_commit(effects.publications, effects.logs)
        now = member.now()
        return [self.send_run(sent, now, queues.get(id(sent.batch))) for sent in effects.sends]

    def drop_whole(
        self,
        relationship: str,
        before: FlowFileBatch | None,
        after: FlowFileBatch,
        queue_id: str | None,
    ) -> None:
        """Auto-terminate a part of a batch: counted, and a DROP event for each, as one run.

        *before* is the FlowFiles as they were taken from queue *queue_id* (None, None: made
        here, by a source).
        """
        member = self.member
        run = self.dropped_run(relationship, before, after, queue_id)
        if run is not None:
            member.task.events.append(run)

    def dropped_run(
        self,
        relationship: str,
        before: FlowFileBatch | None,
        after: FlowFileBatch,
        queue_id: str | None,
    ) -> ProvenanceEventRun | None:
        """:meth:`drop_whole`, the DROP run returned instead of recorded (None: no FlowFile)."""
        member = self.member
        counted = member.transfers[relationship]
        counted[0] += after.count
        counted[1] += after.bytes
        if not after.count:
            return None
        return self.batch_run(
            ProvenanceEventType.DROP,
            before,
            after,
            member.now(),
            details=runs.auto_terminated_details(relationship),
            source_queue_identifier=queue_id,
        )

    def record_attribute_changes(
        self, before: FlowFileBatch, after: FlowFileBatch, queue_id: str
    ) -> None:
        """ATTRIBUTES_MODIFIED for each FlowFile whose attributes changed, as one run."""
        member = self.member
        member.task.events.extend(self.attribute_runs(before, after, member.now(), queue_id))

    def attribute_runs(
        self, before: FlowFileBatch, after: FlowFileBatch, now: int, queue_id: str
    ) -> list[ProvenanceEventRun]:
        """ATTRIBUTES_MODIFIED for each FlowFile whose attributes changed: one run, or none."""
        if not before.count:
            return []
        changed = attributes_changed(before, after)
        if changed is None:
            return []
        if changed is not True:
            before, after = before.where(changed), after.where(changed)
        return [
            self.batch_run(
                ProvenanceEventType.ATTRIBUTES_MODIFIED,
                before,
                after,
                now,
                source_queue_identifier=queue_id,
            )
        ]

    def batch_run(
        self,
        kind: ProvenanceEventType,
        before: FlowFileBatch | None,
        after: FlowFileBatch,
        now: int,
        **fields: Any,
    ) -> ProvenanceEventRun:
        """The events a session would record for each FlowFile of *after*, as one run.

        *before* is the FlowFiles as the session took them (None: created in it): an event's
        previous attributes and content are *before*'s, its updated attributes what differs
        (:func:`flowcore.session._runs.run_of`).
        """
        member = self.member
        return runs.run_of(member.component, kind, before, after, now, **fields)


def content_changed(before: FlowFileBatch, after: FlowFileBatch) -> np.ndarray | bool | None:
    """Which FlowFiles' contents differ between *before* and *after* (the same FlowFiles).

    As a session compares a FlowFile's content claim with the one it took: another claim,
    offset or size, where an empty content has no claim. True when all of them differ, None
    when none does, else a mask.
    """
    same_claim = before.resource_claim == after.resource_claim
    same_ranges = np.array_equal(before.offsets, after.offsets) and np.array_equal(
        before.sizes, after.sizes
    )
    if same_claim and same_ranges:
        return None
    held = after.sizes > 0
    moved = held if not same_claim else held & (before.offsets != after.offsets)
    mask = moved | (before.sizes != after.sizes)
    if mask.all():
        return True
    return mask if mask.any() else None


def _in_turn(group: list[tuple[str, FlowFileBatch, np.ndarray]]) -> bool:
    """Whether the parts' rows follow each other: each part's after the previous part's."""
    previous = -1
    for _, _, rows in group:
        if not len(rows):
            continue
        if rows[0] <= previous or (len(rows) > 1 and bool(np.any(np.diff(rows) <= 0))):
            return False
        previous = int(rows[-1])
    return True


def with_transit_uris(run: ProvenanceEventRun, uris: str | Sequence[str]) -> ProvenanceEventRun:
    """*run* with each event's own transit URI, a column, when they differ.

    One URI for all is the run's already (its first event's).
    """
    if isinstance(uris, str) or all(u == uris[0] for u in uris):
        return run
    return attrs.evolve(run, transit_uris=column_of(list(uris)))


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
