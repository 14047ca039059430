"""UpdateAttribute's Advanced rules as NiFi stores them: the processor's ``annotationData`` XML.

NiFi's UpdateAttribute keeps its rules as JAXB's rendering of ``Criteria`` (the
``nifi-update-attribute-model`` module: ``CriteriaSerDe``, ``Rule``, ``Condition``,
``Action``): a ``<criteria>`` fragment with the ``flowFilePolicy`` and one ``<rules>`` element
per rule, each with ``actions`` (attribute, id, value), ``comments``, ``conditions``
(expression, id), ``id`` and ``name``, elements in JAXB's alphabetical order. Every rule,
condition and action has an id; export derives them from the processor's, so the XML of a
flow is the same each time it is written.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence

from flowcore.errors import FlowDefinitionError
from processors.update_attribute import USE_CLONE, Rule

__all__ = ["criteria_from_xml", "criteria_xml"]


def _text(parent: ET.Element, tag: str, text: str) -> None:
    ET.SubElement(parent, tag).text = text


def criteria_xml(rules: Sequence[Rule], flowfile_policy: str, new_id: Callable[[str], str]) -> str:
    """The ``annotationData`` of an UpdateAttribute with *rules* and *flowfile_policy*.

    Args:
        rules: the rules, in order (NiFi applies them in this order).
        flowfile_policy: ``USE_CLONE`` or ``USE_ORIGINAL``.
        new_id: gives the id of a rule, condition or action from a path naming it
            (``"rule/0"``, ``"rule/0/condition/1"``).
    """
    criteria = ET.Element("criteria")
    _text(criteria, "flowFilePolicy", flowfile_policy)
    for r, rule in enumerate(rules):
        element = ET.SubElement(criteria, "rules")
        for a, (attribute, value) in enumerate(sorted(rule.actions.items())):
            action = ET.SubElement(element, "actions")
            _text(action, "attribute", attribute)
            _text(action, "id", new_id(f"rule/{r}/action/{a}"))
            _text(action, "value", value)
        if rule.comments:
            _text(element, "comments", rule.comments)
        for c, expression in enumerate(rule.conditions):
            condition = ET.SubElement(element, "conditions")
            _text(condition, "expression", expression)
            _text(condition, "id", new_id(f"rule/{r}/condition/{c}"))
        _text(element, "id", new_id(f"rule/{r}"))
        _text(element, "name", rule.name)
    ET.indent(criteria, space="    ")
    return ET.tostring(criteria, encoding="unicode")


def criteria_from_xml(text: str | None) -> tuple[tuple[Rule, ...], str]:
    """The rules and FlowFile Policy of an UpdateAttribute's ``annotationData``.

    Empty or missing annotation data means no rules and NiFi's default policy, ``USE_CLONE``.

    Raises:
        FlowDefinitionError: the text is not NiFi's criteria XML.
    """
    if not text or not text.strip():
        return (), USE_CLONE
    if "<!DOCTYPE" in text or "<!ENTITY" in text:  # JAXB never writes one; it could declare
        msg = "UpdateAttribute's annotationData declares a document type, which NiFi's never does"
        raise FlowDefinitionError(msg)
    try:
        root = ET.fromstring(text)  # no DTD (refused above); expat limits entity expansion
    except ET.ParseError as error:
        msg = f"UpdateAttribute's annotationData is not XML ({error}); export it again from NiFi"
        raise FlowDefinitionError(msg) from None
    if root.tag != "criteria":
        msg = f"UpdateAttribute's annotationData holds <{root.tag}>, not NiFi's <criteria>"
        raise FlowDefinitionError(msg)
    rules = tuple(
        Rule(
            name=element.findtext("name") or "",
            conditions=[c.findtext("expression") or "" for c in element.iter("conditions")],
            actions={
                a.findtext("attribute") or "": a.findtext("value") or ""
                for a in element.iter("actions")
            },
            comments=element.findtext("comments") or "",
        )
        for element in root.iter("rules")
    )
    return rules, (root.findtext("flowFilePolicy") or USE_CLONE).strip()
