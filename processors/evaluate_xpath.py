"""EvaluateXPath: XPath results into attributes or content, as NiFi's EvaluateXPath."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from lxml import etree

from flowcore.flowfile import FlowFile
from flowcore.process_context import ProcessContext
from flowcore.processor import Processor
from flowcore.properties import PropertyDescriptor
from flowcore.relationship import Relationship
from flowcore.session.process_session import ProcessSession
from flowcore.validators import ValidationResult, Validator
from processors._xml import UnsafeXmlError, compile_xpath, parse_xml, xpath_problem

__all__ = ["EvaluateXPath"]

DESTINATION_ATTRIBUTE = "flowfile-attribute"
DESTINATION_CONTENT = "flowfile-content"
RETURN_AUTO = "auto-detect"
RETURN_NODESET = "nodeset"
RETURN_STRING = "string"
BATCH = 50  # FlowFiles per trigger, as NiFi's EvaluateXPath

REL_MATCH = Relationship(
    "matched",
    "FlowFiles are routed to this relationship when the XPath is successfully evaluated and the "
    "FlowFile is modified as a result",
)
REL_NO_MATCH = Relationship(
    "unmatched",
    "FlowFiles are routed to this relationship when the XPath does not match the content of the "
    "FlowFile and the Destination is set to flowfile-content",
)
REL_FAILURE = Relationship(
    "failure",
    "FlowFiles are routed to this relationship when the XPath cannot be evaluated against the "
    "content of the FlowFile; for instance, if the FlowFile is not valid XML, or if the Return "
    "Type is 'nodeset' and the XPath evaluates to multiple nodes",
)

XPATH_VALIDATOR = Validator("XPathValidator", xpath_problem)


@attrs.frozen
class _Outcome:
    """Where one FlowFile goes and what it gets: attributes, or new content."""

    relationship: Relationship
    attributes: Mapping[str, str] = attrs.field(factory=dict)
    content: bytes | None = None


@attrs.frozen
class _Settings:
    """The properties as one evaluation needs them."""

    to_attribute: bool
    as_string: bool
    allow_dtd: bool
    queries: tuple[tuple[str, etree.XPath], ...]


def _serialize(node: Any) -> str:
    """One node of a node-set as text: an element as XML, anything else as its string value."""
    if isinstance(node, etree._Element):
        alone = copy.deepcopy(node)  # without the namespaces it inherits and does not use
        etree.cleanup_namespaces(alone)
        return etree.tostring(alone, encoding="unicode", with_tail=False)
    return str(node)


class EvaluateXPath(Processor):
    """Evaluates XPath expressions against XML content (NiFi's EvaluateXPath).

    Each dynamic property is an XPath; with Destination ``flowfile-attribute`` its result
    becomes the attribute of the property's name, with ``flowfile-content`` (exactly one XPath)
    it replaces the content. Return Type ``auto-detect`` means ``string`` for attributes and
    ``nodeset`` for content. A ``string`` result is the XPath string value (``""`` when nothing
    matches: the FlowFile still goes to ``matched``); a ``nodeset`` must hold exactly one node
    (an element is written as XML, other nodes as their text): none sends the FlowFile to
    ``unmatched``, several (or a result that is no node-set) to ``failure``. Content that is
    not well-formed XML, or that the safe parser refuses (see :mod:`processors._xml`), goes to
    ``failure`` unchanged.

    Differences from NiFi: XPath 1.0 (libxml2), not Saxon's XPath 3.1, with ``*:name``
    accepted; the document is parsed namespace-aware (``/ns:a`` needs a prefix NiFi's
    non-namespace-aware parse does not, so use ``*:a``); an element result has no XML
    declaration and keeps its own indentation; the node-set ``/`` (the document node) matches
    nothing here.
    """

    DESTINATION = PropertyDescriptor(
        "Destination",
        description="Indicates whether the results of the XPath evaluation are written to the "
        "FlowFile content or a FlowFile attribute; if using attribute, must specify the Attribute "
        "Name property. If set to flowfile-content, only one XPath may be specified, and the "
        "property name is ignored.",
        required=True,
        default=DESTINATION_CONTENT,
        allowable_values=(DESTINATION_CONTENT, DESTINATION_ATTRIBUTE),
    )
    RETURN_TYPE = PropertyDescriptor(
        "Return Type",
        description="Indicates the desired return type of the Xpath expressions.  Selecting "
        "'auto-detect' will set the return type to 'nodeset' for a Destination of "
        "'flowfile-content', and 'string' for a Destination of 'flowfile-attribute'.",
        required=True,
        default=RETURN_AUTO,
        allowable_values=(RETURN_AUTO, RETURN_NODESET, RETURN_STRING),
    )
    VALIDATE_DTD = PropertyDescriptor(
        "Allow DTD",
        description="Allow embedded Document Type Declaration in XML. This feature should be "
        "disabled to avoid XML entity expansion vulnerabilities.",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        aliases=("Validate DTD",),
    )
    property_descriptors: ClassVar = (DESTINATION, RETURN_TYPE, VALIDATE_DTD)
    relationships: ClassVar = (REL_MATCH, REL_NO_MATCH, REL_FAILURE)
    supports_batching: ClassVar = True
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("XML", "evaluate", "XPath")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "user-defined": "This processor adds user-defined attributes if the <Destination> "
        "property is set to flowfile-attribute."
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """An XPath expression; its result goes to the attribute of its name (or the content)."""
        return PropertyDescriptor(
            name,
            description="An XPath expression: its result becomes this attribute "
            "(flowfile-attribute) or the content (flowfile-content)",
            validators=(XPATH_VALIDATOR,),
            dynamic=True,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Destination flowfile-content takes exactly one XPath."""
        if values.get(self.DESTINATION.name) == DESTINATION_CONTENT and (
            len(self.dynamic_properties) != 1
        ):
            why = f"Exactly one XPath must be set if using destination of {DESTINATION_CONTENT}"
            return [ValidationResult("XPaths", None, False, why)]
        return []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Evaluate the XPaths against up to 50 FlowFiles."""
        flowfiles = session.get(BATCH)
        if not flowfiles:
            return
        to_attribute = context.get_property(self.DESTINATION).value == DESTINATION_ATTRIBUTE
        return_type = context.get_property(self.RETURN_TYPE).value
        if return_type == RETURN_AUTO:
            return_type = RETURN_STRING if to_attribute else RETURN_NODESET
        as_string = return_type == RETURN_STRING
        settings = _Settings(
            to_attribute=to_attribute,
            as_string=as_string,
            allow_dtd=bool(context.get_property(self.VALIDATE_DTD).as_boolean()),
            queries=tuple(
                (name, compile_xpath(text, as_string=as_string))
                for name, text in self.dynamic_properties.items()
            ),
        )
        for taken in flowfiles:
            outcome = _evaluate(context, settings, taken, session.read_bytes(taken))
            flowfile = taken
            if outcome.content is not None:
                # the session records CONTENT_MODIFIED; NiFi's explicit report would add a second
                flowfile = session.write(flowfile, outcome.content)
            elif outcome.attributes:
                flowfile = session.put_all_attributes(flowfile, outcome.attributes)
            session.transfer(flowfile, outcome.relationship)
            if to_attribute and outcome.relationship is not REL_FAILURE:
                session.provenance.modify_attributes(flowfile)


def _evaluate(
    context: ProcessContext, settings: _Settings, flowfile: FlowFile, data: bytes
) -> _Outcome:
    """Where one FlowFile goes, with its new attributes or content."""
    log = context.logger
    try:
        tree = parse_xml(data, allow_dtd=settings.allow_dtd)
    except (etree.XMLSyntaxError, UnsafeXmlError) as ex:
        log.error("Input parsing failed %s: %s", flowfile, ex)
        return _Outcome(REL_FAILURE)
    results: dict[str, str] = {}
    content: bytes | None = None
    for name, query in settings.queries:
        try:
            found = query(tree)
        except etree.XPathError as ex:
            log.error("XPath Property [%s] evaluation on %s failed: %s", name, flowfile, ex)
            return _Outcome(REL_FAILURE)
        if settings.as_string:
            text = str(found)  # the expression was compiled as string(...)
        else:
            if not isinstance(found, list):  # a string, number or boolean is no node-set
                why = "XPath Property [%s] evaluation on %s gave %r, not a node-set"
                log.error(why, name, flowfile, found)
                return _Outcome(REL_FAILURE)
            if not found:
                log.info("XPath evaluation on %s produced no results", flowfile)
                return _Outcome(REL_NO_MATCH)
            if len(found) > 1:
                why = "XPath evaluation on %s produced unexpected results [%d]"
                log.error(why, flowfile, len(found))
                return _Outcome(REL_FAILURE)
            text = _serialize(found[0])
        if settings.to_attribute:
            results[name] = text
        else:
            content = text.encode("utf-8")
    if not settings.to_attribute:
        log.info("XPath evaluation on %s completed: content updated", flowfile)
        return _Outcome(REL_MATCH, content=content if content is not None else b"")
    log.info("XPath evaluation on %s completed with results [%d]", flowfile, len(results))
    return _Outcome(REL_MATCH if results else REL_NO_MATCH, attributes=results)
