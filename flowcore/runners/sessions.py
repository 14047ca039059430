"""Spark sessions: the one flowcore starts (its settings), or the one already running.

Sessions follow ``SparkSession.builder.getOrCreate()``: a session given to ``flow.run(spark=...)``
is used as it is; otherwise the process's active (or default) session, started by the user or by
an earlier run, is reused, with a note when flowcore did not start it; otherwise one is created and
kept for later runs. flowcore never stops a session. A session flowcore starts has its UI off and
its logs quiet unless ``spark.ui.enabled`` or ``FLOWCORE_SPARK_LOG_LEVEL`` say otherwise; on a
local master its JVM compiles with C1 only (``-XX:TieredStopAtLevel=1``), so JIT threads leave the
cores to the Python workers. Java options in the user's conf come after these, so they win. Before
starting one on a cluster, the master's URL is checked and its address reached within the connect
timeout (``spark_connect_timeout``), so a typo or a master that is down ends in one line, not a
JVM trace or a minute of retries.

The JVM's start is most of a cold ``flowcore run`` on Spark (10 s on a small VM), and the driver
has its own work before it needs the session: importing flowcore and the processors, loading and
compiling the flow, opening the repositories (2 s). :func:`start_early` begins the session in a
thread, before that work, on what the command line asks for; :func:`spark_session` then takes it
(or, asked for another master or conf, starts the one asked for). This module imports nothing of
the engine, so the command line can call it first.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flowcore.errors import ConfigurationError
from flowcore.runners.class_archive import discard, driver_options
from flowcore.runners.masters import (
    DEFAULT_CONNECT_TIMEOUT,
    check_master,
    master_addresses,
    reach_master,
)
from flowcore.runners.spark_failures import quiet_task_failures, quiet_when_the_jvm_goes, reason
from flowcore.runners.static_sources import on_jvm_path

__all__ = [
    "DEFAULT_MASTER",
    "package_files",
    "session_conf",
    "spark_session",
    "start_early",
]

DEFAULT_MASTER = "local[*]"
log = logging.getLogger("flowcore.runners.spark")  # the logger users know the session note by
_SESSION_LOCK = threading.Lock()
_KNOWN: set[int] = set()  # ids of SparkContexts flowcore started, or used already with a note

_LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
_WORKER_PYTHONPATH = "spark.executorEnv.PYTHONPATH"
_UNIX_SOCKETS = "spark.python.unix.domain.socket.enabled"
_PACKAGES = ("flowcore", "processors", "repositories")


class _Early:
    """A session being started in a thread by :func:`start_early`, and what it became."""

    def __init__(self, master: str, conf: Mapping[str, str] | None) -> None:
        self.master = master
        self.conf = dict(conf or {})
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._start, name="flowcore-spark-early", daemon=True)

    def _start(self) -> None:
        try:
            spark_session(self.master, self.conf)
        except BaseException as error:  # handed to the thread that needs the session
            self.error = error


_EARLY: list[_Early] = []  # the session start_early began, until spark_session takes it


def start_early(master: str | None, conf: Mapping[str, str] | None = None) -> bool:
    """Begin starting flowcore's session on a local *master* in a thread; whether it did.

    Only a local master (a cluster's start has a connect timeout to honour in the caller's
    thread), only when no session runs or is being started. :func:`spark_session` called
    later with the same master and conf takes this session; a failure to start is raised
    there, as if it had started the session itself.
    """
    wanted = master or DEFAULT_MASTER
    if not wanted.startswith("local") or _EARLY:
        return False
    try:
        check_master(wanted)
    except ConfigurationError:
        return False  # reported where the run asks for its session
    # No session can run before pyspark.sql is imported; importing it here (0.3 s) would only
    # delay the thread that imports it anyway.
    if "pyspark.sql" in sys.modules and _running_session() is not None:
        return False
    early = _Early(wanted, conf)
    _EARLY.append(early)
    early.thread.start()
    return True


def _join_early(master: str | None, conf: Mapping[str, str] | None) -> None:
    """Wait for a session :func:`start_early` began; raise its error if it failed.

    The session asked for now is the one begun early unless another master or conf is asked
    for: then the early one is stopped and the one asked for starts.
    """
    if not _EARLY or threading.current_thread() is _EARLY[0].thread:
        return
    early = _EARLY.pop()
    early.thread.join()
    if early.error is not None:
        raise early.error
    if (master is not None and master != early.master) or dict(conf or {}) != early.conf:
        session = _running_session()
        if session is not None:
            _KNOWN.discard(id(session.sparkContext))
            session.stop()


def _site_paths() -> set[Path]:
    return {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}


def package_files() -> dict[str, str]:
    """Where this process imports flowcore's packages from (their ``__init__`` files).

    A session may start before the processors are imported (:func:`start_early`); their files
    are found as the import will find them, without importing them. The workers' warm-up
    compares what they imported with these very paths.
    """
    files = {}
    for name in _PACKAGES:
        module = sys.modules.get(name)
        origin = module.__file__ if module is not None else None
        if origin is None:
            spec = importlib.util.find_spec(name)
            origin = spec.origin if spec is not None else None
        files[name] = str(Path(origin or "").resolve())
    return files


def _package_roots() -> list[str]:
    """The directories holding the driver's packages, unless site-packages does.

    A source checkout found through the driver's ``sys.path`` (not installed, or installed in
    editable mode) is outside site-packages: the workers get it on their ``PYTHONPATH``.
    """
    site = _site_paths()
    roots: list[str] = []
    for location in package_files().values():
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
        # The user's own DataFrame work in this session pays for it (the JVM's reads and
        # writes ran up to 1.6x slower at 200 MB; flows 0.56-0.91x the time): a setting, as the
        # user's -XX:TieredStopAtLevel=4 in spark.driver.extraJavaOptions comes last and wins
        # (docs/operations.md, "The JVM's compiler on a local master").
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
        # Over TCP, a reused Python worker's task waited about 40 ms for its input (Nagle's
        # algorithm holding the JVM's second small write for the worker's delayed ACK): a
        # stage run's Spark job took 0.07-0.09 s instead of 0.03 s. A Unix domain socket has
        # neither (Spark 4.1 and later; earlier versions ignore the setting).
        **({_UNIX_SOCKETS: "true"} if hasattr(socket, "AF_UNIX") else {}),
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


def _running_session() -> Any:
    """The session ``SparkSession.builder.getOrCreate()`` would return, or None.

    That is the thread's active session, else the process's default one; none when none was
    started or it was stopped.
    """
    from pyspark.errors import PySparkRuntimeError  # noqa: PLC0415
    from pyspark.sql import SparkSession  # noqa: PLC0415

    try:
        return SparkSession.active()
    except PySparkRuntimeError:
        return None


def _require_master(session: Any, master: str | None) -> None:
    """Refuse to run on *session* when another master was asked for (one per process)."""
    running = session.sparkContext.master
    if master is not None and master != running:
        msg = (
            f"a Spark session on {running} is already running in this process; cannot start "
            f"one on {master} (Spark allows one per process): leave the master unset to use "
            "it, or stop it first"
        )
        raise ConfigurationError(msg)


#: The JVM's one line of start-up noise, caused by Spark's launcher on every start
#: (``--add-modules=jdk.incubator.vector``): nothing a user can act on.
_JVM_NOISE = b"WARNING: Using incubator modules:"


def _quiet_jvm_start() -> None:
    """Start Spark's JVM with its standard error forwarded, less :data:`_JVM_NOISE`.

    PySpark starts the JVM with ``subprocess.Popen`` inherited from its ``java_gateway``
    module; there it is wrapped so the JVM's error stream goes through a pipe that a thread
    copies to this process's standard error line by line. Without it every run on Spark (and a
    user's mistake found while the session starts early) would print that line first.
    """
    from pyspark import java_gateway  # noqa: PLC0415

    original = getattr(java_gateway, "Popen", None)
    if original is None or getattr(original, "flowcore_quiet", False):
        return

    def popen(command: Any, **kwargs: Any) -> Any:
        if "stderr" in kwargs:
            return original(command, **kwargs)
        process = original(command, stderr=subprocess.PIPE, **kwargs)
        forward = threading.Thread(
            target=_forward_jvm_errors, args=(process.stderr,), name="flowcore-jvm-stderr"
        )
        forward.daemon = True
        forward.start()
        return process

    popen.flowcore_quiet = True  # type: ignore[attr-defined]
    java_gateway.Popen = popen  # type: ignore[attr-defined]


def _forward_jvm_errors(stream: Any) -> None:
    """Copy the JVM's standard error to this process's, less :data:`_JVM_NOISE`."""
    with contextlib.suppress(OSError, ValueError):
        for line in iter(stream.readline, b""):
            if not line.startswith(_JVM_NOISE):
                os.write(2, line)


def _start_session(
    master: str, conf: Mapping[str, str] | None, *, archived_classes: bool = True
) -> Any:
    """A new SparkSession on *master* with flowcore's defaults and the user's *conf*.

    Raises:
        ConfigurationError: Spark could not start (no Java, a conf it refuses ...), with its
            reason.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession  # noqa: PLC0415 - slow import, only when used

    settings = session_conf(master, conf)
    archived, archive = driver_options() if archived_classes else ("", None)
    if archived:  # first, so the user's Java options still come last and win
        settings[_JAVA_OPTIONS] = f"{archived} {settings[_JAVA_OPTIONS]}"
    builder = SparkSession.builder.master(master).appName("flowcore")
    for key, value in settings.items():
        builder = builder.config(key, value)
    handler = signal.getsignal(signal.SIGINT)
    _quiet_jvm_start()
    try:
        with on_jvm_path(_package_roots()):  # the sources import flowcore, found there
            session = builder.getOrCreate()
    except Exception as error:  # py4j's and PySpark's errors: the JVM's reason is inside
        if archive is not None:
            # Tried again without the archive: the second start's error, if any, is the real
            # one (a conf Spark refuses); when it starts, the archive was what stopped the JVM.
            session = _start_session(master, conf, archived_classes=False)
            discard(archive)
            return session
        msg = f"Spark could not start on master {master}: {reason(error)}"
        raise ConfigurationError(msg) from error
    _keep_sigint_handler(handler)
    quiet_when_the_jvm_goes(session.sparkContext)
    session.sparkContext.setLogLevel(os.environ.get("FLOWCORE_SPARK_LOG_LEVEL", "ERROR"))
    if "FLOWCORE_SPARK_LOG_LEVEL" not in os.environ:
        quiet_task_failures(session.sparkContext)
    if session.sparkContext.getConf().get(_UNIX_SOCKETS, "false") == "true":
        atexit.register(_stop_workers, session.sparkContext, os.getpid())
    return session


