"""A flow as NiFi 2.x's "Download flow definition" writes one, so NiFi can import it.

The document is NiFi's ``RegisteredFlowSnapshot`` as a download holds it (``flowContents``,
``externalControllerServices``, ``parameterContexts``, ``parameterProviders``,
``flowEncodingVersion``, ``latest``), its parts shaped as NiFi's ``VersionedComponentFlowMapper``
maps a live flow: every supported property with its value as written (``#{p}`` kept; the
default when unset, null when there is none), property descriptors, scheduling and retry
settings with NiFi's defaults where flowcore has none, queue settings on every connection,
relationship sets as sorted lists. Identifiers are UUIDs derived from the flow's name and each
component's id as NiFi's ``generateVersionedComponentId`` derives them (an id that is a UUID
already, as import keeps NiFi's, is kept), so exporting a flow twice gives the same document.

What NiFi has no place for is reported as notes (:attr:`NiFiExport.notes`), which the root
group's comments repeat so they are seen in NiFi too: flowcore's own processors (NiFi shows
them as missing components until a NAR provides them), ``durable=True``, literal values of
sensitive properties (a download holds sensitive values only as parameter references),
parameters whose values come from the environment or a file.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from typing import Any

import attrs

from flowcore.controller_service import ControllerService
from flowcore.definition.component_settings import (
    DEFAULT_MAX_BACKOFF_PERIOD,
    DEFAULT_RETRY_COUNT,
    Prioritizer,
)
from flowcore.definition.flow import Component, ComponentKind, Connection, FlowDefinition
from flowcore.nifi.criteria import criteria_xml
from flowcore.nifi.layout import PROCESSOR_SIZE, Position, layout
from flowcore.nifi.types import (
    FLOWCORE_BUNDLE,
    FLOWCORE_PACKAGE,
    NIFI_VERSION,
    NiFiBundle,
    NiFiType,
    nifi_type_of,
)
from flowcore.parameters import Parameter, ParameterContext, sole_reference
from flowcore.processor.base import Processor
from flowcore.services import MapCacheService
from flowcore.ssl_context import StandardSSLContextService
from processors.update_attribute import UpdateAttribute

__all__ = ["FLOW_ENCODING_VERSION", "PRIORITIZER_PACKAGE", "NiFiExport", "export_flow"]

FLOW_ENCODING_VERSION = "1.0"
#: Where NiFi's standard prioritizers live (``org.apache.nifi.prioritizer.*``).
PRIORITIZER_PACKAGE = "org.apache.nifi.prioritizer"
# NiFi's defaults for what flowcore leaves to its engine settings.
_PENALTY_DURATION = "30 sec"
_YIELD_DURATION = "1 sec"
_FUNNEL_RELATIONSHIP = ""  # NiFi's funnels have one anonymous relationship
_LOOP_OFFSET = 60.0  # px: how far a self-loop's or parallel connection's bends stand out
# A MapCacheService is NiFi 2.x's map cache client and the server it talks to, on its own port.
_CACHE_BUNDLE = NiFiBundle("org.apache.nifi", "nifi-distributed-cache-services-nar")
_CACHE_API_BUNDLE = NiFiBundle("org.apache.nifi", "nifi-standard-services-api-nar")
_CACHE_CLIENT = "org.apache.nifi.distributed.cache.client.MapCacheClientService"
_CACHE_SERVER = "org.apache.nifi.distributed.cache.server.map.MapCacheServer"
_CACHE_CLIENT_APIS = (
    "org.apache.nifi.distributed.cache.client.AtomicDistributedMapCacheClient",
    "org.apache.nifi.distributed.cache.client.DistributedMapCacheClient",
)
_FIRST_CACHE_PORT = 4557  # NiFi's default
_SSL_BUNDLE = NiFiBundle("org.apache.nifi", "nifi-ssl-context-service-nar")
#: The package flowcore's own services (with no NiFi type) are exported under.
FLOWCORE_SERVICES_PACKAGE = "io.flowcore.services"


@attrs.frozen
class NiFiExport:
    """A flow exported for NiFi.

    Attributes:
        document: the flow definition (JSON-ready), as NiFi's "Download flow definition".
        notes: what NiFi cannot hold or shows differently, one sentence each.
    """

    document: dict[str, Any]
    notes: tuple[str, ...]


def versioned_id(*parts: str) -> str:
    """A name-based UUID of *parts*, as Java's ``UUID.nameUUIDFromBytes`` makes one."""
    digest = hashlib.md5("/".join(parts).encode(), usedforsecurity=False).digest()
    return str(uuid.UUID(bytes=digest, version=3))


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text.lower()
    except ValueError:
        return False


