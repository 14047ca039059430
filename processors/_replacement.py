r"""ReplaceText's replacement values, read exactly as NiFi and Java read them.

NiFi builds each match's replacement in steps, and a flow's ``$`` and ``\`` mean what those steps
make of them:

1. Expression Language is evaluated with ``$0``, ``$1`` ... bound to the match's groups
   (``${'$1':toUpper()}``); a ``$`` and digits inside an expression's result are escaped, so
   they stay literal (:func:`evaluate_decorated`, :func:`escape_group_references`).
2. ``$n`` naming a group the Search Value does not have is escaped, so it stays literal
   (:func:`escape_literal_back_references`, with NiFi's quirks).
3. A ``$`` followed by anything but a digit makes the whole value literal
   (:func:`normalize_replacement`, ``Matcher.quoteReplacement``).
4. Java's ``Matcher.appendReplacement`` reads the result: ``\x`` is ``x``, ``$n`` a group,
   taking further digits while they still name a group (:func:`parse_replacement`).

Apache Commons Text's ``StringSubstitutor`` (the Substitute Variables strategy) is here too.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from flowcore.errors import ProcessException
from flowcore.expression import Expression, compile_expression
from flowcore.expression._evaluate import EvaluationContext
from flowcore.expression._nodes import Chain, Template

__all__ = [
    "DecoratedTemplate",
    "decorated_template",
    "escape_group_references",
    "escape_literal_back_references",
    "expand",
    "normalize_replacement",
    "parse_replacement",
    "regex_template",
    "substitute_variables",
]

_UNESCAPED_BACK_REFERENCE = re.compile(r"[^\\]\$(\d+)")
_DOLLAR_NON_DIGIT = re.compile(r"\$\D")
_GROUP_REFERENCE = re.compile(r"(\$\d+?)")

#: A parsed replacement: literal text, and group numbers.
Parts = tuple[str | int, ...]


class DecoratedTemplate:
    """Property text whose expressions' results pass through a decorator.

    NiFi's ``AttributeValueDecorator``: each ``${...}`` is evaluated alone and decorated, the
    literal text between them is kept as it is.
    """

    __slots__ = ("_parts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        parts: list[str | Expression] = []
        for part in compile_expression(text).template.parts:
            if isinstance(part, Chain):
                parts.append(Expression(text, Template((part,))))
            elif isinstance(part, str):
                parts.append(part)
            else:  # a #{parameter}: substituted before evaluation, never decorated
                parts.append(Expression(text, Template((part,))))
        self._parts = tuple(parts)

    @property
    def literal(self) -> str | None:
        """The text's value when it holds no expression (``$${`` read as ``${``), else None."""
        if all(isinstance(p, str) for p in self._parts):
            return "".join(self._parts)  # type: ignore[arg-type]
        return None

    def evaluate(self, ctx: EvaluationContext, decorate: Callable[[str], str]) -> str:
        """The text with each expression evaluated in *ctx* and passed through *decorate*."""
        out = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part.template.parts[0], Chain):
                out.append(decorate(part.evaluate_in(ctx)))
            else:
                out.append(part.evaluate_in(ctx))
        return "".join(out)


@functools.lru_cache(maxsize=256)
def decorated_template(text: str) -> DecoratedTemplate:
    """The :class:`DecoratedTemplate` of *text*, parsed once."""
    return DecoratedTemplate(text)


def escape_group_references(value: str) -> str:
    r"""``$`` and a digit become ``\$`` and the digit: an expression's result stays literal."""
    return _GROUP_REFERENCE.sub(r"\\\1", value)


def escape_literal_back_references(value: str, groups: int) -> str:
    r"""Escape each ``$n`` that names no group of a regex with *groups* groups, as NiFi does.

    A reference with more digits than groups is cut from the right first (``$12`` with 3
    groups is ``$1`` then ``2``, left to Java), and only what still names no group is escaped.
    NiFi's quirks are kept: a ``$`` at the very start is never escaped (its pattern wants a
    character before the ``$``), ``$0...`` is never escaped, and after the first escape the
    positions found in the original value are used on the escaped one.
    """
    if groups == 0:
        return value
    escaped = value
    for found in _UNESCAPED_BACK_REFERENCE.finditer(value):
        digits = found.group(1)
        if digits.startswith("0"):
            continue
        number = int(digits)
        while number > groups and number >= 10:  # one decimal digit less
            number //= 10
        if number > groups:
            start = found.start(1)
            escaped = escaped[: start - 1] + "\\" + escaped[start - 1 :]
    return escaped


