"""The Spark runner: a stage run's tasks distributed with PySpark (the only module importing it).

Mapping (DESIGN §6): a stage without binning members is one ``mapPartitions`` pass, one
partition per task, each running the whole narrow chain in one Python pass. A stage with binning
members is a shuffle: segments are read and their FlowFile records (metadata and claims, never
content) keyed by group; ``partitionBy`` brings each group to one partition, where the task runs
in queue order. Repositories must be on a path every executor can reach; every task runs in the
driver's working directory, so relative paths mean the same there (:mod:`flowcore.runners.places`).
A job that fails because the JVM or a Python worker died, or because a task raised one of
flowcore's own errors, is told in one line (:mod:`flowcore.runners.spark_failures`).

Sessions (flowcore's settings, the one already running, the start begun early by the command
line) are :mod:`flowcore.runners.sessions`'. The master reported is the SparkContext's.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from flowcore.engine.task import run_task
from flowcore.engine.wire import TaskResult, TaskSpec
from flowcore.errors import ConfigurationError
from flowcore.runners.jobs import StageJob, run_partition, shuffle_map
from flowcore.runners.masters import (
    DEFAULT_CONNECT_TIMEOUT,
)
from flowcore.runners.places import DriverPlace, at_driver_place, call_at
from flowcore.runners.sessions import (
    _PACKAGES,
    DEFAULT_MASTER,
    _require_master,
    _site_paths,
    package_files,
    session_conf,
    spark_session,
)
from flowcore.runners.spark_failures import (
    jvm_exit,
    spark_failure,
    worker_reason,
)
from flowcore.runners.spill import balanced_groups, spill_segments, unspilled

__all__ = [
    "DEFAULT_MASTER",
    "SparkRunner",
    "session_conf",
    "spark_session",
]

log = logging.getLogger(__name__)
_JOB_GROUPS = itertools.count(1)  # a fresh Spark job group per stage run
_WARMED: set[int] = set()  # ids of SparkContexts whose workers imported the task path


def _importable_on_workers(module: Any) -> bool:
    """Whether executors can import *module* themselves.

    flowcore's packages and anything installed in site-packages can; flow files, ``__main__``
    and a script's neighbours cannot.
    """
    if module.__name__.split(".")[0] in _PACKAGES:
        return True
    location = getattr(module, "__file__", None)
    if location is None:
        return True  # built-in
    resolved = Path(location).resolve()
    return any(resolved.is_relative_to(p) for p in _site_paths())


def _ship_by_value(job: StageJob) -> None:
    """Processors defined in a flow file, a script or its neighbours travel by value."""
    from pyspark import cloudpickle  # noqa: PLC0415

    for member in job.plan.members:
        if member.processor is None:
            continue
        module = sys.modules.get(type(member.processor).__module__)
        if module is None or module.__name__ == "__main__":
            continue  # cloudpickle ships __main__'s classes by value already
        if not _importable_on_workers(module):
            cloudpickle.register_pickle_by_value(module)


def _import_task_path(index: int, expected: Mapping[str, str] | None = None) -> int:
    """On a worker: import what every task needs, check it, then freeze it for the collector.

    The built-in processors come with it. With *expected* (the driver's
    :func:`~flowcore.runners.sessions.package_files`), the worker must have imported those very
    files: one that imported another copy (a different version on an executor) would run other
    code against the same repository, so the run stops at once with both places named. PySpark's
    daemon runs a full ``gc.collect()`` after every task of a reused worker, before the worker
    takes its next task: with flowcore and the processors imported, that walks some 40,000
    long-lived objects each time (10-40 ms on a small VM; a trivial job takes 25-30 ms less
    frozen). Frozen, they are skipped.

    Raises:
        ConfigurationError: a worker imported one of flowcore's packages from elsewhere.
    """
    import gc  # noqa: PLC0415

    import flowcore.engine.task  # noqa: F401, PLC0415
    import processors  # noqa: F401, PLC0415 - the import is the point

    found = package_files()
    for name, location in (expected or {}).items():
        if found[name] != location:
            msg = (
                f"Spark's Python workers imported {name} from {found[name]} but the driver "
                f"uses {location}; give the workers the same installation "
                "(spark.pyspark.python, spark.executorEnv.PYTHONPATH)"
            )
            raise ConfigurationError(msg)
    gc.freeze()
    return index


def _deaf_to_terminal_interrupts() -> None:
    """In a Python worker: ignore SIGINT, which only a terminal's Ctrl-C sends it.

    PySpark's daemon forks each worker with Python's default SIGINT handler, and a local
    master's workers share the terminal's process group: a Ctrl-C meant for ``flowcore run``
    (finish the micro-batch, then stop) would interrupt a busy task, which a local master
    does not retry. The driver decides when to stop; the JVM already ignores SIGINT.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_specs(place: DriverPlace, specs: Iterable[TaskSpec]) -> Iterator[TaskResult]:
    _deaf_to_terminal_interrupts()
    with at_driver_place(place):
        for spec in specs:
            yield run_task(spec)


