"""Tests for expressions compiled to closures: values and errors are the tree walk's."""

from __future__ import annotations

import math
import pickle
import random
from collections.abc import Callable

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from flowcore.errors import ExpressionSyntaxError, FlowcoreError
from flowcore.expression import EvaluationContext, compile_expression
from flowcore.expression._compile import _DIRECT, _GENERAL, compile_text, compile_value
from flowcore.expression._functions import FUNCTIONS
from flowcore.expression._nodes import Chain, ParameterRef, Template
from flowcore.expression._values import Value, check_length, render
from flowcore.expression._walk import _DATA_ERRORS, evaluate_chain
from flowcore.flowfile import FlowFile

NAMES = ["a", "b", "n", "fileSize", "missing"]
_VALUES = st.one_of(
    st.text(st.sampled_from(list("ab.-_ ßİΣ\x00\t01")), max_size=8),
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(["true", " TRUE ", "", " ", "0x1F", "1e400", "NaN", "12", "007", "٣"]),
)
_LITERALS = st.one_of(
    st.integers(-5, 30).map(str),
    st.sampled_from(["'a'", "'.'", "''", "'ß'", "true", "1.5", "'1'", "0", "-3", "'[a-z]+'"]),
)
#: Functions whose value changes from call to call, beyond a seeded ``random``.
_UNREPEATABLE = {"now", "UUID", "nextInt"}


@st.composite
def expressions(draw: st.DrawFn, depth: int = 0) -> str:
    """A chain over a name or a multi-attribute subject, its arguments literal or nested."""
    if draw(st.integers(0, 9)) == 0:
        subject = draw(st.sampled_from(["anyAttribute('a', 'b')", "allMatchingAttributes('a|n')"]))
    else:
        subject = draw(st.sampled_from(NAMES))
    names = sorted(
        n for n, s in FUNCTIONS.items() if s.kind in {"chain", "reduce"} and n not in _UNREPEATABLE
    )
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(names))
        spec = FUNCTIONS[name]
        high = spec.max_args if spec.max_args is not None else spec.min_args + 2
        args = []
        for _ in range(draw(st.integers(spec.min_args, high))):
            nested = depth < 2 and draw(st.integers(0, 5)) == 0
            args.append(draw(expressions(depth + 1)) if nested else draw(_LITERALS))
        calls.append(f":{name}({', '.join(args)})")
    return "${" + subject + "".join(calls) + "}"


@st.composite
def templates(draw: st.DrawFn) -> str:
    """Property text: one expression, or text, parameters and expressions side by side."""
    if draw(st.booleans()):
        return draw(expressions())
    parts = draw(st.lists(st.one_of(expressions(), st.just("-x-"), st.just("#{p}")), max_size=3))
    return "".join(parts)


def _walked_text(template: Template, ctx: EvaluationContext) -> str:
    """The property text's value by walking the tree, as ``evaluate_in`` did before compiling."""
    parts = template.parts
    if len(parts) == 1 and isinstance(parts[0], str):
        return parts[0]
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, ParameterRef):
            out.append(ctx.parameters.get(part.name) or "")
        else:
            out.append(render(evaluate_chain(part, ctx)))
    if len(out) > 1:
        check_length(sum(map(len, out)), "the property text's concatenation")
    return "".join(out)


def _outcome(evaluate: Callable[[], Value]) -> tuple[str, Value]:
    """What an evaluation gives: its value, or its error's type and message."""
    random.seed(7)  # repeat() and math('random') draw the same numbers each time
    try:
        value = evaluate()
    except FlowcoreError as error:
        return type(error).__name__, str(error)
    if isinstance(value, float) and math.isnan(value):  # NaN is never equal to itself
        return "NaN", "nan"
    return "value", value


def _contexts(attributes: dict[str, str]) -> list[EvaluationContext]:
    flowfile = FlowFile.create(7, 1000, attributes)
    return [
        EvaluationContext(attributes=attributes),
        EvaluationContext(attributes=flowfile.attributes, flowfile=flowfile, clock=lambda: 5),
        EvaluationContext(attributes=attributes, variables={"b": "var"}, parameters={"p": "param"}),
    ]