@attrs.define
class _Export:
    """What the parts of one export share: the flow, identifiers, positions and the notes."""

    flow: FlowDefinition
    group_id: str
    positions: dict[str, Position]
    notes: list[str] = attrs.field(factory=list)

    def id_of(self, component_id: str) -> str:
        if _is_uuid(component_id):
            return component_id.lower()
        return versioned_id(self.flow.name, component_id)

    def service_id(self, name: str, role: str) -> str:
        """The identifier of service *name*'s NiFi client or server (*role*).

        A service's own NiFi identifier when it has one (an imported flow's), else derived.
        """
        given = self.flow.service_ids.get(name) if role == "client" else None
        return given or versioned_id(self.flow.name, "service", name, role)

    def end(self, component_id: str) -> dict[str, Any]:
        """A connection's ``source`` or ``destination`` (NiFi's ``ConnectableComponent``)."""
        component = self.flow.component(component_id)
        return {
            "id": self.id_of(component.id),
            "type": "FUNNEL" if component.kind is ComponentKind.FUNNEL else "PROCESSOR",
            "groupId": self.group_id,
            "name": component.name,
            "comments": component.comments,
        }


def export_flow(flow: FlowDefinition, *, use_graphviz: bool = True) -> NiFiExport:
    """*flow* as a NiFi 2.x flow definition, and the notes on what NiFi cannot hold.

    Args:
        flow: the flow to export.
        use_graphviz: lay the canvas out with Graphviz when installed (see
            :func:`flowcore.nifi.layout.layout`).
    """
    export = _Export(flow, versioned_id(flow.name), layout(flow, use_graphviz=use_graphviz))
    services = [s for service in flow.services.values() for s in _services(export, service)]
    processors = [_processor(export, c) for c in flow.components if c.processor is not None]
    funnels = [_funnel(export, c) for c in flow.components if c.processor is None]
    connections = [_connection(export, c) for c in flow.connections]
    contexts = _parameter_contexts(export)
    group = _group(export, processors, funnels, connections)
    group["controllerServices"] = services
    if contexts:
        group["parameterContextName"] = next(iter(contexts))
    document = {
        "flowContents": group,
        "externalControllerServices": {},
        "parameterContexts": contexts,
        "flowEncodingVersion": FLOW_ENCODING_VERSION,
        "parameterProviders": {},
        "latest": False,
    }
    notes = tuple(export.notes)
    if notes:
        group["comments"] = "Exported by flowcore. " + " ".join(notes)
    return NiFiExport(document, notes)


