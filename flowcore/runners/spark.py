"""The Spark runner: a stage run's tasks distributed with PySpark (the only module importing it).

Mapping (DESIGN §6): a stage without binning members is one ``mapPartitions`` pass, one
partition per task, each running the whole narrow chain in one Python pass. A stage with binning
members is a shuffle: segments are read and their FlowFile records (metadata and claims, never
content) keyed by group; ``partitionBy`` brings each group to one partition, where the task runs
in queue order. Repositories must be on a path every executor can reach.

One SparkSession is created on first use and reused by every run in the process. Its UI is off
and its logs quiet unless ``spark.ui.enabled`` or ``FLOWCORE_SPARK_LOG_LEVEL`` say otherwise; on a
local master its JVM compiles with C1 only (``-XX:TieredStopAtLevel=1``), so JIT threads leave the
cores to the Python workers. Java options in the user's conf come after these, so they win.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import os
import signal
import sys
import sysconfig
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from flowcore.engine.task import run_task
from flowcore.engine.wire import TaskResult, TaskSpec
from flowcore.runners.jobs import StageJob, run_partition, shuffle_map

__all__ = ["DEFAULT_MASTER", "SparkRunner", "session_conf", "spark_session"]

DEFAULT_MASTER = "local[*]"
_SESSION_LOCK = threading.Lock()
_SESSION: Any = None
_SESSION_MASTER: str | None = None
_JOB_GROUPS = itertools.count(1)  # a fresh Spark job group per stage run
_WARMED: set[int] = set()  # ids of SparkContexts whose workers imported the task path


_LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
_WORKER_PYTHONPATH = "spark.executorEnv.PYTHONPATH"
_PACKAGES = ("flowcore", "processors", "repositories")


def _site_paths() -> set[Path]:
    return {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}


def _driver_package_files() -> dict[str, str]:
    """Where this process imported flowcore's packages from (their ``__init__`` files)."""
    files = {}
    for name in _PACKAGES:
        module = sys.modules.get(name) or importlib.import_module(name)
        files[name] = str(Path(module.__file__ or "").resolve())
    return files


def _package_roots() -> list[str]:
    """The directories holding the driver's packages, unless site-packages does.

    A source checkout found through the driver's ``sys.path`` (not installed, or installed in
    editable mode) is outside site-packages: the workers get it on their ``PYTHONPATH``.
    """
    site = _site_paths()
    roots: list[str] = []
    for location in _driver_package_files().values():
        root = Path(location).parent.parent
        if root not in site and str(root) not in roots:
            roots.append(str(root))
    return roots


def _session_defaults(master: str) -> dict[str, str]:
    """The Spark configuration flowcore starts a session with (see :func:`session_conf`)."""
    java = [f"-Dlog4j2.configurationFile=file:{_LOG_CONFIG}"]
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no hostname lookup warning
        # A local JVM schedules tasks and moves small results while the Python workers do the
        # work: its optimizing (C2) compiler threads would take the cores those workers need.
        java.append("-XX:TieredStopAtLevel=1")
    return {
        _JAVA_OPTIONS: " ".join(java),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.python.worker.reuse": "true",
        # Python workers start as `python -m pyspark.daemon` in the driver's directory, which
        # would put that directory first on their sys.path: a folder named `flowcore` (or
        # `processors`) there would be imported instead of the installed packages. Python
        # 3.11's safe path leaves it out, so workers import what the driver imports.
        "spark.executorEnv.PYTHONSAFEPATH": "1",
        # ... and without the current directory, a checkout that is not installed (found by
        # the driver through its own sys.path) must be named to them.
        **({_WORKER_PYTHONPATH: os.pathsep.join(roots)} if (roots := _package_roots()) else {}),
        # Task results are small; task specs carry processors, so keep closures unlimited.
        "spark.driver.maxResultSize": "1g",
    }


