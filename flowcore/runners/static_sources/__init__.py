"""Spark finds flowcore's two data sources here by itself, when a reader first asks for one.

PySpark 4 registers, on the first data source lookup of a session, the ``DefaultSource`` of
every importable top-level module named ``pyspark_*`` (its *static* registration). Sessions
flowcore starts get this directory on their Python workers' path, so
``spark.read.format("flowcore-dataset")`` and ``"flowcore-provenance"`` work in them without a
registration at start: registering up front made Spark build its SQL session state, about a
second of every run, for the few runs followed by a read. Each module holds one source, as the
lookup takes one ``DefaultSource`` per module.
"""

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["DIRECTORY", "on_jvm_path"]

#: The directory a session's Python workers get on their path.
DIRECTORY = str(Path(__file__).resolve().parent)


@contextlib.contextmanager
def on_jvm_path(roots: Sequence[str] = ()) -> Iterator[None]:
    """While a JVM starts: this directory (and *roots*, where flowcore is) on its Python path.

    Spark's static lookup runs in a Python process the JVM starts, whose path comes from the
    JVM's own environment; the JVM is started with a copy of this process's environment, which
    is put back at once.
    """
    before = os.environ.get("PYTHONPATH")
    paths = (before, *roots, DIRECTORY)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before
