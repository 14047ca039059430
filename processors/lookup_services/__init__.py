"""NiFi's lookup services, and the interfaces LookupRecord calls them through.

``base`` holds the interfaces (``LookupService``, ``StringLookupService``,
``RecordLookupService``); each other module is one NiFi service.
"""

from processors.lookup_services.base import (
    LookupFailureError,
    LookupService,
    RecordLookupService,
    StringLookupService,
)
from processors.lookup_services.csv_lookup import CSVRecordLookupService
from processors.lookup_services.map_cache import DistributedMapCacheLookupService
from processors.lookup_services.simple import SimpleKeyValueLookupService

__all__ = [
    "LOOKUP_SERVICES",
    "CSVRecordLookupService",
    "DistributedMapCacheLookupService",
    "LookupFailureError",
    "LookupService",
    "RecordLookupService",
    "SimpleKeyValueLookupService",
    "StringLookupService",
]

#: The services by NiFi's simple type name (flowcore.registry's BUILTIN_SERVICES adds them).
LOOKUP_SERVICES = {
    cls.__name__: cls
    for cls in (
        SimpleKeyValueLookupService,
        CSVRecordLookupService,
        DistributedMapCacheLookupService,
    )
}
