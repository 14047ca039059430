"""Tests for the DuckDB connections set up for NiFi's Calcite SQL."""

from __future__ import annotations

from processors._calcite_duckdb import calcite_connection


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
