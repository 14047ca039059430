"""Tests for column_way: whether an expression has a column form, from its text alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import FlowcoreError
from flowcore.expression import column_way, compile_expression
from flowcore.expression._columns import _text_vectorised, _typed_vectorised
from flowcore.flowfile import Attributes
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from tests.flowcore.expression.test_columns_typed import typed_chains

COLUMN_FORMS = [
    "${amount:toDecimal():gt(250)}",
    "${size:toNumber():multiply(2)}",
    "${amount:isEmpty():not():and(${size:lt(3)})}",
    "${filename:substringBefore('.'):toUpper()}",
    "${filename:length():mod(4)}",
    "${amount:toDecimal():multiply(1.1)} EUR",
    "plain text",
    "${literal('x'):toUpper()}",
    "${fileSize:gt(10)}",
]
PER_FLOWFILE = {
    "${amount:format('yyyy')}": "format() has no column form",
    "${now():toNumber()}": "now() changes from one call to the next",
    "${UUID()}": "UUID() changes from one call to the next",
    "${anyAttribute('a', 'b'):equals('x')}": "anyAttribute() reads each FlowFile's attributes",
    "${amount:gt(${limit})}": "gt() with an expression argument has no column form",
    "${amount:toNumber():toUpper()}": "toUpper() of a number has no column form",
    "${amount:replaceAll('a', 'b')}": "replaceAll() has no column form",
    "${amount:gt(1):and(${b:hash('MD5')})}": "hash() has no column form",
    "${literal(1):plus(${a})}": "literal() as a subject has no column form",
    "${amount:substring(0, 'NaN')}": "substring() with these arguments has no column form",
}


@pytest.mark.parametrize("text", COLUMN_FORMS)
def test_a_column_form_is_not_named(text: str) -> None:
    """Typed, string and numpy chains, and what reads no attribute, have a column form."""
    assert column_way(compile_expression(text)) is None


@pytest.mark.parametrize(("text", "why"), PER_FLOWFILE.items())
def test_what_has_no_column_form_is_named_with_its_function(text: str, why: str) -> None:
    """The reason names the first function that keeps the expression per FlowFile."""
    found = column_way(compile_expression(text))
    assert found is not None
    assert found.startswith(why)


def _batch(count: int) -> FlowFileBatch:
    steps = np.arange(count)
    return FlowFileBatch(
        ids=steps,
        uuid_key="0123abcd-0000-4000-8000-0000",
        uuid_numbers=steps,
        attributes=Attributes({"path": "./"}),
        uuid_named=(),
        resource_claim=None,
        offsets=np.zeros(count),
        sizes=steps,
        entry_date=1,
        lineage_start_date=1,
        lineage_start_indices=steps,
        columns={
            "amount": column_of([f"{i * 7.25:.2f}" for i in range(count)]),
            "other": column_of([f"x{i}" for i in range(count)]),
            "filename": column_of([f"f{i}.log" for i in range(count)]),
            "size": column_of([str(i * 3) for i in range(count)]),
            "b": column_of([f"b{i}" for i in range(count)]),
            "limit": column_of([str(i) for i in range(count)]),
            "a": column_of([str(-i) for i in range(count)]),
        },
    )


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        typed_chains(),
        st.sampled_from([*COLUMN_FORMS[:6], *PER_FLOWFILE]),
        typed_chains().map(lambda t: t[:-1] + ":toString()}"),
    )
)
def test_the_verdict_is_what_a_batch_of_distinct_values_does(text: str) -> None:
    """Over distinct, well-formed values, a column way computes it exactly when none is named."""
    expression = compile_expression(text)
    batch = _batch(6)
    try:
        computed = _text_vectorised(
            expression, batch, None, None, boolean=False
        ) or _typed_vectorised(expression, batch, boolean=False)
    except FlowcoreError:  # an error is the per-FlowFile path's to report
        computed = None
    if column_way(expression) is None:
        assert computed is not None or _steps_aside_for_data(text)
    else:
        assert computed is None


def _steps_aside_for_data(text: str) -> bool:
    """Whether a column way leaves *text* to the exact way for its arguments: a whole-number
    division by 0 or -1, a whole number past a long (the per-FlowFile error or wrap)."""
    return any(
        arg in text
        for arg in (
            "divide(0)",
            "mod(0)",
            "divide(-1)",
            "mod(-1)",
            "divide(-9223372036854775808)",
            "mod(-9223372036854775808)",
            "99999999999999999999",
        )
    )
