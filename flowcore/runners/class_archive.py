"""A class-data archive of the Spark driver's JVM, so that later JVMs start without reloading it.

Most of a cold ``flowcore run`` on Spark is the JVM's start, and most of that start is loading,
parsing and verifying some 10,000 of Spark's classes, the same ones every time. HotSpot (13 and
later) can write the classes a JVM loaded to an archive when it exits
(``-XX:ArchiveClassesAtExit``) and map them from it at the next start
(``-XX:SharedArchiveFile``): Java's own Class Data Sharing. On a busy two-core machine a local
session started in 22-27 s with the archive instead of 58-66 s without.

The archive depends on the Java runtime and Spark's jars, so it is kept per (java, pyspark)
pair under the user's cache directory (``$FLOWCORE_CACHE_DIR``, else
``$XDG_CACHE_HOME/flowcore``, else ``~/.cache/flowcore``). The first session that finds none
starts a builder in the background (:mod:`flowcore.runners.archive_builder`, a niced
process): it
starts a session of its own, runs a small job, and renames the archive into place only after
its JVM exited cleanly, so a session never maps a half-written archive. A session then passes
the archive to its JVM; should the JVM not start with it, the start is tried again without it,
and the archive is removed (:func:`discard`) only when that second start succeeds: a start that
fails for another reason (a conf Spark refuses) keeps it. ``FLOWCORE_SPARK_CLASS_ARCHIVE=off``
turns it all off. The JVM ignores an archive that does not fit (another classpath), silently.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = [
    "QUIET",
    "SWITCH",
    "archive_lock",
    "archive_path",
    "discard",
    "driver_options",
    "failed_marker",
    "java",
]

#: Set to ``off`` (or ``0``, ``false``) to start every JVM without an archive and build none.
SWITCH = "FLOWCORE_SPARK_CLASS_ARCHIVE"
_FORMAT = 1  # bumped when what the builder runs changes enough to want a new archive
_LOCK_GRACE = 60.0  # seconds an empty lock (its builder not yet written its pid) counts as held
_BUILDERS: list[subprocess.Popen[bytes]] = []  # kept so a running builder is never collected
#: Java options that skip an archive which does not fit (another classpath) silently.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def _enabled() -> bool:
    return os.environ.get(SWITCH, "on").strip().lower() not in ("off", "0", "false", "no")


def _cache_dir() -> Path:
    if given := os.environ.get("FLOWCORE_CACHE_DIR"):
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flowcore"


def java() -> Path | None:
    """The ``java`` PySpark's launcher runs: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return Path(found).resolve() if found and os.path.exists(found) else None


def archive_path() -> Path | None:
    """Where this (java, pyspark) pair's archive is, or None without a ``java``."""
    runtime = java()
    if runtime is None:
        return None
    import pyspark  # noqa: PLC0415 - only runners import pyspark, and only when a session starts

    jars = Path(pyspark.__file__).parent / "jars"
    stamp = f"{_FORMAT}|{runtime}|{runtime.stat().st_mtime_ns}|{pyspark.__version__}|{jars}"
    key = hashlib.sha256(stamp.encode()).hexdigest()[:16]
    return _cache_dir() / f"spark-driver-{key}.jsa"


def driver_options() -> tuple[str, Path | None]:
    """The Java options that map the archive, and the archive; none while it is being built.

    Without an archive (and unless a builder already runs) this starts one in the background.
    """
    if not _enabled():
        return "", None
    path = archive_path()
    if path is None:
        return "", None
    if path.is_file():
        return f"-XX:SharedArchiveFile={path} {QUIET}", path
    if not failed_marker(path).exists() and not _locked(path):
        _start_builder(path)
    return "", None


def discard(path: Path) -> None:
    """Remove an archive a JVM would not start with (whatever the reason), so none uses it."""
    with contextlib.suppress(OSError):
        path.unlink()


def archive_lock(path: Path) -> Path:
    """The lock file a builder holds (its pid inside) while it builds *path*."""
    return path.with_name(path.name + ".lock")


def failed_marker(path: Path) -> Path:
    """The file a builder leaves when this JVM could not build *path*: it is not tried again."""
    return path.with_name(path.name + ".failed")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _locked(path: Path) -> bool:
    """Whether a builder holds *path*'s lock; a lock whose builder died is removed."""
    lock = archive_lock(path)
    try:
        text = lock.read_text()
        pid = int(text or "0")
        young = time.time() - lock.stat().st_mtime < _LOCK_GRACE
    except (OSError, ValueError):
        return False
    if (pid and _alive(pid)) or (not text and young):  # a builder between open and write
        return True
    with contextlib.suppress(OSError):
        lock.unlink()
    return False


def _start_builder(path: Path) -> None:
    """Start the builder for *path* in its own session, detached from this process's output."""
    roots = [str(Path(__file__).resolve().parents[2])]
    env = {**os.environ, SWITCH: "off"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (*roots, env.get("PYTHONPATH")) if p)
    with contextlib.suppress(OSError):
        _BUILDERS.append(
            subprocess.Popen(
                [sys.executable, "-m", "flowcore.runners.archive_builder", str(path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        )
