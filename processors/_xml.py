"""Safe XML parsing and XPath 1.0 compilation for EvaluateXPath.

The parser never fetches anything and never expands an entity: libxml2 (through lxml) parses
with ``resolve_entities=False``, ``no_network=True``, ``load_dtd=False`` and its entity
amplification limits on (``huge_tree=False``), so a billion-laughs document is refused by the
parser itself. On top of that a document type declaration is refused unless allowed (NiFi's
Allow DTD), and an allowed one may neither name an external DTD nor declare entities: NiFi's
JAXP parser with secure processing refuses both too (external DTD access is off, and entity
expansion is limited), so such documents go to ``failure`` in both.

XPath is XPath 1.0 (libxml2's). NiFi's EvaluateXPath uses Saxon, and NiFi flows (and NiFi's own
tests) often use XPath 2.0's any-namespace name test ``*:name``; :func:`compile_xpath` rewrites it
to the XPath 1.0 form ``*[local-name()='name']`` outside string literals.
"""

from __future__ import annotations

import re
import threading

from lxml import etree

__all__ = ["UnsafeXmlError", "compile_xpath", "parse_xml", "xpath_problem"]

_ANY_NAMESPACE = re.compile(r"\*:([A-Za-z_][\w.\-]*)")
_LITERAL = re.compile(r"('[^']*'|\"[^\"]*\")")


class UnsafeXmlError(ValueError):
    """A document the safe parser refuses: a DTD not allowed, an external DTD, an entity."""


_LOCAL = threading.local()  # lxml parsers may not be shared between threads


def _parser() -> etree.XMLParser:
    """This thread's hardened parser (made once: making one costs more than a small parse)."""
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = _new_parser()
    return parser


def _new_parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        collect_ids=False,
    )


def parse_xml(data: bytes, *, allow_dtd: bool) -> etree._ElementTree:
    """Parse *data* safely into a tree.

    Raises:
        etree.XMLSyntaxError: the content is not well-formed XML (or trips libxml2's limits).
        UnsafeXmlError: a document type declaration that is not allowed, or one that names an
            external DTD or declares entities.
    """
    tree = etree.fromstring(data, _parser()).getroottree()
    info = tree.docinfo
    if not info.doctype:
        return tree
    if not allow_dtd:
        msg = "the document has a DOCTYPE declaration, and Allow DTD is false"
        raise UnsafeXmlError(msg)
    if info.system_url or info.public_id:
        msg = f"the document names an external DTD ({info.system_url!r}), which is never fetched"
        raise UnsafeXmlError(msg)
    dtd = info.internalDTD
    if dtd is not None:
        names = [entity.name for entity in dtd.iterentities()]
        if names:
            msg = f"the document declares entities ({', '.join(names)}), which are not expanded"
            raise UnsafeXmlError(msg)
    return tree


def _rewrite(text: str) -> str:
    """*text* with ``*:name`` as ``*[local-name()='name']`` outside string literals."""
    parts = _LITERAL.split(text)
    return "".join(
        part if index % 2 else _ANY_NAMESPACE.sub(r"*[local-name()='\1']", part)
        for index, part in enumerate(parts)
    )


def compile_xpath(text: str, *, as_string: bool) -> etree.XPath:
    """Compile an XPath 1.0 expression (``*:name`` accepted); as ``string(...)`` if *as_string*.

    Raises:
        etree.XPathSyntaxError: not a valid expression.
    """
    rewritten = _rewrite(text)
    compiled = etree.XPath(rewritten)  # checks the expression alone: string() would hide errors
    return etree.XPath(f"string({rewritten})") if as_string else compiled


def xpath_problem(text: str) -> str | None:
    """Why *text* is not a valid XPath expression, or None when it is."""
    try:
        compile_xpath(text, as_string=False)
    except etree.XPathError as ex:
        return f"{text!r} is not a valid XPath 1.0 expression: {ex}"
    return None
