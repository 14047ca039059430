"""Tests for NiFi's RecordPath SQL functions as QueryRecord's DuckDB runs them."""

from __future__ import annotations

import datetime
import json

import pytest

from processors._rpath_functions import RPATH_FUNCTIONS, rpath_object, selected_values

PERSON = json.dumps({"name": "John", "age": 30, "mother": {"name": "Jane"}, "tags": ["a", "b"]})
RECORD = "STRUCT(name VARCHAR, age INTEGER, mother STRUCT(name VARCHAR), tags VARCHAR[])"
ADDRESSES = json.dumps([{"state": "CA", "label": "home"}, {"state": "NY", "label": "work"}])
ARRAY = "STRUCT(state VARCHAR, label VARCHAR)[]"


def _call(name: str, value_json: str, path: str, duck_type: str = RECORD) -> object:
    """RPATH function *name* called as its DuckDB macro calls it."""
    return RPATH_FUNCTIONS[name][0](value_json, path, duck_type)


def test_a_record_is_the_root_an_array_joins_each_record_a_map_is_the_context() -> None:
    """NiFi's RecordPathFunction: record, array of records and map arguments."""
    assert selected_values(PERSON, "//name", RECORD) == ["John", "Jane"]
    assert selected_values(ADDRESSES, "/state[/label = 'work']", ARRAY) == ["NY"]
    assert selected_values(ADDRESSES, "/state", ARRAY) == ["CA", "NY"]
    things = json.dumps({"sport": "basketball", "color": "green"})
    assert selected_values(things, ".['sport']", "MAP(VARCHAR, VARCHAR)") == ["basketball"]


def test_an_argument_that_is_no_record_names_its_type() -> None:
    """A scalar argument fails with NiFi's message, naming the type."""
    with pytest.raises(ValueError, match="argument is of type INTEGER instead of Record"):
        selected_values("3", "/a", "INTEGER")


def test_rpath_gives_text_one_value_or_a_json_array_or_null() -> None:
    """RPATH: a scalar's text, a list or several values as JSON, nothing as null."""
    assert rpath_object(PERSON, "/age", RECORD) == "30"
    assert rpath_object(PERSON, "/tags", RECORD) == '["a","b"]'
    assert rpath_object(PERSON, "/mother", RECORD) == '{"name":"Jane"}'
    assert rpath_object(PERSON, "//name", RECORD) == '["John","Jane"]'
    assert rpath_object(PERSON, "/nope", RECORD) is None


def test_typed_functions_convert_as_nifi() -> None:
    """RPATH_INT/LONG/FLOAT/DOUBLE read numbers and numeric text; RPATH_STRING any value."""
    values = json.dumps({"n": "42", "d": 2.5, "t": True, "s": "x"})
    assert _call("rpath_int", values, "/n") == 42
    assert _call("rpath_int", values, "/d") == 2  # Java's intValue truncates
    assert _call("rpath_long", values, "/n") == 42
    assert _call("rpath_double", values, "/n") == 42.0
    assert _call("rpath_float", values, "/d") == 2.5
    assert _call("rpath_string", values, "/t") == "true"
    assert _call("rpath_string", values, "/d") == "2.5"
    assert _call("rpath_int", values, "/nope") is None
    with pytest.raises(ValueError, match="'x' is not a number"):
        _call("rpath_int", values, "/s")
    with pytest.raises(ValueError, match="as Long because the value returned is of type bool"):
        _call("rpath_long", values, "/t")


def test_rpath_date_reads_dates_timestamps_and_epoch_millis() -> None:
    """RPATH_DATE: a DATE's or TIMESTAMP's ISO text, toDate's result, epoch milliseconds."""
    values = json.dumps(
        {"d": "2018-02-04", "ts": "2018-02-04 23:20:55", "ms": 1517739655000, "s": "Feb 4"}
    )
    day = datetime.date(2018, 2, 4)
    assert _call("rpath_date", values, "/d") == day
    assert _call("rpath_date", values, "/ts") == day
    assert _call("rpath_date", values, "/ms") == day
    assert _call("rpath_date", values, "toDate('04/02/2018', 'dd/MM/yyyy')") == day
    with pytest.raises(ValueError, match="please use the toDate function"):
        _call("rpath_date", values, "/s")


def test_a_typed_function_over_several_values_must_be_constrained() -> None:
    """Two non-null values selected fail a typed function; nulls are not counted."""
    with pytest.raises(ValueError, match="must be further constrained"):
        _call("rpath_string", ADDRESSES, "/state", ARRAY)
    with_null = json.dumps([{"state": None}, {"state": "NY"}])
    assert _call("rpath_string", with_null, "/state", ARRAY) == "NY"
