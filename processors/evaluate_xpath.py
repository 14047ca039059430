"""EvaluateXPath: XPath results into attributes or content, as NiFi's EvaluateXPath."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import numpy as np
from lxml import etree

from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.session.batch_context import BatchContext, BatchRoute
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

    def _settings(self, context: ProcessContext) -> _Settings:
        to_attribute = context.get_property(self.DESTINATION).value == DESTINATION_ATTRIBUTE
        return_type = context.get_property(self.RETURN_TYPE).value
        if return_type == RETURN_AUTO:
            return_type = RETURN_STRING if to_attribute else RETURN_NODESET
        as_string = return_type == RETURN_STRING
        return _Settings(
            to_attribute=to_attribute,
            as_string=as_string,
            allow_dtd=bool(context.get_property(self.VALIDATE_DTD).as_boolean()),
            queries=tuple(
                (name, compile_xpath(text, as_string=as_string))
                for name, text in self.dynamic_properties.items()
            ),
        )

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Evaluate the XPaths against up to 50 FlowFiles."""
        flowfiles = session.get(BATCH)
        if not flowfiles:
            return
        settings = self._settings(context)
        log = _Lines(context.logger)
        for taken in flowfiles:
            outcome = _evaluate(settings, str(taken), session.read_bytes(taken), log)
            log.flush()
            flowfile = taken
            if outcome.content is not None:
                # the session records CONTENT_MODIFIED; NiFi's explicit report would add a second
                flowfile = session.write(flowfile, outcome.content)
            elif outcome.attributes:
                flowfile = session.put_all_attributes(flowfile, outcome.attributes)
            session.transfer(flowfile, outcome.relationship)
            if settings.to_attribute and (
                outcome.relationship is REL_MATCH or not settings.queries
            ):
                # NiFi reports it once every XPath is evaluated, even with none (no change)
                session.provenance.modify_attributes(flowfile)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """Evaluate the XPaths for a whole batch: attribute columns, or new contents.

        Each FlowFile's content is read from the batch's claim and evaluated exactly as
        :meth:`on_trigger` does, and the same lines are logged (once every FlowFile is
        evaluated). Destination ``flowfile-attribute``: those that match go to ``matched`` with
        one column per XPath; Destination ``flowfile-content``: their results are written with
        ``context.write_contents`` (a CONTENT_MODIFIED each). The others go to ``unmatched``
        or ``failure`` unchanged.
        """
        settings = self._settings(context)
        if not settings.queries:  # NiFi reports an ATTRIBUTES_MODIFIED that changed nothing
            return None
        uuids = batch.uuids()
        log = _Lines(context.logger)
        outcomes = [
            _evaluate(settings, uuids[row], b"".join(pieces), log)
            for row, pieces in enumerate(context.contents(batch))
        ]
        log.flush()  # after them all: a later one may raise, and the batch go one by one
        routes = []
        relationships = np.array([o.relationship.name for o in outcomes], dtype=object)
        matched = np.flatnonzero(relationships == REL_MATCH.name)
        if len(matched):
            part = batch if len(matched) == batch.count else batch.take(matched)
            if settings.to_attribute:
                columns = {
                    name: column_of([outcomes[row].attributes[name] for row in matched.tolist()])
                    for name, _ in settings.queries
                }
                routes.append(BatchRoute(REL_MATCH.name, matched, part.with_columns(columns)))
            else:
                contents = (outcomes[row].content or b"" for row in matched.tolist())
                written = context.write_contents(part, contents)
                routes.extend(written.routes(REL_MATCH.name, matched))
        for relationship in (REL_NO_MATCH, REL_FAILURE):
            rows = np.flatnonzero(relationships == relationship.name)
            if len(rows):
                routes.append(BatchRoute(relationship.name, rows, batch.take(rows)))
        return routes


class _Lines:
    """The lines NiFi logs for each FlowFile, kept until :meth:`flush` (when the level is on)."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger
        self.pending: list[tuple[int, str, tuple[object, ...]]] = []

    def __call__(self, level: int, message: str, *arguments: object) -> None:
        if self.logger.isEnabledFor(level):
            self.pending.append((level, message, arguments))

    def flush(self) -> None:
        for level, message, arguments in self.pending:
            self.logger.log(level, message, *arguments)
        self.pending.clear()


def _evaluate(settings: _Settings, label: str, data: bytes, log: _Lines) -> _Outcome:
    """Where one FlowFile goes, with its new attributes or content; its lines go to *log*."""
    try:
        tree = parse_xml(data, allow_dtd=settings.allow_dtd)
    except (etree.XMLSyntaxError, UnsafeXmlError) as ex:
        log(logging.ERROR, "Input parsing failed %s: %s", label, ex)
        return _Outcome(REL_FAILURE)
    root = tree.getroot()  # an absolute path is evaluated faster from the root than the tree
    results: dict[str, str] = {}
    content: bytes | None = None
    for name, query in settings.queries:
        try:
            found = query(root)
        except etree.XPathError as ex:
            log(logging.ERROR, "XPath Property [%s] evaluation on %s failed: %s", name, label, ex)
            return _Outcome(REL_FAILURE)
        if settings.as_string:
            text = str(found)  # the expression was compiled as string(...)
        else:
            if not isinstance(found, list):  # a string, number or boolean is no node-set
                why = "XPath Property [%s] evaluation on %s gave %r, not a node-set"
                log(logging.ERROR, why, name, label, found)
                return _Outcome(REL_FAILURE)
            if not found:
                log(logging.INFO, "XPath evaluation on %s produced no results", label)
                return _Outcome(REL_NO_MATCH)
            if len(found) > 1:
                why = "XPath evaluation on %s produced unexpected results [%d]"
                log(logging.ERROR, why, label, len(found))
                return _Outcome(REL_FAILURE)
            text = _serialize(found[0])
        if settings.to_attribute:
            results[name] = text
        else:
            content = text.encode("utf-8")
    if not settings.to_attribute:
        log(logging.INFO, "XPath evaluation on %s completed: content updated", label)
        return _Outcome(REL_MATCH, content=content if content is not None else b"")
    log(logging.INFO, "XPath evaluation on %s completed with results [%d]", label, len(results))
    return _Outcome(REL_MATCH if results else REL_NO_MATCH, attributes=results)
