"""Tests for RecordPath evaluation: NiFi's TestRecordPath path, array, map and filter cases."""

from __future__ import annotations

from typing import Any

import pytest

from flowcore.record_path import FieldValue, RecordField, compile_record_path

# (path, expected values) ported from TestRecordPath (top-level references, ArrayReferences,
# MapReferences, FilterFunctions), on NiFi's example record.
PATHS = [
    ("/name", ["John Doe"]),
    ("/mainAccount/balance", [123.45]),
    ("/name/.", ["John Doe"]),
    ("/mainAccount/././balance", [123.45]),
    ("/missing", [None]),
    ("/mainAccount/*", [1, 123.45, {"city": "Boston", "state": "Massachusetts"}]),
    (
        "//city",
        ["New York", "NY", "Boston", "Las Vegas", "Austin"],
    ),  # NiFi: a map yields every entry
    (
        "/mainAccount//*",
        [1, 123.45, {"city": "Boston", "state": "Massachusetts"}, "Boston", "Massachusetts"],
    ),
    # ArrayReferences
    ("/friends[0]", ["John"]),
    ("/friends[1, 3]", ["Jane", "Judy"]),
    ("/friends[1..2]", ["Jane", "Jacob"]),
    ("/friends[0..-1]", ["John", "Jane", "Jacob", "Judy"]),
    ("/friends[-1]", ["Judy"]),
    ("/friends[1..-2]", ["Jane", "Jacob"]),
    ("/friends[0, 1..2]", ["John", "Jane", "Jacob"]),
    ("/friends[4]", []),
    ("/friends[*]", ["John", "Jane", "Jacob", "Judy"]),
    ("/numbers[3, 6, -1, -2]", [3, 6, 9, 8]),
    ("/numbers[0..2, -2..-1]", [0, 1, 2, 8, 9]),
    ("/accounts[0]/id", [6]),
    ("/accounts[*]/id", [6, 9]),
    ("/accounts[*]/address/city", ["Las Vegas", "Austin"]),
    ("/name[0]", []),
    # MapReferences
    ("/attributes['city']", ["New York"]),
    ("/attributes['city', 'state']", ["New York", "NY"]),
    ("/attributes['unknown']", [None]),
    ("/attributes[*]", ["New York", "NY"]),
    ("/mainAccount['id']", []),
    # Predicates and filters
    ("/accounts[*][./balance > 100]/id", [6]),
    ("/accounts[*][./balance < 100]/id", [9]),
    ("/accounts[*][./balance >= '48.02']/id", [6, 9]),
    ("/accounts[*][./balance <= '48.02']/id", [9]),
    ("/accounts[*][./address/city = 'Austin']/id", [9]),
    ("/accounts[*][./address/city != 'Austin']/id", [6]),
    ("/name[. = 'John Doe']", ["John Doe"]),
    ("/name[. = 'Jane Doe']", []),
    ("/id[. = 48]", [48]),
    ("/id[. = '48']", [48]),
    ("/id[. != 48]", []),
    ("/id[. > 47]", [48]),
    ("/id[. > '47']", [48]),
    ("/id[. < 48]", []),
    ("/name[. > 1]", []),
    ("/*[. = 'John']", ["John"]),
    ("/friends[*][. = 'Jane']", ["Jane"]),
    ("/friends[*][contains(., 'a')]", ["Jane", "Jacob"]),
    ("/friends[*][startsWith(., 'Ja')]", ["Jane", "Jacob"]),
    ("/friends[*][endsWith(., 'e')]", ["Jane"]),
    ("/friends[*][not(startsWith(., 'Ja'))]", ["John", "Judy"]),
    ("/friends[*][matchesRegex(., 'J.c.b')]", ["Jacob"]),
    ("/friends[*][matchesRegex(., 'J')]", []),
    ("/friends[*][containsRegex(., 'c.b')]", ["Jacob"]),
    ("/name[contains(., 'o')]", ["John Doe"]),
    ("/name[contains(., 'x')]", []),
    ("/name[startsWith(., /firstName)]", ["John Doe"]),
    ("/name[endsWith(., /lastName)]", ["John Doe"]),
    ("/missing[isEmpty(.)]", [None]),
    ("/name[isEmpty(.)]", []),
    ("/missing[isBlank(.)]", [None]),
    ("/name[not(isBlank(.))]", ["John Doe"]),
    ("/name[not(. = 'John Doe')]", []),
    ("/name[not(not(. = 'John Doe'))]", ["John Doe"]),
    ("/name[substring(., 1, 2) = 'o']", ["John Doe"]),
    ("/accounts[*][./id = /mainAccount/id]", []),
    ("/mainAccount[./balance = '123.45']/id", [1]),
    ("/mainAccount/balance[. = '123.45']", [123.45]),
    ("/longNumber[. > 1234567890123456788]", [1234567890123456789]),
    # top-level comparisons and filter functions are paths of booleans
    ("/name = 'John Doe'", [True]),
    ("/id > 100", [False]),
    ("startsWith(/name, 'John')", [True]),
    ("not(startsWith(/name, 'John'))", [False]),
    ("isEmpty(/missing)", [True]),
    ("/friends[*] = 'Jane'", [False, True, False, False]),
]


@pytest.mark.parametrize(("path", "expected"), PATHS, ids=[p for p, _ in PATHS])
def test_nifi_path_cases(run: Any, path: str, expected: list[Any]) -> None:
    """Each ported TestRecordPath case selects NiFi's values, in NiFi's order."""
    assert run(path) == expected


