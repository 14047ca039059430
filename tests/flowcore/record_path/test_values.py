"""Tests for FieldValue: parents, parent records, update_value, remove, and NiFi's toString."""

from __future__ import annotations

import datetime
import types
from typing import Any

import pytest

from flowcore.record_path import (
    DataType,
    FieldValue,
    RecordField,
    RecordPathEvaluationError,
    compile_record_path,
)
from flowcore.record_path._schema import RecordSchema as PathSchema
from flowcore.record_path._values import is_array, is_map, is_record, root_value, to_string


def test_root_value() -> None:
    """The root FieldValue is field ``root`` typed a record with the schema, no parent."""
    root = root_value({"a": 1})
    assert root.field_name == "root"
    assert root.type_name == "record"
    assert root.parent is None
    assert root.parent_record is None


def test_parent_record_skips_arrays_and_maps() -> None:
    """An array element's parent record is the record holding the array (NiFi's getParentRecord)."""
    record = {"friends": ["a", "b"]}
    (fv,) = compile_record_path("/friends[1]").evaluate(record)
    assert fv.parent is not None
    assert fv.parent.value is record["friends"]
    assert fv.parent_record is record
    assert fv.index == 1


def test_update_of_a_tuple_element_replaces_the_array() -> None:
    """An element of an immutable array is updated by writing a new list into the record."""
    record = {"t": ("a", "b")}
    compile_record_path("/t[0]").evaluate(record)[0].update_value("z")
    assert record["t"] == ["z", "b"]


def test_update_of_a_literal_is_an_error() -> None:
    """A literal belongs to no record: updating it says so (NiFi's UnsupportedOperation)."""
    (fv,) = compile_record_path("concat('a', 'b')").evaluate({})
    with pytest.raises(RecordPathEvaluationError, match="not associated with any record"):
        fv.update_value("x")


def test_update_of_a_null_literal_is_ignored() -> None:
    """A value-less FieldValue with no record updates nothing, as NiFi."""
    FieldValue(None).update_value("x")


@pytest.mark.parametrize("typed", [True, False])
def test_update_through_a_null_parent_record_updates_nothing(typed: bool) -> None:
    """``/a/b`` where record ``a`` is null: b's parent record is null, so the update does
    nothing (NiFi's StandardFieldValue: getParentRecord stops at the null record and a null
    value updates nothing); it used to write ``b`` into the root record."""
    inner = PathSchema({"b": DataType("string")})
    schema = PathSchema({"id": DataType("long"), "a": DataType("record", schema=inner)})
    record: dict[str, Any] = {"id": 1, "a": None}
    (fv,) = compile_record_path("/a/b").evaluate(record, schema=schema if typed else None)
    assert fv.parent_record is None
    fv.update_value("x")
    assert record == {"id": 1, "a": None}


def test_update_under_a_missing_child_walks_up_as_nifi() -> None:
    """``/a/b/c`` where ``b`` is missing from record ``a``: b is NiFi's missing child (a
    choice, not a record), so c's parent record is ``a``, as NiFi's getParentRecord walks."""
    record: dict[str, Any] = {"a": {"x": 1}}
    (fv,) = compile_record_path("/a/b/c").evaluate(record)
    assert fv.parent_record is record["a"]


def test_update_of_a_read_only_record_is_our_error() -> None:
    """A record that cannot change (a mappingproxy) gives our error, not a TypeError."""
    record = types.MappingProxyType({"a": 1})
    (fv,) = compile_record_path("/a").evaluate(record)
    with pytest.raises(RecordPathEvaluationError, match="cannot be changed"):
        fv.update_value(2)


def test_remove_field_element_and_entry() -> None:
    """remove() drops a record field, an array element and a map entry (NiFi's remove)."""
    record: dict[str, Any] = {"a": 1, "l": [1, 2, 3], "m": {"k": "v", "j": "w"}}
    for path in ("/a", "/l[1]", "/m['k']"):
        compile_record_path(path).evaluate(record)[0].remove()
    assert record == {"l": [1, 3], "m": {"j": "w"}}


def test_remove_content() -> None:
    """remove_content() empties arrays and maps and leaves other values alone."""
    record: dict[str, Any] = {"l": [1], "m": {"k": 1}, "s": "x"}
    for path in ("/l", "/m", "/s"):
        compile_record_path(path).evaluate(record)[0].remove_content()
    assert record == {"l": [], "m": {}, "s": "x"}


def test_kinds_follow_the_type_then_the_value() -> None:
    """A typed field is what its type says; an untyped mapping is both a record and a map."""
    untyped = FieldValue({"a": 1}, RecordField("x"))
    as_map = FieldValue({"a": 1}, RecordField("x", DataType("map")))
    as_record = FieldValue(None, RecordField("x", DataType("record")))
    assert is_record(untyped)
    assert is_map(untyped)
    assert not is_record(as_map)
    assert is_map(as_map)
    assert is_record(as_record)
    assert is_array(FieldValue([1]))
    assert is_array(FieldValue(None, RecordField("x", DataType("array"))))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, None),
        ("s", "s"),
        (True, "true"),
        (48, "48"),
        (123.45, "123.45"),
        (1e10, "1.0E10"),
        (b"Hi", "Hi"),
        (list(b"Hi"), "Hi"),
        (["a", "b"], "[a, b]"),
        ({"a": 1}, '{"a":1}'),
        (datetime.datetime(2024, 8, 18, 9, 45, 27), "2024-08-18 09:45:27"),
    ],
)
def test_to_string(value: Any, text: str | None) -> None:
    """Values print as NiFi's DataTypeUtils.toString does."""
    assert to_string(value) == text


def test_repr_names_field_and_value() -> None:
    """The repr shows the field name and value (for error messages and debugging)."""
    assert repr(FieldValue(1, RecordField("id"))) == "FieldValue('id'=1)"
