"""Property-based tests: evaluating valid expressions never raises a non-flowcore error."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flowcore.errors import ExpressionLimitError, FlowcoreError, RegexTimeoutError
from flowcore.expression import FUNCTION_NAMES, compile_expression
from flowcore.expression._functions import FUNCTIONS
from flowcore.expression._values import max_length, set_max_length
from flowcore.patterns import set_time_limit, time_limit

ATTRIBUTE_NAMES = ["a", "b", "n", "filename", "missing"]
attribute_maps = st.dictionaries(
    st.sampled_from(ATTRIBUTE_NAMES[:-1]),
    st.one_of(
        st.text(max_size=12),
        st.integers(-(10**12), 10**12).map(str),
        st.floats(allow_nan=True).map(str),
        st.sampled_from(["true", "false", "", " ", "0x1F", "1e400"]),
    ),
)

literal_args = st.one_of(
    st.integers(-5, 30).map(str),
    st.sampled_from(
        ["'a'", "'.'", "'[a-z]+'", "''", "'yyyy-MM-dd'", "true", "1.5", "'('", "'GMT'"]
    ),
    st.sampled_from([f"${{{n}}}" for n in ATTRIBUTE_NAMES]),
)


@st.composite
def chains(draw: st.DrawFn) -> str:
    subject = draw(st.sampled_from(ATTRIBUTE_NAMES))
    calls = []
    chain_functions = sorted(n for n, s in FUNCTIONS.items() if s.kind == "chain" and n != "repeat")
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(chain_functions))
        spec = FUNCTIONS[name]
        high = spec.max_args if spec.max_args is not None else spec.min_args + 2
        count = draw(st.integers(spec.min_args, high))
        args = ", ".join(draw(literal_args) for _ in range(count))
        calls.append(f":{name}({args})")
    return "${" + subject + "".join(calls) + "}"


@given(chains(), attribute_maps)
def test_valid_expressions_only_raise_flowcore_errors(
    text: str, attributes: dict[str, str]
) -> None:
    """Any valid chain evaluated against any attributes returns a str or a flowcore error."""
    expression = compile_expression(text)
    try:
        result = expression.evaluate(attributes)
    except FlowcoreError:
        return
    assert isinstance(result, str)


def test_every_registered_function_is_reachable_by_name() -> None:
    """The public name set matches the registry."""
    assert set(FUNCTIONS) == FUNCTION_NAMES
    assert {"equals", "format", "UUID", "anyAttribute", "join"} <= FUNCTION_NAMES


def test_compiled_expressions_are_picklable_and_cached() -> None:
    """Compiling twice returns the cached value; it survives pickling (Spark ships it)."""
    import pickle

    first = compile_expression("${a:toUpper()}-${b:plus(1)}")
    assert compile_expression("${a:toUpper()}-${b:plus(1)}") is first
    copy = pickle.loads(pickle.dumps(first))
    assert copy.evaluate({"a": "x", "b": "1"}) == "X-2"


#: Values a hostile tester puts in attributes: each once broke an evaluation with a Python error.
HOSTILE_VALUES = [
    "[" * 5000,  # jsonPath: RecursionError in json.loads
    "${a:evaluateELString()}",  # evaluateELString of itself, forever
    "${b:evaluateELString()}",
    "9" * 5000,  # int() refuses over 4,300 digits
    "9223372036854775807",  # a date in year 292,278,994
    "-9223372036854775808",
    "1e308",
]


@settings(max_examples=300)
@example("${a:jsonPath('$.x')}", {"a": "[" * 5000})
@example("${a:evaluateELString()}", {"a": "${a:evaluateELString()}"})
@example("${a:toNumber()}", {"a": "9" * 5000})
@example("${a:toDate():format('yyyy')}", {"a": "9223372036854775807"})
@given(
    chains(),
    st.dictionaries(st.sampled_from(["a", "b", "n", "filename"]), st.sampled_from(HOSTILE_VALUES)),
)
def test_hostile_attribute_values_only_raise_flowcore_errors(
    text: str, attributes: dict[str, str]
) -> None:
    """Deep JSON, self-evaluating text, huge digit strings and far dates never escape as Python
    errors (RecursionError, OverflowError ...): each is an evaluation error or a value."""
    message = ""
    try:
        result = compile_expression(text).evaluate(attributes)
    except FlowcoreError as error:
        message = str(error)
        result = ""
    assert isinstance(result, str)
    assert len(message) < 1000  # a long subject is cut short in the message


def test_limit_errors_name_the_expression_that_hit_them() -> None:
    """A regex past its time limit or a result past the length limit names the property text."""
    before_time, before_length = time_limit(), max_length()
    set_time_limit(0.1)
    set_max_length(1000)
    try:
        text = "${filename:matches('(a|aa)+$')}"
        with pytest.raises(RegexTimeoutError) as timed_out:
            compile_expression(text).evaluate({"filename": "a" * 40 + "!"})
        assert timed_out.value.expression == text
        assert str(timed_out.value).startswith(f"in {text!r}: ")
        concatenated = "${a}-${a}"
        with pytest.raises(ExpressionLimitError, match="concatenation") as too_long:
            compile_expression(concatenated).evaluate({"a": "x" * 600})
        assert too_long.value.expression == concatenated
    finally:
        set_time_limit(before_time)
        set_max_length(before_length)
