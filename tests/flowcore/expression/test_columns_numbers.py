"""Tests for whole-number chains with numpy: Java long semantics, as per FlowFile."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import ExpressionEvaluationError
from flowcore.expression import compile_expression
from flowcore.expression._columns_numbers import numeric_calls
from flowcore.expression._nodes import Chain

_LONG = st.integers(-(1 << 63), (1 << 63) - 1)
_CALLS = st.sampled_from(["plus", "minus", "multiply", "mod", "divide", "gt", "le", "equals"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_LONG, min_size=1, max_size=10),
    st.lists(st.tuples(_CALLS, st.one_of(_LONG, st.integers(-9, 9))), min_size=1, max_size=3),
    st.booleans(),
)
def test_numpy_computes_what_each_flowfile_would(
    numbers: list[int], calls: list[tuple[str, int]], negate: bool
) -> None:
    """Wrapping, the remainder's sign and comparisons match the per-FlowFile evaluation."""
    text = "${n" + "".join(f":{name}({arg})" for name, arg in calls) + (":not()" if negate else "")
    text += "}"
    chain = compile_expression(text).template.parts[0]
    assert isinstance(chain, Chain)
    expression = compile_expression(text)
    try:
        expected = [expression.evaluate_value({"n": str(n)}) for n in numbers]
    except ExpressionEvaluationError:  # raised, or left to the exact path that raises it
        try:
            left = numeric_calls(np.array(numbers, dtype=np.int64), chain.calls)
        except ExpressionEvaluationError:
            return
        assert left is None
        return
    computed = numeric_calls(np.array(numbers, dtype=np.int64), chain.calls)
    if computed is not None:  # None: left to the exact path
        assert computed.tolist() == expected
