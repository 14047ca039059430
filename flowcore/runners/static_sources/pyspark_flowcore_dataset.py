"""The ``flowcore-dataset`` format, found by PySpark's static data source lookup."""

from flowcore.runners.spark_sources import DatasetSource as DefaultSource

__all__ = ["DefaultSource"]
