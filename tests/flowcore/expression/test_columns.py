"""Tests for Expression Language over batches: each FlowFile's value is the per-FlowFile one."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.errors import ExpressionEvaluationError
from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_boolean_column, evaluate_column
from flowcore.flowfile import Attributes
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import IntColumn, column_of

EXPRESSIONS = [
    "${fragment.index:mod(8)}",
    "${fragment.index:mod(-3):plus(2):multiply(5)}",
    "${fragment.index:minus(4):divide(3)}",
    "${fragment.index:gt(3)}",
    "${fragment.index:mod(2):equals(0):not()}",
    "${fileSize:le(3)}",
    "${filename:substringBefore('.'):toUpper()}",
    "${group}-${fragment.index}",
    "${status:startsWith('5')}",
    "${status:isEmpty()}",
    "${kind}",
    "plain",
    "${uuid:substring(0, 4)}",
    "${missing:isNull()}",
    "${status:toNumber():plus(1)}",
]


def _batch(indices: list[int], statuses: list[str | None], filename_varies: bool) -> FlowFileBatch:
    count = len(indices)
    steps = np.arange(count)
    columns = {"fragment.index": IntColumn(np.array(indices)), "status": column_of(statuses)}
    shared = {"kind": "log", "path": "./", "group": "g"}
    if filename_varies:
        columns["filename"] = column_of([f"f{i % 3}.log" for i in range(count)])
    else:
        shared["filename"] = "data.log"
    return FlowFileBatch(
        ids=steps + 10,
        uuid_key="0123abcd-0000-4000-8000-0000",
        uuid_numbers=steps + 5,
        attributes=Attributes(shared),
        uuid_named=(),
        resource_claim=None,
        offsets=np.zeros(count),
        sizes=np.array([i % 7 for i in range(count)]),
        entry_date=1,
        lineage_start_date=1,
        lineage_start_indices=steps,
        columns=columns,
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-20, 1 << 40), min_size=1, max_size=40),
    st.data(),
    st.sampled_from(EXPRESSIONS),
    st.booleans(),
)
def test_a_column_holds_each_flowfiles_own_value(
    indices: list[int], data: st.DataObject, text: str, filename_varies: bool
) -> None:
    """Whatever the path (once, numpy, per distinct value, per FlowFile), the values agree."""
    statuses = data.draw(
        st.lists(
            st.sampled_from([None, "200", "500", "404", ""]),
            min_size=len(indices),
            max_size=len(indices),
        )
    )
    batch = _batch(indices, statuses, filename_varies)
    expression = compile_expression(text)
    flowfiles = batch.flowfiles()
    assert evaluate_column(expression, batch).values() == [
        expression.evaluate(f) for f in flowfiles
    ]
    assert evaluate_boolean_column(expression, batch).tolist() == [
        expression.evaluate_boolean(f) for f in flowfiles
    ]


def test_an_error_of_any_flowfile_is_raised() -> None:
    """mod(0) fails as the per-FlowFile evaluation fails: the caller takes the slow path."""
    batch = _batch([1, 2], ["200", "200"], False)
    with pytest.raises(ExpressionEvaluationError):
        evaluate_column(compile_expression("${fragment.index:mod(0)}"), batch)


def test_volatile_functions_are_evaluated_for_each_flowfile() -> None:
    """now() and UUID() are never evaluated once for many FlowFiles."""
    batch = _batch(list(range(50)), ["200"] * 50, False)
    values = evaluate_column(compile_expression("${UUID()}"), batch).values()
    assert len(set(values)) == 50


STRING_EXPRESSIONS = [
    "${filename:substringBefore('.'):toUpper()}",
    "${filename:substringAfterLast('.'):toLower():equals('log')}",
    "${filename:trim():substring(1, 3):prepend('<'):append('>')}",
    "${filename:substringBeforeLast('.'):length():mod(3)}",
    "${filename:startsWith('.')}",
    "${filename:endsWith('.'):not()}",
    "${filename:contains('ß')}",
    "${filename:equalsIgnoreCase('A.B')}",
    "${filename:isEmpty()}",
    "${filename:substringAfter('.'):substring(1)}",
    "${filename:substringBefore('.')}.bak",
    "${filename:length()}:${filename:toUpper()}",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.text(st.sampled_from(list("aAb.ß İΣ\x00\t😀")), max_size=7)),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from(STRING_EXPRESSIONS),
)
def test_string_chains_over_distinct_values_match_the_per_flowfile_path(
    filenames: list[str | None], text: str
) -> None:
    """Over mostly distinct, unicode, empty, dotted or absent filenames, the values agree."""
    batch = _batch(list(range(len(filenames))), ["200"] * len(filenames), False)
    shared = {k: v for k, v in batch.attributes.items() if k != "filename"}
    batch = attrs.evolve(
        batch,
        attributes=Attributes(shared),
        columns={**batch.columns, "filename": column_of(filenames)},
    )
    expression = compile_expression(text)
    flowfiles = batch.flowfiles()
    assert evaluate_column(expression, batch).values() == [
        expression.evaluate(f) for f in flowfiles
    ]
    assert evaluate_boolean_column(expression, batch).tolist() == [
        expression.evaluate_boolean(f) for f in flowfiles
    ]