def _group(
    export: _Export,
    processors: list[dict[str, Any]],
    funnels: list[dict[str, Any]],
    connections: list[dict[str, Any]],
) -> dict[str, Any]:
    """The root ``VersionedProcessGroup`` with NiFi's defaults for a new group."""
    return {
        "identifier": export.group_id,
        "name": export.flow.name,
        "comments": "",
        "position": {"x": 0.0, "y": 0.0},
        "processGroups": [],
        "remoteProcessGroups": [],
        "processors": processors,
        "inputPorts": [],
        "outputPorts": [],
        "connections": connections,
        "labels": [],
        "funnels": funnels,
        "controllerServices": [],
        "defaultFlowFileExpiration": "0 sec",
        "defaultBackPressureObjectThreshold": 10_000,
        "defaultBackPressureDataSizeThreshold": "1 GB",
        "scheduledState": "ENABLED",
        "executionEngine": "INHERITED",
        "maxConcurrentTasks": 1,
        "statelessFlowTimeout": "1 min",
        "flowFileConcurrency": "UNBOUNDED",
        "flowFileOutboundPolicy": "STREAM_WHEN_AVAILABLE",
        "componentType": "PROCESS_GROUP",
    }


# --- processors and funnels -------------------------------------------------------------------


def _descriptor_json(
    name: str, display: str, *, sensitive: bool, dynamic: bool, service: bool = False
) -> dict:
    return {
        "name": name,
        "displayName": display,
        "identifiesControllerService": service,
        "sensitive": sensitive,
        "dynamic": dynamic,
    }


def _properties(
    export: _Export, component: Component, processor: Processor
) -> tuple[dict[str, str | None], dict[str, dict[str, Any]]]:
    """The ``properties`` and ``propertyDescriptors`` NiFi writes: every supported one."""
    raw = processor.raw_configured
    values: dict[str, str | None] = {}
    descriptors = {}
    for descriptor in processor.descriptors():
        value = raw.get(descriptor.name, descriptor.default)
        if descriptor.flowcore_only:  # NiFi's processor would refuse an unknown property
            if value != descriptor.default:
                export.notes.append(
                    f"{descriptor.display_name!r} of {component} is flowcore's own property, "
                    f"left out (NiFi's {component.type_name} has no such property)."
                )
            continue
        if descriptor.sensitive and value is not None and not sole_reference(value):
            if descriptor.name in raw:
                export.notes.append(
                    f"The value of sensitive property {descriptor.display_name!r} of {component} "
                    "is left out: NiFi exports sensitive values only as parameter references."
                )
            value = None
        value = descriptor.stored_value(value)
        service = bool(descriptor.identifies_service)
        if service and value is not None and value in export.flow.services:
            value = export.service_id(value, "client")  # NiFi names services by identifier
        values[descriptor.name] = value
        descriptors[descriptor.name] = _descriptor_json(
            descriptor.name,
            descriptor.display_name,
            sensitive=descriptor.sensitive,
            dynamic=False,
            service=service,
        )
    declared = {d.name for d in processor.descriptors()}
    for name, value in raw.items():
        if name in declared:
            continue
        dynamic = processor.get_dynamic_property_descriptor(name)
        sensitive = dynamic is not None and dynamic.sensitive  # a NiFi 2 Python processor's
        kept: str | None = value
        if sensitive and not sole_reference(value):
            export.notes.append(
                f"The value of sensitive property {name!r} of {component} is left out: NiFi "
                "exports sensitive values only as parameter references."
            )
            kept = None
        values[name] = kept
        descriptors[name] = _descriptor_json(name, name, sensitive=sensitive, dynamic=True)
    return values, descriptors


def _annotation_data(export: _Export, component: Component, processor: Processor) -> str | None:
    """NiFi's ``annotationData``: UpdateAttribute's rules as NiFi's criteria XML."""
    if isinstance(processor, UpdateAttribute):
        if not processor.rules and processor.flowfile_policy == "USE_CLONE":
            return None
        own = export.id_of(component.id)
        return criteria_xml(
            processor.rules, processor.flowfile_policy, lambda path: versioned_id(own, path)
        )
    if processor.advanced_configuration():
        export.notes.append(
            f"The advanced configuration of {component} has no NiFi form and is left out."
        )
    return None


