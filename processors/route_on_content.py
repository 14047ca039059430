"""RouteOnContent: route FlowFiles by regular expressions over their content."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import regex

from flowcore.expression._evaluate import EvaluationContext
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.patterns import JAVA_LINES, compile_pattern
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.batch_context import BatchContext, BatchRoute
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    CHARACTER_SET_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    ValidationResult,
    create_regex_validator,
)
from processors._replacement import decorated_template
from processors._text import decode, head_bytes

__all__ = ["RouteOnContent"]

MATCH_ALL = "content must match exactly"
MATCH_SUBSEQUENCE = "content must contain match"
ROUTE_ATTRIBUTE = "RouteOnContent.Route"
_ANY_GROUPS = 2**31 - 1

REL_NO_MATCH = Relationship(
    "unmatched",
    "FlowFiles that do not match any of the user-supplied regular expressions will be routed to "
    "this relationship",
)
REL_DYNAMIC = Relationship(
    "<one per dynamic property>",
    "FlowFiles whose content matches the regular expression of the dynamic property of this name",
)


class RouteOnContent(Processor):
    """Routes a copy of each FlowFile to every relationship whose regex matches its content.

    Each dynamic property is a relationship and a regular expression. Match Requirement says
    whether the whole buffered content must match or only part of it; only the first Content
    Buffer Size bytes are read. Expression Language in a regex is evaluated per FlowFile and its
    results taken literally (quoted), as in NiFi. Each FlowFile routed gets
    ``RouteOnContent.Route`` and a ROUTE event; one matching several relationships is cloned.
    A regex past ``regex_time_limit`` keeps the FlowFile queued, penalized, with a bulletin.
    """

    MATCH_REQUIREMENT = PropertyDescriptor(
        "Match Requirement",
        description="Specifies whether the entire content of the file must match the regular "
        "expression exactly, or if any part of the file (up to Content Buffer Size) can contain "
        "the regular expression in order to be considered a match",
        required=True,
        default=MATCH_ALL,
        allowable_values=(MATCH_ALL, MATCH_SUBSEQUENCE),
    )
    CHARACTER_SET = PropertyDescriptor(
        "Character Set",
        description="The Character Set in which the file is encoded",
        required=True,
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
    )
    BUFFER_SIZE = PropertyDescriptor(
        "Content Buffer Size",
        description="Specifies the maximum amount of data to buffer in order to apply the "
        "regular expressions. If the size of the FlowFile exceeds this value, any amount of this "
        "value will be ignored",
        required=True,
        default="1 MB",
        validators=(DATA_SIZE_VALIDATOR,),
    )
    property_descriptors: ClassVar = (MATCH_REQUIREMENT, CHARACTER_SET, BUFFER_SIZE)
    relationships: ClassVar = (REL_NO_MATCH,)
    dynamic_relationship: ClassVar = REL_DYNAMIC
    supports_batching: ClassVar = True
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = (
        "route",
        "content",
        "regex",
        "regular expression",
        "regexp",
        "find",
        "text",
        "string",
        "search",
        "filter",
        "detect",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        ROUTE_ATTRIBUTE: "The relationship the FlowFile was routed to"
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor | None:
        """A relationship and its regex; ``unmatched`` cannot be one."""
        if name == REL_NO_MATCH.name:
            return None
        return PropertyDescriptor(
            name,
            description="Routes FlowFiles whose content matches this regular expression to the "
            "relationship of this name",
            validators=(create_regex_validator(0, _ANY_GROUPS),),
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            dynamic=True,
        )

    def get_relationships(self) -> tuple[Relationship, ...]:
        """One relationship per dynamic property, and ``unmatched``."""
        named = tuple(
            Relationship(n, f"FlowFiles whose content matches {n!r}")
            for n in self.dynamic_properties
            if n != REL_NO_MATCH.name
        )
        return (*named, REL_NO_MATCH)

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """A dynamic property cannot be named ``unmatched``."""
        del values
        if REL_NO_MATCH.name in self.dynamic_properties:
            why = "'unmatched' is this processor's own relationship; name the property otherwise"
            return [ValidationResult(REL_NO_MATCH.name, None, False, why)]
        return []

    def _matching(self, context: ProcessContext, flowfile: FlowFile, text: str) -> list[str]:
        """The names of the dynamic properties whose regex matches *text*, in property order."""
        whole = context.get_property(self.MATCH_REQUIREMENT).value != MATCH_SUBSEQUENCE
        ctx = EvaluationContext(
            attributes=flowfile.attributes, flowfile=flowfile, clock=context.now
        )
        matching = []
        for name, value in self.dynamic_properties.items():
            pattern = compile_pattern(
                decorated_template(value).evaluate(ctx, regex.escape), JAVA_LINES
            )
            found = pattern.fullmatch(text) if whole else pattern.search(text)
            if found is not None:
                matching.append(name)
        return matching

    def _buffer(self, context: ProcessContext) -> tuple[int, str]:
        size = int(context.get_property(self.BUFFER_SIZE).as_data_size("B") or 0)
        return size, context.get_property(self.CHARACTER_SET).value or "UTF-8"

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Route one FlowFile (and its clones)."""
        flowfile = session.get()
        if flowfile is None:
            return
        size, charset = self._buffer(context)
        with session.read(flowfile) as stream:
            head = stream.read(size) if size else b""
        first, *others = self._matching(context, flowfile, decode(head, charset)) or [
            REL_NO_MATCH.name
        ]
        for name in others:
            clone = session.put_attribute(session.clone(flowfile), ROUTE_ATTRIBUTE, name)
            session.provenance.route(clone, name)
            session.transfer(clone, name)
        flowfile = session.put_attribute(flowfile, ROUTE_ATTRIBUTE, first)
        session.provenance.route(flowfile, first)
        session.transfer(flowfile, first)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """Route a whole batch, its contents read from windows of its claim.

        Regexes holding Expression Language (one regex per FlowFile) and FlowFiles matching
        several relationships (clones) are left to the per-FlowFile path.
        """
        literals = {n: decorated_template(v).literal for n, v in self.dynamic_properties.items()}
        if any(text is None for text in literals.values()):
            return None
        whole = context.get_property(self.MATCH_REQUIREMENT).value != MATCH_SUBSEQUENCE
        patterns = [(n, compile_pattern(t or "", JAVA_LINES)) for n, t in literals.items()]
        size, charset = self._buffer(context)
        destinations = []
        for pieces in context.contents(batch):
            text = decode(head_bytes(pieces, size), charset)
            matching = [
                name
                for name, pattern in patterns
                if (pattern.fullmatch(text) if whole else pattern.search(text)) is not None
            ]
            if len(matching) > 1:
                return None
            destinations.append(matching[0] if matching else REL_NO_MATCH.name)
        names = np.array(destinations, dtype=object)
        routes = []
        for name in dict.fromkeys(destinations):
            rows = np.flatnonzero(names == name)
            routed = batch.take(rows).with_attributes({ROUTE_ATTRIBUTE: name})
            routes.append(BatchRoute(name, rows, routed, reported=True))
        return routes
