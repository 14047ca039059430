"""Tests for typed chains over columns: numbers, booleans and nulls, each the per-FlowFile value."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flowcore.errors import FlowcoreError
from flowcore.expression import compile_expression
from flowcore.expression._columns import _typed_vectorised, evaluate_boolean_column, evaluate_column
from flowcore.flowfile import Attributes
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import Column, IntColumn, TextColumn, column_of
from tests.flowcore.expression.test_columns_parse import ODD, numberish

_NUMBERS = ["0", "1", "-1", "3", "250", "2.5", "-0.0", "0.0", "'3'", "'x'", "1e3", "0.1", "'NaN'"]
_NUMBERS += ["9223372036854775807", "-9223372036854775808", "99999999999999999999", "true"]
_VALUES = ["250", "'250'", "'250.0'", "2.5", "true", "'true'", "'false'", "'NaN'", "'1.0E10'"]
_VALUES += ["'-0.0'", "0", "'0'", "'-0'", "'Infinity'", "''", "-0.0"]
_CONDITIONS = [
    "true",
    "false",
    "'TRUE '",
    "1",
    "${amount:gt(1)}",
    "${other:isEmpty()}",
    "${other:toNumber():lt(5)}",
    "${amount:toDecimal():le(2.5):not()}",
    "${missing:isNull()}",
    "${fileSize:ge(2)}",
]
_STEPS = [
    "toNumber()",
    "toDecimal()",
    "plus({n})",
    "minus({n})",
    "multiply({n})",
    "divide({n})",
    "mod({n})",
    "gt({n})",
    "ge({n})",
    "lt({n})",
    "le({n})",
    "equals({v})",
    "isEmpty()",
    "isNull()",
    "notNull()",
    "not()",
    "and({b})",
    "or({b})",
]
#: String functions a chain may start with before its numbers.
_TEXT_FIRST = ["trim()", "substringBefore('x')", "length()", "startsWith('1')"]


@st.composite
def typed_chains(draw: st.DrawFn, subject: str = "amount") -> str:
    """A chain of number, comparison, null and boolean functions, perhaps after a string one."""

    def call(template: str) -> str:
        return template.format(
            n=draw(st.sampled_from(_NUMBERS)),
            v=draw(st.sampled_from(_VALUES)),
            b=draw(st.sampled_from(_CONDITIONS)),
        )

    steps = [call(draw(st.sampled_from(_STEPS))) for _ in range(draw(st.integers(0, 4)))]
    if draw(st.booleans()):
        steps.insert(0, draw(st.sampled_from(_TEXT_FIRST)))
    return "${" + subject + "".join(f":{step}" for step in steps) + "}"


def _batch(amounts: Column, others: Column) -> FlowFileBatch:
    count = len(amounts)
    steps = np.arange(count)
    return FlowFileBatch(
        ids=steps,
        uuid_key="0123abcd-0000-4000-8000-0000",
        uuid_numbers=steps,
        attributes=Attributes({"path": "./"}),
        uuid_named=(),
        resource_claim=None,
        offsets=np.zeros(count),
        sizes=steps % 4,
        entry_date=1,
        lineage_start_date=1,
        lineage_start_indices=steps,
        columns={"amount": amounts, "other": others},
    )


@st.composite
def columns(draw: st.DrawFn, size: int) -> Column:
    """Numeric-looking or not, repeated or absent values; or whole numbers in an IntColumn."""
    if draw(st.integers(0, 4)) == 0:
        return IntColumn(
            np.array(
                draw(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=size, max_size=size))
            )
        )
    dictionary = draw(st.lists(st.one_of(st.none(), numberish), min_size=1, max_size=size))
    codes = draw(st.lists(st.integers(0, len(dictionary) - 1), min_size=size, max_size=size))
    return TextColumn(np.array(codes), tuple(dictionary))


def _assert_per_flowfile(text: str, batch: FlowFileBatch) -> None:
    """The batch's values and truths are the per-FlowFile ones; it fails when one fails."""
    expression = compile_expression(text)
    flowfiles = batch.flowfiles()
    try:
        expected = [expression.evaluate(f) for f in flowfiles]
        truths = [expression.evaluate_boolean(f) for f in flowfiles]
    except FlowcoreError:  # any error sends the batch one by one, where each is reported
        with pytest.raises(FlowcoreError):
            evaluate_column(expression, batch)
        return
    assert evaluate_column(expression, batch).values() == expected
    assert evaluate_boolean_column(expression, batch).tolist() == truths


@settings(max_examples=400, deadline=None)
@given(typed_chains(), st.integers(1, 12).flatmap(lambda n: st.tuples(columns(n), columns(n))))
@example(
    "${amount:toDecimal():gt(250)}",
    (column_of(["250.5", "250", "1e3", " 12", None]), column_of(["a"] * 5)),
)
@example(
    "${amount:toNumber():multiply(2)}",
    (column_of(["0x1F", "-0", "1.9", "NaN", "1e300"]), column_of(["a"] * 5)),
)
@example(
    "${amount:toDecimal():divide(0)}",
    (column_of(["-0.0", "0", "-1", "NaN", ""]), column_of(["a"] * 5)),
)
@example("${amount:toDecimal():mod(2)}", (column_of(["Infinity", "1"]), column_of(["a"] * 2)))
@example("${amount:toNumber():divide(0)}", (column_of(["1", "x"]), column_of(["a"] * 2)))
@example(
    "${amount:plus(1):equals('1.0E10')}",
    (column_of(["9999999999.0", "9999999999"]), column_of(["a"] * 2)),
)
def test_a_typed_chain_gives_each_flowfile_its_own_value(
    text: str, pair: tuple[Column, Column]
) -> None:
    """Numeric-looking, odd, absent and repeated values: every FlowFile's value and truth."""
    _assert_per_flowfile(text, _batch(*pair))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(typed_chains(), typed_chains("other"), st.sampled_from(["-", " EUR", "#{p}"])),
        min_size=2,
        max_size=3,
    ),
    st.integers(1, 8).flatmap(lambda n: st.tuples(columns(n), columns(n))),
)
def test_text_around_typed_chains_is_their_concatenation(
    parts: list[str], pair: tuple[Column, Column]
) -> None:
    """Chains over one attribute or several, with literal text: the per-FlowFile text."""
    _assert_per_flowfile("".join(parts), _batch(*pair))


def test_distinct_amounts_take_the_typed_way() -> None:
    """The issue's expression over distinct decimal texts is computed over the column."""
    amounts = column_of([f"{i / 100:.2f}" for i in range(50_000)] + ODD[:5])
    batch = _batch(amounts, column_of(["a"] * len(amounts)))
    expression = compile_expression("${amount:toDecimal():gt(250)}")
    mask = _typed_vectorised(expression, batch, boolean=True)
    assert mask is not None
    assert mask.tolist() == [expression.evaluate_boolean(f) for f in batch.flowfiles()]


def test_an_absent_attribute_is_the_environment_variable_of_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As the per-FlowFile lookup does, an absent ``amount`` reads $amount from the environment."""
    monkeypatch.setenv("amount", "300.5")
    batch = _batch(column_of(["1", None, "x"]), column_of(["a", None, "b"]))
    for text in ("${amount:toDecimal():gt(250)}", "${other:isNull():and(${amount:lt(2)})}"):
        _assert_per_flowfile(text, batch)
