"""NiFi interop: read NiFi's flow definitions into flows, and write flows NiFi can open.

NiFi's versioned flow model (``VersionedProcessGroup`` and its parts, as NiFi 2.x's "Download
flow definition", NiFi Registry snapshots and an instance's ``flow.json.gz`` hold it) is the
format. :mod:`flowcore.nifi.types` maps NiFi's component types to flowcore's.
"""
