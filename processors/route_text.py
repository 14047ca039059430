"""RouteText: route each line of the content by matching it against the dynamic properties."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import regex

from flowcore.errors import ExpressionSyntaxError
from flowcore.expression import compile_expression
from flowcore.expression._evaluate import EvaluationContext
from flowcore.expression._nodes import ResultType
from flowcore.flowfile import FlowFile
from flowcore.patterns import JAVA_LINES, FlowPattern, compile_pattern
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    CHARACTER_SET_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    ValidationResult,
    create_regex_validator,
)
from processors._text import encode, iter_lines, java_trim

__all__ = ["RouteText"]

ROUTE_ATTRIBUTE = "RouteText.Route"
GROUP_ATTRIBUTE = "RouteText.Group"
_ANY_GROUPS = 2**31 - 1

ROUTE_TO_MATCHING_PROPERTY_NAME = AllowableValue(
    "Route to each matching Property Name",
    "Route to each matching Property Name",
    "Lines will be routed to each relationship whose corresponding expression evaluates to 'true'",
)
ROUTE_ALL_MATCH = AllowableValue(
    "Route to 'matched' if line matches all conditions",
    "Route to 'matched' if line matches all conditions",
    "Requires that all user-defined expressions evaluate to 'true' for the line to be considered "
    "a match",
)
ROUTE_ANY_MATCHES = AllowableValue(
    "Route to 'matched' if lines matches any condition",
    "Route to 'matched' if lines matches any condition",
    "Requires that at least one user-defined expression evaluate to 'true' for the line to be "
    "considered a match",
)
STARTS_WITH = AllowableValue(
    "Starts With", "Starts With", "Match lines based on whether the line starts with the value"
)
ENDS_WITH = AllowableValue(
    "Ends With", "Ends With", "Match lines based on whether the line ends with the value"
)
CONTAINS = AllowableValue(
    "Contains", "Contains", "Match lines based on whether the line contains the property value"
)
EQUALS = AllowableValue(
    "Equals", "Equals", "Match lines based on whether the line equals the property value"
)
MATCHES_REGULAR_EXPRESSION = AllowableValue(
    "Matches Regular Expression",
    "Matches Regular Expression",
    "Match lines based on whether the line exactly matches the Regular Expression that is "
    "provided as the Property value",
)
CONTAINS_REGULAR_EXPRESSION = AllowableValue(
    "Contains Regular Expression",
    "Contains Regular Expression",
    "Match lines based on whether the line contains some text that matches the Regular "
    "Expression that is provided as the Property value",
)
SATISFIES_EXPRESSION = AllowableValue(
    "Satisfies Expression",
    "Satisfies Expression",
    "Match lines based on whether or not the the text satisfies the given Expression Language "
    "expression. The expression can reference FlowFile Attributes, as well as the variables "
    "'line' (the text of the line) and 'lineNo' (the line number, 1 for the first line).",
)
_REGEX_STRATEGIES = (MATCHES_REGULAR_EXPRESSION.value, CONTAINS_REGULAR_EXPRESSION.value)

REL_ORIGINAL = Relationship(
    "original",
    "The original input file will be routed to this destination when the lines have been "
    "successfully routed to 1 or more relationships",
)
REL_NO_MATCH = Relationship(
    "unmatched",
    "Data that does not satisfy the required user-defined rules will be routed to this "
    "Relationship",
)
REL_MATCH = Relationship(
    "matched",
    "Data that satisfies the required user-defined rules will be routed to this Relationship",
)
REL_DYNAMIC = Relationship(
    "<one per dynamic property>",
    "For Route to each matching Property Name: the lines that match the property of this name",
)

#: Whether a line (as matched) satisfies one property, given the line as read and its number.
LineTest = Callable[[str, str, int], bool]


class RouteText(Processor):
    """Routes each line of the content to relationships by comparing it with the dynamic properties.

    Each line (with its terminator) is compared with every dynamic property by the Matching
    Strategy, after trimming (Ignore Leading/Trailing Whitespace, Java's ``trim``) or with its
    terminator cut off. Route to each matching Property Name sends it to each property's
    relationship that it matches; the other strategies to ``matched`` when all (or any)
    properties match. Other lines go to ``unmatched`` (not even written when ``unmatched`` is
    auto-terminated). The lines of one relationship and one group (the values a Grouping
    Regular Expression captures) make one new FlowFile with ``RouteText.Route`` and
    ``RouteText.Group``; the input goes to ``original``. Every FlowFile routed gets a ROUTE event.
    """

    ROUTE_STRATEGY = PropertyDescriptor(
        "Routing Strategy",
        description="Specifies how to determine which Relationship(s) to use when evaluating "
        "the lines of incoming text against the 'Matching Strategy' and user-defined properties.",
        required=True,
        default=ROUTE_TO_MATCHING_PROPERTY_NAME.value,
        allowable_values=(ROUTE_TO_MATCHING_PROPERTY_NAME, ROUTE_ALL_MATCH, ROUTE_ANY_MATCHES),
    )
    MATCH_STRATEGY = PropertyDescriptor(
        "Matching Strategy",
        description="Specifies how to evaluate each line of incoming text against the "
        "user-defined properties.",
        required=True,
        allowable_values=(
            SATISFIES_EXPRESSION,
            STARTS_WITH,
            ENDS_WITH,
            CONTAINS,
            EQUALS,
            MATCHES_REGULAR_EXPRESSION,
            CONTAINS_REGULAR_EXPRESSION,
        ),
    )
    CHARACTER_SET = PropertyDescriptor(
        "Character Set",
        description="The Character Set in which the incoming text is encoded",
        required=True,
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
    )
    TRIM_WHITESPACE = PropertyDescriptor(
        "Ignore Leading/Trailing Whitespace",
        description="Indicates whether or not the whitespace at the beginning and end of the "
        "lines should be ignored when evaluating the line.",
        required=True,
        default="true",
        validators=(BOOLEAN_VALIDATOR,),
    )
    IGNORE_CASE = PropertyDescriptor(
        "Ignore Case",
        description="If true, capitalization will not be taken into account when comparing "
        "values. E.g., matching against 'HELLO' or 'hello' will have the same result. This "
        "property is ignored if the 'Matching Strategy' is set to 'Satisfies Expression'.",
        required=True,
        default="false",
        allowable_values=("true", "false"),
    )
    GROUPING_REGEX = PropertyDescriptor(
        "Grouping Regular Expression",
        description="Specifies a Regular Expression to evaluate against each line to determine "
        "which Group the line should be placed in. The Regular Expression must have at least one "
        "Capturing Group that defines the line's Group. If multiple Capturing Groups exist in "
        "the Regular Expression, the values from all Capturing Groups will be concatenated "
        "together. Two lines will not be placed into the same FlowFile unless they both have "
        "the same value for the Group (or neither line matches the Regular Expression). For "
        "example, to group together all lines in a CSV File by the first column, we can set "
        'this value to "(.*?),.*". Two lines that have the same Group but different '
        "Relationships will never be placed into the same FlowFile.",
        required=False,
        validators=(create_regex_validator(1, _ANY_GROUPS),),
    )
    property_descriptors: ClassVar = (
        ROUTE_STRATEGY,
        MATCH_STRATEGY,
        CHARACTER_SET,
        TRIM_WHITESPACE,
        IGNORE_CASE,
        GROUPING_REGEX,
    )
    relationships: ClassVar = (REL_ORIGINAL, REL_NO_MATCH, REL_MATCH)
    dynamic_relationship: ClassVar = REL_DYNAMIC
    supports_batching: ClassVar = True
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = (
        "attributes",
        "routing",
        "text",
        "regexp",
        "regex",
        "Regular Expression",
        "Expression Language",
        "csv",
        "filter",
        "logs",
        "delimited",
        "find",
        "string",
        "search",
        "filter",
        "detect",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        ROUTE_ATTRIBUTE: "The name of the relationship to which the FlowFile was routed.",
        GROUP_ATTRIBUTE: "The values captured by the Grouping Regular Expression's groups, "
        "joined with ', ' (empty without one)",
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """A value lines are compared with (a relationship for the Property Name routing)."""
        return PropertyDescriptor(
            name,
            description="Routes data that matches this value to the relationship of this name",
            validators=(NON_EMPTY_VALIDATOR,),
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            dynamic=True,
        )

    def _routing(self) -> str:
        return self.effective_value(self.ROUTE_STRATEGY) or ROUTE_TO_MATCHING_PROPERTY_NAME.value

    def get_relationships(self) -> tuple[Relationship, ...]:
        """``original``, ``unmatched``, and ``matched`` or one per dynamic property."""
        if self._routing() == ROUTE_TO_MATCHING_PROPERTY_NAME.value:
            named = tuple(
                Relationship(n, f"Lines that match {n!r}") for n in self.dynamic_properties
            )
            return (REL_ORIGINAL, REL_NO_MATCH, *named)
        return (REL_ORIGINAL, REL_NO_MATCH, REL_MATCH)

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Regexes must compile, expressions return booleans, and one property at least exists."""
        strategy = values.get(self.MATCH_STRATEGY.name)
        problems = []
        regex_check = create_regex_validator(0, _ANY_GROUPS)
        for name, value in self.dynamic_properties.items():
            if strategy in _REGEX_STRATEGIES and "${" not in value:
                result = regex_check(name, value)
                if not result.valid:
                    problems.append(result)
            elif strategy == SATISFIES_EXPRESSION.value:
                why = _boolean_expression_problem(value)
                if why:
                    problems.append(ValidationResult(name, value, False, why))
        if not self.dynamic_properties:
            why = "In order to route text there must be dynamic properties to match against"
            problems.append(ValidationResult("Dynamic Properties", None, False, why))
        return problems

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Route the lines of one FlowFile into new FlowFiles; the input goes to original."""
        original = session.get()
        if original is None:
            return
        charset = context.get_property(self.CHARACTER_SET).value or "UTF-8"
        trim = bool(context.get_property(self.TRIM_WHITESPACE).as_boolean())
        routing = self._routing()
        tests = self._tests(context, original)
        grouping_text = context.get_property(self.GROUPING_REGEX).value
        grouping = compile_pattern(grouping_text, JAVA_LINES) if grouping_text else None
        routed: dict[tuple[str, tuple[str | None, ...]], list[str]] = {}

        def append(relationship: str, compared: str, line: str) -> None:
            key = (relationship, _group(compared, grouping))
            routed.setdefault(key, []).append(line)

        with session.read(original) as stream:
            for number, line in enumerate(iter_lines(stream, charset), start=1):
                compared = java_trim(line) if trim else _without_endings(line)
                matched = 0
                for name, test in tests.items():
                    hit = test(compared, line, number)
                    matched += hit
                    if hit and routing == ROUTE_TO_MATCHING_PROPERTY_NAME.value:
                        append(name, compared, line)
                    elif hit and routing == ROUTE_ANY_MATCHES.value:
                        break  # decided: NiFi evaluates no further property
                    elif not hit and routing == ROUTE_ALL_MATCH.value:
                        break
                destination = _destination(routing, matched, len(tests))
                if destination is not None and not context.is_auto_terminated(destination):
                    append(destination, compared, line)
        for (relationship, group), lines in routed.items():
            child = session.write(session.create(original), encode("".join(lines), charset))
            child = session.put_all_attributes(
                child,
                {ROUTE_ATTRIBUTE: relationship, GROUP_ATTRIBUTE: ", ".join(g or "" for g in group)},
            )
            session.provenance.route(child, relationship)
            session.transfer(child, relationship)
        session.provenance.route(original, REL_ORIGINAL)
        original = session.put_attribute(original, ROUTE_ATTRIBUTE, REL_ORIGINAL.name)
        session.transfer(original, REL_ORIGINAL)

    def _tests(self, context: ProcessContext, flowfile: FlowFile) -> dict[str, LineTest]:
        """Each dynamic property as a test of a line, its value evaluated for *flowfile*."""
        strategy = context.get_property(self.MATCH_STRATEGY).value
        ignore_case = bool(context.get_property(self.IGNORE_CASE).as_boolean())
        ctx = EvaluationContext(
            attributes=flowfile.attributes, flowfile=flowfile, clock=context.now
        )
        tests = {}
        for name, text in self.dynamic_properties.items():
            if strategy == SATISFIES_EXPRESSION.value:
                tests[name] = _satisfies(text, ctx)
                continue
            value = compile_expression(text).evaluate_in(ctx) if "{" in text else text
            if strategy in _REGEX_STRATEGIES:
                flags = JAVA_LINES | (regex.IGNORECASE if ignore_case else 0)
                pattern = compile_pattern(value, flags)
                tests[name] = _regex_test(pattern, strategy == MATCHES_REGULAR_EXPRESSION.value)
            else:
                tests[name] = _text_test(strategy or "", value, ignore_case)
        return tests


def _boolean_expression_problem(value: str) -> str | None:
    try:
        result = compile_expression(value).result_type
    except ExpressionSyntaxError:
        return "input is not a valid Expression Language expression"
    if result is not ResultType.BOOLEAN:
        return f"expression returns type of {result.name} but is required to return a Boolean value"
    return None


def _satisfies(text: str, ctx: EvaluationContext) -> LineTest:
    expression = compile_expression(text)

    def test(_compared: str, line: str, number: int) -> bool:
        in_line = EvaluationContext(
            attributes=ctx.attributes,
            flowfile=ctx.flowfile,
            variables={"line": line, "lineNo": str(number)},
            clock=ctx.clock,
        )
        return expression.evaluate_in(in_line).strip().lower() == "true"  # asBoolean()

    return test


def _regex_test(pattern: FlowPattern, whole: bool) -> LineTest:
    if whole:
        return lambda compared, _line, _number: pattern.fullmatch(compared) is not None
    return lambda compared, _line, _number: pattern.search(compared) is not None


def _text_test(strategy: str, value: str, ignore_case: bool) -> LineTest:
    if ignore_case:
        value = value.lower()
    compare: Callable[[str], bool]
    if strategy == STARTS_WITH.value:
        compare = lambda s: s.startswith(value)  # noqa: E731
    elif strategy == ENDS_WITH.value:
        compare = lambda s: s.endswith(value)  # noqa: E731
    elif strategy == CONTAINS.value:
        compare = lambda s: value in s  # noqa: E731
    else:
        compare = lambda s: s == value  # noqa: E731
    if ignore_case:
        return lambda compared, _line, _number: compare(compared.lower())
    return lambda compared, _line, _number: compare(compared)


def _destination(routing: str, matched: int, count: int) -> str | None:
    """Where a line goes after the tests (None: already sent to each matching property)."""
    if routing == ROUTE_TO_MATCHING_PROPERTY_NAME.value:
        return None if matched else REL_NO_MATCH.name
    if routing == ROUTE_ANY_MATCHES.value:
        return REL_MATCH.name if matched else REL_NO_MATCH.name
    return REL_MATCH.name if matched == count else REL_NO_MATCH.name


def _group(compared: str, grouping: FlowPattern | None) -> tuple[str | None, ...]:
    """The values the Grouping Regular Expression captures from the whole line (none: ())."""
    if grouping is None:
        return ()
    found: Any = grouping.fullmatch(compared)
    if found is None:
        return ()
    return tuple(found.groups())


def _without_endings(line: str) -> str:
    r"""*line* cut at its first ``\r`` or ``\n``, as NiFi cuts it: only past position 0.

    NiFi's test is ``indexOf(...) > 0``, so an empty line keeps its terminator (and ``\r\n``
    becomes ``\r``); kept for the same matches.
    """
    cr, lf = line.find("\r"), line.find("\n")
    if cr > 0 and lf > 0:
        return line[: min(cr, lf)]
    if cr > 0:
        return line[:cr]
    if lf > 0:
        return line[:lf]
    return line