def _processor(export: _Export, component: Component) -> dict[str, Any]:
    """One ``VersionedProcessor``, as NiFi's flow mapper writes it for a download."""
    processor = component.processor
    assert processor is not None
    nifi_type = nifi_type_of(component.type_name)
    nifi_class = getattr(type(processor), "nifi_class", None)  # a NiFi 2 Python processor
    if nifi_class is not None:
        details = getattr(nifi_class, "ProcessorDetails", None)
        version = getattr(details, "version", None) or NIFI_VERSION
        version = version[0] if isinstance(version, tuple) else version  # NiFi's `version = 'x',`
        bundle = NiFiBundle("org.apache.nifi", "python-extensions", str(version))
        nifi_type = NiFiType(component.type_name, bundle)
    if nifi_type.type.startswith(FLOWCORE_PACKAGE):
        export.notes.append(
            f"{component} is flowcore's own processor, exported as {nifi_type.type}: NiFi shows "
            "it as a missing component until a NAR provides that type."
        )
    properties, descriptors = _properties(export, component, processor)
    retry = component.retry
    document: dict[str, Any] = {
        "identifier": export.id_of(component.id),
        "name": component.name,
        "comments": component.comments,
        "position": export.positions[component.id].to_json(),
        "type": nifi_type.type,
        "bundle": nifi_type.bundle.to_json(),
        "properties": properties,
        "propertyDescriptors": descriptors,
        "style": {},
        "schedulingPeriod": component.run_schedule,
        "schedulingStrategy": component.scheduling_strategy.value,
        "executionNode": "ALL",
        "penaltyDuration": component.penalty_duration or _PENALTY_DURATION,
        "yieldDuration": component.yield_duration or _YIELD_DURATION,
        "bulletinLevel": "WARN",
        "runDurationMillis": 0,
        "concurrentlySchedulableTaskCount": component.concurrent_tasks,
        "autoTerminatedRelationships": sorted(export.flow.auto_terminated(component)),
        "scheduledState": "DISABLED" if component.disabled else "ENABLED",
        "retryCount": retry.count if retry else DEFAULT_RETRY_COUNT,
        "retriedRelationships": sorted(retry.relationships) if retry else [],
        "backoffMechanism": retry.backoff_mechanism.value if retry else "PENALIZE_FLOWFILE",
        "maxBackoffPeriod": retry.max_backoff_period if retry else DEFAULT_MAX_BACKOFF_PERIOD,
        "componentType": "PROCESSOR",
        "groupIdentifier": export.group_id,
    }
    annotation = _annotation_data(export, component, processor)
    if annotation is not None:
        document["annotationData"] = annotation
    return document


def _funnel(export: _Export, component: Component) -> dict[str, Any]:
    """One ``VersionedFunnel``; its name (NiFi's funnels have none shown) keeps flowcore's."""
    if component.disabled:
        export.notes.append(
            f"{component} is disabled (a disabled port of a NiFi group, once); NiFi's funnels "
            "cannot be disabled, so it is exported enabled."
        )
    return {
        "identifier": export.id_of(component.id),
        "name": component.name,
        "position": export.positions[component.id].to_json(),
        "componentType": "FUNNEL",
        "groupIdentifier": export.group_id,
    }


# --- controller services ------------------------------------------------------------------------


def _service_json(
    export: _Export, identifier: str, name: str, nifi_type: str, properties: dict[str, Any]
) -> dict[str, Any]:
    """One ``VersionedControllerService`` of the map cache's NiFi NAR, enabled."""
    return {
        "identifier": identifier,
        "name": name,
        "comments": "",
        "type": nifi_type,
        "bundle": _CACHE_BUNDLE.to_json(),
        "properties": properties,
        "propertyDescriptors": {
            key: _descriptor_json(
                key, key, sensitive=False, dynamic=False, service=key == "SSL Context Service"
            )
            for key in properties
        },
        "controllerServiceApis": [
            {"type": api, "bundle": _CACHE_API_BUNDLE.to_json()}
            for api in (_CACHE_CLIENT_APIS if nifi_type == _CACHE_CLIENT else ())
        ],
        "scheduledState": "ENABLED",
        "bulletinLevel": "WARN",
        "componentType": "CONTROLLER_SERVICE",
        "groupIdentifier": export.group_id,
    }


