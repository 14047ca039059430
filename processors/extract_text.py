"""ExtractText: regular expressions over the content, their capture groups into attributes."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
import regex

from flowcore.errors import ExpressionEvaluationError
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.patterns import JAVA_LINES, FlowPattern, compile_pattern
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.session.batch_context import BatchContext, BatchRoute
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    CHARACTER_SET_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    ValidationResult,
    create_data_size_bounds_validator,
    create_regex_validator,
)
from processors._text import decode, head_bytes

__all__ = ["ExtractText"]

_JAVA_INT_MAX = 2**31 - 1

REL_MATCH = Relationship(
    "matched",
    "FlowFiles are routed to this relationship when the Regular Expression is successfully "
    "evaluated and the FlowFile is modified as a result",
)
REL_NO_MATCH = Relationship(
    "unmatched",
    "FlowFiles are routed to this relationship when no provided Regular Expression matches the "
    "content of the FlowFile",
)


def _flag(name: str, description: str, default: str = "false", **extra: Any) -> PropertyDescriptor:
    return PropertyDescriptor(
        name,
        description=description,
        required=extra.pop("required", True),
        default=default,
        allowable_values=("true", "false"),
        **extra,
    )


@attrs.frozen
class _Config:
    """What one trigger needs, read once from the properties."""

    patterns: tuple[tuple[str, FlowPattern], ...]
    charset: str
    max_buffer: int
    max_group_length: int
    start_group: int  # 0 with Include Capture Group 0, else 1
    repeating: bool
    named: bool
    canonical: bool


class ExtractText(Processor):
    """Evaluates regular expressions against the content and puts their groups in attributes.

    Each dynamic property is a regex; its name is the attribute name. Without named groups the
    first capture group goes to ``name`` and every group to ``name.<index>`` (``name.0`` the
    whole match, with Include Capture Group 0); a group that did not match, or matched nothing,
    writes no attribute. With Enable Repeating Capture Group each further match continues the
    numbering. With Enable Named Groups (every group named), group ``G`` goes to ``name.G``
    (``name.G.<n>`` for the n-th further match) and the whole first match to ``name``. A FlowFile
    that gets any attribute goes to ``matched``, else to ``unmatched`` unchanged.

    Only the first Maximum Buffer Size bytes are read; values longer than Maximum Capture Group
    Length are cut. The regexes run on the time-bounded ``regex`` engine with Java's line
    terminators (:mod:`flowcore.patterns`); one past ``regex_time_limit`` keeps the FlowFile
    queued, penalized, with a bulletin.
    """

    CHARACTER_SET = PropertyDescriptor(
        "Character Set",
        description="The Character Set in which the file is encoded",
        required=True,
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
    )
    MAX_BUFFER_SIZE = PropertyDescriptor(
        "Maximum Buffer Size",
        description="Specifies the maximum amount of data to buffer (per FlowFile) in order to "
        "apply the regular expressions. FlowFiles larger than the specified maximum will not be "
        "fully evaluated.",
        required=True,
        default="1 MB",
        validators=(DATA_SIZE_VALIDATOR, create_data_size_bounds_validator(0, _JAVA_INT_MAX)),
    )
    MAX_CAPTURE_GROUP_LENGTH = PropertyDescriptor(
        "Maximum Capture Group Length",
        description="Specifies the maximum number of characters a given capture group value can "
        "have. Any characters beyond the max will be truncated.",
        required=False,
        default="1024",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    CANON_EQ = _flag(
        "Enable Canonical Equivalence",
        "Indicates that two characters match only when their full canonical decompositions match.",
    )
    CASE_INSENSITIVE = _flag(
        "Enable Case-insensitive Matching",
        "Indicates that two characters match even if they are in a different case.  Can also be "
        "specified via the embedded flag (?i).",
    )
    COMMENTS = _flag(
        "Permit Whitespace and Comments in Pattern",
        "In this mode, whitespace is ignored, and embedded comments starting with # are ignored "
        "until the end of a line.  Can also be specified via the embedded flag (?x).",
    )
    DOTALL = _flag(
        "Enable DOTALL Mode",
        "Indicates that the expression '.' should match any character, including a line "
        "terminator.  Can also be specified via the embedded flag (?s).",
    )
    LITERAL = _flag(
        "Enable Literal Parsing of the Pattern",
        "Indicates that Metacharacters and escape characters should be given no special meaning.",
    )
    MULTILINE = _flag(
        "Enable Multiline Mode",
        "Indicates that '^' and '$' should match just after and just before a line terminator or "
        "end of sequence, instead of only the beginning or end of the entire input.  Can also be "
        "specified via the embeded flag (?m).",
    )
    UNICODE_CASE = _flag(
        "Enable Unicode-aware Case Folding",
        "When used with 'Enable Case-insensitive Matching', matches in a manner consistent with "
        "the Unicode Standard.  Can also be specified via the embedded flag (?u).",
    )
    UNICODE_CHARACTER_CLASS = _flag(
        "Enable Unicode Predefined Character Classes",
        "Specifies conformance with the Unicode Technical Standard #18: Unicode Regular "
        "Expression Annex C: Compatibility Properties.  Can also be specified via the embedded "
        "flag (?U).",
    )
    UNIX_LINES = _flag(
        "Enable Unix Lines Mode",
        "Indicates that only the '\\n' line terminator is recognized in the behavior of '.', '^', "
        "and '$'.  Can also be specified via the embedded flag (?d).",
    )
    INCLUDE_CAPTURE_GROUP_ZERO = _flag(
        "Include Capture Group 0",
        "Indicates that Capture Group 0 should be included as an attribute. Capture Group 0 "
        "represents the entirety of the regular expression match, is typically not used, and "
        "could have considerable length.",
        default="true",
    )
    ENABLE_REPEATING_CAPTURE_GROUP = _flag(
        "Enable Repeating Capture Group",
        "If set to true, every string matching the capture groups will be extracted. Otherwise, "
        "if the Regular Expression matches more than once, only the first match will be "
        "extracted.",
        aliases=("extract-text-enable-repeating-capture-group", "Enable repeating capture group"),
    )
    ENABLE_NAMED_GROUPS = _flag(
        "Enable Named Groups",
        "If set to true, when named groups are present in the regular expression, the name of "
        "the group will be used in the attribute name as opposed to the group index.  All "
        "capturing groups must be named, if the number of groups (not including capture group 0) "
        "does not equal the number of named groups validation will fail.",
        required=False,
        aliases=("extract-text-enable-named-groups", "Enable named group support"),
    )
    property_descriptors: ClassVar = (
        CHARACTER_SET,
        MAX_BUFFER_SIZE,
        MAX_CAPTURE_GROUP_LENGTH,
        CANON_EQ,
        CASE_INSENSITIVE,
        COMMENTS,
        DOTALL,
        LITERAL,
        MULTILINE,
        UNICODE_CASE,
        UNICODE_CHARACTER_CLASS,
        UNIX_LINES,
        INCLUDE_CAPTURE_GROUP_ZERO,
        ENABLE_REPEATING_CAPTURE_GROUP,
        ENABLE_NAMED_GROUPS,
    )
    relationships: ClassVar = (REL_MATCH, REL_NO_MATCH)
    supports_batching: ClassVar = True
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("evaluate", "extract", "Text", "Regular Expression", "regex")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "<property name>, <property name>.<n>": "The capture groups of the property's regex",
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """A regex with 0 to 40 capturing groups; its groups go to attributes named after it."""
        return PropertyDescriptor(
            name,
            description="The first capture group, if any found, will be placed into that "
            "attribute name. But all capture groups, including the matching string sequence "
            "itself will also be provided at that attribute name with an index value provided.",
            validators=(create_regex_validator(0, 40),),
            dynamic=True,
        )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Without group 0 each regex needs a group; with named groups, every group named."""
        problems = []
        at_least_one = create_regex_validator(1, 40)
        named = (values.get(self.ENABLE_NAMED_GROUPS.name) or "").lower() == "true"
        for name, text in self.dynamic_properties.items():
            if (values.get(self.INCLUDE_CAPTURE_GROUP_ZERO.name) or "").lower() != "true":
                result = at_least_one(name, text)
                if not result.valid:
                    problems.append(result)
            if named:
                try:
                    pattern = compile_pattern(text)
                except ExpressionEvaluationError:
                    continue  # the property's own validator reports it
                if pattern.groups != len(pattern.groupindex):
                    why = "Named group count does not match total group count"
                    problems.append(ValidationResult(name, text, False, why))
        return problems

    def _config(self, context: ProcessContext) -> _Config:
        def flag(descriptor: PropertyDescriptor) -> bool:
            return bool(context.get_property(descriptor).as_boolean())

        flags = (
            (0 if flag(self.UNIX_LINES) else JAVA_LINES)
            | (regex.IGNORECASE if flag(self.CASE_INSENSITIVE) else 0)
            | (regex.VERBOSE if flag(self.COMMENTS) else 0)
            | (regex.MULTILINE if flag(self.MULTILINE) else 0)
            | (regex.DOTALL if flag(self.DOTALL) else 0)
        )
        literal, canonical = flag(self.LITERAL), flag(self.CANON_EQ)
        patterns = []
        for name, text in self.dynamic_properties.items():
            source = regex.escape(text) if literal else text
            if canonical:
                source = unicodedata.normalize("NFC", source)
            patterns.append((name, compile_pattern(source, flags)))
        return _Config(
            patterns=tuple(patterns),
            charset=context.get_property(self.CHARACTER_SET).value or "UTF-8",
            max_buffer=int(context.get_property(self.MAX_BUFFER_SIZE).as_data_size("B") or 0),
            max_group_length=context.get_property(self.MAX_CAPTURE_GROUP_LENGTH).as_integer()
            or 1024,
            start_group=0 if flag(self.INCLUDE_CAPTURE_GROUP_ZERO) else 1,
            repeating=flag(self.ENABLE_REPEATING_CAPTURE_GROUP),
            named=flag(self.ENABLE_NAMED_GROUPS),
            canonical=canonical,
        )

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Extract from one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        config = self._config(context)
        with session.read(flowfile) as stream:
            head = stream.read(config.max_buffer) if config.max_buffer else b""
        results = _extract(head, config)
        if results:
            flowfile = session.put_all_attributes(flowfile, results)
            session.transfer(flowfile, REL_MATCH)
        else:
            session.transfer(flowfile, REL_NO_MATCH)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> list[BatchRoute] | None:
        """Extract from a whole batch: contents read from windows of its claim, no FlowFiles.

        Each FlowFile's attributes become columns of the ``matched`` part, whatever its
        neighbours extracted; a FlowFile keeps the values it had for names its own matches do
        not set, as one by one.
        """
        config = self._config(context)
        contents = context.contents(batch)
        found = [_extract(head_bytes(pieces, config.max_buffer), config) for pieces in contents]
        matched = np.fromiter((bool(r) for r in found), dtype=bool, count=batch.count)
        routes = []
        rows = np.flatnonzero(matched)
        if len(rows):
            part = batch.take(rows)
            names = dict.fromkeys(name for row in rows for name in found[row])
            columns = {}
            for name in names:
                before = part.column(name)
                kept = before.values() if before is not None else [None] * len(rows)
                values = [found[row].get(name, old) for row, old in zip(rows, kept, strict=True)]
                columns[name] = column_of(values)
            routes.append(BatchRoute(REL_MATCH.name, rows, part.with_columns(columns)))
        rest = np.flatnonzero(~matched)
        if len(rest):
            routes.append(BatchRoute(REL_NO_MATCH.name, rest, batch.take(rest)))
        return routes