def normalize_replacement(value: str) -> str:
    r"""The whole value made literal (``\`` and ``$`` escaped) when a ``$`` precedes a non-digit."""
    if _DOLLAR_NON_DIGIT.search(value):
        return value.replace("\\", "\\\\").replace("$", "\\$")
    return value


@functools.lru_cache(maxsize=1024)
def parse_replacement(replacement: str, groups: int) -> Parts:
    r"""Java's ``appendReplacement`` reading of *replacement* for a regex with *groups* groups.

    Raises:
        ProcessException: what Java refuses: a trailing ``\`` or ``$``, ``$`` before a
            non-digit, a group the regex does not have (Java's ``No group n``).
    """
    parts: list[str | int] = []
    text: list[str] = []
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\":
            if i + 1 == len(replacement):
                msg = (
                    f"the replacement {replacement!r} ends with '\\': character to be escaped "
                    "is missing"
                )
                raise ProcessException(msg)
            text.append(replacement[i + 1])
            i += 2
            continue
        if char != "$":
            text.append(char)
            i += 1
            continue
        number, i = _group_number(replacement, i + 1, groups)
        parts.append("".join(text))
        text = []
        parts.append(number)
    parts.append("".join(text))
    return tuple(p for p in parts if p != "")


def _group_number(replacement: str, i: int, groups: int) -> tuple[int, int]:
    """The group a ``$`` names, digits from *i* on, and where its reference ends."""
    if i == len(replacement) or not replacement[i].isdigit() or not replacement[i].isascii():
        why = "group index is missing" if i == len(replacement) else "not a group number"
        msg = f"Illegal group reference in the replacement {replacement!r}: {why}"
        raise ProcessException(msg)
    number = int(replacement[i])
    i += 1
    while i < len(replacement) and replacement[i].isascii() and replacement[i].isdigit():
        longer = number * 10 + int(replacement[i])
        if longer > groups:
            break
        number = longer
        i += 1
    if number > groups:
        msg = (
            f"No group {number}: the replacement {replacement!r} refers to a capturing group the "
            f"Search Value does not have ({groups} groups)"
        )
        raise ProcessException(msg)
    return number, i


def expand(parts: Parts, match: Any) -> str:
    """One match's replacement: literal text and its groups (an unmatched group adds nothing)."""
    return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in parts)


@functools.lru_cache(maxsize=1024)
def regex_template(parts: Parts) -> str:
    r"""*parts* as a ``regex`` substitution template (``\g<1>``), so the engine expands in C."""
    return "".join(p.replace("\\", "\\\\") if isinstance(p, str) else f"\\g<{p}>" for p in parts)


def substitute_variables(text: str, values: Mapping[str, str]) -> str:
    """``StringSubstitutor.replace(text, values)`` of Apache Commons Text, with its defaults.

    ``${name}`` becomes the value of *name* (itself substituted in turn), ``${name:-default}``
    the default when there is no value; an unknown name stays as written; ``$${name}`` is
    the literal ``${name}``.

    Raises:
        ProcessException: a value refers back to itself (a cycle).
    """
    return _substitute(text, values, [text])


def _substitute(text: str, values: Mapping[str, str], prior: list[str]) -> str:
    out: list[str] = []
    pos = 0
    length = len(text)
    while pos < length:
        if not text.startswith("${", pos):
            out.append(text[pos])
            pos += 1
            continue
        if pos > 0 and text[pos - 1] == "$":
            out.pop()  # the escape goes; '${' is then scanned past as plain text
            out.append(text[pos])
            pos += 1
            continue
        end = text.find("}", pos + 2)
        if end < 0:
            out.append(text[pos:])
            break
        expression = text[pos + 2 : end]
        name, default = _name_and_default(expression)
        if name in prior[1:]:
            chain = "->".join([*prior[1:], name])
            msg = f"Infinite loop in property interpolation of {prior[0]!r}: {chain}"
            raise ProcessException(msg)
        value = values.get(name, default)
        if value is None:
            out.append(text[pos : end + 1])
        else:
            out.append(_substitute(value, values, [*prior, name]))
        pos = end + 1
    return "".join(out)


def _name_and_default(expression: str) -> tuple[str, str | None]:
    """A variable expression's name and its ``:-`` default (None: none)."""
    for i in range(len(expression)):
        if expression.startswith("${", i):
            break
        if expression.startswith(":-", i):
            return expression[:i], expression[i + 2 :]
    return expression, None
