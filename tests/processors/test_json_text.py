"""Tests for JSON read and written as NiFi's Jackson ObjectMapper does."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from processors._json_text import InvalidJsonError, read_json, read_json_text, to_json

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def test_compact_form_has_no_spaces_and_java_doubles() -> None:
    """Compact output is Jackson's: no spaces, doubles as Java prints them."""
    value = {"a": 1, "b": [1.5, 1e20, 0.0001, None, True], "c": {"d": "x"}}
    assert to_json(value) == '{"a":1,"b":[1.5,1.0E20,1.0E-4,null,true],"c":{"d":"x"}}'


def test_escapes_are_jackson_s() -> None:
    """Control characters in upper-case hex, the usual ones short, '/' and non-ASCII as they are."""
    assert to_json('a"b\\c\n\t\x01\x1f/é') == '"a\\"b\\\\c\\n\\t\\u0001\\u001F/é"'


def test_pretty_printer_is_jackson_s_default() -> None:
    """Objects indent by two with ' : ', arrays stay inline, empty ones are '{ }' and '[ ]'."""
    value = {"a": [1, {"b": 2}], "c": {}, "d": [], "e": {"f": None}}
    assert to_json(value, pretty=True) == (
        '{\n  "a" : [ 1, {\n    "b" : 2\n  } ],\n  "c" : { },\n  "d" : [ ],\n'
        '  "e" : {\n    "f" : null\n  }\n}'
    )


@given(JSON_VALUES)
def test_written_json_reads_back(value: object) -> None:
    """Whatever is written, compact or pretty, is JSON that reads back to the same value."""
    assert json.loads(to_json(value)) == value
    assert json.loads(to_json(value, pretty=True)) == value


def test_reading_takes_the_first_value_and_ignores_what_follows() -> None:
    """As Jackson's readValue: trailing content is not read; a leading BOM is skipped."""
    assert read_json(b'\xef\xbb\xbf {"a": 1} trailing') == {"a": 1}


@pytest.mark.parametrize("bad", [b"", b"   ", b"<xml/>", b"NaN", b'{"a": Infinity}', b"{'a': 1}"])
def test_what_jackson_refuses_is_invalid(bad: bytes) -> None:
    """Empty content, XML, NaN and single quotes are not JSON to Jackson."""
    with pytest.raises(InvalidJsonError):
        read_json(bad)


def test_strings_longer_than_the_limit_are_refused() -> None:
    """Max String Length counts the characters of each string, names included."""
    assert read_json(b'{"ab": "cd"}', max_string_length=2) == {"ab": "cd"}
    with pytest.raises(InvalidJsonError, match="maximum length 2"):
        read_json(b'{"ab": ["abc"]}', max_string_length=2)
    with pytest.raises(InvalidJsonError):
        read_json_text('{"abc": 1')


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _at_stack_depth(frames: int, call):  # type: ignore[no-untyped-def]
    """*call()* with *frames* Python frames below it, as deep in a task's stack as a processor."""
    return call() if frames == 0 else _at_stack_depth(frames - 1, call)


@pytest.mark.parametrize("depth", [990, 1_024])
def test_documents_nested_up_to_1024_levels_are_valid_json(depth: int) -> None:
    """Valid JSON nested 990 and 1,024 deep reads at a deep stack and writes back unchanged."""
    text = _nested(depth)
    value = _at_stack_depth(150, lambda: read_json(text.encode()))
    assert _at_stack_depth(150, lambda: to_json(value)) == text
    pretty = _at_stack_depth(150, lambda: to_json(value, pretty=True))
    assert pretty.count("\n") == 2 * depth


def test_deeper_documents_fail_naming_the_depth_limit() -> None:
    """1,025 levels, or far more, is invalid with a reason naming the 1,024-level limit."""
    for text in (_nested(1_025), "[" * 100_000):
        with pytest.raises(InvalidJsonError, match="more than the 1024 levels"):
            read_json_text(text)
