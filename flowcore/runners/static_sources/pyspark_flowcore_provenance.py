"""The ``flowcore-provenance`` format, found by PySpark's static data source lookup."""

from flowcore.runners.spark_sources import ProvenanceSource as DefaultSource

__all__ = ["DefaultSource"]
