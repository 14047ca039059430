"""Tests for UpdateRecord's RecordPath targets, ported from NiFi's TestUpdateRecord: the root,
nested and embedded records (unescapeJson), and array elements. A split of test_update_record.py
by concept: the same processor, processors/update_record.py."""

from __future__ import annotations

import json

import pytest

from tests.processors._update_record import (
    EMBEDDED_RECORD,
    MULTI_ARRAYS,
    MULTI_ARRAYS_RECORDS,
    NAME_FIELDS_ONLY,
    ORGANISATION,
    PERSON,
    PERSON_ADDRESS,
    PERSON_STRINGIFIED_NAME,
    PERSON_WITH_ADDRESS,
    PERSON_WITH_NAME_AND_MOTHER,
    PERSON_WITH_NAME_RECORD,
    PERSON_WITH_STRINGIFIED_NAME,
    avro,
    json_runner,
    only_success,
    pretty,
)


def test_concat_with_array_inferred_schema() -> None:
    """NiFi's testConcatWithArrayInferredSchema: a new field in every array element."""
    runner = json_runner(
        None,
        None,
        **{
            "/addresses[*]/full": "concat(../street, ' ', ../city, ' ', ../state)",
            "Replacement Value Strategy": "record-path-value",
        },
    )
    addresses = [
        {"street": "1234 My Street", "city": "My City", "state": "MS"},
        {"street": "4321 Your Street", "city": "Your City", "state": "YS"},
    ]
    runner.enqueue(json.dumps([{"addresses": addresses}]).encode())
    runner.run()
    expected = [
        {
            "addresses": [
                {**addresses[0], "full": "1234 My Street My City MS"},
                {**addresses[1], "full": "4321 Your Street Your City YS"},
            ]
        }
    ]
    assert only_success(runner) == pretty(expected)
    schema = json.loads(runner.flowfiles_for("success")[0].attributes["avro.schema"])
    element = schema["fields"][0]["type"][0]["items"]
    assert [f["name"] for f in element["fields"]] == ["street", "city", "state", "full"]


def test_update_in_array() -> None:
    """NiFi's testUpdateInArray: /address[*]/city in every element."""
    runner = json_runner(
        PERSON_WITH_ADDRESS, PERSON_WITH_ADDRESS, **{"/address[*]/city": "newCity"}
    )
    runner.enqueue(PERSON_ADDRESS)
    runner.run()
    expected = [
        {
            "id": 485,
            "name": {"last": "Doe", "first": "John"},
            "address": [{"street": "1 nifi stree", "city": "newCity"}],
        }
    ]
    assert only_success(runner) == pretty(expected)


def test_update_in_null_array() -> None:
    """NiFi's testUpdateInNullArray: a null element is left alone."""
    runner = json_runner(
        PERSON_WITH_ADDRESS, PERSON_WITH_ADDRESS, **{"/address[*]/city": "newCity"}
    )
    record = {"id": 485, "name": {"last": "Doe", "first": "John"}, "address": [None]}
    runner.enqueue(json.dumps([record]).encode())
    runner.run()
    assert only_success(runner) == (
        '[ {\n  "id" : 485,\n  "name" : {\n    "last" : "Doe",\n    "first" : "John"\n  },\n'
        '  "address" : [ null ]\n} ]'
    )


NAME_FIELDS_ONLY_OUT = pretty([{"last": "Doe", "first": "John"}])


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("/", "/name/*"),
        ("/", "/name"),
        ("/name/..", "/name/*"),
        ("/name/..", "/name"),
    ],
)
def test_set_root_path(path: str, value: str) -> None:
    """NiFi's testSetRootPath{Absolute,Relative}With{Multiple,Single}Value(s)."""
    runner = json_runner(PERSON_WITH_NAME_RECORD, NAME_FIELDS_ONLY, **{path: value})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON)
    runner.run()
    assert only_success(runner) == NAME_FIELDS_ONLY_OUT


def test_set_root_path_inherited_schema() -> None:
    """The new root's own schema is what the writer inherits."""
    runner = json_runner(PERSON_WITH_NAME_RECORD, None, **{"/": "/name"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON)
    runner.run()
    assert only_success(runner) == NAME_FIELDS_ONLY_OUT


def test_set_absolute_path_with_another_record() -> None:
    """NiFi's testSetAbsolutePathWithAnotherRecord: /name takes the mother record."""
    runner = json_runner(
        PERSON_WITH_NAME_AND_MOTHER, PERSON_WITH_NAME_AND_MOTHER, **{"/name": "/mother"}
    )
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON)
    runner.run()
    jane = {"last": "Doe", "first": "Jane"}
    assert only_success(runner) == pretty([{"id": 485, "name": jane, "mother": jane}])