def _stop_workers(context: Any, owner: int) -> None:
    """At exit, kill the Python workers of a session flowcore started, before its JVM goes.

    When this process exits its JVM stops at once. A worker still finishing its last task
    (the end-of-task handshake, the collection before its next task) then writes to a Unix
    socket the JVM closed, and PySpark's daemon prints that BrokenPipeError as a traceback
    under the run's summary (over TCP the write succeeds and the worker exits quietly). Every
    task's output is committed by then, so the workers go first: the daemon's process group,
    found under ``/proc`` (elsewhere, nothing is done). Only in the process that started the
    session (*owner*: a forked child inherits the hook, not the workers), and only while its
    JVM runs (once it has gone its pid may be another's).
    """
    jvm = getattr(getattr(context, "_gateway", None), "proc", None)
    if os.getpid() != owner or jvm is None or jvm.poll() is not None:
        return
    if not os.path.isdir("/proc"):
        return
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if parent == jvm.pid and b"pyspark.daemon" in command:
            with contextlib.suppress(OSError):
                os.killpg(int(entry), signal.SIGKILL)  # the daemon leads its workers' group


def _start_within(master: str, conf: Mapping[str, str] | None, timeout: float) -> Any:
    """:func:`_start_session`, given up after *timeout* seconds on a cluster's master.

    A service that accepts connections but is no Spark master (or one that never answers the
    application) would hold Spark's registration for over a minute of retries. The session
    starts in a daemon thread; when it is not ready in time, the run stops with one line. The
    thread goes on until Spark gives up; a command-line run ends at once, and its JVM with it.

    Raises:
        ConfigurationError: Spark could not start, or not within *timeout*.
    """
    if not master_addresses(master):
        return _start_session(master, conf)  # local (or YARN): nothing to wait for on a network
    outcome: dict[str, Any] = {}

    def start() -> None:
        try:
            outcome["session"] = _start_session(master, conf)
        except BaseException as error:  # handed to the waiting thread
            outcome["error"] = error

    thread = threading.Thread(target=start, name="flowcore-spark-start", daemon=True)
    thread.start()
    thread.join(timeout)
    if "error" in outcome:
        raise outcome["error"]
    if "session" not in outcome:
        msg = (
            f"the Spark master {master} accepted a connection but did not start the "
            f"application within {timeout:g} s: check that the URL names a Spark master, or "
            "give it more time with the spark_connect_timeout setting"
        )
        raise ConfigurationError(msg)
    return outcome["session"]


