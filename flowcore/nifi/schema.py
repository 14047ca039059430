"""The types of the NiFi fields flowcore reads, checked once over a whole flow before the import.

A flow definition is JSON someone may have edited by hand; a field of the wrong type (a list
where NiFi writes an object, a word where it writes a number) must stop the import with one line
naming the field by its JSON path, ``flowContents.processGroups[0].processors[3].properties:
expected an object, got a list``, not with a traceback from deep in the importer. So
:func:`check_flow` walks the document once, before anything reads it, against :data:`OBJECTS`:
for each of NiFi's versioned classes (``org.apache.nifi.flow`` in nifi-api), the fields the
importer reads and the JSON type NiFi writes each in. Fields not listed are not read (layout,
bulletin levels ...) and may hold anything; ``null`` is allowed everywhere, as NiFi leaves unset
fields out or null, except in the identifiers of the components connections join. The importer
may then read every listed field at the type given here.

The walk is a loop over a stack, not recursion, and measures the nesting of the whole document
(known fields or not): a flow nested deeper than :data:`MAX_DEPTH` is refused, as the groups
walk and the messages that quote JSON would otherwise recurse without bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
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
    "identifier": (str,),  # and not empty, nor null: see _fits
    "integer": (int,),  # a Long or Integer in nifi-api; bool is excluded below
    "boolean": (bool,),
}

_COMPONENT = {"identifier": "string", "name": "string", "comments": "string"}
#: A component the import makes a node of: found by its identifier, so it must have one.
_CONNECTABLE = {**_COMPONENT, "identifier": "identifier"}
_EXTENSION = {
    **_COMPONENT,  # a controller service without an identifier is one no processor can name
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
    # NiFi Registry's flow files (its SerializationContainer): data model 3, then 2.
    "RegistryFlowContentFile": {"content": "FlowContent"},
    "FlowContent": {"flowSnapshot": "RegisteredFlowSnapshot"},
    "RegistryProcessGroupFile": {"content": "VersionedProcessGroup"},
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
        "identifier": "identifier",
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
    "VersionedPort": {**_CONNECTABLE, "allowRemoteAccess": "boolean", "scheduledState": "string"},
    "VersionedFunnel": _CONNECTABLE,
    "VersionedRemoteProcessGroup": {
        **_CONNECTABLE,
        "targetUris": "string",
        "inputPorts": ListOf("VersionedRemoteGroupPort"),
        "outputPorts": ListOf("VersionedRemoteGroupPort"),
    },
    "VersionedRemoteGroupPort": _CONNECTABLE,
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
    "ConnectableComponent": {
        "id": "string",
        "groupId": "string",
        "name": "string",
        "type": "string",
    },
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
    if isinstance(value, int) and value.bit_length() > 64:  # too long to print whole
        return f"a number of {value.bit_length()} bits"
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
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


_EXPECTED = {
    "string": "a string",
    "identifier": "an identifier (a string that is not empty)",
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


#: The types of JSON's scalars, as parsed.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _is_container(value: Any) -> bool:
    """Whether *value* is a JSON object or list (a parsed file's are dicts: checked first)."""
    kind = type(value)
    if kind in _SCALARS:
        return False
    return kind is dict or kind is list or isinstance(value, Mapping | list)


def _fits(value: Any, spec: str | ListOf | MapOf) -> bool:
    if type(value) is str and spec == "string":  # the common case, first
        return True
    if spec == "identifier":
        return isinstance(value, str) and bool(value)
    if value is None:
        return True
    if isinstance(spec, ListOf):
        return isinstance(value, list)
    if isinstance(spec, MapOf) and spec.or_list:
        return _is_container(value)
    if isinstance(spec, MapOf) or spec in OBJECTS:
        return type(value) is dict or isinstance(value, Mapping)
    if isinstance(value, bool):
        return spec == "boolean"
    return isinstance(value, _PRIMITIVES[spec])


def _wrong(source: str, path: str, spec: str | ListOf | MapOf, value: Any) -> NiFiFormatError:
    msg = (
        f"NiFi flow {source}: {path or 'the document'} must be {_expected(spec)}, got "
        f"{json_type(value)}; correct that field, or export the flow from NiFi again"
    )
    return NiFiFormatError(msg)


#: Where a value is: None for the document, else (where its container is, its key or index).
_Trail = tuple[Any, str | int] | None
#: What a field holds: a primitive's or an object class's name, a list or a map.
_Spec = str | ListOf | MapOf
#: A value to check, with its spec (None: not read) and where it is.
_Item = tuple[Any, "_Spec | None", _Trail]


def _path(trail: _Trail) -> str:
    """The JSON path a trail spells (``flowContents.processors[3].properties``)."""
    keys: list[str | int] = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    path = ""
    for key in reversed(keys):
        path = json_path(path, key)
    return path


def _children(value: Any, spec: _Spec | None, trail: _Trail, source: str) -> Iterator[_Item]:
    """The values in the list or object *value* to check.

    Those flowcore reads, and the lists and objects (whose depth counts) of the rest.
    """
    if isinstance(value, list):
        item = spec.item if isinstance(spec, ListOf) else None
        if isinstance(spec, MapOf):  # or_list: the values listed
            item = spec.value
        for index, child in enumerate(value):
            if item is not None and child is None:  # NiFi lists hold no nulls
                raise _wrong(source, _path((trail, index)), item, None)
            if item is not None or _is_container(child):
                yield child, item, (trail, index)
        return
    fields = OBJECTS.get(spec) if isinstance(spec, str) else None
    for key, required in (fields or {}).items():
        if required == "identifier" and key not in value:
            raise _wrong(source, _path((trail, key)), required, None)
    for key, child in value.items():
        if isinstance(spec, MapOf):
            child_spec: _Spec | None = spec.value
        else:
            child_spec = fields.get(key) if fields is not None else None
        if child_spec is not None or _is_container(child):
            yield child, child_spec, (trail, str(key))


def check_flow(document: Any, kind: str, source: str) -> None:
    """Check the types of every field flowcore reads in *document*, and its nesting depth.

    Depth first, a generator of children per open list or object: memory grows with the depth
    (at most :data:`MAX_DEPTH`), not with the size of the document.

    Args:
        document: the parsed JSON.
        kind: the class of the top object in :data:`OBJECTS` (``VersionedProcessGroup``...).
        source: the file, for messages.

    Raises:
        NiFiFormatError: the first field (in document order) whose value has the wrong type,
            named by its JSON path, or the first place nested deeper than :data:`MAX_DEPTH`.
    """
    # The path is spelled only for a message, as most flows have none to give.
    stack: list[Iterator[_Item]] = [iter([(document, kind, None)])]
    while stack:
        found = next(stack[-1], None)
        if found is None:
            stack.pop()
            continue
        value, spec, trail = found
        if spec is not None and not _fits(value, spec):
            raise _wrong(source, _path(trail), spec, value)
        if not _is_container(value):
            continue
        if len(stack) > MAX_DEPTH:  # the open lists and objects above, and this one
            where = _path(trail)
            where = where if len(where) <= 80 else f"{where[:80]}..."
            msg = (
                f"NiFi flow {source}: {where} is nested more than {MAX_DEPTH} levels "
                "deep, deeper than flowcore reads; NiFi does not write such flows: export it again"
            )
            raise NiFiFormatError(msg)
        stack.append(_children(value, spec, trail, source))
