"""Tests for what EvaluateJsonPath and SplitJson share: result text and two properties."""

from __future__ import annotations

from processors._json_path_common import (
    MAX_STRING_LENGTH,
    NULL_VALUE_REPRESENTATION,
    representation,
)


def test_results_render_as_java_and_jackson_do() -> None:
    """Scalars as Java's toString (doubles included), containers as compact JSON."""
    assert representation(None, "null") == "null"
    assert representation(None, "") == ""
    assert representation(True, "") == "true"
    assert representation(12345678.9, "") == "1.23456789E7"
    assert representation(3, "") == "3"
    assert representation("text", "") == "text"
    assert representation({"a": [1, None]}, "") == '{"a":[1,null]}'


def test_properties_carry_nifi_s_names_and_defaults() -> None:
    """Null Value Representation defaults to 'empty string', Max String Length to 20 MB."""
    assert NULL_VALUE_REPRESENTATION.default == "empty string"
    assert [v.value for v in NULL_VALUE_REPRESENTATION.allowable_values] == [
        "empty string",
        "the string 'null'",
    ]
    assert MAX_STRING_LENGTH.default == "20 MB"
