"""The direct runner: a stage run's tasks one after another in the driver's process.

Fast to start, for tests and small jobs. Each task spec is pickled and unpickled first, as Spark
would ship it, so a processor that cannot travel fails here too, and tasks never share a
processor instance with the driver.
"""

from __future__ import annotations

import pickle
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from flowcore.engine.task import run_task
from flowcore.engine.wire import TaskResult, TaskSpec
from flowcore.runners.jobs import StageJob, run_partition, shuffle_map

__all__ = ["DirectRunner"]


def _shipped(spec: TaskSpec) -> TaskSpec:
    return pickle.loads(pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL))


class DirectRunner:
    """Runs tasks in-process, in task order."""

    name = "direct"
    master: str | None = None
    start_seconds: float | None = None

    def __init__(self) -> None:
        self._described: dict[str, str] = {}

    def execute(self, job: StageJob) -> list[TaskResult]:
        """Run every task of *job*, the shuffle done in memory."""
        if job.shuffle is None:
            results = [run_task(_shipped(spec)) for spec in job.specs]
        else:
            partitions: dict[int, list] = defaultdict(list)
            for queue_id, segment_id in job.shuffle.segments:
                for partition, record in shuffle_map(job, queue_id, segment_id):
                    partitions[partition].append(record)
            results = [
                run_partition(_shipped(spec), partitions.get(spec.index, [])) for spec in job.specs
            ]
        self._described[job.plan.stage_id] = f"{len(job.specs)} task(s) in-process"
        return results

    def map_jobs(self, function: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        """Run *function* over each item (pickled first, as Spark would ship it), in order."""
        return [function(pickle.loads(pickle.dumps(item))) for item in items]

    def describe(self, stage_id: str) -> str | None:
        """The task count of the stage's last run."""
        return self._described.get(stage_id)

    def close(self) -> None:
        """Nothing to release."""
