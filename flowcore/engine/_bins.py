"""FlowFile batches into a binning member: bins packed by count, merged from byte ranges.

A binning member whose whole input is FlowFile batches (read whole from its queues' segments)
asks its processor to bin them as batches (``BinningProcessor.bin_batches``). A ready bin is
then a list of batch cuts: merged here or handed to a merge task like any ready bin
(:class:`~flowcore.engine.wire.ReadyBin` carries the cuts), by ``merge_batches``, which writes
the bundle in a session. The originals leave as batches, their DROP or ATTRIBUTES_MODIFIED
events as runs. FlowFiles of open bins, and input the processor did not take, go back to the
queue as the one-by-one path returns them, still as batches. A processor that declines, or
fails, on a bin gets that bin one FlowFile at a time.
"""

from __future__ import annotations

import logging

from flowcore.engine._contracts import Member
from flowcore.engine._driver import BatchDriver
from flowcore.engine._held import ReturnedBatch
from flowcore.engine.wire import ReadyBin
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.binning import Bin, BinLimits, EvictionReason
from flowcore.processor.kinds import BinningProcessor

__all__ = ["MERGE_APART_BYTES", "BinningDriver", "takes_batches"]

#: Ready bins of batches smaller than this in all are merged by the task that decided them.
#: Merging one costs a few milliseconds plus copying its bytes; a second job to merge them in
#: parallel costs a tenth of a second of Spark scheduling even when empty, which is the time
#: to copy a hundred megabytes or more.
MERGE_APART_BYTES = 128 << 20

log = logging.getLogger(__name__)


def takes_batches(member: Member) -> bool:
    """Whether the member's processor can bin FlowFile batches (see ``Capabilities``).

    Not with a relationship retry: its sessions take FlowFiles back one by one.
    """
    return type(member.processor).capabilities.bins_batches and member.retry_policy is None


class BinningDriver(BatchDriver):
    """Drives a binning member's batches: ``bin_batches``, then ``merge_batches`` per ready bin."""

    def _originals_whole(self) -> bool:
        """Whether originals can leave as batches: to exactly one place, or auto-terminated.

        A relationship both connected and auto-terminated is connected (NiFi's rule).
        """
        member = self.member
        return member.plan.routes_or_drops_whole

    def bin(self, *, end_of_input: bool) -> bool:
        """Bin the member's pending batches whole; whether it did (else they are left pending)."""
        member = self.member
        pending = member.pending_batches
        processor = member.processor
        if not isinstance(processor, BinningProcessor):
            return False
        if member.pending or not pending:
            return False
        count = sum(p.batch.count for p in pending)
        if not self._originals_whole():
            member.declined("a relationship does not lead to exactly one place", count)
            return False
        if not takes_batches(member):  # a retry takes FlowFiles back one by one, in sessions
            member.declined("a relationship is retried", count)
            return False
        try:
            binning = processor.bin_batches(
                member.context, [p.batch for p in pending], end_of_input=end_of_input
            )
        except Exception as error:  # the one-by-one path bins them again, reporting what fails
            log.debug("%s could not bin batches", member.plan.name, exc_info=True)
            member.declined(f"bin_batches raised {error!r}", count)
            return False
        if binning is None:
            member.declined("bin_batches returned None", count)
            return False
        member.pending_batches = []

        def cuts(bin_: Bin) -> tuple[tuple[str, FlowFileBatch], ...]:
            return tuple(
                (pending[i].queue_id, pending[i].batch.take(rows)) for i, rows in bin_.pieces
            )

        apart = member.context.bin_sink is not None and (
            sum(b.size for b in binning.ready) >= MERGE_APART_BYTES
        )
        for bin_ in binning.ready:
            reason = bin_.reason.value if bin_.reason is not None else EvictionReason.UNSET.value
            ready = ReadyBin(
                member.plan.component_id, bin_.group, reason, bin_.created_ms, (), cuts(bin_)
            )
            if apart:
                member.task.ready_bins.append(ready)  # merged in parallel by a later task
            else:
                self.merge(ready)
        # Back to the queue, still as batches: open bins' FlowFiles as a rolled-back bin session
        # returns them, and input left after the last trigger.
        now = member.now()
        for bin_ in binning.open:
            member.returned_batches.extend(ReturnedBatch(*cut, now) for cut in cuts(bin_))
        retry = now + member.yield_ms
        for index, rows in binning.untaken:
            waiting = pending[index]
            member.returned_batches.append(
                ReturnedBatch(waiting.queue_id, waiting.batch.take(rows), retry)
            )
        return True

    def merge(self, ready: ReadyBin) -> None:
        """Merge a ready bin of batch cuts; on any trouble, merge it one FlowFile at a time."""
        member = self.member
        processor = member.processor
        assert isinstance(processor, BinningProcessor)  # a binning member's
        bin_ = Bin(ready.group, BinLimits(), ready.created_ms)
        bin_.entries = sum(b.count for _, b in ready.batches)
        bin_.size = sum(b.bytes for _, b in ready.batches)
        bin_.reason = EvictionReason(ready.reason)
        session = member.session()
        why = "merge_batches returned None"
        try:
            outcome = processor.merge_batches(
                member.context, session, [b for _, b in ready.batches], bin_
            )
            if outcome is not None:
                session.commit()
        except Exception as error:
            log.debug("%s could not merge a bin of batches", member.plan.name, exc_info=True)
            session.rollback()
            outcome, why = None, f"merge_batches raised {error!r}"
        if outcome is None:
            member.declined(why, bin_.entries)
            member.merge_bins([ready.materialized()])
            return
        relationship, changes = outcome
        for queue_id, batch in ready.batches:
            member.consumed += batch.count
            if not member.plan.routes.get(relationship):  # auto-terminated (and not connected)
                self.drop_whole(relationship, batch, batch, queue_id)
                continue
            changed = batch.with_attributes(changes)
            self.record_attribute_changes(batch, changed, queue_id)
            self.route_whole(relationship, changed)
