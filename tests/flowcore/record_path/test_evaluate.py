"""Tests for RecordPath evaluation: NiFi's TestRecordPath path, array, map and filter cases."""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Any

import pytest

from flowcore.record_path import (
    DataType,
    FieldValue,
    RecordField,
    RecordSchema,
    compile_record_path,
)

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
    ("/friends[-2]", ["Jacob"]),
    ("/friends[1, 1..1, -3]", ["Jane", "Jane", "Jane"]),
    ("/friends[1..2, 0, -1]", ["Jane", "Jacob", "John", "Judy"]),
    ("/friends/.[3]", ["Judy"]),
    ("/friends[1][. = 'Jane']", ["Jane"]),
    ("/friends[0, 1, 2][. != 'Jane']", ["John", "Jacob"]),
    ("/friends[3..2]", []),
    ("/friends[9001]", []),
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


_UUID_A = uuid.UUID("d0fb6ab5-20e6-4823-8190-1ab9f6173d12")
_UUID_B = uuid.UUID("01234567-9012-3456-7890-123456789012")
_BY_REFERENCE = {
    "bigint": (2**70, 2**70 + 1),
    "boolean": (True, False),
    "char": ("k", "o"),
    "date": (datetime.date(1998, 4, 29), datetime.date(2001, 12, 6)),
    "time": (datetime.time(22, 56, 37), datetime.time(20, 53, 14)),
    "timestamp": (
        datetime.datetime(1998, 4, 29, 22, 56, 37),
        datetime.datetime(2001, 12, 6, 20, 53),
    ),
    "uuid": (_UUID_A, _UUID_B),
}

