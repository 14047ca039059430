"""Expressions compiled to closures: the per-FlowFile evaluation without walking the tree.

:func:`compile_text` turns a parsed :class:`~flowcore.expression._nodes.Template` into one
function of an :class:`~flowcore.expression._evaluate.EvaluationContext`, once per expression.
Every decision the tree walk (``_walk.evaluate_chain``) makes per evaluation is made here
ahead of time: which function each call is, whether its arguments are literals (then they are
bound once), whether it is lazy (``and``, ``ifElse``: its arguments become thunks), whether a
name can be a FlowFile property (``fileSize`` ...) or only a variable, attribute or environment
variable. What is left per evaluation is the functions themselves.

The commonest functions on the commonest subject, a string, also have a direct form
(:data:`_DIRECT`): ``toUpper`` is ``str.upper`` of the subject, ``mod(8)`` of a string of ASCII
digits is Python's ``%``, with no coercion on the way. A subject of any other type (null, a
number, a date), or any argument not literal, takes the registered function, so the values,
the errors and their messages are the tree walk's exactly: ``test_compile.py`` (in
``tests/flowcore/expression``) compares the two over random expressions.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import flowcore.expression._values as value_rules
from flowcore.errors import ExpressionEvaluationError, FlowcoreError
from flowcore.expression._functions import FUNCTIONS
from flowcore.expression._nodes import AttributeRef, Call, Chain, Literal, ParameterRef
from flowcore.expression._values import Value, check_length, render, shown, to_string
from flowcore.expression._walk import _DATA_ERRORS, _evaluate_multi

if TYPE_CHECKING:
    from flowcore.expression._evaluate import EvaluationContext
    from flowcore.expression._nodes import Node, Template

__all__ = ["Compiled", "Program", "compile_text", "compile_value"]

#: A compiled expression: the context in, the value out.
Program = Callable[["EvaluationContext"], Value]


class Compiled(Protocol):
    """A template with its compiled evaluations: what the column ways need of an expression.

    :class:`~flowcore.expression.Expression` is the one; the package imports the column ways
    (:mod:`~flowcore.expression._columns`), which so depend on this instead.
    """

    @property
    def template(self) -> Template: ...

    def evaluate_in(self, ctx: EvaluationContext) -> str: ...

    def value_in(self, ctx: EvaluationContext) -> Value: ...


_Step = Callable[["EvaluationContext", Value], Value]
#: Names a FlowFile property answers before the attributes (``_evaluate._virtual_property``).
_VIRTUAL = frozenset(
    {"fileSize", "flowFileId", "entryDate", "lineageStartDate", "lastQueueDate", "queueDateIndex"}
)
#: What ``java_trim`` strips: every character up to U+0020.
_JAVA_BLANKS = "".join(map(chr, range(33)))
#: Digits of a whole number whose arithmetic with a long cannot leave a long's range twice.
_SHORT_DIGITS = 18
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def compile_text(template: Template) -> Callable[[EvaluationContext], str]:
    """The property text's value (null parts as ""), as ``Expression.evaluate_in`` gives it."""
    parts = template.parts
    if len(parts) == 1 and isinstance(parts[0], str):
        text = parts[0]
        return lambda _ctx: text
    if len(parts) == 1 and isinstance(parts[0], Chain):
        return _chain(parts[0], _rendered)
    pieces = tuple(_piece(part) for part in parts)

    def concatenation(ctx: EvaluationContext) -> str:
        out = [piece(ctx) for piece in pieces]
        if len(out) > 1:
            check_length(sum(map(len, out)), "the property text's concatenation")
        return "".join(out)

    return concatenation


def compile_value(template: Template) -> Program | None:
    """A lone ``${...}``'s typed value, or None when the text is more than one expression."""
    parts = template.parts
    if len(parts) == 1 and isinstance(parts[0], Chain):
        return _chain(parts[0])
    return None


def _rendered(value: Value) -> str:
    if value.__class__ is str:
        return value  # type: ignore[no-any-return]
    return str(value) if value.__class__ is int else render(value)  # bool's class is bool


def _piece(part: str | Chain | ParameterRef) -> Callable[[EvaluationContext], str]:
    if isinstance(part, str):
        return lambda _ctx: part
    if isinstance(part, ParameterRef):
        name = part.name
        return lambda ctx: ctx.parameters.get(name) or ""
    chain = _chain(part)
    return lambda ctx: render(chain(ctx))


