"""Tests for flowcore.nifi.annotation: UpdateAttribute's Advanced rules from annotationData."""

from __future__ import annotations

import pytest

from flowcore.errors import NiFiFormatError
from flowcore.nifi.annotation import criteria_from_xml
from processors.update_attribute import Rule

TWO_RULES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<criteria>
    <flowFilePolicy>USE_CLONE</flowFilePolicy>
    <rules>
        <actions><attribute>size</attribute><id>a1</id><value>big</value></actions>
        <actions><attribute>checked</attribute><id>a2</id><value>${now()}</value></actions>
        <comments>over a kilobyte</comments>
        <conditions><expression>  ${fileSize:gt(1024)} </expression><id>c1</id></conditions>
        <conditions><expression>${filename:endsWith('.log')}</expression><id>c2</id></conditions>
        <id>r1</id>
        <name>big logs</name>
    </rules>
    <rules>
        <actions><attribute>size</attribute><id>a3</id><value/></actions>
        <id>r2</id>
        <name>always</name>
    </rules>
</criteria>
"""


def test_rules_keep_their_order_conditions_and_actions() -> None:
    """Each <rules> becomes a Rule in order; conditions are trimmed, an empty value is ''."""
    criteria = criteria_from_xml(TWO_RULES, "Tag")
    assert criteria is not None
    assert criteria.flowfile_policy == "USE_CLONE"
    assert criteria.rules == (
        Rule(
            name="big logs",
            conditions=["${fileSize:gt(1024)}", "${filename:endsWith('.log')}"],
            actions={"size": "big", "checked": "${now()}"},
            comments="over a kilobyte",
        ),
        Rule(name="always", actions={"size": ""}),
    )


def test_no_annotation_data_means_no_rules() -> None:
    """Null or blank annotation data gives None (the processor has no Advanced rules)."""
    assert criteria_from_xml(None, "Tag") is None
    assert criteria_from_xml("  \n", "Tag") is None


def test_the_policy_defaults_to_use_clone() -> None:
    """A criteria without flowFilePolicy is NiFi's default, USE_CLONE."""
    criteria = criteria_from_xml("<criteria><rules><name>r</name></rules></criteria>", "Tag")
    assert criteria is not None
    assert criteria.flowfile_policy == "USE_CLONE"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('<!DOCTYPE c [<!ENTITY x "y">]><criteria/>', "declares a document type"),
        ("<criteria><rules>", "not valid XML"),
        ("<rules/>", "not UpdateAttribute's <criteria>"),
        ("<criteria><flowFilePolicy>SOMETIMES</flowFilePolicy></criteria>", "SOMETIMES"),
    ],
)
def test_what_nifi_never_writes_is_refused_naming_the_processor(text: str, message: str) -> None:
    """Document types, broken XML, another root or an unknown policy fail naming the processor."""
    with pytest.raises(NiFiFormatError, match=message) as raised:
        criteria_from_xml(text, "Ingest/Tag")
    assert "Ingest/Tag" in str(raised.value)