# (changes to the example record, path, whether it matches): TestRecordPath.FilterFunctions.
MATCHES = [
    ({}, "/name[contains(., 'John')]", True),
    ({}, "/name[contains(., 'Jane')]", False),
    ({}, "/mainAccount[./balance > 100]", True),
    ({}, "/mainAccount[./balance <= 100]", False),
    ({}, "/name[isBlank(./nonExisting)]", True),
    ({}, "/mainAccount[isBlank(./nonExisting)]", True),
    ({}, "/mainAccount[isBlank(./balance)]", False),
    ({}, "/lastName[contains(/firstName, 'Jo')]", True),
    ({}, "/lastName[contains(/firstName, 'Do')]", False),
    ({}, "/mainAccount[./balance < 100]/id", False),
    ({}, "/name[startsWith(contains(., 'John'), 't')]", True),
    ({}, "/name[startsWith(contains(., 'Jane'), 't')]", False),
    # Contains / ContainsRegex / EndsWith / StartsWith
    ({}, "/name[contains(., /friends[0])]", True),
    ({}, "/name[contains(., /friends[1])]", False),
    ({}, "/name[containsRegex(., 'o[gh]n')]", True),
    ({}, "/name[containsRegex(., 'o[xy]n')]", False),
    ({"friends": ["o[gh]n", "o[xy]n"]}, "/name[containsRegex(., /friends[0])]", True),
    ({"friends": ["o[gh]n", "o[xy]n"]}, "/name[containsRegex(., /friends[1])]", False),
    ({}, "/name[endsWith(., 'n Doe')]", True),
    ({}, "/name[endsWith(., 'n Dont')]", False),
    ({"friends": ["n Doe", "n Dont"]}, "/name[endsWith(., /friends[0])]", True),
    ({"friends": ["n Doe", "n Dont"]}, "/name[endsWith(., /friends[1])]", False),
    ({}, "/name[endsWith(., '')]", True),
    ({}, "/name[startsWith(., 'John D')]", True),
    ({}, "/name[startsWith(., 'Jonn N')]", False),
    ({"friends": ["John D", "John N"]}, "/name[startsWith(., /friends[0])]", True),
    ({"friends": ["John D", "John N"]}, "/name[startsWith(., /friends[1])]", False),
    ({}, "/name[startsWith(., '')]", True),
    # Equals / NotEquals by literal and by reference
    ({}, "/friends[. = /friends]", True),
    ({}, "/friends[. = /bytes]", False),
    ({}, "/friends[. != /friends]", False),
    ({}, "/friends[. != /bytes]", True),
    ({}, "/bytes[0][. = /bytes[0]]", True),
    ({}, "/bytes[0][. = /bytes[1]]", False),
    ({}, "/bytes[0][. != /bytes[0]]", False),
    ({}, "/bytes[0][. != /bytes[1]]", True),
    ({"friends": {"different": "entries"}}, "/attributes[. = /attributes]", True),
    ({"friends": {"different": "entries"}}, "/attributes[. = /friends]", False),
    ({"friends": {"different": "entries"}}, "/attributes[. != /attributes]", False),
    ({"friends": {"different": "entries"}}, "/attributes[. != /friends]", True),
    ({}, "/id[. = 48]", True),
    ({}, "/id[. = 49]", False),
    ({}, "/mainAccount/balance[. = '123.45']", True),
    ({}, "/mainAccount/balance[. = '123.46']", False),
    ({"numbers": [48, 49]}, "/id[. = /numbers[0]]", True),
    ({"numbers": [48, 49]}, "/id[. = /numbers[1]]", False),
    ({"numbers": [48, 49]}, "/id[. != /numbers[0]]", False),
    ({"numbers": [48, 49]}, "/id[. != /numbers[1]]", True),
    ({"numbers": [123.45, 123.46]}, "/mainAccount/balance[. = /numbers[0]]", True),
    ({"numbers": [123.45, 123.46]}, "/mainAccount/balance[. = /numbers[1]]", False),
    ({"numbers": [123.45, 123.46]}, "/mainAccount/balance[. != /numbers[0]]", False),
    ({"numbers": [123.45, 123.46]}, "/mainAccount/balance[. != /numbers[1]]", True),
    ({}, "/mainAccount[. = /mainAccount]", True),
    ({}, "/mainAccount[. = /accounts[1]]", False),
    ({}, "/mainAccount[. != /mainAccount]", False),
    ({}, "/mainAccount[. != /accounts[1]]", True),
    ({}, "/name[. = 'John Doe']", True),
    ({}, "/name[. = 'Jane Doe']", False),
    ({}, "/name[. != 'John Doe']", False),
    ({}, "/name[. != 'Jane Doe']", True),
    ({"name": "John"}, "/name[. = /friends[0]]", True),
    ({"name": "John"}, "/name[. = /friends[1]]", False),
    ({"name": "John"}, "/name[. != /friends[0]]", False),
    ({"name": "John"}, "/name[. != /friends[1]]", True),
    # GreaterThan / GreaterThanOrEqual / LessThan / LessThanOrEqual
    ({}, "/id[. > 47]", True),
    ({}, "/id[. > 48]", False),
    ({}, "/longNumber[. > 1000000000000000000]", True),
    ({}, "/longNumber[. > 1234567890123456788]", True),
    ({}, "/longNumber[. > 1234567890123456789]", False),
    ({"numbers": [47, 48]}, "/id[. > /numbers[0]]", True),
    ({"numbers": [47, 48]}, "/id[. > /numbers[1]]", False),
    ({}, "/mainAccount/balance[. > '122.99']", True),
    ({}, "/mainAccount/balance[. > '123.45']", False),
    ({"numbers": [122.99, 123.45]}, "/mainAccount/balance[. > /numbers[0]]", True),
    ({"numbers": [122.99, 123.45]}, "/mainAccount/balance[. > /numbers[1]]", False),
    ({}, "/name[. > 'Jane']", False),
    ({}, "/name['Jane' > .]", False),
    ({}, "/id[. >= 48]", True),
    ({}, "/id[. >= 49]", False),
    ({}, "/longNumber[. >= 1234567890123456789]", True),
    ({}, "/longNumber[. >= 1234567890123456790]", False),
    ({}, "/longNumber[. >= 2000000000000000000]", False),
    ({}, "/mainAccount/balance[. >= '122.99']", True),
    ({}, "/mainAccount/balance[. >= '123.46']", False),
    ({"numbers": [122.99, 124.00]}, "/mainAccount/balance[. >= /numbers[0]]", True),
    ({"numbers": [122.99, 124.00]}, "/mainAccount/balance[. >= /numbers[1]]", False),
    ({}, "/name[. >= 'Jane']", False),
    ({}, "/name['Jane' >= .]", False),
    ({}, "/id[. < 49]", True),
    ({}, "/id[. < 48]", False),
    ({}, "/longNumber[. < 2000000000000000000]", True),
    ({}, "/longNumber[. < 1234567890123456790]", True),
    ({}, "/longNumber[. < 1234567890123456789]", False),
    ({"numbers": [49, 48]}, "/id[. < /numbers[0]]", True),
    ({"numbers": [49, 48]}, "/id[. < /numbers[1]]", False),
    ({}, "/mainAccount/balance[. < '123.46']", True),
    ({}, "/mainAccount/balance[. < '122.99']", False),
    ({}, "/id[. <= 48]", True),
    ({}, "/id[. <= 47]", False),
    ({}, "/mainAccount/balance[. <= '123.45']", True),
    ({}, "/mainAccount/balance[. <= '123.44']", False),
    # IsBlank / IsEmpty
    ({}, "/name[isBlank('')]", True),
    ({"firstName": ""}, "/name[isBlank(/firstName)]", True),
    ({}, "/name[isBlank(/missing)]", True),
    ({"firstName": " \r\n\t"}, "/name[isBlank(/firstName)]", True),
    ({"firstName": " u "}, "/name[isBlank(/firstName)]", False),
    ({}, "/name[isEmpty('')]", True),
    ({"firstName": ""}, "/name[isEmpty(/firstName)]", True),
    ({}, "/name[isEmpty(/missing)]", True),
    ({"firstName": " \r\n\t"}, "/name[isEmpty(/firstName)]", False),
    ({"firstName": "u"}, "/name[isEmpty(/firstName)]", False),
    # MatchesRegex
    ({}, "/name[matchesRegex(., 'John D[aeiou]{2}')]", True),
    ({}, "/name[matchesRegex(., '\\w+ \\w+')]", True),
    ({}, "/name[matchesRegex(., '(J|D)ohn (J|D)oe')]", True),
    ({}, "/name[matchesRegex(., 'J.*n Doe')]", True),
    ({}, "/name[matchesRegex(., 'John')]", False),
    ({"name": " \t"}, "/name[matchesRegex(., '.+')]", True),
    ({"name": "\n\r"}, "/name[matchesRegex(., '.+')]", False),
    (
        {"name": ".^$*+?()[{\\|"},
        "/name[matchesRegex(., '\\.\\^\\$\\*\\+\\?\\(\\)\\[\\{\\\\\\|')]",
        True,
    ),
    ({"firstName": ".+"}, "/name[matchesRegex(., /firstName)]", True),
    # Not
    ({}, "/name[not(. = 'other')]", True),
    ({}, "/name[not(. = /name)]", False),
    ({}, "/name[not(contains(., 'other'))]", True),
    ({}, "/name[not(contains(., /name))]", False),
]


