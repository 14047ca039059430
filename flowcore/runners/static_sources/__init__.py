"""Spark finds flowcore's two data sources here by itself, when a reader first asks for one.

PySpark 4 registers, on the first data source lookup of a session, the ``DefaultSource`` of
every importable top-level module named ``pyspark_*`` (its *static* registration). Sessions
flowcore starts get this directory on their Python workers' path, so
``spark.read.format("flowcore-dataset")`` and ``"flowcore-provenance"`` work in them without a
registration at start: registering up front made Spark build its SQL session state, about a
second of every run, for the few runs followed by a read. Each module holds one source, as the
lookup takes one ``DefaultSource`` per module.
"""

from pathlib import Path

#: The directory a session's Python workers get on their path.
DIRECTORY = str(Path(__file__).resolve().parent)
