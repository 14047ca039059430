"""Tests for the column fast path: child chains read from a pyarrow Table as columns."""

from __future__ import annotations

import pyarrow as pa
import pytest

from flowcore.record_path import RecordPathEvaluationError, child_chain, evaluate_column, parse


@pytest.mark.parametrize(
    ("path", "chain"),
    [
        ("/a", ("a",)),
        ("/a/b/c", ("a", "b", "c")),
        ("/'x y'/z", ("x y", "z")),
        ("/", None),
        ("/a/*", None),
        ("//a", None),
        ("/a[0]", None),
        ("/a[. = 1]", None),
        ("./a", None),
        ("concat(/a)", None),
        ("/a/..", None),
    ],
)
def test_child_chain(path: str, chain: tuple[str, ...] | None) -> None:
    """Only absolute chains of named children take the column path."""
    assert child_chain(parse(path)) == chain


def _table() -> pa.Table:
    return pa.table(
        {
            "name": ["John", None, "Jane"],
            "account": [{"id": 1, "address": {"city": "Boston"}}, None, {"id": 3, "address": None}],
        }
    )


def test_evaluate_column_top_and_nested() -> None:
    """A chain reads the top column or a nested struct field, nulls kept per row."""
    table = _table()
    assert evaluate_column(parse("/name"), table).to_pylist() == ["John", None, "Jane"]
    assert evaluate_column(parse("/account/id"), table).to_pylist() == [1, None, 3]
    assert evaluate_column(parse("/account/address/city"), table).to_pylist() == [
        "Boston",
        None,
        None,
    ]


def test_evaluate_column_agrees_with_the_record_path() -> None:
    """The column equals the per-record evaluation of the same path on each row."""
    from flowcore.record_path import compile_record_path

    table = _table()
    path = compile_record_path("/account/address/city")
    per_row = [next(iter(path.evaluate(row)), None) for row in table.to_pylist()]
    assert evaluate_column(path.tree, table).to_pylist() == [
        fv.value if fv else None for fv in per_row
    ]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/missing", "no column 'missing'"),
        ("/name/x", "/name has no child field 'x'"),
        ("/account/nope", "/account has no child field 'nope'"),
        ("/account[0]", "plain child chain"),
    ],
)
def test_evaluate_column_errors(path: str, message: str) -> None:
    """A path the table cannot answer says which field is missing."""
    with pytest.raises(RecordPathEvaluationError, match=message):
        evaluate_column(parse(path), _table())
