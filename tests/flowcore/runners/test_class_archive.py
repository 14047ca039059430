"""Tests for the Spark driver's class-data archive: where it is, when it is used or built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flowcore.runners import class_archive

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache directory of the test's own, with the archive switched on."""
    monkeypatch.setenv("FLOWCORE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(class_archive.SWITCH, "on")
    return tmp_path


def _path() -> Path:
    path = class_archive.archive_path()
    if path is None:
        pytest.skip("no Java runtime")
    return path


def test_switched_off_no_archive_is_used_nor_built(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FLOWCORE_SPARK_CLASS_ARCHIVE=off: no options, no builder, even with an archive there."""
    monkeypatch.setenv(class_archive.SWITCH, "off")
    _path().write_bytes(b"archive")
    builders = len(class_archive._BUILDERS)
    assert class_archive.driver_options() == ("", None)
    assert len(class_archive._BUILDERS) == builders


def test_an_archive_in_place_is_mapped_quietly(cache: Path) -> None:
    """An archive of this java and pyspark is named to the JVM, whose CDS warnings are off."""
    path = _path()
    assert path.parent == cache
    path.write_bytes(b"archive")
    options, used = class_archive.driver_options()
    assert used == path
    assert options.split() == [
        f"-XX:SharedArchiveFile={path}",
        "-Xlog:cds=off",
        "-Xlog:cds+dynamic=off",
    ]


def test_a_live_builder_or_an_earlier_failure_starts_no_other(cache: Path) -> None:
    """A lock held by a live process, or the marker of a failed build, starts no builder."""
    path = _path()
    builders = len(class_archive._BUILDERS)
    class_archive.archive_lock(path).write_text(str(os.getpid()))
    assert class_archive.driver_options() == ("", None)
    class_archive.archive_lock(path).unlink()
    class_archive.failed_marker(path).write_text("no")
    assert class_archive.driver_options() == ("", None)
    assert len(class_archive._BUILDERS) == builders


def test_a_lock_whose_builder_died_is_taken_away(cache: Path) -> None:
    """A builder killed mid-way leaves its lock; the next session removes it."""
    path = _path()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    class_archive.archive_lock(path).write_text(str(dead.pid))
    assert not class_archive._locked(path)
    assert not class_archive.archive_lock(path).exists()


_DAMAGED = """
import os, sys
from flowcore.errors import ConfigurationError
from flowcore.runners import class_archive, sessions
path = class_archive.archive_path()
path.write_bytes(open(sys.argv[1], "rb").read())
class_archive.archive_lock(path).write_text(str(os.getpid()))  # no builder from this test
try:
    session = sessions.spark_session("local[1]", dict(a.split("=", 1) for a in sys.argv[2:]))
    print("outcome", session.range(3).count(), path.exists())
except ConfigurationError:
    print("outcome refused", path.exists())
"""


@pytest.mark.spark
@pytest.mark.parametrize("damage", ["not an archive", "cut short", "bad conf"])
def test_a_damaged_archive_never_stops_a_session(cache: Path, damage: str) -> None:
    """An archive the JVM does not take is skipped; one that kills it (cut short by a crash) is
    removed and the session starts without it; a start refused for its conf keeps it."""
    java = class_archive.java()
    if java is None:
        pytest.skip("no Java runtime")
    damaged = cache / "damaged.jsa"
    if damage in ("not an archive", "bad conf"):
        damaged.write_bytes(b"not an archive" * 1000)
    else:
        whole = cache / "whole.jsa"
        command = [str(java), f"-XX:ArchiveClassesAtExit={whole}", *class_archive.QUIET.split()]
        subprocess.run([*command, "-version"], capture_output=True, check=True, cwd=cache)
        damaged.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _DAMAGED, str(damaged)]
        + (["spark.driver.memory=not-a-size"] if damage == "bad conf" else []),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=cache,
        check=False,
    )
    # a JVM killed by the archive printed its crash report first (to stdout, as HotSpot does)
    expected = {
        "not an archive": "outcome 3 True",
        "cut short": "outcome 3 False",
        "bad conf": "outcome refused True",
    }
    assert done.stdout.splitlines()[-1] == expected[damage], done.stdout + done.stderr


def test_only_the_most_recently_used_archives_are_kept(tmp_path: Path) -> None:
    """Each virtual environment builds its own archive (150 MB): the builder keeps the four
    used last, and the one it just built."""
    import time

    from flowcore.runners import archive_builder

    made = []
    for n in range(6):
        archive = tmp_path / f"spark-driver-{n}.jsa"
        archive.write_bytes(b"a")
        os.utime(archive, (time.time() - 1000 + n, time.time() - 1000 + n))
        made.append(archive)
    os.utime(made[0], None)  # used just now
    archive_builder._prune(made[1])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "spark-driver-0.jsa",
        "spark-driver-1.jsa",
        "spark-driver-3.jsa",
        "spark-driver-4.jsa",
        "spark-driver-5.jsa",
    ]
