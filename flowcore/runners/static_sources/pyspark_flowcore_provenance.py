"""The ``flowcore-provenance`` format, found by PySpark's static data source lookup.

A Python that cannot import flowcore leaves the name out rather than fail the lookup: the
lookup is every data source's, and one module raising would make Spark's own formats fail too.
"""

try:
    from flowcore.runners.spark_sources import ProvenanceSource as DefaultSource
except ImportError:  # not this Python's: no format, and nothing else broken
    pass
else:
    __all__ = ["DefaultSource"]
