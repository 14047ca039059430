"""A recursive-descent parser for NiFi's Expression Language.

The parser reads property text once and returns a :class:`Template`. It resolves every function
name and checks argument counts, so a malformed expression is a validation error naming the
position, never a surprise at run time. It never uses ``eval``.
"""

from __future__ import annotations

import re

from flowcore.errors import ExpressionSyntaxError
from flowcore.expression._functions import DUAL_USE, FUNCTIONS
from flowcore.expression._nodes import (
    AttributeRef,
    Call,
    Chain,
    Literal,
    Node,
    ParameterRef,
    ResultType,
    Template,
)

__all__ = ["parse"]

# Characters that end a bare attribute name; a name holding any of them must be quoted.
_SPECIAL = set("$|{}()[],:;/*'\" \t\r\n")
_NUMBER = re.compile(r"-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?)")
_FUNCTION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
#: Expressions nested inside one another (``${a:append(${b:append(...)})}``). Parsing and
#: evaluating recurse once per level; beyond this a flow gets a syntax error naming the limit,
#: never a RecursionError.
MAX_DEPTH = 100
_STRING_ESCAPES = {'"': '"', "'": "'", "n": "\n", "r": "\r", "t": "\t", "\\": "\\\\"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0  # expressions open around the current position

    # --- errors and low-level scanning ----------------------------------------------------

    def error(self, why: str, position: int | None = None) -> ExpressionSyntaxError:
        at = self.pos if position is None else position
        shown = self.text if len(self.text) <= 120 else self.text[:117] + "..."
        msg = f"invalid Expression Language at position {at}: {why} (in {shown!r})"
        return ExpressionSyntaxError(msg, self.text, at)

    def peek(self, count: int = 1) -> str:
        return self.text[self.pos : self.pos + count]

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def expect(self, token: str, what: str) -> None:
        self.skip_ws()
        if self.peek(len(token)) != token:
            found = self.peek() or "end of text"
            raise self.error(f"expected {what} but found {found!r}")
        self.pos += len(token)

    # --- templates -------------------------------------------------------------------------

    def template(self) -> Template:
        parts: list[str | Chain | ParameterRef] = []
        text: list[str] = []
        length = len(self.text)
        while self.pos < length:
            ch = self.text[self.pos]
            if ch == "$":
                run_end = self.pos
                while run_end < length and self.text[run_end] == "$":
                    run_end += 1
                dollars = run_end - self.pos
                if run_end < length and self.text[run_end] == "{":
                    # Pairs of '$' before '{' collapse to one; an odd one left opens an expression.
                    if dollars >= 2:
                        text.append("$" * (dollars // 2))
                    if dollars % 2 == 0:
                        self.pos = run_end
                        continue
                    if "".join(text):
                        parts.append("".join(text))
                    text = []
                    self.pos = run_end - 1
                    parts.append(self.expression())
                    continue
                text.append("$" * dollars)
                self.pos = run_end
            elif ch == "#" and self.peek(3) == "##{":
                text.append("#{")
                self.pos += 3
            elif ch == "#" and self.peek(2) == "#{":
                end = self.text.find("}", self.pos)
                if end < 0:
                    raise self.error("parameter reference '#{' is never closed")
                name = self.text[self.pos + 2 : end]
                if not name:
                    raise self.error("parameter reference '#{}' names no parameter")
                if text:
                    parts.append("".join(text))
                    text = []
                parts.append(ParameterRef(name))
                self.pos = end + 1
            else:
                text.append(ch)
                self.pos += 1
        if text:
            parts.append("".join(text))
        return Template(tuple(parts))

    # --- expressions -----------------------------------------------------------------------

    def expression(self) -> Chain:
        start = self.pos
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(
                f"expressions nest more than {MAX_DEPTH} levels deep; flatten the expression"
            )
        try:
            return self._expression(start)
        finally:
            self.depth -= 1

    def _expression(self, start: int) -> Chain:
        self.expect("${", "'${'")
        self.skip_ws()
        subject, multi = self.subject()
        calls: list[Call] = []
        reduced = False
        while True:
            self.skip_ws()
            ch = self.peek()
            if ch == "}":
                self.pos += 1
                break
            if ch != ":":
                found = ch or "end of text"
                raise self.error(f"expected ':' or '}}' but found {found!r}")
            self.pos += 1
            self.skip_ws()
            call = self.call(chained=True)
            spec = FUNCTIONS[call.name]
            if spec.kind == "reduce":
                if not multi or reduced:
                    raise self.error(
                        f"{call.name}() can only follow a multi-attribute function such as "
                        "allAttributes(...)",
                        call.position,
                    )
                reduced = True
            calls.append(call)
        return Chain(subject, tuple(calls), start, _result_type(subject, calls, multi, reduced))

    def subject(self) -> tuple[AttributeRef | Call | Chain, bool]:
        ch = self.peek()
        if ch in ("'", '"'):
            return AttributeRef(self.string()), False
        if self.peek(2) == "${":
            return self.expression(), False
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in _SPECIAL:
            self.pos += 1
        name = self.text[start : self.pos]
        if not name:
            found = self.peek() or "end of text"
            raise self.error(f"expected an attribute name or a function but found {found!r}")
        after = self.pos
        self.skip_ws()
        if self.peek() == "(":
            self.pos = start
            call = self.call(chained=False)
            return call, FUNCTIONS[call.name].kind == "multi"
        self.pos = after
        if name[0].isdigit():
            raise self.error(
                f"attribute name {name!r} starts with a digit; quote it: ${{'{name}'}}", start
            )
        return AttributeRef(name), False

    def call(self, *, chained: bool) -> Call:
        start = self.pos
        match = _FUNCTION_NAME.match(self.text, self.pos)
        if match is None:
            found = self.peek() or "end of text"
            raise self.error(f"expected a function name but found {found!r}")
        name = match.group()
        self.pos = match.end()
        spec = FUNCTIONS.get(name)
        if spec is None:
            raise self.error(f"unknown function {name!r}", start)
        if chained and spec.kind in ("subjectless", "multi") and name not in DUAL_USE:
            raise self.error(f"{name}() takes no subject; write ${{{name}(...)}}", start)
        if not chained and spec.kind in ("chain", "reduce") and name not in DUAL_USE:
            raise self.error(f"{name}() needs a subject; write ${{attribute:{name}(...)}}", start)
        args = self.arguments()
        low, high = spec.min_args, spec.max_args
        if len(args) < low or (high is not None and len(args) > high):
            expected = (
                str(low) if low == high else f"{low} to {high if high is not None else 'any'}"
            )
            raise self.error(
                f"{name}() takes {expected} argument(s) but was given {len(args)}", start
            )
        return Call(name, tuple(args), start)

    def arguments(self) -> list[Node]:
        self.expect("(", "'(' after the function name")
        args: list[Node] = []
        self.skip_ws()
        if self.peek() == ")":
            self.pos += 1
            return args
        while True:
            self.skip_ws()
            args.append(self.argument())
            self.skip_ws()
            ch = self.peek()
            if ch == ",":
                self.pos += 1
                continue
            if ch == ")":
                self.pos += 1
                return args
            found = ch or "end of text"
            raise self.error(f"expected ',' or ')' in the argument list but found {found!r}")

    def argument(self) -> Node:
        ch = self.peek()
        if ch in ("'", '"'):
            return Literal(self.string())
        if self.peek(2) == "${":
            return self.expression()
        for word, value in (("true", True), ("false", False)):
            end = self.pos + len(word)
            if self.text.startswith(word, self.pos) and (
                end >= len(self.text) or not self.text[end].isalnum()
            ):
                self.pos = end
                return Literal(value)
        match = _NUMBER.match(self.text, self.pos)
        if match:
            self.pos = match.end()
            token = match.group()
            is_decimal = any(c in token for c in ".eE")
            return Literal(float(token) if is_decimal else int(token))
        found = ch or "end of text"
        raise self.error(
            "expected an argument (a quoted string, number, boolean or ${...}) "
            f"but found {found!r}"
        )

    def string(self) -> str:
        quote = self.text[self.pos]
        start = self.pos
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == quote:
                self.pos += 1
                return "".join(out)
            if ch in "\r\n\t":
                raise self.error("a string literal cannot contain a raw line break or tab")
            if ch == "\\" and self.pos + 1 < len(self.text):
                nxt = self.text[self.pos + 1]
                # NiFi's quirk: '\\' yields two backslashes; unknown escapes keep the backslash.
                out.append(_STRING_ESCAPES.get(nxt, "\\" + nxt))
                self.pos += 2
                continue
            out.append(ch)
            self.pos += 1
        raise self.error(f"string literal opened with {quote} is never closed", start)


def _result_type(
    subject: AttributeRef | Call | Chain, calls: list[Call], multi: bool, reduced: bool
) -> ResultType:
    if multi and not reduced:
        return ResultType.BOOLEAN
    if calls:
        return FUNCTIONS[calls[-1].name].result
    if isinstance(subject, Call):
        return FUNCTIONS[subject.name].result
    if isinstance(subject, Chain):
        return subject.result_type
    return ResultType.STRING


def parse(text: str) -> Template:
    """Parse property *text* into a template of literal text and expressions.

    Raises:
        ExpressionSyntaxError: the text holds a malformed expression; ``position`` points at it.
    """
    return _Parser(text).template()