def session_conf(master: str, conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """The session's configuration: flowcore's defaults with the user's *conf* over them.

    The user's ``spark.driver.extraJavaOptions`` are appended to flowcore's rather than
    replacing them: the JVM takes the last of repeated options, so theirs still win.
    """
    defaults = _session_defaults(master)
    merged = {**defaults, **(conf or {})}
    if conf and _JAVA_OPTIONS in conf:
        merged[_JAVA_OPTIONS] = f"{defaults[_JAVA_OPTIONS]} {conf[_JAVA_OPTIONS]}"
    if conf and _WORKER_PYTHONPATH in conf and _WORKER_PYTHONPATH in defaults:
        paths = (defaults[_WORKER_PYTHONPATH], conf[_WORKER_PYTHONPATH])
        merged[_WORKER_PYTHONPATH] = os.pathsep.join(paths)  # flowcore's first, then theirs
    return merged


def spark_session(master: str | None = None, conf: dict[str, str] | None = None) -> Any:
    """The process's SparkSession, created on first use.

    Raises:
        ConfigurationError: a session already runs on another master (Spark allows one per
            process).
    """
    global _SESSION, _SESSION_MASTER
    wanted = master or DEFAULT_MASTER
    with _SESSION_LOCK:
        if _SESSION is not None and wanted != _SESSION_MASTER:
            from flowcore.errors import ConfigurationError  # noqa: PLC0415

            msg = (
                f"a Spark session on {_SESSION_MASTER} is already running in this process; "
                f"cannot start one on {wanted} (Spark allows one per process)"
            )
            raise ConfigurationError(msg)
        if _SESSION is None:
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            from pyspark.sql import SparkSession  # noqa: PLC0415 - slow import, only when used

            builder = SparkSession.builder.master(wanted).appName("flowcore")
            for key, value in session_conf(wanted, conf).items():
                builder = builder.config(key, value)
            handler = signal.getsignal(signal.SIGINT)
            session = builder.getOrCreate()
            _keep_sigint_handler(handler)
            session.sparkContext.setLogLevel(os.environ.get("FLOWCORE_SPARK_LOG_LEVEL", "ERROR"))
            _SESSION, _SESSION_MASTER = session, wanted
        return _SESSION


def _keep_sigint_handler(handler: Any) -> None:
    """Put back a SIGINT handler the application installed before the session started.

    PySpark's SparkContext, when it starts in the main thread, replaces the SIGINT handler with
    one that cancels every job and raises KeyboardInterrupt. ``flowcore run`` installs its own
    first (Ctrl-C finishes the micro-batch in progress, then stops), so that one is put back;
    Python's default handler is left replaced, so scripts and notebooks keep PySpark's.
    """
    if handler in (None, signal.default_int_handler):
        return
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)


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
    :func:`_driver_package_files`), the worker must have imported those very files: one that
    imported another copy (a different version on an executor) would run other code against
    the same repository, so the run stops at once with both places named. PySpark's daemon
    runs a full ``gc.collect()`` after every task of a reused worker, before the worker takes
    its next task: with flowcore and the processors imported, that walks some 40,000
    long-lived objects each time (10-40 ms on a small VM; a trivial job takes 25-30 ms less
    frozen). Frozen, they are skipped.

    Raises:
        ConfigurationError: a worker imported one of flowcore's packages from elsewhere.
    """
    import gc  # noqa: PLC0415

    import flowcore.engine.task  # noqa: F401, PLC0415
    import processors  # noqa: F401, PLC0415 - the import is the point

    found = _driver_package_files()
    for name, location in (expected or {}).items():
        if found[name] != location:
            from flowcore.errors import ConfigurationError  # noqa: PLC0415

            msg = (
                f"Spark's Python workers imported {name} from {found[name]} but the driver "
                f"uses {location}; give the workers the same installation "
                "(spark.pyspark.python, spark.executorEnv.PYTHONPATH)"
            )
            raise ConfigurationError(msg)
    gc.freeze()
    return index


def _run_specs(specs: Iterable[TaskSpec]) -> Iterator[TaskResult]:
    for spec in specs:
        yield run_task(spec)


class SparkRunner:
    """Runs tasks on Spark.

    Args:
        master: a Spark master URL (``local[*]`` by default; ``spark://host:7077`` for a
            standalone cluster).
        conf: Spark configuration passed through to the session builder.
    """

    name = "spark"

    def __init__(self, master: str | None = None, conf: dict[str, str] | None = None) -> None:
        self.master = master or DEFAULT_MASTER
        self.conf = dict(conf or {})
        self.session = spark_session(self.master, self.conf)
        self.context = self.session.sparkContext
        self._described: dict[str, str] = {}
        self._warm_up()

    def _warm_up(self) -> None:
        """Have every core's Python worker import the task path, once per SparkContext.

        Workers are reused from task to task, but each imports flowcore and the processors
        (about half a second) on its first task. Done here, when the session starts, that cost
        is paid once, up front, on all cores at a time, instead of inside a run's first stage.
        """
        context = self.context
        if id(context) in _WARMED:
            return
        cores = max(1, self.default_parallelism)
        warm = functools.partial(_import_task_path, expected=_driver_package_files())
        context.parallelize(range(cores), cores).map(warm).collect()
        _WARMED.add(id(context))

    @property
    def default_parallelism(self) -> int:
        """Spark's default parallelism (cores of a local master, or of the cluster)."""
        return int(self.context.defaultParallelism)

    def execute(self, job: StageJob) -> list[TaskResult]:
        """Run *job*'s tasks as one Spark job; results in task order."""
        _ship_by_value(job)
        sc = self.context
        group = f"flowcore-{job.plan.stage_id}-{os.getpid()}-{next(_JOB_GROUPS)}"
        sc.setJobGroup(group, f"flowcore {job.plan.stage_id}")
        try:
            if job.shuffle is None:
                specs = list(job.specs)
                rdd = sc.parallelize(specs, len(specs)).mapPartitions(_run_specs)
                results = rdd.collect()
            else:
                results = self._shuffled(job)
        finally:
            self._describe(job.plan.stage_id, group)
        return sorted(results, key=lambda r: r.index)

    def _shuffled(self, job: StageJob) -> list[TaskResult]:
        shuffle = job.shuffle
        assert shuffle is not None
        specs = {spec.index: spec for spec in job.specs}
        partitions = shuffle.partitions
        sc = self.context

        def keyed(pair: tuple[str, str]) -> list[tuple[int, tuple]]:
            return shuffle_map(job, pair[0], pair[1])

        def run(index: int, records: Iterator[tuple[int, tuple]]) -> Iterator[TaskResult]:
            yield run_partition(specs[index], [record for _, record in records])

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
        return rdd.map(function).collect()

    def describe(self, stage_id: str) -> str | None:
        """The Spark stages and tasks of the stage's last run."""
        return self._described.get(stage_id)

    def close(self) -> None:
        """Keep the session: later runs in this process reuse it."""