def test_set_root_with_unescape_json_call() -> None:
    """NiFi's testSetRootWithUnescapeJsonCall: the parsed record becomes the record."""
    runner = json_runner(
        PERSON_WITH_STRINGIFIED_NAME,
        NAME_FIELDS_ONLY,
        **{"/": "unescapeJson(/stringified_name, 'true')"},
    )
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON_STRINGIFIED_NAME)
    runner.run()
    assert only_success(runner) == NAME_FIELDS_ONLY_OUT


def test_set_nested_root_with_unescape_json_call() -> None:
    """NiFi's testSetNestedRootWithUnescapeJsonCall (recursive conversion)."""
    record_json = {
        "name": "An Organisation",
        "departments": [
            {"name": "Department 1", "manager": "Joe Bloggs"},
            {"name": "Coders", "manager": "Jane Biggs"},
        ],
        "address": {
            "address_1": "123 Fake Street",
            "address_2": "Somewhere There",
            "postcode": "AB1 6HT",
        },
    }
    runner = json_runner(
        avro("record_json", [("record_json", "string")]),
        ORGANISATION,
        **{"/": "unescapeJson(/record_json, 'true', 'true')"},
    )
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(json.dumps({"record_json": json.dumps(record_json)}).encode())
    runner.run()
    assert only_success(runner) == pretty([record_json])


def test_set_field_with_unescape_json_call() -> None:
    """NiFi's testSetFieldWithUnescapeJsonCall: a new record field from JSON text."""
    runner = json_runner(
        PERSON_WITH_STRINGIFIED_NAME,
        PERSON_WITH_NAME_RECORD,
        **{"/name": "unescapeJson(/stringified_name)"},
    )
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON_STRINGIFIED_NAME)
    runner.run()
    expected = [{"id": 485, "name": {"last": "Doe", "first": "John"}}]
    assert only_success(runner) == pretty(expected)