def _extract(head: bytes, config: _Config) -> dict[str, str]:
    """The attributes the configured regexes extract from *head* (the buffered content)."""
    text = decode(head, config.charset)
    if config.canonical:
        text = unicodedata.normalize("NFC", text)
    results: dict[str, str] = {}
    for name, pattern in config.patterns:
        matches: Sequence[Any] = (
            list(pattern.finditer(text)) if config.repeating else [pattern.search(text)]
        )
        named = _group_names(pattern) if config.named else ()
        index = 0  # NiFi's j: how far the numbering has gone
        for match in matches:
            if match is None:
                break
            if config.named and match.re.groups == len(named):
                _named_groups(
                    results, name=name, match=match, groups=named, index=index, config=config
                )
                index += 1
            else:
                _numbered_groups(results, name, match, index, config)
                index += match.re.groups
    return results


def _group_names(pattern: FlowPattern) -> tuple[str, ...]:
    """The pattern's group names in the order they appear."""
    return tuple(sorted(pattern.groupindex, key=pattern.groupindex.__getitem__))


def _named_groups(
    results: dict[str, str],
    *,
    name: str,
    match: Any,
    groups: tuple[str, ...],
    index: int,
    config: _Config,
) -> None:
    for group in groups:
        key = f"{name}.{group}" if index == 0 else f"{name}.{group}.{index}"
        value = match.group(group)
        if value:
            results[key] = value[: config.max_group_length]
    if config.start_group == 0 and index == 0:
        results[name] = match.group(0)  # NiFi keeps this one whole, even empty


def _numbered_groups(
    results: dict[str, str], name: str, match: Any, index: int, config: _Config
) -> None:
    start = config.start_group if index == 0 else 1
    for group in range(start, match.re.groups + 1):
        value = match.group(group)
        if value:
            value = value[: config.max_group_length]
            results[f"{name}.{group + index}"] = value
            if group == 1 and index == 0:
                results[name] = value
