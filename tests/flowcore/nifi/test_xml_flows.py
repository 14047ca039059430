"""Tests for flowcore.nifi.xml_flows: a NiFi 1.x XML document told apart and read."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore.errors import NiFiFormatError
from flowcore.nifi.xml_flows import read_xml


def test_a_template_and_a_flow_xml_are_told_apart_by_their_root(samples: Path) -> None:
    """<template> is a template, <flowController> an instance's flow."""
    template = read_xml((samples / "template-1x.xml").read_bytes(), "t.xml")
    assert template.template
    assert template.name == "Plain lines"
    instance = read_xml(b"<flowController><rootGroup><id>r</id></rootGroup></flowController>", "f")
    assert not instance.template
    assert instance.root["identifier"] == "r"


def test_other_xml_is_refused_saying_what_to_export() -> None:
    """Any other root is neither: one line naming the root and the JSON to download."""
    with pytest.raises(NiFiFormatError, match=r"root is <beans>.*flow definition \(JSON\)"):
        read_xml(b"<beans/>", "beans.xml")
