"""What runners execute: a stage run's job, and the protocol every runner implements.

Both runners execute the same functions of :mod:`flowcore.engine.task` on the same
:class:`StageJob`, so a flow gives the same output on either.
"""

from __future__ import annotations

import os
import pickle
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import attrs

from flowcore.compiler.plan import StagePlan
from flowcore.engine.task import group_records, record_order, run_task
from flowcore.engine.wire import TaskInput, TaskResult, TaskSpec

__all__ = [
    "Runner",
    "ShuffleInput",
    "SpilledRecord",
    "StageJob",
    "run_partition",
    "shuffle_map",
    "spill_map",
    "unspilled",
]


@attrs.frozen
class ShuffleInput:
    """A binning stage's input: segments to read and regroup by key into partitions.

    Attributes:
        segments: ``(queue_id, segment_id)`` pairs.
        segment_dir: where the segments are.
        partitions: how many groups (one task each).
        spill_dir: where :func:`spill_map` leaves the records of this stage run, for a runner
            whose shuffle would copy them through another process; removed when the job ends.
    """

    segments: tuple[tuple[str, str], ...]
    segment_dir: str
    partitions: int
    spill_dir: str | None = None


@attrs.frozen
class SpilledRecord:
    """A shuffled record its map task left in a file: only this reference travels.

    Attributes:
        path: the map task's spill file.
        offset: where the record's bytes start in it.
        length: how many bytes it has.
    """

    path: str
    offset: int
    length: int


@attrs.frozen
class StageJob:
    """One stage run's tasks.

    Attributes:
        plan: the stage.
        specs: one spec per task; with a shuffle, one per partition whose records the runner
            fills in.
        shuffle: set for stages with binning members.
    """

    plan: StagePlan
    specs: tuple[TaskSpec, ...]
    shuffle: ShuffleInput | None = None


def run_partition(spec: TaskSpec, records: Sequence[tuple[str, object]]) -> TaskResult:
    """Run a shuffle partition's task: its records in queue order, plus the spec's own input."""
    ordered = sorted(records, key=lambda r: record_order(r[1]))  # type: ignore[arg-type]
    given = spec.input
    filled = attrs.evolve(
        spec,
        input=TaskInput(segments=given.segments, records=tuple(ordered), work=given.work),  # type: ignore[arg-type]
    )
    return run_task(filled)


def shuffle_map(job: StageJob, queue_id: str, segment_id: str) -> list[tuple[int, tuple]]:
    """The map side of a binning stage's shuffle for one segment."""
    assert job.shuffle is not None
    return group_records(
        job.plan, job.shuffle.segment_dir, queue_id, segment_id, job.shuffle.partitions
    )


def spill_map(job: StageJob, queue_id: str, segment_id: str) -> list[tuple[int, tuple]]:
    """:func:`shuffle_map`, with the records written to a file and references returned.

    Spark's shuffle copies what it moves from the Python worker into the JVM, onto its shuffle
    files, and back into another worker: some 90 bytes a FlowFile of batch columns, which
    cost its JVM more CPU than the workers spent grouping them. Written once into the stage
    run's spill directory (in the repository, which every executor reaches) and read once by
    the reduce task, they do not pass through the JVM at all. The file's name is unique to
    this attempt, so a retried map task writes its own.
    """
    assert job.shuffle is not None
    assert job.shuffle.spill_dir is not None
    keyed = shuffle_map(job, queue_id, segment_id)
    os.makedirs(job.shuffle.spill_dir, exist_ok=True)
    path = os.path.join(job.shuffle.spill_dir, f"{segment_id}-{uuid.uuid4().hex}")
    spilled: list[tuple[int, tuple]] = []
    with open(path, "wb") as out:
        for partition, (queue, record) in keyed:
            data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
            spilled.append((partition, (queue, SpilledRecord(path, out.tell(), len(data)))))
            out.write(data)
    return spilled


def unspilled(records: Iterable[tuple[str, object]]) -> list[tuple[str, object]]:
    """*records* with each :class:`SpilledRecord` read back from its map task's file."""
    files: dict[str, int] = {}
    read: list[tuple[str, object]] = []
    try:
        for queue, record in records:
            if not isinstance(record, SpilledRecord):
                read.append((queue, record))
                continue
            if record.path not in files:
                files[record.path] = os.open(record.path, os.O_RDONLY)
            data = os.pread(files[record.path], record.length, record.offset)
            read.append((queue, pickle.loads(data)))  # written by this job's map task
    finally:
        for descriptor in files.values():
            os.close(descriptor)
    return read


class Runner(Protocol):
    """What the controller needs from a runner."""

    name: str
    #: The Spark master tasks run on, as the SparkContext reports it; None in-process.
    master: str | None

    def execute(self, job: StageJob) -> list[TaskResult]:
        """Run every task of *job*; results in task order."""
        ...

    def describe(self, stage_id: str) -> str | None:
        """What the runner did for a stage (Spark stages and tasks), for ``explain`` after a run."""
        ...

    def map_jobs(self, function: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        """Run a picklable *function* over *items* as parallel tasks, results in item order.

        A dataset sink's merge jobs run this way, "like any task".
        """
        ...

    def close(self) -> None:
        """Release what the runner holds (the Spark session stays for reuse)."""
        ...
