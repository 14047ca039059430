"""Tests for telling a failed Spark job's cause in one line (no JVM needed)."""

from __future__ import annotations

import signal
import subprocess
from types import SimpleNamespace

import pytest
from py4j.protocol import Py4JError, Py4JNetworkError

from flowcore.errors import ConfigurationError, RepositoryError, RunnerError
from flowcore.runners.spark_failures import jvm_exit, spark_failure


@pytest.fixture
def jvm():  # type: ignore[no-untyped-def]
    """A context whose 'JVM' is a real child process (a sleep), killed by the test."""
    process = subprocess.Popen(["sleep", "60"])
    yield SimpleNamespace(_gateway=SimpleNamespace(proc=process))
    if process.poll() is None:
        process.kill()
        process.wait()


def test_a_jvm_killed_by_a_signal_is_named_with_it(jvm) -> None:  # type: ignore[no-untyped-def]
    """A lost py4j connection with the JVM killed by SIGKILL: the JVM died, signal named."""
    assert jvm_exit(jvm) is None
    jvm._gateway.proc.send_signal(signal.SIGKILL)
    error = Py4JNetworkError("Answer from Java side is empty")
    told = spark_failure(error, jvm, "stage-2")
    assert isinstance(told, RunnerError)
    assert str(told).startswith("the Spark JVM died (killed by signal 9, SIGKILL) while running")
    assert "stage-2" in str(told)
    assert "nothing committed is lost" in str(told)


def test_a_lost_connection_is_a_dead_jvm_even_unreaped(jvm) -> None:  # type: ignore[no-untyped-def]
    """A refused connection behind another error says the JVM died (no exit status known)."""
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as inner:
            msg = "An error occurred while trying to connect"
            raise Py4JNetworkError(msg) from inner
    except Py4JNetworkError as error:
        no_jvm = SimpleNamespace()
        told = spark_failure(error, no_jvm, "stage-1")
    assert isinstance(told, RunnerError)
    assert str(told).startswith("the Spark JVM died while running stage stage-1;")


def test_a_bare_py4j_error_from_a_dying_jvm_waits_for_its_exit(jvm) -> None:  # type: ignore[no-untyped-def]
    """py4j's bare 'An error occurred while calling' (it logged the lost connection) is a dead
    JVM once the JVM is found ended; with the JVM alive it is left to the caller."""
    error = Py4JError("An error occurred while calling z:PythonRDD.readRDDFromFile")
    assert spark_failure(error, SimpleNamespace(), "stage-1") is None
    jvm._gateway.proc.send_signal(signal.SIGKILL)
    told = spark_failure(error, jvm, "stage-1")
    assert isinstance(told, RunnerError)
    assert "the Spark JVM died (killed by signal 9, SIGKILL)" in str(told)


def test_a_crashed_worker_is_told_with_its_exit(jvm) -> None:  # type: ignore[no-untyped-def]
    """Spark's 'Python worker exited unexpectedly (crashed)' becomes one line."""
    error = RuntimeError(
        "An error occurred while calling o1.collect.\n: org.apache.spark.SparkException: Job "
        "aborted: Python worker exited unexpectedly (crashed): killed by signal 9"
    )
    told = spark_failure(error, jvm, "stage-3")
    assert isinstance(told, RunnerError)
    assert "a Spark Python worker died (signal 9, SIGKILL) while running stage stage-3" in str(told)


def test_a_tasks_own_error_is_relayed_by_its_class(jvm) -> None:  # type: ignore[no-untyped-def]
    """A task's ConfigurationError or RepositoryError comes back as itself, its one line kept."""
    error = RuntimeError(
        "Traceback (most recent call last):\n  File x\n"
        "flowcore.errors.ConfigurationError: the Spark executor on host w1 cannot see the "
        "repository directory /data/repo/flowfile/segments: put ..."
    )
    told = spark_failure(error, jvm, "stage-1")
    assert isinstance(told, ConfigurationError)
    assert str(told).startswith("the Spark executor on host w1 cannot see")
    gone = spark_failure(RuntimeError("RepositoryError: the repository x was moved"), jvm, "s")
    assert isinstance(gone, RepositoryError)


def test_anything_else_is_left_to_the_caller(jvm) -> None:  # type: ignore[no-untyped-def]
    """An error of no known kind is not rewritten (the caller re-raises it)."""
    assert spark_failure(ValueError("boom"), jvm, "stage-1") is None
