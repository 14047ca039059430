"""NiFi 1.x's XML flows, told apart and read: a template, or an instance's ``flow.xml.gz``.

:func:`read_xml` takes the bytes :mod:`flowcore.nifi.formats` read (gunzipped, bounded) once
they start as XML does, and returns them in the JSON shapes of NiFi's versioned flows
(:class:`~flowcore.nifi.xml_parse.XmlFlow`), from which every import rule applies unchanged.
"""

from __future__ import annotations

from flowcore.errors import NiFiFormatError
from flowcore.nifi.xml_instance import instance_flow
from flowcore.nifi.xml_parse import XmlFlow, parse_xml
from flowcore.nifi.xml_template import template_flow

__all__ = ["read_xml"]


def read_xml(data: bytes | bytearray, where: str) -> XmlFlow:
    """The flow in NiFi 1.x XML *data* (from *where*, for messages).

    Raises:
        NiFiFormatError: the XML is unsafe, malformed, or neither a template (``<template>``)
            nor a flow.xml (``<flowController>``).
    """
    root = parse_xml(data, where)
    if root.tag == "template":
        return template_flow(root, where)
    if root.tag == "flowController":
        return instance_flow(root, where)
    msg = (
        f"{where} is XML whose root is <{root.tag[:60]}>, neither a NiFi 1.x template "
        "(<template>) nor an instance's flow.xml (<flowController>); in NiFi, download the "
        "process group as a flow definition (JSON) instead"
    )
    raise NiFiFormatError(msg)