def _services(export: _Export, service: ControllerService) -> tuple[dict[str, Any], ...]:
    """What NiFi holds for one service.

    A map cache's client and server, an SSL service, or any other service as its NiFi type
    with its properties (sensitive values left out).
    """
    if isinstance(service, MapCacheService):
        return _map_cache(export, service)
    if isinstance(service, StandardSSLContextService):
        return (_ssl_context(export, service),)
    return (_generic_service(export, service),)


def _generic_service(export: _Export, service: ControllerService) -> dict[str, Any]:
    """A controller service under its NiFi type, properties by NiFi's names.

    A property naming another service names that service's identifier; a sensitive value is
    left out unless it is a parameter reference (NiFi exports no sensitive value). A service
    with no NiFi type is flowcore's own (or a plugin's), written under flowcore's package and
    bundle: NiFi shows it as a missing component.
    """
    cls = type(service)
    if cls.nifi_types:
        nifi_type = cls.nifi_types[0]
    else:
        nifi_type = f"{FLOWCORE_SERVICES_PACKAGE}.{cls.__name__}"
        export.notes.append(
            f"service {service.name!r} is {cls.__name__}, which NiFi does not have; exported "
            f"as {nifi_type}, a missing component in NiFi until a NAR provides that type."
        )
    bundle = NiFiBundle(*cls.nifi_bundle) if cls.nifi_bundle else FLOWCORE_BUNDLE
    raw = service.raw_configured
    values: dict[str, str | None] = {}
    descriptors: dict[str, dict[str, Any]] = {}
    for descriptor in service.descriptors():
        value = raw.get(descriptor.name, descriptor.default)
        if descriptor.flowcore_only:  # NiFi's service would refuse an unknown property
            if value != descriptor.default:
                export.notes.append(
                    f"{descriptor.display_name!r} of service {service.name!r} is flowcore's own "
                    f"property, left out (NiFi's {nifi_type} has no such property)."
                )
            continue
        if descriptor.sensitive and value is not None and not sole_reference(value):
            export.notes.append(
                f"The value of sensitive property {descriptor.display_name!r} of service "
                f"{service.name!r} is left out: NiFi exports sensitive values only as parameter "
                "references."
            )
            value = None
        value = descriptor.stored_value(value)
        names_service = bool(descriptor.identifies_service)
        if names_service and value is not None and value in export.flow.services:
            value = export.service_id(value, "client")
        values[descriptor.name] = value
        descriptors[descriptor.name] = _descriptor_json(
            descriptor.name,
            descriptor.display_name,
            sensitive=descriptor.sensitive,
            dynamic=False,
            service=names_service,
        )
    for name, configured in service.dynamic_properties.items():
        dynamic = service.resolve_descriptor(name)
        sensitive = dynamic is not None and dynamic.sensitive  # DBCP's SENSITIVE.name
        value = raw.get(name, configured)
        if sensitive and value is not None and not sole_reference(value):
            export.notes.append(
                f"The value of sensitive property {name!r} of service {service.name!r} is left "
                "out: NiFi exports sensitive values only as parameter references."
            )
            value = None
        values[name] = value
        descriptors[name] = _descriptor_json(name, name, sensitive=sensitive, dynamic=True)
    return {
        "identifier": export.service_id(service.name, "client"),
        "name": service.name,
        "comments": "",
        "type": nifi_type,
        "bundle": bundle.to_json(),
        "properties": values,
        "propertyDescriptors": descriptors,
        "controllerServiceApis": [
            {"type": api, "bundle": _CACHE_API_BUNDLE.to_json()}
            for api in cls.implements
            if "." in api
        ],
        "scheduledState": "ENABLED",
        "bulletinLevel": "WARN",
        "componentType": "CONTROLLER_SERVICE",
        "groupIdentifier": export.group_id,
    }


