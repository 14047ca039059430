"""What went wrong when a Spark job failed, told in one line.

A stage run's Spark job fails for reasons of three kinds, and the user's fix differs:

- the Spark JVM died (killed, out of memory): py4j then reports a closed connection ("Answer
  from Java side is empty", "Connection refused") from wherever the driver next called the JVM;
  before, a page of Py4J traceback, or, in the session's warm-up, advice about
  ``PYSPARK_PYTHON`` that had nothing to do with it;
- a Python worker died (killed, or crashed in native code): Spark reports "Python worker exited
  unexpectedly (crashed)" inside a ``Py4JJavaError``;
- a task raised one of flowcore's own errors (an executor cannot see the driver's directories,
  the repository was moved): its one-line message is inside the worker's traceback text.

Nothing committed is lost in any of them: the stage run's transaction was not written, so the
next run redoes the interrupted micro-batch. :func:`spark_failure` finds which it was; the
runner raises that instead of Spark's error. The module imports no pyspark (py4j's exception
types are recognised by name), so it is tested without a JVM.
"""

from __future__ import annotations

import logging
import re
import signal
import subprocess
import sys
from typing import Any

from flowcore.errors import ConfigurationError, FlowcoreError, RepositoryError, RunnerError

__all__ = [
    "jvm_exit",
    "quiet_task_failures",
    "quiet_when_the_jvm_goes",
    "reason",
    "spark_failure",
    "worker_reason",
]

#: The end of every "nothing is lost" message.
_REDO = (
    "nothing committed is lost: run again to redo the interrupted micro-batch (if it died of "
    "memory, give Spark more, e.g. --conf spark.driver.memory=4g)"
)
_REAP_WAIT = 5.0  # seconds to wait for a JVM whose connection closed to be reaped
_CONNECTION_LOST = ("Py4JNetworkError", "ConnectionRefusedError", "ConnectionResetError")
_WORKER_DIED = re.compile(r"Python worker exited unexpectedly \(crashed\)|worker .*crashed", re.I)
_WORKER_SIGNAL = re.compile(r"(?:signal|killed by)\s*:?\s*(\d+)|exit code:?\s*(-?\d+)", re.I)
#: flowcore's errors a task may raise that are the user's to fix, relayed by name.
_RELAYED: dict[str, type[FlowcoreError]] = {
    "ConfigurationError": ConfigurationError,
    "RepositoryError": RepositoryError,
}


def reason(error: BaseException) -> str:
    """The first telling line of a Spark error (py4j puts the Java exception after a colon)."""
    lines = [line.strip().lstrip(": ") for line in str(error).splitlines() if line.strip()]
    told = [line for line in lines if not line.startswith("An error occurred while calling")]
    return (told or lines or [type(error).__name__])[0]


def worker_reason(error: BaseException) -> str:
    """The Python exception a worker raised, from the text Spark relays (its last such line)."""
    raised = [
        line.strip()
        for line in str(error).splitlines()
        if re.match(r"\s*[\w.]+(Error|Exception): ", line)
    ]
    return raised[-1] if raised else reason(error)


def _signal_name(number: int) -> str:
    try:
        return f"signal {number}, {signal.Signals(number).name}"
    except ValueError:
        return f"signal {number}"


def jvm_exit(context: Any, wait: float = 0.0) -> str | None:
    """How the session's JVM ended (``"killed by signal 9, SIGKILL"``), or None while it runs.

    Only a JVM this process launched can be asked; for another (a session attached to a
    running gateway) None. *wait* seconds are given to a JVM whose connection already closed:
    the kernel closes a dying process's sockets a moment before its parent can reap it.
    """
    process = getattr(getattr(context, "_gateway", None), "proc", None)
    if process is None:
        return None
    try:
        code = process.wait(timeout=wait) if wait else process.poll()
    except subprocess.TimeoutExpired:
        code = None
    if code is None:
        return None
    return f"killed by {_signal_name(-code)}" if code < 0 else f"exit status {code}"


