"""Tests for the DuckDB connections set up for NiFi's Calcite SQL."""

from __future__ import annotations

import json
from collections.abc import Iterator

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.records.schema import (
    BOOLEAN,
    INT,
    NIFI_TYPE_KEY,
    STRING,
    ChoiceType,
    EnumType,
    RecordSchema,
)
from processors._calcite_duckdb import (
    calcite_connection,
    calcite_relation,
    passed_columns,
    result_schema,
    sql_schema,
)


def test_cardinality_is_an_integer_a_list_index_takes() -> None:
    """CARDINALITY gives Calcite's INTEGER for a list and a map, so tags[CARDINALITY(tags)] runs."""
    connection = calcite_connection()
    try:
        row = connection.sql(
            "SELECT typeof(cardinality(['a', 'b'])), cardinality(map(['k'], [1])), "
            "typeof(cardinality(map(['k'], [1]))), ['a', 'b'][cardinality(['a', 'b'])], "
            "cardinality(CAST(NULL AS VARCHAR[])), 'cardinality(x)'"
        ).fetchall()
    finally:
        connection.close()
    assert row == [("INTEGER", 1, "INTEGER", "b", None, "cardinality(x)")]


def test_settings_are_calcite_like_and_single_threaded() -> None:
    """Text compared with a number is cast (as Calcite does); DuckDB runs on one thread."""
    connection = calcite_connection()
    try:
        rows = connection.sql("SELECT '10' > 9, current_setting('threads')").fetchall()
    finally:
        connection.close()
    assert rows == [(True, 1)]


def test_rpath_functions_are_macros_over_the_argument_json() -> None:
    """RPATH and its typed forms run on the connection; a null argument gives null (NiFi's)."""
    connection = calcite_connection()
    try:
        rows = connection.sql(
            "SELECT rpath_int({'age': '30'}, '/age'), typeof(rpath_int({'age': 1}, '/age')), "
            "rpath(map(['k'], ['v']), '.[''k'']'), "
            "rpath_string(CAST(NULL AS STRUCT(a VARCHAR)), '/a')"
        ).fetchall()
    finally:
        connection.close()
    assert rows == [(30, "INTEGER", "v", None)]


def test_integer_division_truncates_as_calcite() -> None:
    """An integer over an integer is an integer truncated toward zero (Calcite's and Java's
    ``/``); a DOUBLE or DECIMAL operand still divides exactly."""
    connection = calcite_connection()
    try:
        rows = connection.sql(
            "SELECT 7 / 2, -7 / 2, typeof(CAST(7 AS INTEGER) / CAST(2 AS INTEGER)), "
            "typeof(CAST(7 AS BIGINT) / 2), 7 / 2.0, CAST(7 AS DOUBLE) / 2"
        ).fetchall()
    finally:
        connection.close()
    assert rows == [(3, -3, "INTEGER", "BIGINT", 3.5, 3.5)]


def _relation_rows(sql: str) -> tuple[list[str], list[str], list[tuple[object, ...]]]:
    """*sql*'s column names, DuckDB types and rows over a small table FLOWFILE."""
    connection = calcite_connection()
    try:
        connection.register(
            "FLOWFILE",
            pa.table(
                {
                    "i": pa.array([1, 2, 4, -9], pa.int32()),
                    "l": pa.array([10, 20, 40, -75], pa.int64()),
                    "d": [1.5, 2.5, 3.0, 1.0],
                    "g": ["a", "a", "b", "b"],
                    "s": ["avg(i)", "x", "y", "z"],
                }
            ),
        )
        relation = calcite_relation(connection, sql)
        assert relation is not None
        return relation.columns, [str(t) for t in relation.types], relation.fetchall()
    finally:
        connection.close()


def test_avg_has_its_arguments_type_as_calcite() -> None:
    """AVG of INTEGER is an INTEGER truncated toward zero, of BIGINT a BIGINT, of DOUBLE a
    DOUBLE (Calcite's SUM / COUNT cast to the argument's type); an unnamed AVG keeps DuckDB's
    column name."""
    names, types, rows = _relation_rows(
        "SELECT AVG(i), avg(l) AS m, avg(d), avg(DISTINCT i) FILTER (WHERE i > 1) AS f "
        "FROM FLOWFILE"
    )
    assert names == ["avg(i)", "m", "avg(d)", "f"]
    assert types == ["INTEGER", "BIGINT", "DOUBLE", "INTEGER"]
    assert rows == [(0, -1, 2.0, 3)]


def test_avg_per_group_in_a_window_and_in_a_subquery() -> None:
    """GROUP BY, OVER and a subquery's AVG are Calcite's too (an unnamed one named as written);
    a literal naming avg is text."""
    assert _relation_rows("SELECT g, avg(i) FROM FLOWFILE GROUP BY g ORDER BY g")[2] == [
        ("a", 1),
        ("b", -2),
    ]
    assert _relation_rows("SELECT avg(i) OVER (PARTITION BY g) AS w FROM FLOWFILE")[2] == [
        (1,),
        (1,),
        (-2,),
        (-2,),
    ]
    assert _relation_rows("SELECT * FROM (SELECT AVG(i) + 1 FROM FLOWFILE)")[:2] == (
        ["(avg(i) + 1)"],
        ["INTEGER"],
    )
    names, _, rows = _relation_rows(
        'SELECT s, \'avg(x)\' AS "avg(""q"")" FROM FLOWFILE '
        "WHERE i > (SELECT AVG(i) FROM FLOWFILE) AND s <> 'avg(l)'"
    )
    assert names == ["s", 'avg("q")']
    assert rows == [("avg(i)", "avg(x)"), ("x", "avg(x)"), ("y", "avg(x)")]