def _ssl_context(export: _Export, service: StandardSSLContextService) -> dict[str, Any]:
    """A StandardSSLContextService without its passwords (NiFi exports no sensitive value)."""
    properties: dict[str, Any] = {
        "Keystore Filename": service.keystore_filename,
        "Keystore Type": service.keystore_type,
        "Truststore Filename": service.truststore_filename,
        "Truststore Type": service.truststore_type,
        "SSL Protocol": service.tls_protocol,
    }
    for field in StandardSSLContextService.SENSITIVE:
        if getattr(service, field):
            export.notes.append(
                f"The {field.replace('_', ' ')} of SSL context service {service.name!r} is left "
                "out: NiFi exports sensitive values only as parameter references."
            )
    return {
        "identifier": export.service_id(service.name, "client"),
        "name": service.name,
        "comments": "",
        "type": StandardSSLContextService.NIFI_TYPES[0],
        "bundle": _SSL_BUNDLE.to_json(),
        "properties": properties,
        "propertyDescriptors": {
            key: _descriptor_json(key, key, sensitive=False, dynamic=False) for key in properties
        },
        "controllerServiceApis": [
            {"type": "org.apache.nifi.ssl.SSLContextService", "bundle": _CACHE_API_BUNDLE.to_json()}
        ],
        "scheduledState": "ENABLED",
        "bulletinLevel": "WARN",
        "componentType": "CONTROLLER_SERVICE",
        "groupIdentifier": export.group_id,
    }


def _map_cache(export: _Export, service: MapCacheService) -> tuple[dict[str, Any], ...]:
    """A map cache as NiFi holds one: a client that processors name, and its server.

    Each service gets a port of its own (4557 for the first, NiFi's default), so the import
    pairs each client with its server again.
    """
    port = str(_FIRST_CACHE_PORT + list(export.flow.services).index(service.name))
    client = {
        "Server Hostname": "localhost",
        "Server Port": port,
        "SSL Context Service": None,
        "Communications Timeout": "30 secs",
    }
    server = {
        "Port": port,
        "Maximum Cache Entries": str(service.maximum_cache_entries),
        "Eviction Strategy": service.eviction_strategy.value,
        "Persistence Directory": None,
        "SSL Context Service": None,
        "Maximum Read Size": "1 MB",
    }
    return (
        _service_json(
            export, export.service_id(service.name, "client"), service.name, _CACHE_CLIENT, client
        ),
        _service_json(
            export,
            export.service_id(service.name, "server"),
            f"{service.name} server",
            _CACHE_SERVER,
            server,
        ),
    )


# --- connections ----------------------------------------------------------------------------------


def _prioritizer_class(prioritizer: Prioritizer) -> str:
    return f"{PRIORITIZER_PACKAGE}.{prioritizer.value}"


def _bends(export: _Export, connection: Connection) -> list[dict[str, float]]:
    """Bend points so loops and parallel connections do not hide under one another."""
    source = export.positions[connection.source]
    if connection.source == connection.destination:  # out of the box's right side and back
        x = source.x + PROCESSOR_SIZE[0] + _LOOP_OFFSET
        middle = source.y + PROCESSOR_SIZE[1] / 2
        return [{"x": x, "y": middle - _LOOP_OFFSET / 2}, {"x": x, "y": middle + _LOOP_OFFSET / 2}]
    ends = {connection.source, connection.destination}
    twins = [c.id for c in export.flow.connections if {c.source, c.destination} == ends]
    rank = twins.index(connection.id)
    if rank == 0:
        return []
    target = export.positions[connection.destination]
    x = (source.x + target.x) / 2 + PROCESSOR_SIZE[0] / 2 + rank * _LOOP_OFFSET * 2
    y = (source.y + target.y) / 2 + PROCESSOR_SIZE[1] / 2
    return [{"x": x, "y": y}]


