"""Tests for flowcore.nifi.criteria: UpdateAttribute's rules as NiFi's annotation data."""

from __future__ import annotations

import pytest

from flowcore.errors import FlowDefinitionError
from flowcore.nifi.criteria import criteria_from_xml, criteria_xml
from processors.update_attribute import Rule

RULES = (
    Rule("big", ["${fileSize:gt(9)}", "${x:isEmpty()}"], {"size": "big", "a": "<&>"}, "note"),
    Rule("small", [], {"size": "small"}),
)


def ids(path: str) -> str:
    """A readable id per path, for the tests."""
    return f"id:{path}"


def test_rules_read_back_the_same() -> None:
    """Writing then reading gives the same rules and policy."""
    text = criteria_xml(RULES, "USE_ORIGINAL", ids)
    assert criteria_from_xml(text) == (RULES, "USE_ORIGINAL")


def test_xml_is_jaxbs_shape() -> None:
    """``<criteria>`` with the policy, then rules with elements in alphabetical order."""
    text = criteria_xml(RULES[1:], "USE_CLONE", ids)
    assert text == (
        "<criteria>\n"
        "    <flowFilePolicy>USE_CLONE</flowFilePolicy>\n"
        "    <rules>\n"
        "        <actions>\n"
        "            <attribute>size</attribute>\n"
        "            <id>id:rule/0/action/0</id>\n"
        "            <value>small</value>\n"
        "        </actions>\n"
        "        <id>id:rule/0</id>\n"
        "        <name>small</name>\n"
        "    </rules>\n"
        "</criteria>"
    )


def test_no_annotation_data_means_no_rules() -> None:
    """Missing or blank annotation data is NiFi's default: no rules, USE_CLONE."""
    assert criteria_from_xml(None) == ((), "USE_CLONE")
    assert criteria_from_xml("  ") == ((), "USE_CLONE")


def test_rules_of_nifis_own_xml_keep_order_and_trimmed_conditions() -> None:
    """NiFi's formatted XML (declaration, ids, blank value) reads in rule order, trimmed."""
    text = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<criteria>
    <rules>
        <actions><attribute>size</attribute><id>a1</id><value>big</value></actions>
        <conditions><expression>  ${fileSize:gt(1024)} </expression><id>c1</id></conditions>
        <id>r1</id>
        <name>big</name>
    </rules>
    <rules>
        <actions><attribute>size</attribute><id>a2</id><value/></actions>
        <id>r2</id>
        <name>always</name>
    </rules>
</criteria>"""
    assert criteria_from_xml(text) == (
        (Rule("big", ["${fileSize:gt(1024)}"], {"size": "big"}), Rule("always", [], {"size": ""})),
        "USE_CLONE",
    )


@pytest.mark.parametrize(
    "text", ["<criteria>", "<rules/>", '<!DOCTYPE c [<!ENTITY x "y">]><criteria/>']
)
def test_other_xml_is_refused(text: str) -> None:
    """Text that is not NiFi's criteria names the problem."""
    with pytest.raises(FlowDefinitionError, match="annotationData"):
        criteria_from_xml(text)
