"""Driver rows as Arrow batches (processors/sql/arrow_rows.py): columns, types, ragged rows,
later chunks by rows."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import pyarrow as pa
import pytest

from processors.sql import arrow_rows
from processors.sql.arrow_rows import arrow_batches

#: (name, PostgreSQL type OID) as a DB-API description gives them
_DESCRIPTION = [("id", 20), ("name", 25), ("at", 1114)]


def test_each_fetch_is_a_batch_of_its_columns():
    """Rows of each fetch become one batch, column by column, typed from the description;
    later batches keep the first one's schema."""
    at = dt.datetime(2024, 2, 29, 12, 30, tzinfo=dt.UTC)
    chunks = [[(1, "a", at), (2, None, None)], [(3, "c", at.replace(tzinfo=None))]]
    batches = list(arrow_batches(_DESCRIPTION, iter(chunks)))
    assert [b.num_rows for b in batches] == [2, 1]
    assert batches[0].schema == batches[1].schema
    assert batches[0].schema.field("at").type == pa.timestamp("us")
    table = pa.Table.from_batches(batches)
    naive = at.replace(tzinfo=None)
    assert table.to_pylist() == [
        {"id": 1, "name": "a", "at": naive},
        {"id": 2, "name": None, "at": None},
        {"id": 3, "name": "c", "at": naive},
    ]


def test_a_row_of_another_width_is_an_error_naming_both():
    """A row whose width is not the description's is a ValueError naming the widths."""
    with pytest.raises(ValueError, match=r"rows of \[2, 3\] values for 3 columns"):
        list(arrow_batches(_DESCRIPTION, iter([[(1, "a", None), (2, "b")]])))


def _column_path(monkeypatch, description, chunks) -> list[pa.RecordBatch]:
    """The batches with every chunk built column by column."""
    monkeypatch.setattr(arrow_rows, "_rowwise", lambda chunk, schema: None)
    try:
        return list(arrow_batches(description, iter(chunks)))
    finally:
        monkeypatch.undo()


def test_later_chunks_by_rows_equal_the_column_path(monkeypatch):
    """Chunks after the first, converted row by row into a struct, are the batches the column
    path builds: every type it takes, NULLs, a repeated column name."""
    description = [
        ("i8", 20),
        ("i2", 21),
        ("i4", 23),
        ("b", 16),
        ("f8", 701),
        ("f4", 700),
        ("t", 25),
        ("by", 17),
        ("n", 1700),
        ("d", 1082),
        ("tm", 1083),
        ("t", 1043),
    ]
    row = (
        2**62,
        -3,
        7,
        True,
        0.1,
        1.5,
        "é",
        b"\x00",
        decimal.Decimal("1.25"),
        dt.date(2024, 2, 29),
        dt.time(12, 30, 1, 5),
        "again",
    )
    chunks = [[row, (None,) * 12], [(None,) * 12, row], [row]]
    made: list[object] = []
    rowwise = arrow_rows._rowwise
    monkeypatch.setattr(arrow_rows, "_rowwise", lambda *a: made.append(rowwise(*a)) or made[-1])
    by_rows = list(arrow_batches(description, iter(chunks)))
    assert len(made) == 2
    assert all(batch is not None for batch in made)
    assert by_rows == _column_path(monkeypatch, description, chunks)
    assert by_rows[2].column(8).type == pa.decimal128(38, 2)


def test_a_value_the_rows_cannot_take_goes_by_columns(monkeypatch):
    """A later chunk whose text column holds another value (a UUID) is built by columns, its
    text written; the chunks after it too."""
    description = [("id", 20), ("name", 25)]
    value = uuid.UUID(int=1)
    chunks = [[(1, "a")], [(2, value)], [(3, "c")]]
    batches = list(arrow_batches(description, iter(chunks)))
    assert pa.Table.from_batches(batches).column("name").to_pylist() == ["a", str(value), "c"]
    assert batches == _column_path(monkeypatch, description, chunks)


def test_a_later_row_of_another_width_is_an_error_naming_both():
    """A ragged row in a later chunk is the same ValueError as in the first."""
    with pytest.raises(ValueError, match=r"rows of \[2, 3\] values for 3 columns"):
        list(arrow_batches(_DESCRIPTION, iter([[(1, "a", None)], [(2, "b"), (3, "c", None)]])))


def test_postgres_arrays_are_lists_of_their_element_type() -> None:
    """An array column (its OID) is a list of the element's type; a multidimensional one
    lists of lists; uuid elements their text; with no rows, a list of strings."""
    import uuid

    import pyarrow as pa

    from processors.sql.arrow_rows import arrow_batches, empty_schema

    description = [("ia", 1007), ("grid", 1007), ("ua", 2951), ("na", 1231)]
    one = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    rows = [([1, None, 3], [[1, 2], [3, 4]], [one], None), (None, None, None, None)]
    (batch,) = arrow_batches(description, iter([rows]))
    assert batch.schema.types[:3] == [
        pa.list_(pa.int32()),
        pa.list_(pa.list_(pa.int64())),
        pa.list_(pa.string()),
    ]
    assert batch.to_pylist()[0] == {
        "ia": [1, None, 3],
        "grid": [[1, 2], [3, 4]],
        "ua": [str(one)],
        "na": None,
    }
    assert empty_schema(description).types[3] == pa.list_(pa.string())