def spark_session(
    master: str | None = None,
    conf: dict[str, str] | None = None,
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> Any:
    """The process's SparkSession, as ``SparkSession.builder.getOrCreate()`` finds or makes it.

    A session already running (the user's, or one an earlier run started) is reused; when
    flowcore did not start it, a note says so once, since flowcore's defaults and *conf* do
    not apply to it. Otherwise a session is started on *master* (``local[*]`` by default).

    Args:
        master: the master wanted; None takes whatever session runs.
        conf: Spark configuration for a session flowcore starts.
        connect_timeout: seconds to wait for a cluster's master to answer (see
            :func:`reach_master`).

    Raises:
        ConfigurationError: *master* is not a Spark master URL, its master cannot be reached,
            Spark could not start, or a session already runs on another master (Spark allows
            one per process).
    """
    if master is not None:
        check_master(master)
    _join_early(master, conf)
    with _SESSION_LOCK:
        session = _running_session()
        if session is not None:
            _require_master(session, master)
            if id(session.sparkContext) not in _KNOWN:
                _KNOWN.add(id(session.sparkContext))
                log.warning(
                    "flowcore uses the Spark session already running on %s (app %r), as "
                    "SparkSession.builder.getOrCreate() does; flowcore's session settings%s "
                    "do not apply to it",
                    session.sparkContext.master,
                    session.sparkContext.appName,
                    " and the conf given" if conf else "",
                )
            return session
        wanted = master or DEFAULT_MASTER
        reach_master(wanted, connect_timeout)
        session = _start_within(wanted, conf, connect_timeout)
        _KNOWN.add(id(session.sparkContext))
        return session


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
