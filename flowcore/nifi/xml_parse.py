"""NiFi 1.x's XML, parsed safely, and the small readers the two XML shapes share.

NiFi 1.x keeps a flow in two XML documents: a template (``<template>``, JAXB's rendering of
``TemplateDTO``) and an instance's ``conf/flow.xml.gz`` (``<flowController>``, written by
``StandardFlowSerializer``). Neither ever holds a document type declaration, so one is refused
before any entity could be declared, let alone expanded (a "billion laughs" of nested
entities, or an external entity reading a local file): the parser stops at ``<!DOCTYPE``.
Size is bounded as for JSON: the text by :data:`~flowcore.nifi.formats.MAX_DEFINITION_BYTES`
(read and inflated by the caller) and the tags by :data:`MAX_XML_TAGS`, counted
before parsing.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any
from xml.parsers import expat

import attrs

from flowcore.errors import NiFiFormatError

__all__ = [
    "MAX_XML_TAGS",
    "XmlFlow",
    "children",
    "parse_xml",
    "text_of",
    "texts_of",
    "whole_number",
]

#: The most tags (each ``<``: an element's start, end, or both, a comment ...) a NiFi XML flow
#: may hold, counted before parsing. Parsed and read into JSON shapes, a tag costs up to some
#: 320 bytes (a ``<funnel/>``: an element and a dict), so the densest XML under the limit peaks
#: at about 480 MB, measured (the densest JSON at 450 MB); NiFi writes some 40 to 90 tags a
#: processor (its properties one ``<property>`` each), so this is 15,000 processors or more.
MAX_XML_TAGS = 1_500_000


@attrs.frozen
class XmlFlow:
    """A NiFi 1.x XML flow read into the JSON shapes of NiFi's versioned flows.

    Attributes:
        template: whether it was a template (else an instance's flow.xml).
        root: the top process group as a ``VersionedProcessGroup`` (JSON).
        name: the template's name, or the root group's.
        parameter_contexts: the parameter contexts by name (a flow.xml's), as JSON.
        controller_services: services at the controller level (a flow.xml's), as JSON.
    """

    template: bool
    root: Mapping[str, Any]
    name: str
    parameter_contexts: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    controller_services: tuple[Mapping[str, Any], ...] = ()


class _Refused(Exception):
    """A document type declaration, met by the parser."""


def _refuse(*_: Any) -> None:
    raise _Refused


def parse_xml(data: bytes | bytearray, where: str) -> ET.Element:
    """The root element of *data*, parsed with every document type declaration refused.

    Raises:
        NiFiFormatError: the text holds a ``<!DOCTYPE`` (or an entity declaration), too many
            tags, or is not well-formed XML; the message names the file.
    """
    tags = data.count(b"<")
    if tags > MAX_XML_TAGS:
        msg = (
            f"NiFi flow {where} holds more than {MAX_XML_TAGS:,} XML tags ({tags:,}), more "
            "than flowcore reads (flowcore.nifi.xml_parse.MAX_XML_TAGS); export a smaller "
            "process group"
        )
        raise NiFiFormatError(msg)
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    # Refused before anything is declared: no entity can exist to be expanded or fetched.
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    try:
        parser.Parse(bytes(data), True)
        return builder.close()
    except _Refused:
        msg = (
            f"NiFi flow {where} declares a document type (<!DOCTYPE>), which NiFi never writes "
            "and which could expand entities without bound; refused: export the flow from NiFi "
            "again"
        )
        raise NiFiFormatError(msg) from None
    except expat.ExpatError as error:
        msg = f"NiFi flow {where} is not well-formed XML ({error}); export it from NiFi again"
        raise NiFiFormatError(msg) from None


def children(element: ET.Element | None, tag: str) -> list[ET.Element]:
    """The direct children of *element* named *tag* (none when *element* is None).

    Only direct children: a flow.xml's groups hold templates whose processors are not the
    group's.
    """
    return [] if element is None else [c for c in element if c.tag == tag]


def text_of(element: ET.Element | None, tag: str) -> str | None:
    """The text of *element*'s first child *tag*: None when there is none, ``""`` when empty."""
    if element is None:
        return None
    for child in element:
        if child.tag == tag:
            return child.text or ""
    return None


def texts_of(element: ET.Element | None, tag: str) -> list[str]:
    """The texts of every child *tag* of *element*, in order (an empty one as ``""``)."""
    return [c.text or "" for c in children(element, tag)]


def whole_number(element: ET.Element | None, tag: str, where: str) -> int | None:
    """The whole number in *element*'s child *tag*, or None when it is absent or empty.

    Raises:
        NiFiFormatError: the text is not a whole number.
    """
    text = text_of(element, tag)
    if text is None or not text.strip():
        return None
    try:
        return int(text.strip())
    except ValueError:
        msg = f"NiFi flow {where}: <{tag}> must be a whole number, got {text.strip()[:40]!r}"
        raise NiFiFormatError(msg) from None


def flag(text: str | None) -> bool | None:
    """``true``/``false`` as Java's ``Boolean.parseBoolean`` reads them; None when absent."""
    return None if text is None else text.strip().lower() == "true"


def bundle_of(element: ET.Element) -> dict[str, str] | None:
    """A component's ``<bundle>`` (group, artifact, version), as NiFi's JSON has it."""
    found = children(element, "bundle")
    if not found:
        return None
    return {f: text_of(found[0], f) or "" for f in ("group", "artifact", "version")}


def entries(element: ET.Element | None) -> Iterable[tuple[str, ET.Element]]:
    """JAXB's map entries (``<entry><key>..</key><value>..</value></entry>``): key, entry."""
    for entry in children(element, "entry"):
        yield text_of(entry, "key") or "", entry