def _chain(error: BaseException) -> list[BaseException]:
    seen, chain = set(), []
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def spark_failure(error: BaseException, context: Any, stage: str) -> FlowcoreError | None:
    """The one-line error a failed Spark job of *stage* stands for, or None (unknown: re-raise).

    Args:
        error: what PySpark or py4j raised.
        context: the SparkContext (its JVM process is asked how it ended).
        stage: the stage whose job failed, for the message.
    """
    chain = _chain(error)
    lost = any(type(e).__name__ in _CONNECTION_LOST for e in chain)
    # py4j logs a lost connection and raises a bare Py4JError ("An error occurred while
    # calling ..."), without the Java exception a live JVM would have sent.
    bare = any(type(e).__name__ == "Py4JError" for e in chain)
    ended = jvm_exit(context, wait=_REAP_WAIT if lost or bare else 0.0)
    if ended is not None or lost:
        how = f" ({ended})" if ended else ""
        msg = f"the Spark JVM died{how} while running stage {stage}; {_REDO}"
        return RunnerError(msg)
    text = "\n".join(str(e) for e in chain)
    for line in reversed(text.splitlines()):
        name, _, message = line.strip().partition(": ")
        relayed = _RELAYED.get(name.rsplit(".", 1)[-1])
        if relayed is not None and message:
            return relayed(message)
    if _WORKER_DIED.search(text):
        found = _WORKER_SIGNAL.search(text)
        how = ""
        if found is not None:
            number = int(found.group(1) or found.group(2))
            how = f" ({_signal_name(abs(number))})" if found.group(1) or number < 0 else ""
            how = how or f" (exit status {number})"
        msg = f"a Spark Python worker died{how} while running stage {stage}; {_REDO}"
        return RunnerError(msg)
    return None


def quiet_when_the_jvm_goes(context: Any) -> None:
    """Keep PySpark and py4j from printing tracebacks when the JVM dies.

    The accumulator server's thread reads each task's accumulator updates from the JVM; when
    the JVM is killed its read ends early and :mod:`socketserver` prints the ``EOFError`` under
    the run's one line; py4j logs the lost connection with its traceback on the root logger.
    The run reports the JVM's death itself (:func:`spark_failure`); other errors of the server
    and other log records are printed as before.
    """
    if not any(isinstance(f, _LostConnectionFilter) for f in logging.getLogger().filters):
        logging.getLogger().addFilter(_LostConnectionFilter())
    server = getattr(context, "_accumulatorServer", None)
    if server is None:
        return
    printed = server.handle_error

    def handle_error(request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], EOFError | ConnectionError):
            printed(request, client_address)

    server.handle_error = handle_error


class _LostConnectionFilter(logging.Filter):
    """Drops py4j's "Exception while sending command." records (a dead JVM, told otherwise)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.msg == "Exception while sending command." and "py4j" in record.pathname)


#: Spark's loggers that print a failed task's Java stack trace (a local master's executor runs
#: in the driver's JVM): the run tells the failure itself, in one line.
TASK_FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
)


def quiet_task_failures(context: Any) -> None:
    """Silence :data:`TASK_FAILURE_LOGGERS` in a session flowcore started with quiet logs.

    A task fails only when what runs it failed (a processor's own exceptions become bulletins):
    a Python worker that died, a task's own one-line error. :func:`spark_failure` says which;
    Spark's ERROR lines with a Java stack trace under it told nothing more.
    ``FLOWCORE_SPARK_LOG_LEVEL`` set shows them again.
    """
    jvm = getattr(context, "_jvm", None)
    if jvm is None:
        return
    try:
        configurator = jvm.org.apache.logging.log4j.core.config.Configurator
        off = jvm.org.apache.logging.log4j.Level.OFF
        for name in TASK_FAILURE_LOGGERS:
            configurator.setLevel(name, off)
    except Exception:  # another logging backend: its lines stay
        return
