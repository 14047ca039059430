"""The types of the NiFi fields flowcore reads, checked once over a whole flow before the import.

A flow definition is JSON someone may have edited by hand; a field of the wrong type (a list
where NiFi writes an object, a word where it writes a number) must stop the import with one line
naming the field by its JSON path, ``flowContents.processGroups[0].processors[3].properties:
expected an object, got a list``, not with a traceback from deep in the importer. So
:func:`check_flow` walks the document once, before anything reads it, against :data:`OBJECTS`:
for each of NiFi's versioned classes (``org.apache.nifi.flow`` in nifi-api), the fields the
importer reads and the JSON type NiFi writes each in. Fields not listed are not read (layout,
bulletin levels ...) and may hold anything; ``null`` is allowed everywhere, as NiFi leaves unset
fields out or null. The importer may then read every listed field at the type given here.

The walk is a loop over a stack, not recursion, and measures the nesting of the whole document
(known fields or not): a flow nested deeper than :data:`MAX_DEPTH` is refused, as the groups
walk and the messages that quote JSON would otherwise recurse without bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from flowcore.errors import NiFiFormatError

__all__ = ["MAX_DEPTH", "OBJECTS", "ListOf", "MapOf", "check_flow", "json_path", "json_type"]

#: How deeply a flow's JSON may nest (objects and lists). A process group one level down costs
#: two (``processGroups``, the group), and NiFi's own fields reach about eight below a group,
#: so this leaves room for some 60 levels of nested groups.
MAX_DEPTH = 128


@attrs.frozen
class ListOf:
    """A JSON list whose items are all of *item* (a type name or an object class)."""

    item: str


@attrs.frozen
class MapOf:
    """A JSON object whose values are all of *value*, keyed by name or identifier.

    With *or_list*, a list of such values is taken too (parameter contexts: a map by name in a
    flow definition, a list in an instance's flow).
    """

    value: str
    or_list: bool = False


#: The primitive types, by the name the tables use, and what NiFi writes for each.
_PRIMITIVES = {
    "string": (str,),
    "integer": (int,),  # a Long or Integer in nifi-api; bool is excluded below
    "boolean": (bool,),
}

_COMPONENT = {"identifier": "string", "name": "string", "comments": "string"}
_EXTENSION = {
    **_COMPONENT,
    "type": "string",
    "bundle": "Bundle",
    "properties": MapOf("string"),
    "propertyDescriptors": MapOf("VersionedPropertyDescriptor"),
}

#: NiFi's versioned classes by name: each field the import reads, and its type.
OBJECTS: Mapping[str, Mapping[str, str | ListOf | MapOf]] = {
    "RegisteredFlowSnapshot": {  # and a downloaded flow definition, which is its subset
        "flowContents": "VersionedProcessGroup",
        "flow": "VersionedFlow",
        "parameterContexts": MapOf("VersionedParameterContext", or_list=True),
        "externalControllerServices": MapOf("ExternalControllerServiceReference"),
    },
    "VersionedDataflow": {  # an instance's flow.json.gz
        "rootGroup": "VersionedProcessGroup",
        "parameterContexts": MapOf("VersionedParameterContext", or_list=True),
        "controllerServices": ListOf("VersionedControllerService"),
    },
    "VersionedFlow": {"name": "string"},
    "ExternalControllerServiceReference": {"identifier": "string", "name": "string"},
    "Bundle": {"group": "string", "artifact": "string", "version": "string"},
    "VersionedProcessGroup": {
        **_COMPONENT,
        "processGroups": ListOf("VersionedProcessGroup"),
        "remoteProcessGroups": ListOf("VersionedRemoteProcessGroup"),
        "processors": ListOf("VersionedProcessor"),
        "inputPorts": ListOf("VersionedPort"),
        "outputPorts": ListOf("VersionedPort"),
        "connections": ListOf("VersionedConnection"),
        "funnels": ListOf("VersionedFunnel"),
        "controllerServices": ListOf("VersionedControllerService"),
        "parameterContextName": "string",
        "variables": MapOf("string"),
        "flowFileConcurrency": "string",
        "flowFileOutboundPolicy": "string",
        "executionEngine": "string",
    },
    "VersionedProcessor": {
        **_EXTENSION,
        "annotationData": "string",
        "schedulingPeriod": "string",
        "schedulingStrategy": "string",
        "executionNode": "string",
        "penaltyDuration": "string",
        "yieldDuration": "string",
        "concurrentlySchedulableTaskCount": "integer",
        "autoTerminatedRelationships": ListOf("string"),
        "scheduledState": "string",
        "retryCount": "integer",
        "retriedRelationships": ListOf("string"),
        "backoffMechanism": "string",
        "maxBackoffPeriod": "string",
    },
    "VersionedPropertyDescriptor": {
        "name": "string",
        "identifiesControllerService": "boolean",
        "dynamic": "boolean",
        "sensitive": "boolean",
    },
    "VersionedControllerService": {**_EXTENSION, "scheduledState": "string"},
    "VersionedPort": {**_COMPONENT, "allowRemoteAccess": "boolean", "scheduledState": "string"},
    "VersionedFunnel": _COMPONENT,
    "VersionedRemoteProcessGroup": {
        **_COMPONENT,
        "targetUris": "string",
        "inputPorts": ListOf("VersionedRemoteGroupPort"),
        "outputPorts": ListOf("VersionedRemoteGroupPort"),
    },
    "VersionedRemoteGroupPort": _COMPONENT,
    "VersionedConnection": {
        **_COMPONENT,
        "source": "ConnectableComponent",
        "destination": "ConnectableComponent",
        "selectedRelationships": ListOf("string"),
        "backPressureObjectThreshold": "integer",
        "backPressureDataSizeThreshold": "string",
        "flowFileExpiration": "string",
        "prioritizers": ListOf("string"),
        "loadBalanceStrategy": "string",
        "partitioningAttribute": "string",
        "loadBalanceCompression": "string",
    },
    "ConnectableComponent": {"id": "string", "groupId": "string", "name": "string", "type": "string"},
    "VersionedParameterContext": {
        "name": "string",
        "description": "string",
        "parameters": ListOf("VersionedParameter"),
        "inheritedParameterContexts": ListOf("string"),
        "parameterProvider": "string",
    },
    "VersionedParameter": {
        "name": "string",
        "description": "string",
        "sensitive": "boolean",
        "value": "string",
    },
}


def json_type(value: Any) -> str:
    """The JSON name of *value*'s type, as messages say it (``an object``, ``a list`` ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"a string ({value[:40]!r}{'...' if len(value) > 40 else ''})"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def json_path(path: str, key: str | int) -> str:
    """*path* one step down: ``a.b[3]``, ``a.properties["Batch Size"]``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


_EXPECTED = {
    "string": "a string",
    "integer": "a whole number",
    "boolean": "true or false",
}


def _expected(spec: str | ListOf | MapOf) -> str:
    if isinstance(spec, ListOf):
        return "a list"
    if isinstance(spec, MapOf) and spec.or_list:
        return "an object or a list"
    if isinstance(spec, MapOf) or spec in OBJECTS:
        return "an object"
    return _EXPECTED[spec]


def _fits(value: Any, spec: str | ListOf | MapOf) -> bool:
    if value is None:
        return True
    if isinstance(spec, ListOf):
        return isinstance(value, list)
    if isinstance(spec, MapOf) and spec.or_list:
        return isinstance(value, Mapping | list)
    if isinstance(spec, MapOf) or spec in OBJECTS:
        return isinstance(value, Mapping)
    if isinstance(value, bool):
        return spec == "boolean"
    return isinstance(value, _PRIMITIVES[spec])


def _wrong(source: str, path: str, spec: str | ListOf | MapOf, value: Any) -> NiFiFormatError:
    msg = (
        f"NiFi flow {source}: {path or 'the document'} must be {_expected(spec)}, got "
        f"{json_type(value)}; correct that field, or export the flow from NiFi again"
    )
    return NiFiFormatError(msg)


def check_flow(document: Any, kind: str, source: str) -> None:
    """Check the types of every field flowcore reads in *document*, and its nesting depth.

    Args:
        document: the parsed JSON.
        kind: the class of the top object in :data:`OBJECTS` (``VersionedProcessGroup``...).
        source: the file, for messages.

    Raises:
        NiFiFormatError: the first field (in document order) whose value has the wrong type,
            named by its JSON path, or the first place nested deeper than :data:`MAX_DEPTH`.
    """
    # (value, its spec or None when not read, its JSON path, its depth)
    stack: list[tuple[Any, str | ListOf | MapOf | None, str, int]] = [(document, kind, "", 1)]
    while stack:
        value, spec, path, depth = stack.pop()
        if not isinstance(value, Mapping | list):
            if spec is not None and not _fits(value, spec):
                raise _wrong(source, path, spec, value)
            continue
        if spec is not None and not _fits(value, spec):
            raise _wrong(source, path, spec, value)
        if depth > MAX_DEPTH:
            msg = (
                f"NiFi flow {source}: {path} is nested more than {MAX_DEPTH} levels deep, "
                "deeper than flowcore reads; NiFi does not write such flows: export it again"
            )
            raise NiFiFormatError(msg)
        children: list[tuple[Any, str | ListOf | MapOf | None, str, int]] = []
        if isinstance(value, list):
            item = spec.item if isinstance(spec, ListOf) else None
            if isinstance(spec, MapOf):  # or_list: the values listed
                item = spec.value
            children = [(v, item, json_path(path, i), depth + 1) for i, v in enumerate(value)]
        else:
            fields = OBJECTS.get(spec) if isinstance(spec, str) else None
            for key, child in value.items():
                if isinstance(spec, MapOf):
                    child_spec: str | ListOf | MapOf | None = spec.value
                else:
                    child_spec = fields.get(key) if fields is not None else None
                children.append((child, child_spec, json_path(path, str(key)), depth + 1))
        stack.extend(reversed(children))