class SparkRunner:
    """Runs tasks on Spark.

    Args:
        master: a Spark master URL (``local[*]`` by default; ``spark://host:7077`` for a
            standalone cluster).
        conf: Spark configuration for a session flowcore starts.
        session: a SparkSession to use as it is (the user's: flowcore never stops it); *master*
            and *conf* must then be left out, or *master* name its master.
        connect_timeout: seconds to wait for a cluster's master (``spark_connect_timeout``).

    Attributes:
        start_seconds: what starting took: the session (when this runner started it) and
            its workers' imports, the first time flowcore uses a session; 0.0 for a session
            used before. A run reports it apart from the run's own time.

    Raises:
        ConfigurationError: see :func:`spark_session`; or *conf* given with *session*.
    """

    name = "spark"

    def __init__(
        self,
        master: str | None = None,
        conf: dict[str, str] | None = None,
        *,
        session: Any = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        started = time.perf_counter()
        self.conf = dict(conf or {})
        if session is None:
            session = spark_session(master, self.conf, connect_timeout=connect_timeout)
        elif self.conf:
            msg = (
                "conf applies to a session flowcore starts; set it on the SparkSession given "
                "(spark.conf.set for runtime settings) instead"
            )
            raise ConfigurationError(msg)
        else:
            _require_master(session, master)
        self.session = session
        self.context = session.sparkContext
        self.master = str(self.context.master)  # what runs, not what was asked
        self._described: dict[str, str] = {}
        warmed = self._warm_up()
        self.start_seconds = time.perf_counter() - started if warmed else 0.0

    def _warm_up(self) -> bool:
        """Have every core's Python worker import the task path, once per SparkContext.

        Returns whether it did now (the session's first use by flowcore).

        Workers are reused from task to task, but each imports flowcore and the processors
        (about half a second) on its first task. Done here, when the session starts, that cost
        is paid once, up front, on all cores at a time, instead of inside a run's first stage.

        Raises:
            ConfigurationError: the workers cannot import flowcore as the driver does (a
                session started with another Python, or another copy of flowcore).
        """
        context = self.context
        if id(context) in _WARMED:
            return False
        cores = max(1, self.default_parallelism)
        warm = functools.partial(_import_task_path, expected=package_files())
        try:
            context.parallelize(range(cores), cores).map(warm).collect()
        except Exception as error:  # the worker's exception arrives as Spark's, as text
            if jvm_exit(context) is not None:  # not the workers' Python: the JVM is gone
                raise spark_failure(error, context, "warm-up") from None
            msg = (
                f"Spark's Python workers on {self.master} cannot run flowcore "
                f"({worker_reason(error)}); start the session with "
                f"PYSPARK_PYTHON={sys.executable} (spark.pyspark.python on a cluster) and "
                "flowcore importable there (installed, or on spark.executorEnv.PYTHONPATH)"
            )
            raise ConfigurationError(msg) from error
        _WARMED.add(id(context))
        return True

    @property
    def default_parallelism(self) -> int:
        """Spark's default parallelism (cores of a local master, or of the cluster)."""
        return int(self.context.defaultParallelism)

    def execute(self, job: StageJob) -> list[TaskResult]:
        """Run *job*'s tasks as one Spark job; results in task order."""
        _ship_by_value(job)
        sc = self.context
        group = f"flowcore-{job.plan.stage_id}-{os.getpid()}-{next(_JOB_GROUPS)}"
        try:
            # The first call to the JVM of a stage run: a JVM killed since the last one fails
            # here, and is told as any other failed job is.
            sc.setJobGroup(group, f"flowcore {job.plan.stage_id}")
            if job.shuffle is None:
                specs = list(job.specs)
                run = functools.partial(_run_specs, DriverPlace.of(job.specs))
                rdd = sc.parallelize(specs, len(specs)).mapPartitions(run)
                results = rdd.collect()
            else:
                results = self._shuffled(job)
        except Exception as error:  # py4j's and PySpark's: a dead JVM or worker, a task's error
            told = spark_failure(error, sc, job.plan.stage_id)
            if told is None:
                raise
            raise told from None
        finally:
            with contextlib.suppress(Exception):  # the JVM may be gone: then nothing to tell
                self._describe(job.plan.stage_id, group)
        return sorted(results, key=lambda r: r.index)

    def _shuffled(self, job: StageJob) -> list[TaskResult]:
        """A binning stage's run on Spark, its records shuffled by reference.

        See :mod:`flowcore.runners.spill`. A stage run without a spill directory goes through
        Spark's own shuffle, a task a partition.
        """
        shuffle = job.shuffle
        assert shuffle is not None
        if shuffle.spill_dir is None:
            return self._shuffled_by_spark(job)
        specs = {spec.index: spec for spec in job.specs}
        cores = max(1, self.default_parallelism)
        segments = list(shuffle.segments)
        sc = self.context
        place = DriverPlace.of(job.specs)

        def spill(pairs: list[tuple[str, str]]) -> list[tuple[int, tuple]]:
            _deaf_to_terminal_interrupts()
            with at_driver_place(place):
                return spill_segments(job, pairs)  # type: ignore[return-value]

        def run(group: list[tuple[int, list[tuple]]]) -> Iterator[TaskResult]:
            _deaf_to_terminal_interrupts()
            with at_driver_place(place):
                for partition, references in group:
                    yield run_partition(specs[partition], unspilled(references))

        try:
            shares = [segments[i::cores] for i in range(min(len(segments), cores))]
            spilled = sc.parallelize(shares, len(shares)).flatMap(spill).collect() if shares else []
            held: dict[int, list[tuple]] = {}
            for partition, reference in spilled:
                held.setdefault(partition, []).append(reference)
            loads = [sum(r.count for _, r in held.get(p, ())) for p in range(shuffle.partitions)]
            groups = [
                [(p, held.get(p, [])) for p in group]
                for group in balanced_groups(loads, min(shuffle.partitions, cores))
            ]
            return sc.parallelize(groups, len(groups)).flatMap(run).collect()
        finally:
            shutil.rmtree(shuffle.spill_dir, ignore_errors=True)

    def _shuffled_by_spark(self, job: StageJob) -> list[TaskResult]:
        shuffle = job.shuffle
        assert shuffle is not None
        specs = {spec.index: spec for spec in job.specs}
        partitions = shuffle.partitions
        sc = self.context
        place = DriverPlace.of(job.specs)

        def keyed(pair: tuple[str, str]) -> list[tuple[int, tuple]]:
            _deaf_to_terminal_interrupts()
            with at_driver_place(place):
                return shuffle_map(job, pair[0], pair[1])

        def run(index: int, records: Iterator[tuple[int, tuple]]) -> Iterator[TaskResult]:
            _deaf_to_terminal_interrupts()
            given = [record for _, record in records]  # read before the directory changes
            with at_driver_place(place):
                yield run_partition(specs[index], given)

        segments = list(shuffle.segments)
        if segments:
            source = sc.parallelize(segments, min(len(segments), max(1, self.default_parallelism)))
            grouped = source.flatMap(keyed).partitionBy(partitions, lambda key: key)
        else:
            grouped = sc.parallelize([], partitions)
        return grouped.mapPartitionsWithIndex(run).collect()

    def _describe(self, stage_id: str, group: str) -> None:
        tracker = self.context.statusTracker()
        stages = tasks = 0
        for job_id in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job_id)
            if info is None:
                continue
            for spark_stage in info.stageIds:
                stage_info = tracker.getStageInfo(spark_stage)
                stages += 1
                tasks += stage_info.numTasks if stage_info is not None else 0
        self._described[stage_id] = f"{stages} Spark stage(s), {tasks} task(s) on {self.master}"

    def map_jobs(self, function: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        """Run *function* over *items* as one Spark job, a task per item; results in order."""
        if not items:
            return []
        rdd = self.context.parallelize(list(items), len(items))
        try:
            return rdd.map(functools.partial(call_at, DriverPlace.here(), function)).collect()
        except Exception as error:
            told = spark_failure(error, self.context, "merge jobs")
            if told is None:
                raise
            raise told from None

    def describe(self, stage_id: str) -> str | None:
        """The Spark stages and tasks of the stage's last run."""
        return self._described.get(stage_id)

    def close(self) -> None:
        """Keep the session: later runs in this process reuse it, and a user's is theirs."""
