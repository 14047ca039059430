"""FlowFile batches into a two-phase sink: the task's input written whole, from claim ranges.

A two-phase sink's task writes all of its input at once and returns a commit message
(:meth:`~flowcore.processor.kinds.TwoPhaseSink.write`). When that input is batches only, the
sink's batch form (``write_batches``) writes them as they are, reading their contents from their
claims in windows: no FlowFile object, no session. Its SEND events are recorded as runs and the
batches go to ``success`` whole (or are dropped there as runs). When the task also holds
FlowFiles one by one, when a relationship fans out, or when the batch form declines or fails,
every batch is made FlowFiles and written by ``write`` as before, which gives the same output:
the batch form writes the same FlowFiles in the same order.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from flowcore.engine._driver import BatchDriver
from flowcore.processor.kinds import TwoPhaseSink
from flowcore.processor.relationship import SUCCESS
from flowcore.session.batch_context import BatchContext
from flowcore.session.host import QueuedFlowFile

if TYPE_CHECKING:
    from flowcore.engine._held import QueuedBatch

__all__ = ["SinkDriver"]

log = logging.getLogger(__name__)


class SinkDriver(BatchDriver):
    """Drives a two-phase sink's batches: ``write_batches`` over all of them at once."""

    def write(self) -> None:
        """Write the batches that reached a two-phase sink whole, or hand them on one by one."""
        member = self.member
        pending, member.pending_batches = member.pending_batches, []
        message = None
        retried = (
            member.retry_policy is not None and SUCCESS.name in member.retry_policy.relationships
        )
        count = sum(p.batch.count for p in pending)
        if retried:
            member.declined("success is retried", count)
        elif not member.plan.routes_or_drops_whole:
            member.declined("a relationship does not lead to exactly one place", count)
        elif member.pending or member.deferred_batches:
            member.declined("FlowFiles ahead of the batches go one by one", count)
        else:
            context = BatchContext(member.context, member)
            sink = member.processor
            assert isinstance(sink, TwoPhaseSink)  # a sink member's
            why = "write_batches returned None"
            try:
                message = sink.write_batches(context, [p.batch for p in pending])
            except Exception as error:  # write() runs them again, with bulletins and penalties
                log.debug("%s declined its batches by failing", member.plan.name, exc_info=True)
                why = f"write_batches raised {error!r}"
            if message is None:
                member.declined(why, count)
                context.discard()
            else:
                self._written(pending, context)
                member.task.sink_messages.append((member.plan.component_id, message))
                return
        for waiting in pending:
            if self.unpacks(waiting.batch, waiting.queue_id):
                member.pending.extend(QueuedFlowFile(f, waiting.queue_id) for f in waiting.batch)

    def _written(self, pending: list[QueuedBatch], context: BatchContext) -> None:
        """Record the batches' SEND events, then send them to ``success`` whole (or drop them)."""
        member = self.member
        self.record_effects(context.take(), {id(p.batch): p.queue_id for p in pending})
        dropped = not member.plan.routes.get(SUCCESS.name)
        for waiting in pending:
            batch = waiting.batch
            member.consumed += batch.count
            if dropped:
                self.drop_whole(SUCCESS.name, batch, batch, waiting.queue_id)
                continue
            first = member.task.take_queue_indices(batch.count)
            self.route_whole(SUCCESS.name, batch, first + np.arange(batch.count))
