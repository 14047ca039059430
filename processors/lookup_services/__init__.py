"""NiFi's lookup services, and the interfaces LookupRecord calls them through.

``base`` holds the interfaces (``LookupService``, ``StringLookupService``,
``RecordLookupService``); each other module is one NiFi service. As the processors' registry,
each module is imported when its service is first asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from processors._lazy_types import LazyTypes, lazy_module_attributes

if TYPE_CHECKING:
    from flowcore.controller_service import ControllerService

#: The services by NiFi's simple type name (flowcore.registry's BUILTIN_SERVICES adds them).
LOOKUP_SERVICES: LazyTypes[type[ControllerService]] = LazyTypes(
    {
        "SimpleKeyValueLookupService": "processors.lookup_services.simple",
        "CSVRecordLookupService": "processors.lookup_services.csv_lookup",
        "DistributedMapCacheLookupService": "processors.lookup_services.map_cache",
    }
)

#: The interfaces and the lookup error, for type checks and users' own services.
_BASES = LazyTypes(
    dict.fromkeys(
        ("LookupFailureError", "LookupService", "RecordLookupService", "StringLookupService"),
        "processors.lookup_services.base",
    )
)

__all__ = ["LOOKUP_SERVICES", *LOOKUP_SERVICES, *_BASES]  # noqa: PLE0604 (resolved below)


__getattr__, __dir__ = lazy_module_attributes(__name__, __all__, _BASES, LOOKUP_SERVICES)
