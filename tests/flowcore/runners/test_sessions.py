"""Tests for Spark sessions: flowcore's settings, the running one, the start begun early."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

_EARLY = """
import sys
from flowcore.runners import sessions
assert "pyspark.sql" not in sys.modules  # begun early, the session's imports are the thread's
assert sessions.start_early("local[1]", {"spark.app.name": "early"})
assert not sessions.start_early("local[1]", {})  # one at a time
session = sessions.spark_session(None, {"spark.app.name": "early"})
context = session.sparkContext
assert context.master == "local[1]" and context.appName == "early", context.appName
assert sessions.spark_session("local[1]") is session  # the one running, reused
assert not sessions.start_early("local[1]", {})  # a session runs: nothing to begin
print("taken")
"""

_OTHER = """
from flowcore.runners import sessions
assert sessions.start_early("local[1]", {})
session = sessions.spark_session("local[2]", {})
assert session.sparkContext.master == "local[2]", session.sparkContext.master
print("restarted")
"""

_FAILED = """
from flowcore.errors import ConfigurationError
from flowcore.runners import sessions
assert sessions.start_early("local[1]", {"spark.driver.memory": "not-a-size"})
try:
    sessions.spark_session(None, {"spark.driver.memory": "not-a-size"})
except ConfigurationError as error:
    print("refused:", str(error).splitlines()[0][:60])
"""


def _python(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )


def test_the_session_begun_early_is_the_one_taken() -> None:
    """spark_session waits for the session begun early and takes it, once, as flowcore's own."""
    done = _python(_EARLY)
    assert done.stdout.strip() == "taken", done.stderr
    assert "flowcore uses the Spark session already running" not in done.stderr
    assert "WARNING: Using incubator modules" not in done.stderr  # the JVM's noise left out


def test_another_master_asked_for_replaces_the_one_begun_early() -> None:
    """Asked for another master than the one begun early: that one stops, the asked one starts."""
    done = _python(_OTHER)
    assert done.stdout.strip() == "restarted", done.stderr


def test_a_start_begun_early_that_fails_is_told_where_the_session_is_asked_for() -> None:
    """The early start's failure is raised by spark_session, as its own start's would be."""
    done = _python(_FAILED)
    assert done.stdout.startswith("refused: Spark could not start on master local[1]"), (
        done.stdout + done.stderr
    )