@pytest.mark.parametrize(("changes", "path", "matches"), MATCHES, ids=[m[1] for m in MATCHES])
def test_nifi_filter_cases(
    record: dict[str, Any], run: Any, changes: dict[str, Any], path: str, matches: bool
) -> None:
    """Each ported FilterFunctions case matches (one result) or not (none), as in NiFi."""
    record.update(changes)
    assert len(run(path)) == (1 if matches else 0)


@pytest.mark.parametrize("kind", sorted(_BY_REFERENCE))
def test_equality_by_reference_for_every_type(record: dict[str, Any], run: Any, kind: str) -> None:
    """NiFi's Equals/NotEquals ``supports<Type>ValuesByReference`` cases."""
    record["firstName"], record["lastName"] = _BY_REFERENCE[kind]
    assert len(run("/firstName[. = /firstName]")) == 1
    assert run("/firstName[. = /lastName]") == []
    assert run("/firstName[. != /firstName]") == []
    assert len(run("/firstName[. != /lastName]")) == 1


def test_filter_functions_standalone(record: dict[str, Any], run: Any) -> None:
    """NiFi's filterFunctionsCanBeUsedStandalone: filters at the top yield booleans."""
    record["name"] = None
    assert run("isEmpty(/name)") == [True]
    assert run("isEmpty(/id)") == [False]
    assert run("/id = 48") == [True]
    assert run("/id > 48") == [False]
    assert run("not(/id = 48)") == [False]


def test_filtered_path_continues(run: Any) -> None:
    """NiFi's recordPathCanBuiltUponFilteredPath: a path goes on after a predicate."""
    assert run("/mainAccount[./balance > 100]/id") == [1]