def _node(node: Node) -> Program:
    """What ``_walk._evaluate_node`` does with *node*, decided once."""
    if isinstance(node, Literal):
        value = node.value
        return lambda _ctx: value
    if isinstance(node, Chain):
        return _chain(node)
    if isinstance(node, AttributeRef):
        return _lookup(node.name)
    if isinstance(node, ParameterRef):
        name = node.name
        return lambda ctx: ctx.parameters.get(name)
    step = _step(node)
    return lambda ctx: step(ctx, None)


def _lookup(name: str) -> Program:
    """``EvaluationContext.lookup(name)``; a name no FlowFile property has skips the FlowFile."""
    if name in _VIRTUAL:
        return lambda ctx: ctx.lookup(name)
    environ = os.environ

    def lookup(ctx: EvaluationContext) -> Value:
        variables = ctx.variables
        if name in variables:
            return variables[name]
        attributes = ctx.attributes
        if name in attributes:
            return attributes[name]
        return environ.get(name)

    return lookup


def _chain(chain: Chain, finish: Callable[[Value], Value] | None = None) -> Program:
    """``${subject:calls...}`` as ``_walk.evaluate_chain`` evaluates it, then *finish*.

    The commonest lengths are unrolled into one closure each: a frame fewer per evaluation.
    """
    subject = chain.subject
    if isinstance(subject, Call) and FUNCTIONS[subject.name].kind == "multi":
        multi = functools.partial(_evaluate_multi, chain, subject)
        return multi if finish is None else lambda ctx: finish(multi(ctx))
    first = _node(subject)
    steps = tuple(_step(call) for call in chain.calls)
    if finish is None:
        if not steps:
            return first
        if len(steps) == 1:
            (only,) = steps
            return lambda ctx: only(ctx, first(ctx))
        if len(steps) == 2:
            one, two = steps
            return lambda ctx: two(ctx, one(ctx, first(ctx)))
    elif len(steps) == 1:
        (only,) = steps
        return lambda ctx: finish(only(ctx, first(ctx)))
    elif len(steps) == 2:
        one, two = steps
        return lambda ctx: finish(two(ctx, one(ctx, first(ctx))))

    def chained(ctx: EvaluationContext) -> Value:
        value = first(ctx)
        for step in steps:
            value = step(ctx, value)
        return value if finish is None else finish(value)

    return chained


def _step(call: Call) -> _Step:
    """One call applied to its subject, as ``_walk._invoke`` applies it."""
    spec = FUNCTIONS[call.name]
    impl, name = spec.impl, call.name
    if spec.lazy:
        thunks = tuple(_node(arg) for arg in call.args)

        def lazy(ctx: EvaluationContext, subject: Value) -> Value:
            args = [functools.partial(thunk, ctx) for thunk in thunks]
            try:
                result = impl(ctx, subject, *args)  # the thunks run in here, as in _invoke
            except FlowcoreError:
                raise
            except _DATA_ERRORS as ex:
                raise _failure(name, subject, ex) from ex
            return _checked(name, result)

        return lazy
    if not all(isinstance(arg, Literal) for arg in call.args):
        nodes = tuple(_node(arg) for arg in call.args)

        def evaluated(ctx: EvaluationContext, subject: Value) -> Value:
            args = [node(ctx) for node in nodes]  # outside the guard, as _invoke has them
            try:
                result = impl(ctx, subject, *args)
            except FlowcoreError:
                raise
            except _DATA_ERRORS as ex:
                raise _failure(name, subject, ex) from ex
            return _checked(name, result)

        return evaluated
    args = tuple(arg.value for arg in call.args)  # type: ignore[union-attr]
    direct = _direct(name, args)
    if direct is None:

        def literal(ctx: EvaluationContext, subject: Value) -> Value:
            try:
                result = impl(ctx, subject, *args)
            except FlowcoreError:
                raise
            except _DATA_ERRORS as ex:
                raise _failure(name, subject, ex) from ex
            if isinstance(result, str) and len(result) > value_rules._max_length:
                check_length(len(result), name)
            return result

        return literal

    def direct_or_literal(ctx: EvaluationContext, subject: Value) -> Value:
        try:
            if subject.__class__ is str:
                result = direct(subject)
                if result is _GENERAL:
                    result = impl(ctx, subject, *args)
            else:
                result = impl(ctx, subject, *args)
        except FlowcoreError:
            raise
        except _DATA_ERRORS as ex:
            raise _failure(name, subject, ex) from ex
        if isinstance(result, str) and len(result) > value_rules._max_length:
            check_length(len(result), name)
        return result

    return direct_or_literal


def _failure(name: str, subject: Value, ex: Exception) -> ExpressionEvaluationError:
    msg = f"{name}() failed on {shown(subject)}: {type(ex).__name__}: {ex}"
    return ExpressionEvaluationError(msg)


