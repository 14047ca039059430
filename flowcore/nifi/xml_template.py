"""A NiFi 1.x template (``<template><snippet>``) read into NiFi's versioned JSON shapes.

A template is JAXB's rendering of ``TemplateDTO`` (``nifi-client-dto``): ``name``,
``description``, ``groupId`` and a ``snippet``, a ``FlowSnippetDTO`` whose lists are written one
element per item, each named as the list (``<processors>``, ``<connections>``,
``<processGroups>``, ``<funnels>``, ``<inputPorts>``, ``<outputPorts>``,
``<remoteProcessGroups>``, ``<controllerServices>``, ``<labels>``); a nested group's own
snippet is its ``<contents>``. Each item is the component's DTO: a processor's settings sit in
its ``<config>`` (``ProcessorConfigDTO``), maps as ``<entry><key>..</key><value>..</value>``.
The snippet becomes the top group, as a downloaded flow definition's ``flowContents`` is, so
every import rule applies to it unchanged.

A template holds no parameter contexts (NiFi exports none with it): ``#{name}`` references
take their values from the caller (``parameters=``, ``--parameter``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from flowcore.errors import NiFiFormatError
from flowcore.nifi.schema import MAX_DEPTH
from flowcore.nifi.xml_parse import (
    XmlFlow,
    bundle_of,
    children,
    entries,
    flag,
    text_of,
    texts_of,
    whole_number,
)

__all__ = ["template_flow"]


def _present(**fields: Any) -> dict[str, Any]:
    """*fields* without those the XML did not hold (None): NiFi's defaults then apply."""
    return {k: v for k, v in fields.items() if v is not None}


def _state(element: ET.Element) -> str:
    """A component's ``<state>`` as a versioned flow's ``scheduledState``."""
    return "DISABLED" if (text_of(element, "state") or "").strip() == "DISABLED" else "ENABLED"


def _properties(config: ET.Element | None) -> dict[str, str | None]:
    """``<properties>``: a property without ``<value>`` is unset (None), as in NiFi's JSON."""
    found = children(config, "properties")
    return {key: text_of(entry, "value") for key, entry in entries(found[0] if found else None)}


def _descriptors(config: ET.Element | None) -> dict[str, dict[str, Any]]:
    """``<descriptors>`` as ``propertyDescriptors``: the flags the import reads.

    ``identifiesControllerService`` is the service API's class in a DTO, a flag in JSON;
    ``dynamic`` is kept only where the template says (a scrubbed template leaves it out).
    """
    found = children(config, "descriptors")
    made = {}
    for key, entry in entries(found[0] if found else None):
        value = children(entry, "value")
        descriptor = value[0] if value else None
        made[key] = _present(
            name=text_of(descriptor, "name") or key,
            identifiesControllerService=bool(text_of(descriptor, "identifiesControllerService")),
            sensitive=bool(flag(text_of(descriptor, "sensitive"))),
            dynamic=flag(text_of(descriptor, "dynamic")),
        )
    return made


def _relationships(element: ET.Element, field: str) -> list[str]:
    """The relationships whose ``<relationships>`` entry sets *field* (``autoTerminate``)."""
    return [
        text_of(r, "name") or ""
        for r in children(element, "relationships")
        if flag(text_of(r, field))
    ]


