"""Driver rows as Arrow batches (processors/sql/arrow_rows.py): columns, types, ragged rows."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

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
