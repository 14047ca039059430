"""A binning stage's shuffle by reference: records in spill files, only references through Spark.

Spark's shuffle copies what it moves from the Python worker into the JVM, onto its shuffle files
and back out into another worker: some 90 bytes a FlowFile of batch columns, which cost the JVM
more CPU than the workers spent grouping them. So the Spark runner shuffles in two plain jobs:

1. each map task groups its share of the queue's segments by partition
   (:func:`~flowcore.runners.jobs.shuffle_map`) and writes the records, in the segments' own
   encoding, into one spill file in the stage run's spill directory (in the repository, which
   every executor reaches); only :class:`SpilledRecord` references go back to the driver;
2. the driver puts the partitions into as many groups as there are cores, balanced by their
   FlowFile counts (:func:`balanced_groups`), and each reduce task reads its partitions'
   records back (:func:`unspilled`) and runs them, one flowcore task each, as on every runner.

A Spark task costs tens of milliseconds of scheduling whatever it does: a core's share of the
partitions per task, not a task per partition. The spill directory is removed when the stage
run's jobs end, and swept when the repository starts (a crashed run's).
"""

from __future__ import annotations

import heapq
import os
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.runners.jobs import StageJob, shuffle_map
from repositories._wal_codec import pack, unpack
from repositories.segments import batch_from_wire, batch_to_wire, decode_records, encode_records

__all__ = ["SpilledRecord", "balanced_groups", "spill_segments", "unspilled"]


@attrs.frozen
class SpilledRecord:
    """Records a map task left in its spill file: only this reference travels.

    Attributes:
        path: the map task's spill file.
        offset: where the records' bytes start in it.
        length: how many bytes they have.
        count: the FlowFiles they hold (what partitions are balanced by).
    """

    path: str
    offset: int
    length: int
    count: int


def spill_segments(
    job: StageJob, pairs: Iterable[tuple[str, str]]
) -> list[tuple[int, tuple[str, SpilledRecord]]]:
    """A map task: the ``(queue_id, segment_id)`` *pairs*' records written to one spill file.

    A batch is spilled as one record; FlowFiles travelling one by one are spilled together,
    per segment and partition. The file's name is unique to this attempt, so a retried map
    task writes a file of its own; the directory is its owner's only (0700).
    """
    assert job.shuffle is not None
    assert job.shuffle.spill_dir is not None
    os.makedirs(job.shuffle.spill_dir, mode=0o700, exist_ok=True)
    path = os.path.join(job.shuffle.spill_dir, uuid.uuid4().hex)
    spilled: list[tuple[int, tuple[str, SpilledRecord]]] = []
    with open(path, "wb") as out:

        def spill(partition: int, queue_id: str, body: Any, count: int) -> None:
            data = pack(body)
            reference = SpilledRecord(path, out.tell(), len(data), count)
            spilled.append((partition, (queue_id, reference)))
            out.write(data)

        for queue_id, segment_id in pairs:
            loose: dict[tuple[int, str], list[FlowFile]] = {}
            for partition, (queue, record) in shuffle_map(job, queue_id, segment_id):
                if isinstance(record, FlowFileBatch):
                    spill(partition, queue, batch_to_wire(record), record.count)
                else:
                    loose.setdefault((partition, queue), []).append(record)
            for (partition, queue), flowfiles in loose.items():
                spill(partition, queue, encode_records(flowfiles)[0], len(flowfiles))
    return spilled


def unspilled(
    references: Sequence[tuple[str, SpilledRecord]],
) -> list[tuple[str, FlowFile | FlowFileBatch]]:
    """A reduce task's records read back, each file opened once and closed before the next.

    The records come back grouped by file; :func:`~flowcore.runners.jobs.run_partition` puts
    them in queue order.
    """
    by_file: dict[str, list[tuple[str, SpilledRecord]]] = {}
    for queue_id, reference in references:
        by_file.setdefault(reference.path, []).append((queue_id, reference))
    records: list[tuple[str, FlowFile | FlowFileBatch]] = []
    for path, held in by_file.items():
        descriptor = os.open(path, os.O_RDONLY)
        try:
            for queue_id, reference in sorted(held, key=lambda h: h[1].offset):
                body = unpack(os.pread(descriptor, reference.length, reference.offset))
                if isinstance(body, dict):
                    records.append((queue_id, batch_from_wire(body)))
                else:
                    records.extend((queue_id, flowfile) for flowfile in decode_records(body))
        finally:
            os.close(descriptor)
    return records


def balanced_groups(loads: Sequence[int], groups: int) -> list[list[int]]:
    """Partitions ``0 .. len(loads) - 1`` in at most *groups* groups of similar total load.

    Largest first, each to the lightest group so far (longest processing time first, within
    4/3 of the best possible largest group). Each group lists its partitions in order; groups
    left empty are dropped.
    """
    lightest = [(0, group) for group in range(max(1, groups))]
    members: list[list[int]] = [[] for _ in lightest]
    for partition in sorted(range(len(loads)), key=lambda p: (-loads[p], p)):
        load, group = heapq.heappop(lightest)
        members[group].append(partition)
        heapq.heappush(lightest, (load + loads[partition], group))
    return [sorted(group) for group in members if group]
