"""Tests for flowcore.runners.static_sources: the modules PySpark's static data source lookup
finds, each with one format, and harmless where flowcore cannot be imported."""

from __future__ import annotations

import subprocess
import sys

from flowcore.runners import spark_sources
from flowcore.runners.static_sources import DIRECTORY

_PROBE = """
import importlib, sys
sys.path.insert(0, {directory!r})
for name in ("pyspark_flowcore_dataset", "pyspark_flowcore_provenance"):
    module = importlib.import_module(name)
    source = getattr(module, "DefaultSource", None)
    print(name, "-" if source is None else source.name())
"""


def _probe(*flags: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, *flags, "-c", _PROBE.format(directory=DIRECTORY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.split()


def test_each_module_holds_one_of_flowcores_formats_as_the_lookup_wants() -> None:
    """The lookup imports each ``pyspark_*`` module and takes its ``DefaultSource``: the dataset
    and provenance formats, by their names."""
    assert _probe() == [
        "pyspark_flowcore_dataset",
        spark_sources.DatasetSource.name(),
        "pyspark_flowcore_provenance",
        spark_sources.ProvenanceSource.name(),
    ]


def test_a_python_without_flowcore_gets_no_format_and_no_error() -> None:
    """Where flowcore (or pyspark) cannot be imported (an isolated Python without
    site-packages), the modules import cleanly without a source, so the lookup of every other
    format still works."""
    assert _probe("-I", "-S") == [
        "pyspark_flowcore_dataset",
        "-",
        "pyspark_flowcore_provenance",
        "-",
    ]