def test_root_reference_has_no_parent(record: dict[str, Any]) -> None:
    """``/`` is the record itself, field ``root``, without a parent."""
    (root,) = compile_record_path("/").evaluate(record)
    assert root.value is record
    assert root.parent is None
    assert root.field_name == "root"


def test_parent_reference(record: dict[str, Any]) -> None:
    """``/mainAccount/balance/..`` is the mainAccount field of the record."""
    (fv,) = compile_record_path("/mainAccount/balance/..").evaluate(record)
    assert fv.field_name == "mainAccount"
    assert fv.parent_record is record


def test_descendant_order_and_parents(record: dict[str, Any]) -> None:
    """``//id`` finds ids depth first and each result's parent record is the one holding it."""
    reduced = {k: record[k] for k in ("id", "mainAccount", "accounts")}
    found = compile_record_path("//id").evaluate(reduced)
    assert [fv.value for fv in found] == [48, 1, 6, 9]
    assert [fv.parent_record for fv in found] == [
        reduced,
        reduced["mainAccount"],
        *reduced["accounts"],
    ]


def test_descendant_then_child(record: dict[str, Any], schema: Any) -> None:
    """``//address/city`` on NiFi's reduced record (id, mainAccount, accounts)."""
    reduced = {k: record[k] for k in ("id", "mainAccount", "accounts")}
    found = compile_record_path("//address/city").evaluate(reduced)
    assert [fv.value for fv in found] == ["Boston", "Las Vegas", "Austin"]


def test_descendants_inside_an_array_of_records() -> None:
    """``//city`` reaches records held in an array (NiFi's record-inside-array case)."""
    target = {
        "array": [{"id": 1, "address": {"city": "Boston"}}, {"city": "Paris", "state": "France"}]
    }
    assert [fv.value for fv in compile_record_path("//city").evaluate(target)] == [
        "Boston",
        "Paris",
    ]


def test_relative_path_from_a_context_node(record: dict[str, Any]) -> None:
    """``./../mainAccount`` evaluates from the context node, not the record passed in."""
    root = FieldValue(record, RecordField("root"))
    context = FieldValue("John Doe", RecordField("name"), root)
    (fv,) = compile_record_path("./../mainAccount").evaluate({}, context=context)
    assert fv.value == record["mainAccount"]


def test_escaped_field_names_and_literals(record: dict[str, Any]) -> None:
    """Quoted names, escaped quotes and Java escapes select as NiFi's supportsToEscape* cases."""
    assert [
        fv.value for fv in compile_record_path("/'full,name'").evaluate({"full,name": "J"})
    ] == ["J"]
    record["attributes"] = {
        "Joe's Lama": "cute",
        'Angela "Mutti" Merkel': "powerful",
        " \t\r\n": "ws",
    }
    assert compile_record_path("/attributes['Joe\\'s Lama']").evaluate(record)[0].value == "cute"
    assert (
        compile_record_path('/attributes["Angela \\"Mutti\\" Merkel"]').evaluate(record)[0].value
        == "powerful"
    )
    assert compile_record_path("/attributes[' \\t\\r\\n']").evaluate(record)[0].value == "ws"


def test_map_typed_field_is_not_a_record(record: dict[str, Any], schema: Any) -> None:
    """With a schema, a map takes ``['key']`` but not ``/child``; a record the other way round."""
    path = compile_record_path("/attributes/city")
    assert [fv.value for fv in path.evaluate(record, schema=schema)] == [None]
    assert [fv.value for fv in path.evaluate(record)] == ["New York"]  # no schema: a dict is both


def test_update_value_through_paths(record: dict[str, Any], schema: Any) -> None:
    """update_value writes a record field, an array element and a map entry in place."""
    for path, value in (
        ("/name", "Jane"),
        ("/friends[1]", "Zoe"),
        ("/attributes['city']", "Paris"),
    ):
        for fv in compile_record_path(path).evaluate(record, schema=schema):
            fv.update_value(value)
    assert record["name"] == "Jane"
    assert record["friends"][1] == "Zoe"
    assert record["attributes"]["city"] == "Paris"


def test_update_value_from_a_function_result(record: dict[str, Any]) -> None:
    """A function that keeps the field (substring) writes back to it, as UpdateRecord does."""
    (fv,) = compile_record_path("substringBefore(/name, ' ')").evaluate(record)
    fv.update_value(fv.value.upper())
    assert record["name"] == "JOHN"


def test_update_value_of_every_element(record: dict[str, Any]) -> None:
    """``/accounts[*]/balance`` updates each account's balance."""
    for fv in compile_record_path("/accounts[*]/balance").evaluate(record):
        fv.update_value(0.0)
    assert [a["balance"] for a in record["accounts"]] == [0.0, 0.0]


def test_missing_field_can_be_set(record: dict[str, Any]) -> None:
    """A missing field's FieldValue (value None) adds the field when updated."""
    (fv,) = compile_record_path("/missing").evaluate(record)
    fv.update_value("here")
    assert record["missing"] == "here"


def test_predicate_restores_the_context(record: dict[str, Any]) -> None:
    """Predicates nest: the inner one sees its own node, the outer one its own again."""
    path = "/accounts[*][./address[./city = 'Austin']]/id"
    with pytest.raises(ValueError, match="comparison or a filter function"):
        compile_record_path(path)
    found = compile_record_path(
        "/accounts[*][./address/city[. = 'Austin'] = 'Austin']/id"
    ).evaluate(record)
    assert [fv.value for fv in found] == [9]


def test_decimal_literals_do_not_parse() -> None:
    """NiFi's grammar has whole-number literals only: ``123.45`` is a syntax error (quote it)."""
    with pytest.raises(ValueError, match="column 28"):
        compile_record_path("/mainAccount/balance[. = 123.45]")
