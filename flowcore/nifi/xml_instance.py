"""A NiFi 1.x instance's ``conf/flow.xml.gz`` read into NiFi's versioned JSON shapes.

NiFi 1.x's ``StandardFlowSerializer`` writes ``<flowController encoding-version="1.x">`` with
``<parameterContexts>`` (each ``<parameterContext>``: ``id``, ``name``, ``description``,
``<parameter>`` with ``name``, ``description``, ``sensitive``, ``value``, and
``<inheritedParameterContextId>``), the ``<rootGroup>`` and the controller-level
``<controllerServices>``. A group holds, one element per component: ``<processor>`` (``id``,
``name``, ``comment``, ``class``, ``bundle``, ``maxConcurrentTasks``, ``schedulingPeriod``,
``penalizationPeriod``, ``yieldPeriod``, ``scheduledState``, ``schedulingStrategy``,
``executionNode``, ``<property>`` with ``name`` and ``value``, ``annotationData``,
``<autoTerminatedRelationship>``, and from 1.16 ``retryCount``, ``<retriedRelationship>``,
``backoffMechanism``, ``maxBackoffPeriod``), ``<inputPort>``, ``<outputPort>``, ``<funnel>``,
``<processGroup>``, ``<remoteProcessGroup>``, ``<connection>`` (``sourceId``,
``sourceGroupId``, ``sourceType``, the same for the destination, ``<relationship>``,
``maxWorkQueueSize``, ``maxWorkQueueDataSize``, ``flowFileExpiration``,
``<queuePrioritizerClass>``, ``loadBalanceStrategy``, ``partitioningAttribute``,
``loadBalanceCompression``), ``<controllerService>`` (``class``, ``enabled``, ``<property>``),
``<variable name=".." value=".."/>`` and ``parameterContextId``. Templates a group keeps
(``<template>``) are not the group's components and are not read.

The result is shaped as NiFi's ``flow.json.gz`` (``VersionedDataflow``), which NiFi 1.16 on
writes beside it: a stopped processor is ``ENABLED`` (flowcore runs it, with a note), the root
group's ports are site-to-site ports, and a sensitive value stays as NiFi encrypted it
(``enc{...}``), for the import to treat as it treats ``flow.json.gz``'s.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from flowcore.errors import NiFiFormatError
from flowcore.nifi.schema import MAX_DEPTH
from flowcore.nifi.xml_parse import (
    XmlFlow,
    bundle_of,
    children,
    flag,
    text_of,
    texts_of,
    whole_number,
)

__all__ = ["instance_flow"]

#: ``scheduledState`` in flow.xml (NiFi's ``ScheduledState``) -> in a versioned flow.
_STATES = {"RUNNING": "RUNNING", "DISABLED": "DISABLED"}


def _present(**fields: Any) -> dict[str, Any]:
    """*fields* without those the XML did not hold (None): NiFi's defaults then apply."""
    return {k: v for k, v in fields.items() if v is not None}


def _state(element: ET.Element) -> str:
    return _STATES.get((text_of(element, "scheduledState") or "").strip(), "ENABLED")


def _properties(element: ET.Element) -> dict[str, str | None]:
    """``<property>`` elements: one without ``<value>`` is unset (None)."""
    return {text_of(p, "name") or "": text_of(p, "value") for p in children(element, "property")}


def _processor(element: ET.Element, group: str, where: str) -> dict[str, Any]:
    return _present(
        identifier=text_of(element, "id"),
        name=text_of(element, "name"),
        type=text_of(element, "class"),
        bundle=bundle_of(element),
        properties=_properties(element),
        annotationData=text_of(element, "annotationData"),
        schedulingPeriod=text_of(element, "schedulingPeriod"),
        schedulingStrategy=text_of(element, "schedulingStrategy"),
        executionNode=text_of(element, "executionNode"),
        penaltyDuration=text_of(element, "penalizationPeriod"),
        yieldDuration=text_of(element, "yieldPeriod"),
        concurrentlySchedulableTaskCount=whole_number(element, "maxConcurrentTasks", where),
        autoTerminatedRelationships=texts_of(element, "autoTerminatedRelationship"),
        retriedRelationships=texts_of(element, "retriedRelationship"),
        retryCount=whole_number(element, "retryCount", where),
        backoffMechanism=text_of(element, "backoffMechanism"),
        maxBackoffPeriod=text_of(element, "maxBackoffPeriod"),
        scheduledState=_state(element),
        comments=text_of(element, "comment"),
        groupIdentifier=group,
    )


def _port(element: ET.Element, kind: str, group: str) -> dict[str, Any]:
    return _present(
        identifier=text_of(element, "id"),
        name=text_of(element, "name"),
        type=kind,
        allowRemoteAccess=flag(text_of(element, "allowRemoteAccess")),
        scheduledState=_state(element),
        groupIdentifier=group,
    )


def _connection(element: ET.Element, group: str, where: str) -> dict[str, Any]:
    def end(side: str) -> dict[str, Any]:
        return _present(
            id=text_of(element, f"{side}Id"),
            groupId=text_of(element, f"{side}GroupId"),
            type=text_of(element, f"{side}Type"),
        )

    return _present(
        identifier=text_of(element, "id"),
        name=text_of(element, "name"),
        source=end("source"),
        destination=end("destination"),
        selectedRelationships=texts_of(element, "relationship"),
        backPressureObjectThreshold=whole_number(element, "maxWorkQueueSize", where),
        backPressureDataSizeThreshold=text_of(element, "maxWorkQueueDataSize"),
        flowFileExpiration=text_of(element, "flowFileExpiration"),
        prioritizers=texts_of(element, "queuePrioritizerClass"),
        loadBalanceStrategy=text_of(element, "loadBalanceStrategy"),
        partitioningAttribute=text_of(element, "partitioningAttribute"),
        loadBalanceCompression=text_of(element, "loadBalanceCompression"),
        groupIdentifier=group,
    )


