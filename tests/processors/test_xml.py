"""Tests for processors._xml: the safe parser's refusals and the ``*:name`` rewrite."""

from __future__ import annotations

import pytest
from lxml import etree

from processors._xml import UnsafeXmlError, compile_xpath, parse_xml, xpath_problem


def test_any_namespace_rewrite_outside_literals() -> None:
    """``*:name`` matches any namespace; inside a string literal it is left alone."""
    tree = parse_xml(
        b'<a:r xmlns:a="urn:x"><b:c xmlns:b="urn:y" k="*:c">v</b:c></a:r>', allow_dtd=False
    )
    assert compile_xpath("/*:r/*:c", as_string=True)(tree) == "v"
    assert compile_xpath("count(//*[@k='*:c'])", as_string=True)(tree) == "1"
    assert compile_xpath("/*:r/child::*:c/@k", as_string=True)(tree) == "*:c"


def test_invalid_expressions_are_named() -> None:
    """A bad expression is reported with the expression; a good one is None."""
    assert xpath_problem("/a/b[1]") is None
    problem = xpath_problem("/a[[")
    assert problem is not None
    assert "/a[[" in problem


def test_refusals() -> None:
    """DOCTYPE without permission, external DTDs and entity declarations are refused."""
    with pytest.raises(UnsafeXmlError, match="Allow DTD"):
        parse_xml(b"<!DOCTYPE r [<!ELEMENT r ANY>]><r/>", allow_dtd=False)
    assert parse_xml(b"<!DOCTYPE r [<!ELEMENT r ANY>]><r/>", allow_dtd=True).getroot().tag == "r"
    with pytest.raises(UnsafeXmlError, match="external DTD"):
        parse_xml(b'<!DOCTYPE r PUBLIC "-//x//y" "file:///x.dtd"><r/>', allow_dtd=True)
    with pytest.raises(etree.XMLSyntaxError, match="network"):  # libxml2 refuses the fetch
        parse_xml(b'<!DOCTYPE r PUBLIC "-//x//y" "http://127.0.0.1:9/x.dtd"><r/>', allow_dtd=True)
    with pytest.raises(UnsafeXmlError, match="entities"):
        parse_xml(b'<!DOCTYPE r [<!ENTITY e "v">]><r>&e;</r>', allow_dtd=True)
    with pytest.raises(etree.XMLSyntaxError):
        parse_xml(b"not xml", allow_dtd=True)