def _checked(name: str, result: Value) -> Value:
    """*result*, refused when it is a string over the length limit (``_invoke``'s check)."""
    if isinstance(result, str) and len(result) > value_rules._max_length:
        check_length(len(result), name)
    return result


# --- direct forms ------------------------------------------------------------------------------

#: What a direct form returns when the subject needs the registered function after all.
_GENERAL: Any = object()


def _text(value: Value) -> str:
    return to_string(value) or ""


def _around(*, last: bool, after: bool) -> Callable[[Value], Callable[[str], str] | None]:
    """The substringBefore family: an empty marker leaves the subject whole."""

    def make(marker: Value) -> Callable[[str], str] | None:
        text = to_string(marker)
        if not text:
            return None
        if last and after:  # ("", "", s) when the marker is missing
            return lambda s: s.rpartition(text)[2]
        if last:  # one piece, the whole subject, when the marker is missing
            return lambda s: s.rsplit(text, 1)[0]
        if after:
            return lambda s: s.split(text, 1)[-1]
        return lambda s: s.partition(text)[0]

    return make


def _arithmetic(op: str) -> Callable[[Value], Callable[[str], Any] | None]:
    """plus, minus, multiply and mod of a digit string by a literal whole number.

    ASCII digits short of a long's limit are read by ``to_number`` as ``int`` reads them. The
    subject is then non-negative and under 10**18, so mod is Python's ``%`` by the argument's
    magnitude (Java's remainder takes the dividend's sign), and a sum or product leaves a long
    at most once, which ``wrap_long`` undoes as the registered function does.
    """

    def make(argument: Value) -> Callable[[str], Any] | None:
        if type(argument) is not int or not _LONG_MIN <= argument <= _LONG_MAX:
            return None
        if op == "%" and argument == 0:
            return None  # the registered function's error
        magnitude = abs(argument)

        def apply(s: str) -> Any:
            if not (s.isdigit() and s.isascii() and len(s) <= _SHORT_DIGITS):
                return _GENERAL
            n = int(s)
            if op == "%":
                return n % magnitude
            result = n + argument if op == "+" else n - argument if op == "-" else n * argument
            return result if _LONG_MIN <= result <= _LONG_MAX else value_rules.wrap_long(result)

        return apply

    return make


def _constant_form(method: Callable[[str], Any]) -> Callable[[], Callable[[str], Any]]:
    return lambda: method


def _with_text(
    method: Callable[[str, str], Any],
) -> Callable[[Value], Callable[[str], Any]]:
    def make(other: Value) -> Callable[[str], Any]:
        text = _text(other)
        return lambda s: method(s, text)

    return make


def _equals(other: Value) -> Callable[[str], bool]:
    return _text(other).__eq__


def _equals_ignore_case(other: Value) -> Callable[[str], bool]:
    lowered = _text(other).lower()
    return lambda s: s.lower() == lowered


def _append(tail: Value) -> Callable[[str], str]:
    text = _text(tail)
    return lambda s: s + text


def _prepend(head: Value) -> Callable[[str], str]:
    return _text(head).__add__


#: Direct forms by function name: from the literal arguments, a function of a str subject
#: (None: the registered function serves these arguments). Each gives what the registered
#: function gives for a str; ``tests/.../test_compile.py`` compares them.
_DIRECT: Mapping[str, Callable[..., Callable[[str], Any] | None]] = {
    "toUpper": _constant_form(str.upper),
    "toLower": _constant_form(str.lower),
    "trim": _constant_form(lambda s: s.strip(_JAVA_BLANKS)),
    "length": _constant_form(len),
    "isEmpty": _constant_form(lambda s: not s.strip()),
    "substringBefore": _around(last=False, after=False),
    "substringAfter": _around(last=False, after=True),
    "substringBeforeLast": _around(last=True, after=False),
    "substringAfterLast": _around(last=True, after=True),
    "startsWith": _with_text(str.startswith),
    "endsWith": _with_text(str.endswith),
    "contains": _with_text(str.__contains__),
    "equals": _equals,
    "equalsIgnoreCase": _equals_ignore_case,
    "append": _append,
    "prepend": _prepend,
    "plus": _arithmetic("+"),
    "minus": _arithmetic("-"),
    "multiply": _arithmetic("*"),
    "mod": _arithmetic("%"),
}


def _direct(name: str, args: Sequence[Value]) -> Callable[[str], Any] | None:
    make = _DIRECT.get(name)
    if make is None:
        return None
    try:
        return make(*args)
    except TypeError:  # an argument count the direct form does not take
        return None