def _service(element: ET.Element, group: str) -> dict[str, Any]:
    return _present(
        identifier=text_of(element, "id"),
        name=text_of(element, "name"),
        type=text_of(element, "class"),
        bundle=bundle_of(element),
        properties=_properties(element),
        scheduledState="ENABLED" if flag(text_of(element, "enabled")) else "DISABLED",
        comments=text_of(element, "comment"),
        groupIdentifier=group,
    )


def _remote_group(element: ET.Element, group: str) -> dict[str, Any]:
    def ports(tag: str) -> list[dict[str, Any]]:
        return [
            _present(identifier=text_of(p, "id"), name=text_of(p, "name"))
            for p in children(element, tag)
        ]

    return _present(
        identifier=text_of(element, "id"),
        name=text_of(element, "name"),
        targetUris=text_of(element, "urls") or text_of(element, "url"),
        inputPorts=ports("inputPort"),
        outputPorts=ports("outputPort"),
        groupIdentifier=group,
    )


def _group(
    element: ET.Element, contexts: Mapping[str, str], where: str, depth: int
) -> dict[str, Any]:
    """A ``<rootGroup>`` or ``<processGroup>``, its components and nested groups."""
    if depth > MAX_DEPTH // 2:
        msg = (
            f"NiFi flow {where} nests process groups more than {MAX_DEPTH // 2} deep, deeper "
            "than flowcore reads; NiFi does not write such flows: copy it again"
        )
        raise NiFiFormatError(msg)
    group = text_of(element, "id") or ""
    variables = {
        v.get("name", ""): v.get("value", "")
        for v in children(element, "variable")
        if v.get("name") is not None
    }
    context_id = (text_of(element, "parameterContextId") or "").strip()
    return _present(
        identifier=group,
        name=text_of(element, "name"),
        comments=text_of(element, "comment"),
        flowFileConcurrency=text_of(element, "flowfileConcurrency"),
        flowFileOutboundPolicy=text_of(element, "flowfileOutboundPolicy"),
        variables=variables or None,
        # A context the file does not hold keeps its id, for the import to name it missing.
        parameterContextName=contexts.get(context_id, context_id) or None,
        processors=[_processor(p, group, where) for p in children(element, "processor")],
        inputPorts=[_port(p, "INPUT_PORT", group) for p in children(element, "inputPort")],
        outputPorts=[_port(p, "OUTPUT_PORT", group) for p in children(element, "outputPort")],
        funnels=[
            {"identifier": text_of(f, "id"), "groupIdentifier": group}
            for f in children(element, "funnel")
        ],
        connections=[_connection(c, group, where) for c in children(element, "connection")],
        processGroups=[
            _group(g, contexts, where, depth + 1) for g in children(element, "processGroup")
        ],
        remoteProcessGroups=[
            _remote_group(g, group) for g in children(element, "remoteProcessGroup")
        ],
        controllerServices=[_service(s, group) for s in children(element, "controllerService")],
    )


def _parameter_contexts(controller: ET.Element) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The parameter contexts by name, and their names by id (groups and contexts use ids)."""
    found = children(controller, "parameterContexts")
    elements = children(found[0] if found else None, "parameterContext")
    names = {text_of(c, "id") or "": text_of(c, "name") or "" for c in elements}
    contexts = {}
    for element in elements:
        name = text_of(element, "name") or text_of(element, "id") or ""
        contexts[name] = {
            "name": name,
            "description": text_of(element, "description") or "",
            "parameters": [
                _present(
                    name=text_of(p, "name"),
                    description=text_of(p, "description") or "",
                    sensitive=bool(flag(text_of(p, "sensitive"))),
                    value=text_of(p, "value"),
                )
                for p in children(element, "parameter")
            ],
            "inheritedParameterContexts": [
                names.get(i.strip(), i.strip())
                for i in texts_of(element, "inheritedParameterContextId")
            ],
        }
    return contexts, names


def instance_flow(controller: ET.Element, where: str) -> XmlFlow:
    """The flow a NiFi 1.x ``flow.xml.gz`` holds: its root group, contexts and services.

    Raises:
        NiFiFormatError: there is no ``<rootGroup>``, groups nest too deeply, or a number field
            holds no number.
    """
    roots = children(controller, "rootGroup")
    if not roots:
        msg = (
            f"NiFi flow {where} is a <flowController> without a <rootGroup>: it holds no "
            "flow; copy conf/flow.xml.gz from the NiFi instance again"
        )
        raise NiFiFormatError(msg)
    contexts, names = _parameter_contexts(controller)
    root = _group(roots[0], names, where, 0)
    found = children(controller, "controllerServices")
    services = tuple(
        _service(s, "") for s in children(found[0] if found else None, "controllerService")
    )
    return XmlFlow(
        template=False,
        root=root,
        name=str(root.get("name") or "NiFi Flow"),
        parameter_contexts=contexts,
        controller_services=services,
    )