def _processor(element: ET.Element, group: str, where: str) -> dict[str, Any]:
    found = children(element, "config")
    config = found[0] if found else None
    terminated = {*texts_of(config, "autoTerminatedRelationships")}
    terminated |= {*_relationships(element, "autoTerminate")}
    retried = {*texts_of(config, "retriedRelationships"), *_relationships(element, "retry")}
    return _present(
        identifier=text_of(element, "id"),
        name=text_of(element, "name"),
        type=text_of(element, "type"),
        bundle=bundle_of(element),
        properties=_properties(config),
        propertyDescriptors=_descriptors(config),
        annotationData=text_of(config, "annotationData"),
        schedulingPeriod=text_of(config, "schedulingPeriod"),
        schedulingStrategy=text_of(config, "schedulingStrategy"),
        executionNode=text_of(config, "executionNode"),
        penaltyDuration=text_of(config, "penaltyDuration"),
        yieldDuration=text_of(config, "yieldDuration"),
        concurrentlySchedulableTaskCount=whole_number(
            config, "concurrentlySchedulableTaskCount", where
        ),
        # The config's list, and what the processor's relationships say (a scrubbed template
        # keeps only the latter).
        autoTerminatedRelationships=sorted(
            {*terminated, *_relationships(element, "autoTerminate")}
        ),
        retriedRelationships=sorted({*retried, *_relationships(element, "retry")}),
        retryCount=whole_number(config, "retryCount", where),
        backoffMechanism=text_of(config, "backoffMechanism"),
        maxBackoffPeriod=text_of(config, "maxBackoffPeriod"),
        scheduledState=_state(element),
        comments=text_of(config, "comments"),
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


def _end(element: ET.Element, tag: str) -> dict[str, Any] | None:
    found = children(element, tag)
    if not found:
        return None
    end = found[0]
    return _present(
        id=text_of(end, "id"),
        groupId=text_of(end, "groupId"),
        type=text_of(end, "type"),
        name=text_of(end, "name"),
    )


def _connection(element: ET.Element, group: str, where: str) -> dict[str, Any]:
    return _present(
        identifier=text_of(element, "id"),
        name=text_of(element, "name"),
        source=_end(element, "source"),
        destination=_end(element, "destination"),
        selectedRelationships=texts_of(element, "selectedRelationships"),
        backPressureObjectThreshold=whole_number(element, "backPressureObjectThreshold", where),
        backPressureDataSizeThreshold=text_of(element, "backPressureDataSizeThreshold"),
        flowFileExpiration=text_of(element, "flowFileExpiration"),
        prioritizers=texts_of(element, "prioritizers"),
        loadBalanceStrategy=text_of(element, "loadBalanceStrategy"),
        partitioningAttribute=text_of(element, "loadBalancePartitionAttribute"),
        loadBalanceCompression=text_of(element, "loadBalanceCompression"),
        groupIdentifier=group,
    )


def _service(element: ET.Element, group: str) -> dict[str, Any]:
    state = (text_of(element, "state") or "").strip()
    return _present(
        identifier=text_of(element, "id"),
        name=text_of(element, "name"),
        type=text_of(element, "type"),
        bundle=bundle_of(element),
        properties=_properties(element),
        propertyDescriptors=_descriptors(element),
        scheduledState="ENABLED" if state in ("ENABLED", "ENABLING") else "DISABLED",
        comments=text_of(element, "comments"),
        groupIdentifier=group,
    )


def _remote_group(element: ET.Element, group: str) -> dict[str, Any]:
    found = children(element, "contents")
    contents = found[0] if found else None
    return _present(
        identifier=text_of(element, "id"),
        name=text_of(element, "name"),
        targetUris=text_of(element, "targetUris") or text_of(element, "targetUri"),
        inputPorts=[
            _present(identifier=text_of(p, "id"), name=text_of(p, "name"))
            for p in children(contents, "inputPorts")
        ],
        outputPorts=[
            _present(identifier=text_of(p, "id"), name=text_of(p, "name"))
            for p in children(contents, "outputPorts")
        ],
        groupIdentifier=group,
    )


def _group(element: ET.Element, where: str, depth: int) -> dict[str, Any]:
    """A ``<processGroups>`` item: its settings and its ``<contents>``."""
    if depth > MAX_DEPTH // 2:
        msg = (
            f"NiFi template {where} nests process groups more than {MAX_DEPTH // 2} deep, "
            "deeper than flowcore reads; NiFi does not write such flows: export it again"
        )
        raise NiFiFormatError(msg)
    identifier = text_of(element, "id") or ""
    found = children(element, "contents")
    variables_found = children(element, "variables")
    variables = {
        key: text_of(entry, "value") or ""
        for key, entry in entries(variables_found[0] if variables_found else None)
    }
    return {
        **_present(
            identifier=identifier,
            name=text_of(element, "name"),
            comments=text_of(element, "comments"),
            flowFileConcurrency=text_of(element, "flowfileConcurrency"),
            flowFileOutboundPolicy=text_of(element, "flowfileOutboundPolicy"),
            variables=variables or None,
        ),
        **_contents(found[0] if found else None, identifier, where, depth),
    }


def _contents(
    snippet: ET.Element | None, group: str, where: str, depth: int
) -> dict[str, list[dict[str, Any]]]:
    """A ``FlowSnippetDTO``'s lists, as a versioned group's."""
    return {
        "processors": [_processor(p, group, where) for p in children(snippet, "processors")],
        "inputPorts": [_port(p, "INPUT_PORT", group) for p in children(snippet, "inputPorts")],
        "outputPorts": [_port(p, "OUTPUT_PORT", group) for p in children(snippet, "outputPorts")],
        "funnels": [
            {"identifier": text_of(f, "id"), "groupIdentifier": group}
            for f in children(snippet, "funnels")
        ],
        "connections": [_connection(c, group, where) for c in children(snippet, "connections")],
        "processGroups": [_group(g, where, depth + 1) for g in children(snippet, "processGroups")],
        "remoteProcessGroups": [
            _remote_group(g, group) for g in children(snippet, "remoteProcessGroups")
        ],
        "controllerServices": [_service(s, group) for s in children(snippet, "controllerServices")],
    }


def _snippet_group_id(template: ET.Element, snippet: ET.Element) -> str:
    """The group the snippet's components say they are in (their ``parentGroupId``).

    Connections name their ends' group by it; a template written by hand may leave it out,
    and then the template's ``groupId`` stands for it.
    """
    for item in snippet:
        parent = text_of(item, "parentGroupId")
        if parent:
            return parent
    return text_of(template, "groupId") or "template"


def template_flow(template: ET.Element, where: str) -> XmlFlow:
    """The flow a NiFi 1.x template holds, its snippet as the top group.

    Raises:
        NiFiFormatError: the template has no ``<snippet>``, or a number field holds no number.
    """
    found = children(template, "snippet")
    if not found:
        msg = (
            f"NiFi template {where} has no <snippet>: it holds no components; export the "
            "template from NiFi again"
        )
        raise NiFiFormatError(msg)
    snippet = found[0]
    name = (text_of(template, "name") or "").strip() or "NiFi template"
    identifier = _snippet_group_id(template, snippet)
    root = {
        "identifier": identifier,
        "name": name,
        "comments": text_of(template, "description") or "",
        **_contents(snippet, identifier, where, 0),
    }
    return XmlFlow(template=True, root=root, name=name)