def test_set_nested_record_with_unescape_json_call() -> None:
    """NiFi's testSetNestedRecordWithUnescapeJsonCall: an embedded record from JSON text."""
    runner = json_runner(EMBEDDED_RECORD, EMBEDDED_RECORD, **{"/embedded": "unescapeJson(/str)"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    text = '{"label":"Test!","child":{"name":"Child record!"}}'
    runner.enqueue(json.dumps({"str": text, "embedded": None}).encode())
    runner.run()
    expected = [{"str": text, "embedded": {"label": "Test!", "child": {"name": "Child record!"}}}]
    assert only_success(runner) == pretty(expected)


MULTI_ARRAYS_JSON = pretty(MULTI_ARRAYS_RECORDS)


@pytest.mark.parametrize(
    ("path", "numbers"),
    [
        ("/numbers[*]", "8, 8, 8"),
        ("/numbers[1]", "1, 8, 4"),
        ("/numbers[0..1]", "8, 8, 4"),
        ("/numbers[0,2]", "8, null, 8"),
        ("/numbers[0,1..2]", "8, 8, 8"),
        ("/numbers[0..-1][. = 4]", "1, null, 8"),
    ],
)
def test_update_simple_array(path: str, numbers: str) -> None:
    """NiFi's testUpdateSimpleArray: literals into array elements, coerced to INT."""
    runner = json_runner(MULTI_ARRAYS, MULTI_ARRAYS, **{path: "8"})
    runner.enqueue(MULTI_ARRAYS_JSON.encode())
    runner.run()
    assert only_success(runner) == MULTI_ARRAYS_JSON.replace("1, null, 4", numbers, 1)


def test_update_simple_array_that_is_null() -> None:
    """NiFi's testUpdateSimpleArray: a null array stays null."""
    runner = json_runner(MULTI_ARRAYS, MULTI_ARRAYS, **{"/numbers[*]": "8"})
    runner.enqueue(b'{"numbers":null}')
    runner.run()
    assert '"numbers" : null' in only_success(runner)


def _mary_at(indices: tuple[int, ...]) -> str:
    people = MULTI_ARRAYS_RECORDS[0]["peoples"]
    assert isinstance(people, list)
    changed = [people[3] if i in indices else p for i, p in enumerate(people)]
    return pretty([{"numbers": [1, None, 4], "peoples": changed}])


@pytest.mark.parametrize(
    ("path", "value", "count"),
    [
        ("/peoples[*]", "/peoples[3]", 4),
        ("/peoples[1]", "/peoples[3]", 2),
        ("/peoples[0,1..2]", "/peoples[3]", 4),
        ("/peoples[0..-1][./name != 'Mary Doe']", "/peoples[3]", 4),
    ],
)
def test_update_complex_arrays_counts(path: str, value: str, count: int) -> None:
    """NiFi's testUpdateComplexArrays: whole records into array elements."""
    runner = json_runner(MULTI_ARRAYS, MULTI_ARRAYS, **{path: value})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(MULTI_ARRAYS_JSON.encode())
    runner.run()
    assert only_success(runner).count("Mary Doe") == count


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/peoples[0..1]", _mary_at((0, 1))), ("/peoples[0,2]", _mary_at((0, 2)))],
)
def test_update_complex_arrays_contents(path: str, expected: str) -> None:
    """NiFi's testUpdateComplexArrays, the cases compared byte for byte."""
    runner = json_runner(MULTI_ARRAYS, MULTI_ARRAYS, **{path: "/peoples[3]"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(MULTI_ARRAYS_JSON.encode())
    runner.run()
    assert only_success(runner) == expected


def test_update_complex_arrays_nested() -> None:
    """NiFi's testUpdateComplexArrays: nested array elements, by path and by literal."""
    not_mary = "/peoples[0..-1][./name != 'Mary Doe']"
    runner = json_runner(
        MULTI_ARRAYS, MULTI_ARRAYS, **{f"{not_mary}/addresses[*]": "/peoples[3]/addresses[0]"}
    )
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(MULTI_ARRAYS_JSON.encode())
    runner.run()
    assert only_success(runner).count("1 nifi road") == 13

    runner = json_runner(
        MULTI_ARRAYS, MULTI_ARRAYS, **{f"{not_mary}/addresses[0,1..2]": "/peoples[3]/addresses[0]"}
    )
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(MULTI_ARRAYS_JSON.encode())
    runner.run()
    people = json.loads(MULTI_ARRAYS_JSON)[0]["peoples"]
    road = {"street": "1 nifi road", "city": "nificity"}
    for person in people[:3]:
        person["addresses"][:3] = [road, road, road]
    assert only_success(runner) == pretty([{"numbers": [1, None, 4], "peoples": people}])

    runner = json_runner(
        MULTI_ARRAYS, MULTI_ARRAYS, **{f"{not_mary}/addresses[0,1..2]/city": "newCity"}
    )
    runner.enqueue(MULTI_ARRAYS_JSON.encode())
    runner.run()
    assert only_success(runner).count("newCity") == 9


def test_nifi_16213_array_of_a_field_of_each_element() -> None:
    """NiFi's testNiFi16213: /participants = arrayOf(/participants[*]/user_id) succeeds."""
    participant = {
        "type": "record",
        "name": "Participant",
        "fields": [
            {"name": "user_id", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "authenticator", "type": "string"},
            {"name": "principal", "type": "string"},
        ],
    }
    parent = avro(
        "IngestedChatMessage",
        [
            ("chat_name", ["null", "string"]),
            ("participants", {"type": "array", "items": participant}),
        ],
    )
    child = avro(
        "Chat",
        [
            ("chat_name", ["null", "string"]),
            ("participants", {"type": "array", "items": {"type": "string", "logicalType": "uuid"}}),
        ],
    )
    ids = [
        "223a47ed-0f2c-44c5-b2ac-2a37133bf101",
        "b7e92e2b-de17-4e1e-9415-8bc8057d8cbc",
        "b9debc33-fbb6-4fca-9a90-f361b7572fea",
    ]
    record = {
        "chat_name": "Atlas Cutover Squad",
        "participants": [
            {"user_id": i, "authenticator": "saml", "principal": f"p{n}"} for n, i in enumerate(ids)
        ],
    }
    runner = json_runner(parent, child, **{"/participants": "arrayOf(/participants[*]/user_id)"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(json.dumps(record).encode())
    runner.run()
    assert json.loads(only_success(runner)) == [
        {"chat_name": "Atlas Cutover Squad", "participants": ids}
    ]