def test_wildcard_children_filtered(record: dict[str, Any]) -> None:
    """NiFi's multiResultRecordPathCanBeFiltered on the reduced record."""
    reduced = {k: record[k] for k in ("firstName", "lastName", "name")}
    found = compile_record_path("/*[contains(., 'John')]").evaluate(reduced)
    assert [fv.value for fv in found] == ["John", "John Doe"]
    assert compile_record_path("/*[contains(., 'Friedrich')]").evaluate(reduced) == ()


MAP_CASES = [
    ("/attributes['key1']", ["value1"]),
    ("/attributes['key1', 'key3']", ["value1", "value3"]),
    ("/attributes[*]", ["value1", "value2", "value3"]),
    ("/attributes['key1', 'key3', 'key1']", ["value1", "value3", "value1"]),
    ("/attributes/.['key3']", ["value3"]),
    ("/attributes['key2'][. = 'value2']", ["value2"]),
    ("/attributes['key1', 'key2', 'key3'][. != 'value2']", ["value1", "value3"]),
    ("/attributes['nope']", [None]),
]


@pytest.mark.parametrize(("path", "expected"), MAP_CASES, ids=[p for p, _ in MAP_CASES])
def test_nifi_map_reference_cases(
    record: dict[str, Any], run: Any, path: str, expected: list[Any]
) -> None:
    """TestRecordPath.MapReferences on attributes key1..key3."""
    record["attributes"] = {"key1": "value1", "key2": "value2", "key3": "value3"}
    assert run(path) == expected


def test_updating_a_map_item(record: dict[str, Any], schema: Any) -> None:
    """NiFi's supportsUpdatingMapItem: the entry changes and reads back changed."""
    record["attributes"] = {"key1": "value1"}
    path = compile_record_path("/attributes['key1']")
    path.evaluate(record, schema=schema)[0].update_value("updatedKey")
    (fv,) = path.evaluate(record, schema=schema)
    assert fv.value == "updatedKey"
    assert fv.parent_record is record


FIELD_TYPES = [
    ("bigint", [5623351, 0, -(2**63) - 1, 2**63]),
    ("boolean", [False, True]),
    ("byte", [0, 1, -128, 127]),
    ("char", ["0", "a", " ", "\x00", "\uffff"]),
    ("date", [datetime.date(2024, 8, 18)]),
    ("decimal", [decimal.Decimal("1.234567890123456789"), decimal.Decimal(0)]),
    ("double", [0.0, 1.0, 1.1, -1.1, 5e-324, 1.7976931348623157e308]),
    ("float", [0.0, 1.0, 1.1, -1.1]),
    ("int", [0, 1, -1, -(2**31), 2**31 - 1]),
    ("long", [1234567890, 0, 2**31, -(2**31) - 1, -(2**63), 2**63 - 1]),
    ("short", [2412, 0, -(2**15), 2**15 - 1]),
    ("enum", ["alice", "Bob", "EVE"]),
    ("timestamp", [datetime.datetime(2024, 8, 18, 9, 45, 27)]),
    ("uuid", [uuid.uuid3(uuid.NAMESPACE_DNS, "")]),
    ("array", [[], ["CAT"], ["a", "b", "c", "x", "y", "z"]]),
    ("map", [{}, {"a": "b"}]),
    ("record", [{"city": "Boston"}]),
    ("choice", ["text", 5, {"a": 1}]),
]


@pytest.mark.parametrize(("type_name", "values"), FIELD_TYPES, ids=[t for t, _ in FIELD_TYPES])
def test_nifi_field_type_cases(type_name: str, values: list[Any]) -> None:
    """TestRecordPath.FieldTypes: ``/field`` of each type updates to null and to each value and
    reads back with its field name, type and parent record."""
    schema = RecordSchema({"field": DataType(type_name)})
    path = compile_record_path("/field")
    for value in [None, *values]:
        record: dict[str, Any] = {}
        path.evaluate(record, schema=schema)[0].update_value(value)
        (fv,) = path.evaluate(record, schema=schema)
        assert fv.value == value
        assert fv.field_name == "field"
        assert fv.type_name == type_name
        assert fv.parent_record is record
