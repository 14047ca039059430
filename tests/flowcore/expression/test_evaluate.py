"""Property-based tests: evaluating valid expressions never raises a non-flowcore error."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flowcore.errors import FlowcoreError
from flowcore.expression import FUNCTION_NAMES, compile_expression
from flowcore.expression._functions import FUNCTIONS

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
