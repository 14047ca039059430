"""How flowcore provides the NiFi controller services that processors of an imported flow use.

A NiFi processor names a controller service by its identifier in a property (one whose
descriptor ``identifiesControllerService``). flowcore has no general controller services: each
NiFi service type a supported processor needs is mapped here, explicitly, to what flowcore
provides instead. :data:`SERVICES` is that table, by the service's simple type name.

A mapping whose ``provide`` is None is known but not wired yet: the import reports it (with
``waits_for``) among the flow's problems instead of running without it. The distributed map
cache behind DetectDuplicate is such a one until flowcore's local map cache lands; wiring it is
writing its ``provide`` (declare the local cache on the flow, return the name the processor's
property then takes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from flowcore.flow import FlowDefinition

__all__ = ["SERVICES", "ServiceMapping", "ServiceUse"]


@attrs.frozen
class ServiceUse:
    """One controller service as the flow holds it, and who uses it.

    Attributes:
        identifier: the service's identifier in the flow.
        name: its name.
        type: its NiFi type (class name).
        properties: its properties as the flow holds them.
        users: the components whose properties reference it (group path names).
    """

    identifier: str
    name: str
    type: str
    properties: Mapping[str, Any]
    users: tuple[str, ...] = ()


#: Declares what stands in for a service on *flow*; returns the value the referencing
#: property takes.
Provide = Callable[[FlowDefinition, ServiceUse], str]


@attrs.frozen
class ServiceMapping:
    """What flowcore provides for one NiFi service type.

    Attributes:
        provided_by: what stands in for it, as the docs and messages say it.
        provide: wires it into a flow, or None while it is not available.
        waits_for: what must land before it is available (for the message), when ``provide``
            is None.
    """

    provided_by: str
    provide: Provide | None = None
    waits_for: str = ""


_MAP_CACHE = ServiceMapping(
    "flowcore's local map cache (MapCacheService), kept in the repository",
    waits_for="DetectDuplicate and its local map cache",
)

#: NiFi service types by simple name: the map cache clients and servers of 1.x and 2.x.
SERVICES: Mapping[str, ServiceMapping] = {
    "DistributedMapCacheClientService": _MAP_CACHE,  # 1.x
    "DistributedMapCacheServer": _MAP_CACHE,  # 1.x
    "MapCacheClientService": _MAP_CACHE,  # 2.x
    "MapCacheServer": _MAP_CACHE,  # 2.x
}
