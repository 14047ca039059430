"""The per-FlowFile kind's driver: batches through ``transform_batch``, routed whole.

A per-FlowFile member that gets a batch whole hands it to its processor's
``transform_batch(BatchContext, batch)``; its routes, checked by
:func:`~flowcore.engine._routes.checked_routes` (each FlowFile once, declared relationships,
attributes and contents changed only through the context), go on whole and their provenance is
recorded as runs (:class:`~flowcore.engine._driver.BatchDriver`). A batch the processor
declines (None, or an exception) goes one by one, through ``on_trigger`` in sessions.

A batch form that stores state (UpdateAttribute's Store State) sets the state its FlowFiles leave
with ``context.set_state`` as its last step. :meth:`PerFlowFileDriver.drain` stages it and stores
it with the batch's output, as a session's commit stores its state, only when the batch goes
whole and no FlowFile waits ahead of it to go one by one (those must see the state first);
otherwise the state is dropped and the batch takes the one-by-one path.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np

from flowcore.engine._driver import BatchDriver
from flowcore.engine._routes import checked_routes
from flowcore.errors import BatchResultError
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.session.batch_context import BatchContext, BatchRoute, SentRows
from flowcore.session.host import QueuedFlowFile, StateMap

__all__ = ["PerFlowFileDriver"]

log = logging.getLogger(__name__)


class PerFlowFileDriver(BatchDriver):
    """Drives a per-FlowFile member's batches through its processor's ``transform_batch``."""

    def _transformed(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[tuple[BatchRoute, np.ndarray, FlowFileBatch]] | None:
        """The processor's batch form over *batch*, as checked routes; None when it declines.

        A batch form declines by returning None or by raising (the one-by-one path then runs the
        FlowFiles again, with bulletins and penalties). A result that cannot be taken whole is a
        bug in the batch form: a bulletin names every problem (:func:`~._routes.checked_routes`),
        and the FlowFiles go one by one, so nothing is lost or dropped by mistake.
        """
        member = self.member
        try:
            result = member.processor.transform_batch(context, batch)
        except Exception as error:
            log.debug("%s declined a batch by failing", member.plan.name, exc_info=True)
            member.declined(f"transform_batch raised {error!r}", batch.count)
            return None
        finally:
            member.context.yielded |= context.yielded
        if result is None:
            member.declined("transform_batch returned None", batch.count)
            return None
        try:
            return checked_routes(member.processor, batch, result, context)
        except BatchResultError as error:
            problem = str(error)
        except Exception as error:  # not routes at all (a dict, routes without rows ...)
            problem = (
                f"{type(member.processor).__name__}.transform_batch returned a result the engine "
                f"cannot read ({type(error).__name__}: {error}); its {batch.count} FlowFiles go "
                "one by one"
            )
        member.refused(problem)
        return None

    def drain(self) -> None:
        """Process the batches that reached the member whole, or hand their FlowFiles on singly."""
        member = self.member
        pending, member.pending_batches = member.pending_batches, []
        whole = member.plan.routes_or_drops_whole
        staged: list[Mapping[str, str]] = []
        context = BatchContext(member.context, member, staged.append)
        task = member.task
        for waiting in pending:
            batch, queue_id = waiting.batch, waiting.queue_id
            parts = None
            staged.clear()
            # A batch never overtakes FlowFiles waiting to go one by one (a batch declined before
            # it, single FlowFiles ahead in the queue): queue order, and the state each leaves.
            if not whole:
                member.declined("a relationship does not lead to exactly one place", batch.count)
            elif member.deferred_batches or member.pending:
                member.declined("an earlier batch went one by one", batch.count)
            else:
                parts = self._transformed(context, batch)
            if parts is not None and self._retries([route for route, _, _ in parts]):
                member.declined("a relationship it sent FlowFiles to is retried", batch.count)
                parts = None  # retried FlowFiles go back one by one, through a session
            if parts is None:
                # User code that ran for this batch must not run again in a later attempt: a
                # batch whose outcomes are carried is unpacked now, over the limit if need be.
                if context.discard():
                    member.task.unpacked += batch.count
                    member.pending.extend(QueuedFlowFile(f, queue_id) for f in batch)
                elif self.unpacks(batch, queue_id):
                    member.pending.extend(QueuedFlowFile(f, queue_id) for f in batch)
                continue
            if staged:  # stored as a session's commit stores it: with the output
                member.state = StateMap(member.state.version + 1, dict(staged[-1]))
                member.new_state = dict(staged[-1])
            # Each FlowFile's events in its session's order: what was reported (SEND, ROUTE), then
            # CONTENT_MODIFIED or ATTRIBUTES_MODIFIED, then its DROP. How different FlowFiles'
            # events interleave is not part of provenance's contract (DESIGN §3).
            effects = context.take()
            sent = _sent_rows(effects.sends, batch)
            task.events.extend(self.sent_runs(effects, {id(batch): queue_id}))
            member.consumed += batch.count
            # Queue positions as the one-by-one path gives them: in input order across the parts.
            first_index = member.task.take_queue_indices(batch.count)
            now = member.now()
            onward: list[tuple[str, FlowFileBatch, np.ndarray]] = []
            for route, rows, before in parts:
                dropped = not member.plan.routes.get(route.relationship)
                reported = None if sent is None else sent[rows]
                task.events.extend(self.route_runs(route, before, now, queue_id, reported))
                if dropped:
                    run = self.dropped_run(route.relationship, before, route.batch, queue_id)
                    if run is not None:
                        task.events.append(run)
                    continue
                onward.append((route.relationship, route.batch, rows))
            self.route_in_input_order(onward, first_index)

    def _retries(self, routes: list[BatchRoute]) -> bool:
        """Whether a batch form sent FlowFiles to a relationship the member retries."""
        member = self.member
        policy = member.retry_policy
        return policy is not None and any(
            r.relationship in policy.relationships and r.batch.count for r in routes
        )


def _sent_rows(sends: Sequence[SentRows], batch: FlowFileBatch) -> np.ndarray | None:
    """Which FlowFiles of *batch* a batch form reported as sent (None: none).

    A SEND is an event registered for its FlowFile: as in NiFi's session, no
    ATTRIBUTES_MODIFIED is added for a FlowFile with one (PublishKafka's ``msg.count``).
    """
    sent = None
    for each in sends:
        if each.batch is not batch:
            continue
        if sent is None:
            sent = np.zeros(batch.count, dtype=bool)
        if each.rows is None:
            sent[:] = True
        else:
            sent[each.rows] = True
    return sent
