"""What runners execute: a stage run's job, and the protocol every runner implements.

Both runners execute the same functions of :mod:`flowcore.engine.task` on the same
:class:`StageJob`, so a flow gives the same output on either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import attrs

from flowcore.compiler.plan import StagePlan
from flowcore.engine.shuffle import group_records, record_order
from flowcore.engine.task import run_task
from flowcore.engine.wire import TaskInput, TaskResult, TaskSpec

__all__ = ["Runner", "ShuffleInput", "StageJob", "run_partition", "shuffle_map"]


@attrs.frozen
class ShuffleInput:
    """A binning stage's input: segments to read and regroup by key into partitions.

    Attributes:
        segments: ``(queue_id, segment_id)`` pairs.
        segment_dir: where the segments are.
        partitions: how many groups (one task each).
        spill_dir: where a runner whose shuffle would copy records through another process
            leaves this stage run's records instead (:mod:`flowcore.runners.spill`); removed
            when its jobs end.
    """

    segments: tuple[tuple[str, str], ...]
    segment_dir: str
    partitions: int
    spill_dir: str | None = None


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


class Runner(Protocol):
    """What the controller needs from a runner."""

    name: str
    #: The Spark master tasks run on, as the SparkContext reports it; None in-process.
    master: str | None
    #: Seconds the runner took to start (a Spark session and its workers' imports); 0.0 when
    #: it reused a started session, None for a runner with nothing to start.
    start_seconds: float | None

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
