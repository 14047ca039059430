"""The Expression Language syntax tree: frozen, picklable values built once by the parser."""

from __future__ import annotations

import enum
from collections.abc import Iterator

import attrs

__all__ = [
    "AttributeRef",
    "Call",
    "Chain",
    "Literal",
    "Node",
    "ParameterRef",
    "ResultType",
    "Template",
    "walk",
]


class ResultType(enum.Enum):
    """The static type of an expression's result, NiFi's ``AttributeExpression.ResultType``."""

    STRING = "String"
    BOOLEAN = "Boolean"
    WHOLE_NUMBER = "Whole Number"
    DECIMAL = "Decimal"
    NUMBER = "Number"
    DATE = "Date"


@attrs.frozen
class Literal:
    """A literal argument: a string, a whole number, a decimal or a boolean."""

    value: str | int | float | bool


@attrs.frozen
class AttributeRef:
    """A bare or quoted name, looked up in variables, FlowFile properties, attributes, env."""

    name: str


@attrs.frozen
class ParameterRef:
    """A ``#{name}`` parameter reference in property text."""

    name: str


@attrs.frozen
class Call:
    """One function call: ``name(args)``, applied to a subject or standing as the subject."""

    name: str
    args: tuple[Node, ...]
    position: int


@attrs.frozen
class Chain:
    """``${subject:fn1():fn2()}``: a subject followed by zero or more function calls."""

    subject: AttributeRef | Call | Chain
    calls: tuple[Call, ...]
    position: int
    result_type: ResultType


@attrs.frozen
class Template:
    """Property text: literal strings and embedded expressions, concatenated when evaluated."""

    parts: tuple[str | Chain | ParameterRef, ...]

    @property
    def result_type(self) -> ResultType:
        """The type of a lone expression, or STRING when text and expressions are mixed."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Chain):
            return self.parts[0].result_type
        return ResultType.STRING


Node = Literal | AttributeRef | Call | Chain


def walk(node: object) -> Iterator[object]:
    """Every node under *node*, itself included: a chain's subject and calls, a call's arguments."""
    yield node
    if isinstance(node, Chain):
        yield from walk(node.subject)
        for call in node.calls:
            yield from walk(call)
    elif isinstance(node, Call):
        for argument in node.args:
            yield from walk(argument)
