"""What a task member holds between taking its input and the end of the task.

Named records instead of tuples: batches waiting for the member, FlowFiles and batches it hands
back to its input queue (with when they are worth taking again), batches it defers to the next
micro-batch. The task writes what is handed back or deferred to segments when it ends.
"""

from __future__ import annotations

import attrs

from flowcore.flowfile_batch import FlowFileBatch
from flowcore.session.host import QueuedFlowFile

__all__ = ["QueuedBatch", "ReturnedBatch", "ReturnedFlowFile"]


@attrs.frozen
class QueuedBatch:
    """A batch and the connection it came by: waiting for a member, or deferred by it."""

    batch: FlowFileBatch
    queue_id: str


@attrs.frozen
class ReturnedFlowFile:
    """A FlowFile a member hands back to its input queue.

    Attributes:
        queued: the FlowFile as queued, with its queue.
        retry_at: when it is worth taking again (epoch ms).
        long_wait: it waits on a penalty or a bin's age, not just for a later trigger (see
            ``SegmentWait.long``).
        held: it is held until ``retry_at``, which a batch run waits for (see
            ``SegmentWait.held``): its processor will take it then
            (``ProcessContext.yield_until``), or it waits out a relationship retry's backoff.
    """

    queued: QueuedFlowFile
    retry_at: int
    long_wait: bool
    held: bool = False


@attrs.frozen
class ReturnedBatch:
    """A batch a binning member hands back to its queue whole (an open bin's, or not taken)."""

    queue_id: str
    batch: FlowFileBatch
    retry_at: int
