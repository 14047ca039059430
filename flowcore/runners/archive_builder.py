"""The background builder of the Spark driver's class-data archive (see :mod:`.class_archive`).

``python -m flowcore.runners.archive_builder PATH`` runs once per (java, pyspark) pair, niced,
started by the first session that found no archive. It holds a lock beside *PATH* while it
works (a lock whose builder died is taken over), checks that the JVM can write dynamic
archives, runs a small job in a local session of its own whose JVM writes the classes it loaded
at exit, and renames the archive into place only after that JVM exited cleanly.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

from flowcore.runners import sessions
from flowcore.runners.class_archive import (
    QUIET,
    SWITCH,
    archive_lock,
    archive_path,
    discard,
    failed_marker,
    java,
)

__all__ = ["main"]


def _supported(runtime: Path) -> bool:
    """Whether *runtime* is a HotSpot JVM of version 13 or later (dynamic archives)."""
    try:
        done = subprocess.run(
            [str(runtime), "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    text = done.stderr + done.stdout
    found = re.search(r'version "(\d+)', text)
    return bool(found) and int(found.group(1)) >= 13 and "OpenJ9" not in text


def _maps(archive: Path) -> bool:
    """Whether a JVM starts with *archive* (one that does not map dies before ``-version``).

    Run beside the archive, so a JVM that dies writes its error file there.
    """
    runtime = java()
    command = [str(runtime), f"-XX:SharedArchiveFile={archive}", *QUIET.split(), "-version"]
    try:
        done = subprocess.run(
            command, capture_output=True, timeout=120, cwd=archive.parent, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


#: Archives kept in the cache directory: one per Java runtime and PySpark installation (each
#: virtual environment is one), about 150 MB each; the least recently used go first.
KEPT_ARCHIVES = 4


def _prune(built: Path) -> None:
    """Remove all but the :data:`KEPT_ARCHIVES` most recently used archives beside *built*."""

    def last_used(archive: Path) -> float:
        try:
            found = archive.stat()
        except OSError:
            return 0.0
        return max(found.st_atime, found.st_mtime)

    archives = sorted(built.parent.glob("spark-driver-*.jsa"), key=last_used, reverse=True)
    for old in archives[KEPT_ARCHIVES:]:
        if old != built:
            discard(old)


def _build(path: Path) -> None:
    """Run a small Spark job in a session whose JVM writes its classes to *path* at exit."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    # QUIET: the dump's notes on classes it leaves out (signed jars, ...) are no one's business
    conf = {"spark.driver.extraJavaOptions": f"-XX:ArchiveClassesAtExit={partial} {QUIET}"}
    session = sessions.spark_session("local[1]", conf)
    context = session.sparkContext
    try:
        # SQL with a shuffle and a Python RDD job: the classes a flowcore run loads
        session.range(10_000).selectExpr("id % 7 AS k").groupBy("k").count().collect()
        context.parallelize(range(1_000), 2).map(lambda n: n * 2).sum()
    finally:
        jvm = context._gateway.proc
        session.stop()
        context._gateway.shutdown()
        if jvm.stdin is not None:
            jvm.stdin.close()  # PySpark's gateway exits when its standard input closes
        jvm.wait(timeout=600)
    if jvm.returncode == 0 and partial.is_file() and _maps(partial):
        os.replace(partial, path)
        _prune(path)
        return
    discard(partial)
    msg = f"the JVM exited with status {jvm.returncode} and wrote no archive"
    raise RuntimeError(msg)


def main(argv: list[str] | None = None) -> int:
    """Build the archive at ``argv[0]`` (by default this environment's), once.

    A session starts it in the background with the path; ``make setup`` runs it without, so the
    archive is there before the first session.
    """
    given = argv if argv is not None else sys.argv[1:]
    if not given and os.environ.get(SWITCH, "on").strip().lower() in ("off", "0", "false", "no"):
        return 0
    path = Path(given[0]) if given else archive_path()
    if path is None:
        return 0
    runtime = java()
    with contextlib.suppress(OSError):
        os.nice(19)  # the runs that started it come first
    if runtime is None or path.exists():
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    if not _supported(runtime):
        failed_marker(path).write_text("this Java runtime writes no dynamic class archives\n")
        return 0
    lock = archive_lock(path)
    try:
        descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return 0  # another builder has it
    try:
        os.write(descriptor, str(os.getpid()).encode())
        os.close(descriptor)
        _build(path)
    except Exception as error:
        failed_marker(path).write_text(f"{type(error).__name__}: {error}\n")
        return 1
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