@settings(max_examples=400, deadline=None)
@given(templates(), st.dictionaries(st.sampled_from(NAMES[:3]), _VALUES))
@example("${a:substringBefore('.'):toUpper()}", {"a": "ß.x"})
@example("${n:mod(-3)}", {"n": "0017"})
@example("${n:plus(9223372036854775807)}", {"n": "12"})
@example("${n:mod(0)}", {"n": "12"})
@example("${fileSize:plus(1)}", {"fileSize": "7"})
@example("${a:multiply(0)}", {"a": "1e400"})  # infinity times 0: NaN on both ways
@example("${a:append('x')}#{p}${b}", {"a": "1"})
def test_the_compiled_evaluation_is_the_tree_walk(text: str, attributes: dict[str, str]) -> None:
    """Over random chains, subjects and contexts: the same values and the same errors."""
    try:
        template = compile_expression(text).template
    except ExpressionSyntaxError:  # a reducer after a single subject, a wrong type ...
        assume(False)
        return
    text_program = compile_text(template)
    value_program = compile_value(template)
    for ctx in _contexts(attributes):
        assert _outcome(lambda c=ctx: text_program(c)) == _outcome(
            lambda c=ctx: _walked_text(template, c)
        )
        if value_program is not None:
            chain = template.parts[0]
            assert isinstance(chain, Chain)
            assert _outcome(lambda c=ctx: value_program(c)) == _outcome(
                lambda c=ctx, walked=chain: evaluate_chain(walked, c)
            )


_DIRECT_ARGS = ["", ".", "..", "ß", "a", "1", "0", "-3", "7", "9223372036854775807", "-1"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(_DIRECT)),
    st.sampled_from(_DIRECT_ARGS).map(lambda s: int(s) if s.lstrip("-").isdigit() else s),
    _VALUES,
)
def test_each_direct_form_is_its_registered_function(name: str, arg: Value, subject: str) -> None:
    """For a string subject, a direct form gives what the registered function gives."""
    spec = FUNCTIONS[name]
    args = () if spec.max_args == 0 else (arg,)
    direct = _DIRECT[name](*args)
    if direct is None:
        return  # the registered function serves these arguments
    try:
        expected: tuple[str, Value] = ("value", spec.impl(None, subject, *args))
    except (FlowcoreError, *_DATA_ERRORS) as error:  # the data errors _invoke wraps
        expected = ("error", type(error).__name__)
    result = direct(subject)
    if result is not _GENERAL:
        assert expected == ("value", result)


def test_an_unpickled_expression_is_compiled_again() -> None:
    """Pickling leaves the closures behind; the copy compiles its own and evaluates the same."""
    expression = compile_expression("${a:substringBefore('.'):toUpper()}-${n:mod(8)}")
    copy = pickle.loads(pickle.dumps(expression))
    assert copy == expression
    assert copy.evaluate({"a": "x.y", "n": "13"}) == "X-5"


def test_a_nested_argument_is_evaluated_each_time() -> None:
    """Arguments that are expressions are evaluated per evaluation, not bound at compile time."""
    expression = compile_expression("${a:append(${b})}")
    assert expression.evaluate({"a": "x", "b": "1"}) == "x1"
    assert expression.evaluate({"a": "x", "b": "2"}) == "x2"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${a:isEmpty():and(${b:equals('1')})}", "true"),
        ("${a:isEmpty():ifElse('yes', ${b:append('!')})}", "yes"),
        ("${a:notNull():or(${missing:toNumber():plus(1):equals(0)})}", "true"),
    ],
)
def test_lazy_functions_take_thunks(text: str, expected: str) -> None:
    """and, or and ifElse evaluate their arguments only when they need them."""
    assert compile_expression(text).evaluate({"a": " ", "b": "1"}) == expected