def _choice_field(name: str, *options: str) -> pa.Field:
    """An Arrow field of a NiFi CHOICE of *options* (its values' JSON text)."""
    meta = json.dumps({"type": "choice", "options": list(options)}, separators=(",", ":"))
    return pa.field(name, pa.string(), metadata={NIFI_TYPE_KEY: meta})


def test_a_choice_column_is_json_in_the_sql_and_a_choice_again_after() -> None:
    """A CHOICE column is DuckDB's JSON; a JSON result column is the CHOICE of its name (or of
    the CHOICEs it passes through, for an alias); another column of an input field's name and
    Arrow type keeps that field's NiFi type; the rest (and JSON the query made) stay as DuckDB
    gave them."""
    enum = json.dumps({"type": "enum", "symbols": ["A", "B"]})
    inputs = pa.schema(
        [
            _choice_field("v", "int", "string"),
            _choice_field("w", "boolean"),
            pa.field("e", pa.string(), metadata={NIFI_TYPE_KEY: enum}),
        ]
    )
    as_sql = sql_schema(inputs)
    assert [str(f.type) for f in as_sql] == [
        "extension<arrow.json>",
        "extension<arrow.json>",
        "string",
    ]
    result = pa.schema(
        [("v", pa.string()), ("x", pa.string()), ("e", pa.string()), ("W", pa.string())]
    )
    connection = calcite_connection()
    try:
        passed = passed_columns(connection, "SELECT v, COALESCE(v, w) AS x, e, W FROM t")
    finally:
        connection.close()
    out = result_schema(result, ["JSON", "JSON", "VARCHAR", "VARCHAR"], [inputs], passed)
    assert [f.type for f in RecordSchema.from_arrow(out).fields] == [
        ChoiceType([INT, STRING]),
        ChoiceType([INT, STRING, BOOLEAN]),
        EnumType(("A", "B")),
        STRING,
    ]
    made = pa.schema([("j", pa.string())])  # to_json over input without CHOICE fields
    assert result_schema(made, ["JSON"], [pa.schema([("a", pa.int32())])]) == made


@pytest.mark.parametrize(
    ("sql", "choice"),
    [
        ("SELECT * FROM t", True),
        ("SELECT t.v FROM t", True),
        ("SELECT w AS v FROM (SELECT v AS w FROM t)", True),
        ("SELECT CASE WHEN v IS NULL THEN NULL ELSE v END AS v FROM t", True),
        ("SELECT max(v) AS v FROM t", True),
        ("SELECT v FROM t UNION ALL SELECT w FROM t", True),
        ("SELECT v::JSON AS v FROM t", True),
        ("SELECT to_json(r) AS v FROM t", False),
        ("SELECT r::JSON AS v FROM t", False),
        ("SELECT json_extract(v, '$') AS v FROM t", False),
        ("SELECT v FROM t UNION ALL SELECT to_json(r) FROM t", False),
        ("SELECT COALESCE(v, to_json(r)) AS v FROM t", False),
        ("SELECT v FROM (SELECT to_json(r) AS v FROM t)", False),
    ],
)
def test_a_json_result_is_a_choice_only_when_it_passes_choices_through(
    connection: duckdb.DuckDBPyConnection, sql: str, choice: bool
) -> None:
    """A JSON result column "v" is a CHOICE when the query passes CHOICE columns' values
    through unchanged (a column, an alias, CASE, MAX, a UNION's sides), else text."""
    inputs = pa.schema([_choice_field("v", "int"), _choice_field("w", "string"), ("r", pa.int8())])
    result = pa.schema([("v", pa.string())])
    out = result_schema(result, ["JSON"], [inputs], passed_columns(connection, sql))
    assert (NIFI_TYPE_KEY in (out.field(0).metadata or {})) is choice


@pytest.fixture(scope="module")
def connection() -> Iterator[duckdb.DuckDBPyConnection]:
    """One Calcite connection for every example of a property test (opening one costs)."""
    opened = calcite_connection()
    yield opened
    opened.close()


@settings(max_examples=50, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)), min_size=0, max_size=40
    ),
    groups=st.integers(1, 3),
)
def test_avg_of_integers_is_the_truncated_exact_mean(
    connection: duckdb.DuckDBPyConnection, values: list[int | None], groups: int
) -> None:
    """AVG of INTEGERs per group is the exact mean truncated toward zero (Calcite's, Java's
    long division), null for a group of nulls, whatever the values' size."""
    keys = [i % groups for i in range(len(values))]
    connection.register("FLOWFILE", pa.table({"k": keys, "x": pa.array(values, pa.int32())}))
    try:
        relation = calcite_relation(connection, "SELECT k, AVG(x) FROM FLOWFILE GROUP BY k")
        assert relation is not None
        got = dict(relation.fetchall())
    finally:
        connection.unregister("FLOWFILE")
    expected: dict[int, int | None] = {}
    for key in set(keys):
        seen = [v for k, v in zip(keys, values, strict=True) if k == key and v is not None]
        total = sum(seen)
        expected[key] = (abs(total) // len(seen)) * (1 if total >= 0 else -1) if seen else None
    assert got == expected