def _connection(export: _Export, connection: Connection) -> dict[str, Any]:
    """One ``VersionedConnection``, with the queue settings NiFi writes on every one."""
    source = export.flow.component(connection.source)
    relationships = (
        [_FUNNEL_RELATIONSHIP]
        if source.kind is ComponentKind.FUNNEL
        else sorted(connection.relationships)
    )
    if connection.durable:
        export.notes.append(
            f"Connection {export.flow.describe(connection)} is durable=True, which NiFi has no "
            "setting for (every NiFi queue is kept on disk)."
        )
    settings = connection.queue_settings
    return {
        "identifier": export.id_of(connection.id),
        "name": connection.name,
        "source": export.end(connection.source),
        "destination": export.end(connection.destination),
        "labelIndex": 1,
        "zIndex": 0,
        "selectedRelationships": relationships,
        "backPressureObjectThreshold": settings.back_pressure_object_threshold,
        "backPressureDataSizeThreshold": settings.back_pressure_data_size_threshold,
        "flowFileExpiration": settings.flowfile_expiration,
        "prioritizers": [_prioritizer_class(p) for p in settings.prioritizers],
        "bends": _bends(export, connection),
        "loadBalanceStrategy": connection.load_balance_strategy.value,
        "partitioningAttribute": connection.partitioning_attribute,
        "loadBalanceCompression": "DO_NOT_COMPRESS",
        "componentType": "CONNECTION",
        "groupIdentifier": export.group_id,
    }


# --- parameter contexts ----------------------------------------------------------------------


def _named_contexts(export: _Export) -> Iterator[tuple[str, ParameterContext]]:
    """Each context of the flow's tree with the name it is exported under, root first."""
    seen = 0

    def walk(context: ParameterContext, fallback: str) -> Iterator[tuple[str, ParameterContext]]:
        nonlocal seen
        yield context.name or fallback, context
        for inherited in context.inherited:
            seen += 1
            yield from walk(inherited, f"{export.flow.name} inherited {seen}")

    yield from walk(export.flow.parameters, export.flow.name)


def _parameter_contexts(export: _Export) -> dict[str, dict[str, Any]]:
    """NiFi's ``parameterContexts`` map by name; empty when the flow has no parameters."""
    root = export.flow.parameters
    if not root.parameters and not root.inherited:
        return {}
    named = list(_named_contexts(export))
    names = {id(context): name for name, context in reversed(named)}
    owners: dict[str, ParameterContext] = {}
    contexts: dict[str, dict[str, Any]] = {}
    for name, context in named:
        if name in owners:
            if owners[name] != context:
                export.notes.append(
                    f"Two parameter contexts are named {name!r}; NiFi keeps the first one."
                )
            continue
        owners[name] = context
        contexts[name] = {
            "identifier": versioned_id(export.flow.name, "parameter-context", name),
            "name": name,
            "description": context.description,
            "parameters": [_parameter(export, name, p) for p in context.parameters],
            "inheritedParameterContexts": [names[id(c)] for c in context.inherited],
            "componentType": "PARAMETER_CONTEXT",
        }
    return contexts


def _parameter(export: _Export, context_name: str, parameter: Parameter) -> dict[str, Any]:
    """One ``VersionedParameter``: a sensitive value is never written, as in NiFi's downloads."""
    if not parameter.sensitive and not parameter.written_in_flow and parameter.source != "no value":
        export.notes.append(
            f"Parameter {parameter.name!r} of context {context_name!r} reads its value from "
            f"{parameter.source}; it is exported without a value."
        )
    return {
        "name": parameter.name,
        "description": parameter.description,
        "sensitive": parameter.sensitive,
        "provided": False,
        "value": None if parameter.sensitive else parameter.value,
    }
