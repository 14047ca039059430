"""How flowcore provides the NiFi controller services that processors of an imported flow use.

A NiFi processor names a controller service by its identifier in a property (one whose
descriptor ``identifiesControllerService``). :data:`SERVICES` says what flowcore provides for
each NiFi service type, by the service's simple type name: a controller service type registered
in flowcore (:func:`flowcore.registry.available_services`: the built-ins and those packages
register) maps generically, by its registered NiFi types: the service is made with its NiFi
properties by NiFi's names (``#{name}`` references kept, bound when the flow runs), a property
naming another service of the flow names that service's flowcore counterpart (provided first;
services naming each other in a cycle are a problem), and it is declared on the flow under
its NiFi name. A few types keep a hand-written mapping, listed first in the table.

The distributed map cache behind DetectDuplicate (the client and server services of NiFi 1.x and
2.x) is flowcore's local :class:`~flowcore.services.MapCacheService`: one is declared on the flow
for each cache server that clients processors use talk to (clients of one server share its
entries, so they share one cache), sized and evicting as that server (the one whose ``Port`` is
the client's ``Server Port``, else the flow's only server), and the processor's property names
it. A mapping whose ``provide`` is None is known
but not available: the import reports it (with ``waits_for``) among the flow's problems.
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from flowcore.controller_service import ControllerService
from flowcore.definition.flow import FlowDefinition
from flowcore.errors import ConfigurationError, FlowcoreError
from flowcore.nifi.types import simple_name
from flowcore.registry import available_services, service_for_nifi_type
from flowcore.services import DEFAULT_MAXIMUM_CACHE_ENTRIES, MapCacheService
from flowcore.ssl_context import StandardSSLContextService

__all__ = [
    "SERVICES",
    "ServiceMapping",
    "ServiceUse",
    "provided_identifiers",
    "registered_mapping",
    "stands_with_peers",
    "unavailable",
]

#: NiFi's default ports of the map cache client (``Server Port``) and server (``Port``).
_DEFAULT_CACHE_PORT = "4557"


@attrs.frozen
class ServiceUse:
    """One controller service as the flow holds it, and who uses it.

    Attributes:
        identifier: the service's identifier in the flow.
        name: its name, with its group path.
        type: its NiFi type (class name).
        properties: its properties as the flow holds them.
        users: the components whose properties reference it (group path names).
        peers: every other service the flow holds, as JSON (a client's server is among them).
    """

    identifier: str
    name: str
    type: str
    properties: Mapping[str, Any]
    users: tuple[str, ...] = ()
    peers: tuple[Mapping[str, Any], ...] = ()


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


def unavailable(mapping: ServiceMapping | None) -> str | None:
    """Why flowcore cannot provide a service of the type *mapping* is for, or None when it can.

    Args:
        mapping: the type's entry in :data:`SERVICES` (None: the type has none).
    """
    if mapping is None:
        return "flowcore has no equivalent"
    if mapping.provide is None:
        return f"{mapping.provided_by} stands in for it once {mapping.waits_for} land"
    return None


def _server_of(use: ServiceUse) -> Mapping[str, Any]:
    """The map cache server *use* (a client) talks to (its JSON), or none."""
    servers = [
        peer
        for peer in use.peers
        if simple_name(str(peer.get("type") or ""))
        in ("MapCacheServer", "DistributedMapCacheServer")
    ]
    port = str(use.properties.get("Server Port") or _DEFAULT_CACHE_PORT)
    matching = [
        s
        for s in servers
        if str((s.get("properties") or {}).get("Port") or _DEFAULT_CACHE_PORT) == port
    ]
    if len(matching) == 1:
        return matching[0]
    return servers[0] if len(servers) == 1 else {}


#: The local cache declared for each NiFi cache server, per flow being imported: clients of one
#: server share its entries in NiFi, so they share one local cache.
_BY_SERVER: weakref.WeakKeyDictionary[FlowDefinition, dict[str, str]] = weakref.WeakKeyDictionary()


def _map_cache(flow: FlowDefinition, use: ServiceUse) -> str:
    """Declare a local map cache for a NiFi map cache client; return its name.

    Clients of one server get one cache (the first client's name), as they share entries.
    """
    peer = _server_of(use)
    declared = _BY_SERVER.setdefault(flow, {})
    server_id = str(peer.get("identifier") or "")
    if server_id and server_id in declared:
        return declared[server_id]
    server = {**(peer.get("properties") or {}), **use.properties}
    entries = str(server.get("Maximum Cache Entries") or DEFAULT_MAXIMUM_CACHE_ENTRIES)
    name, n = use.name, 1
    while name in flow.services:
        n += 1
        name = f"{use.name}-{n}"
    try:
        service = MapCacheService(
            name,
            maximum_cache_entries=int(entries)
            if entries.isdigit()
            else DEFAULT_MAXIMUM_CACHE_ENTRIES,
            eviction_strategy=server.get("Eviction Strategy") or "Least Frequently Used",
        )
    except FlowcoreError as error:
        msg = f"controller service {use.name!r} cannot be a local map cache: {error}"
        raise type(error)(msg) from None
    name = flow.add_service(service).name
    if server_id:
        declared[server_id] = name
    return name


_MAP_CACHE = ServiceMapping("flowcore's local map cache (MapCacheService)", _map_cache)


def _ssl_context(flow: FlowDefinition, use: ServiceUse) -> str:
    """Declare the SSL context service *use* stands for; return its name."""
    if use.name in flow.services:
        existing = flow.services[use.name]
        if isinstance(existing, StandardSSLContextService):
            return use.name
    name, n = use.name, 1
    while name in flow.services:
        n += 1
        name = f"{use.name}-{n}"
    try:
        properties = {
            str(k): None if v is None else _with_parameters(flow, str(k), str(v))
            for k, v in use.properties.items()
        }
        service = StandardSSLContextService.from_nifi(name, properties)
    except FlowcoreError as error:
        msg = f"controller service {use.name!r} cannot be an SSL context service: {error}"
        raise type(error)(msg) from None
    return flow.add_service(service).name


_REFERENCE = re.compile(r"#\{([^}]+)\}")


def _with_parameters(flow: FlowDefinition, key: str, value: str) -> str:
    """*value* with its ``#{name}`` references replaced by the flow's parameter values.

    A value that is one reference keeps the parameter's own value (a sensitive one stays a
    ``SensitiveText``, which never shows and travels as its source).

    Raises:
        ConfigurationError: a referenced parameter has no value here.
    """

    def lookup(name: str) -> str:
        found = flow.parameters.values_for([name]).get(name)
        if found is None:
            msg = (
                f"its property {key!r} references parameter {name!r}, which has no value: give "
                f"it (--parameter-env {name}=ENVVAR)"
            )
            raise ConfigurationError(msg)
        return found

    whole = _REFERENCE.fullmatch(value)
    if whole is not None:
        return lookup(whole.group(1))
    return _REFERENCE.sub(lambda m: lookup(m.group(1)), value)


_SSL_CONTEXT = ServiceMapping("flowcore's StandardSSLContextService", _ssl_context)

#: The hand-written mappings: the map cache clients and servers of 1.x and 2.x (a client and
#: its server are one local cache), and the SSL context services (parameters read at import).
_SPECIAL: Mapping[str, ServiceMapping] = {
    **{simple_name(nifi_type): _MAP_CACHE for nifi_type in MapCacheService.NIFI_TYPES},
    **{simple_name(t): _SSL_CONTEXT for t in StandardSSLContextService.NIFI_TYPES},
}

#: What each NiFi service being provided stands as, per flow being imported, by identifier;
#: and the identifiers being provided (to name a cycle).
_DECLARED: weakref.WeakKeyDictionary[FlowDefinition, dict[str, str]] = weakref.WeakKeyDictionary()
_PROVIDING: weakref.WeakKeyDictionary[FlowDefinition, list[tuple[str, str]]] = (
    weakref.WeakKeyDictionary()
)


def _unique(flow: FlowDefinition, wanted: str) -> str:
    name, n = wanted, 1
    while name in flow.services:
        n += 1
        name = f"{wanted}-{n}"
    return name


def _peer_name(peer: Mapping[str, Any]) -> str:
    return str(peer.get("name") or peer.get("identifier") or "?")


def _provide_peer(flow: FlowDefinition, use: ServiceUse, key: str, peer: Mapping[str, Any]) -> str:
    """The flowcore name of the service *peer* that *use*'s property *key* names.

    Raises:
        ConfigurationError: flowcore lacks the peer's type, or the services form a cycle.
    """
    nifi_type = str(peer.get("type") or "")
    mapping = SERVICES.get(simple_name(nifi_type))
    why = unavailable(mapping)
    if why is not None or mapping is None or mapping.provide is None:
        msg = (
            f"controller service {use.name!r} names service {_peer_name(peer)!r} in {key!r}, "
            f"of type {simple_name(nifi_type) or '(no type)'}: {why}"
        )
        raise ConfigurationError(msg)
    identifier = str(peer.get("identifier") or "")
    itself = {
        "identifier": use.identifier,
        "name": use.name,
        "type": use.type,
        "properties": use.properties,
    }
    others = (*(p for p in use.peers if p is not peer), itself)
    nested = ServiceUse(
        identifier, _peer_name(peer), nifi_type, peer.get("properties") or {}, (use.name,), others
    )
    return mapping.provide(flow, nested)


def _declare_registered(cls: type[ControllerService], flow: FlowDefinition, use: ServiceUse) -> str:
    """Declare the registered service *use* maps onto; return its name in the flow.

    Raises:
        ConfigurationError: a property flowcore's service lacks, a cycle, or a named service
            flowcore cannot provide.
    """
    declared = _DECLARED.setdefault(flow, {})
    if use.identifier and use.identifier in declared:
        return declared[use.identifier]
    providing = _PROVIDING.setdefault(flow, [])
    ids = [identifier for identifier, _ in providing]
    if use.identifier in ids:
        names = [name for _, name in providing[ids.index(use.identifier) :]]
        around = " -> ".join(repr(n) for n in [*names, use.name])
        msg = (
            f"controller services name each other in a cycle ({around}), so none can be "
            "enabled first; break the cycle in NiFi"
        )
        raise ConfigurationError(msg)
    providing.append((use.identifier, use.name))
    try:
        peers = {str(p.get("identifier")): p for p in use.peers if p.get("identifier")}
        values: dict[str, str] = {}
        for key, value in use.properties.items():
            if value is None:
                continue  # unset, or a sensitive value NiFi did not export
            text = str(value)
            if text in peers:
                text = _provide_peer(flow, use, str(key), peers[text])
            values[str(key)] = text
        service = cls(_unique(flow, use.name), **values)
    finally:
        providing.pop()
    unknown = sorted(getattr(service, "_unknown", {}))
    if unknown:
        hint = service.unknown_property_message(unknown[0]).partition("; ")[2]
        msg = (
            f"controller service {use.name!r} sets {', '.join(map(repr, unknown))}, which "
            f"flowcore's {cls.__name__} does not have{f' ({hint})' if hint else ''}"
        )
        raise ConfigurationError(msg)
    name = flow.add_service(service, id=use.identifier or None).name
    if use.identifier:
        declared[use.identifier] = name
    return name


def stands_with_peers(mapping: ServiceMapping | None) -> bool:
    """Whether services of *mapping* stand together (a map cache client and its server).

    Hand-written mappings may pair services; a registered type's services are each their own.
    """
    if mapping is None:
        return False
    provide = mapping.provide
    return not (isinstance(provide, functools.partial) and provide.func is _declare_registered)


def provided_identifiers(flow: FlowDefinition) -> set[str]:
    """The NiFi services declared on *flow* through a generic mapping, by identifier.

    A service only another service names (a reader's schema registry) is among them: used.
    """
    return set(_DECLARED.get(flow, {}))


@functools.cache
def registered_mapping(cls: type[ControllerService]) -> ServiceMapping:
    """The generic mapping of a registered service type (one value per type)."""
    return ServiceMapping(f"flowcore's {cls.__name__}", functools.partial(_declare_registered, cls))


class _ServiceTable(Mapping[str, ServiceMapping]):
    """The hand-written mappings, then every registered service type by its NiFi names."""

    def __init__(self, special: Mapping[str, ServiceMapping]) -> None:
        self._special = dict(special)

    def _registered(self) -> dict[str, ServiceMapping]:
        found = {}
        for name, cls in available_services().items():
            for key in (name, *(simple_name(t) for t in cls.nifi_types)):
                found.setdefault(key, registered_mapping(cls))
        return found

    def __getitem__(self, simple: str) -> ServiceMapping:
        found = self._special.get(simple)
        if found is not None:
            return found
        cls = service_for_nifi_type(simple)
        if cls is None:
            raise KeyError(simple)
        return registered_mapping(cls)

    def __iter__(self) -> Iterator[str]:
        return iter({**self._registered(), **self._special})

    def __len__(self) -> int:
        return len({**self._registered(), **self._special})


#: NiFi service types by simple name: the hand-written mappings, then every registered
#: controller service type (see the module docstring).
SERVICES: Mapping[str, ServiceMapping] = _ServiceTable(_SPECIAL)
