"""UpdateAttribute's Advanced rules, as NiFi keeps them: XML in the processor's annotation data.

NiFi's Advanced UI stores its rules in ``annotationData`` as the JAXB form of
``org.apache.nifi.update.attributes.Criteria`` (``CriteriaSerDe``)::

    <criteria>
        <flowFilePolicy>USE_CLONE</flowFilePolicy>
        <rules>
            <actions><attribute>size</attribute><id>..</id><value>big</value></actions>
            <comments></comments>
            <conditions><expression>${fileSize:gt(100)}</expression><id>..</id></conditions>
            <id>..</id>
            <name>big</name>
        </rules>
    </criteria>

Rules keep their order (NiFi's ``LinkedHashMap``); ids are dropped. The text comes from a file,
so a document type declaration (which JAXB never writes, and which could declare entities) is
refused, and expat's own limits stop entity expansion bombs.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import attrs

from flowcore.errors import NiFiFormatError
from processors.update_attribute import USE_CLONE, USE_ORIGINAL, Rule

__all__ = ["Criteria", "criteria_from_xml"]


@attrs.frozen
class Criteria:
    """UpdateAttribute's rules and its FlowFile Policy (``USE_CLONE`` or ``USE_ORIGINAL``)."""

    rules: tuple[Rule, ...] = ()
    flowfile_policy: str = USE_CLONE


def _text(element: ET.Element, tag: str) -> str:
    found = element.find(tag)
    return (found.text or "") if found is not None else ""


def _rule(element: ET.Element) -> Rule:
    actions = {}
    for action in element.findall("actions"):
        actions[_text(action, "attribute")] = _text(action, "value")
    conditions = [_text(c, "expression") for c in element.findall("conditions")]
    return Rule(
        name=_text(element, "name"),
        conditions=conditions,
        actions=actions,
        comments=_text(element, "comments"),
    )


def criteria_from_xml(text: str | None, where: str) -> Criteria | None:
    """The rules in UpdateAttribute's annotation data, or None when it holds none.

    Args:
        text: the processor's ``annotationData``.
        where: the processor, for messages.

    Raises:
        NiFiFormatError: the text is not the XML NiFi writes there.
    """
    if text is None or not text.strip():
        return None
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        msg = f"{where}: its annotationData declares a document type; NiFi's never does"
        raise NiFiFormatError(msg)
    try:
        root = ET.fromstring(text)  # no DTD (refused above); expat limits entity expansion
    except ET.ParseError as error:
        msg = f"{where}: its Advanced rules (annotationData) are not valid XML: {error}"
        raise NiFiFormatError(msg) from None
    if root.tag != "criteria":
        msg = f"{where}: its annotationData is <{root.tag}>, not UpdateAttribute's <criteria>"
        raise NiFiFormatError(msg)
    policy = _text(root, "flowFilePolicy") or USE_CLONE
    if policy not in (USE_CLONE, USE_ORIGINAL):
        msg = f"{where}: FlowFile Policy {policy!r} is not {USE_CLONE} or {USE_ORIGINAL}"
        raise NiFiFormatError(msg)
    return Criteria(tuple(_rule(r) for r in root.findall("rules")), policy)
