"""Tests for flowcore.nifi.xml_parse: NiFi's XML parsed safely, and the element readers."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from flowcore.errors import NiFiFormatError
from flowcore.nifi import xml_parse
from flowcore.nifi.formats import read_definition
from flowcore.nifi.xml_parse import parse_xml, text_of, texts_of, whole_number

#: A "billion laughs": ten levels of ten references, 10**9 "lol"s (3 GB) once expanded.
BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE template [\n <!ENTITY lol "lol">\n'
    + b"".join(
        f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'.encode()
        for i in range(1, 10)
    )
    + b"]>\n<template><name>&lol9;</name><snippet/></template>\n"
)


def test_a_billion_laughs_template_is_refused_in_one_line(tmp_path: Path) -> None:
    """The entities are never expanded: the DOCTYPE is refused at once, naming the file."""
    path = tmp_path / "laughs.xml"
    path.write_bytes(BILLION_LAUGHS)
    started = time.monotonic()
    with pytest.raises(NiFiFormatError, match="declares a document type") as raised:
        read_definition(path)
    assert time.monotonic() - started < 2
    assert str(path) in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "document",
    [
        b'<!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]><template>&x;</template>',
        b'<!DOCTYPE template SYSTEM "http://127.0.0.1:9/nifi.dtd"><template/>',
        b'<?xml version="1.0"?><!DOCTYPE flowController><flowController/>',
    ],
)
def test_external_entities_and_any_doctype_are_refused(document: bytes) -> None:
    """An external entity (a local file, a URL) is never fetched: any DOCTYPE is refused."""
    with pytest.raises(NiFiFormatError, match="declares a document type"):
        parse_xml(document, "flow.xml")


def test_malformed_xml_is_one_line_naming_the_place() -> None:
    """A broken document says where it breaks."""
    with pytest.raises(NiFiFormatError, match=r"flow.xml is not well-formed XML \(mismatched"):
        parse_xml(b"<template><name></template>", "flow.xml")


def test_too_many_tags_are_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tags are counted in the text and bounded before a tree is built."""
    monkeypatch.setattr(xml_parse, "MAX_XML_TAGS", 10)
    with pytest.raises(NiFiFormatError, match="more than 10 XML tags"):
        parse_xml(b"<a>" + b"<b/>" * 20 + b"</a>", "big.xml")


def test_text_readers_tell_absent_from_empty() -> None:
    """A missing child is None, an empty one "", repeated children keep their order."""
    root = parse_xml(b"<p><a>1</a><b/><r>x</r><r></r><r>y</r><n> 7 </n></p>", "p")
    assert (text_of(root, "a"), text_of(root, "b"), text_of(root, "zz")) == ("1", "", None)
    assert texts_of(root, "r") == ["x", "", "y"]
    assert whole_number(root, "n", "p") == 7
    assert whole_number(root, "b", "p") is None
    with pytest.raises(NiFiFormatError, match="<a> must be a whole number"):
        whole_number(parse_xml(b"<p><a>two</a></p>", "p"), "a", "p")


def test_only_direct_children_are_read() -> None:
    """A group's nested templates hold processors that are not the group's."""
    root = parse_xml(b"<g><processor/><template><processor/></template></g>", "g")
    assert len(xml_parse.children(root, "processor")) == 1
