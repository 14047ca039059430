"""The binning shuffle's map side: a queue segment's records keyed by partition.

A binning stage's FlowFiles meet their group's in one task: each goes to the partition of its
group key (:meth:`~flowcore.processor.kinds.BinningProcessor.group_key`), a batch as one batch
per partition when the processor gives its groups as a column. Only records travel, never
content. When every FlowFile falls in one group (:func:`single_group`) the stage needs no
shuffle: one task reads the segments itself.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

import repositories.segments as segment_files
from flowcore.clock import now_ms
from flowcore.compiler.plan import MemberPlan, StagePlan
from flowcore.definition.queues import queue_order
from flowcore.errors import FlowcoreError
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import BinningProcessor
from flowcore.session.host import ComponentInfo, StateMap

__all__ = ["group_records", "record_order", "single_group"]


def _binning(member: MemberPlan) -> BinningProcessor | None:
    """The member's processor when it bins, else None."""
    processor = member.processor
    return processor if isinstance(processor, BinningProcessor) else None


def _stable_hash(text: str) -> int:
    """A hash that is the same in every process (Python's ``hash`` is salted per process)."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def _binning_context(member: MemberPlan, processor: BinningProcessor) -> ProcessContext:
    """A context to ask a binning member about groups, outside a task's run."""
    return ProcessContext(
        processor,
        component=ComponentInfo(member.component_id, member.type_name, member.name),
        clock=now_ms,
        state=StateMap,
    )


def single_group(plan: StagePlan) -> bool:
    """Whether each binning member of *plan* puts all its FlowFiles in one group.

    Then a shuffle by group key would bring everything to one partition: one task reading the
    segments itself does the same work without the shuffle.
    """
    binning = [(m, _binning(m)) for m in plan.binning_members]
    return bool(binning) and all(
        p is not None and p.single_group(_binning_context(m, p)) for m, p in binning
    )


def group_records(
    plan: StagePlan, segment_dir: str | Path, queue_id: str, segment_id: str, partitions: int
) -> list[tuple[int, tuple[str, FlowFile | FlowFileBatch]]]:
    """A binning stage's shuffle map side: a segment's records keyed by partition.

    FlowFiles for a binning member go to the partition of their group key, so a group's
    FlowFiles meet in one task; others spread by id. Only records travel, never content. A
    batch travels as one batch per partition when the processor gives its groups as a column
    (:meth:`~flowcore.processor.kinds.BinningProcessor.group_column`). A group key that
    cannot be computed sends the FlowFile to partition 0, where the processor meets the same
    error and routes it to failure.
    """
    member = plan.member(plan.queue_members[queue_id])
    processor = _binning(member)
    context = _binning_context(member, processor) if processor is not None else None
    path = segment_files.segment_path(segment_dir, segment_id)
    read = segment_files.read_segment_whole(path)
    if isinstance(read, FlowFileBatch):
        split = _group_batch(member, processor, context, read, partitions)
        if split is not None:
            return [(partition, (queue_id, piece)) for partition, piece in split]
        read = read.flowfiles()
    keyed: list[tuple[int, tuple[str, FlowFile | FlowFileBatch]]] = []
    for flowfile in read:
        if processor is not None and context is not None:
            try:
                key = processor.group_key(context, flowfile)
            except FlowcoreError:
                key = None
            partition = _stable_hash(f"{member.component_id}\0{key}") % partitions
        else:
            partition = flowfile.id % partitions
        keyed.append((partition, (queue_id, flowfile)))
    return keyed


def _group_batch(
    member: MemberPlan,
    processor: BinningProcessor | None,
    context: ProcessContext | None,
    batch: FlowFileBatch,
    partitions: int,
) -> list[tuple[int, FlowFileBatch]] | None:
    """*batch* cut into one batch per partition, as :func:`group_records` keys FlowFiles."""
    if processor is None or context is None:
        where = batch.ids % partitions
    else:
        try:
            column = processor.group_column(context, batch)
        except FlowcoreError:
            column = None
        if column is None:
            return None
        codes, values = column.encoded()
        targets = np.array(
            [_stable_hash(f"{member.component_id}\0{v}") % partitions for v in values],
            dtype=np.int64,
        )
        where = targets[codes] if len(targets) else np.zeros(0, dtype=np.int64)
    return [(int(p), batch.where(where == p)) for p in np.unique(where)]


def record_order(record: FlowFile | FlowFileBatch) -> tuple[int, int, int]:
    """Where a shuffled record (a FlowFile, or a batch by its first FlowFile) is in FIFO order."""
    if isinstance(record, FlowFileBatch):
        if not record.count:
            return (record.queue_date, 0, 0)
        return (record.queue_date, int(record.queue_date_indices[0]), int(record.ids[0]))
    return queue_order(record)
