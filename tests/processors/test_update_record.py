"""Tests for UpdateRecord, ported from NiFi's TestUpdateRecord (its inputs and outputs inline)."""

from __future__ import annotations

import json

import pytest

from flowcore import ProvenanceEventType
from flowcore.testing import TestRunner
from processors import UpdateRecord
from processors.record_services import (
    CSVReader,
    CSVRecordSetWriter,
    JsonRecordSetWriter,
    JsonTreeReader,
)


def avro(name: str, fields: list[tuple[str, object]]) -> str:
    """An Avro record schema's text."""
    return json.dumps(
        {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}
    )


NAME_RECORD = {
    "type": "record",
    "name": "nameRecord",
    "fields": [{"name": "last", "type": "string"}, {"name": "first", "type": "string"}],
}
PERSON_WITH_NAME_RECORD = avro("personWithNameRecord", [("id", "int"), ("name", NAME_RECORD)])
PERSON_WITH_NAME_AND_MOTHER = avro(
    "personWithNameRecord", [("id", "int"), ("name", NAME_RECORD), ("mother", "nameRecord")]
)
PERSON_WITH_NAME_STRING = avro("personWithNameRecord", [("id", "int"), ("name", "string")])
PERSON_WITH_NAME_STRING_FIELDS = avro(
    "personWithNameRecord", [("id", "int"), ("firstName", "string"), ("lastName", "string")]
)
PERSON_WITH_STRINGIFIED_NAME = avro(
    "personWithNameRecord", [("id", "int"), ("stringified_name", "string")]
)
NAME_FIELDS_ONLY = avro("nameFieldsOnly", [("last", "string"), ("first", "string")])
ADDRESS = {
    "type": "record",
    "name": "Person",
    "fields": [{"name": "street", "type": "string"}, {"name": "city", "type": "string"}],
}
PERSON_WITH_ADDRESS = avro(
    "personWithNameRecord",
    [
        ("id", "int"),
        ("name", NAME_RECORD),
        ("address", ["null", {"type": "array", "items": ADDRESS}]),
    ],
)
MULTI_ARRAYS = avro(
    "simpleArray",
    [
        ("numbers", ["null", {"type": "array", "items": "int"}]),
        (
            "peoples",
            [
                "null",
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "People",
                        "fields": [
                            {"name": "name", "type": "string"},
                            {
                                "name": "addresses",
                                "type": ["null", {"type": "array", "items": ADDRESS}],
                            },
                        ],
                    },
                },
            ],
        ),
    ],
)
EMBEDDED_RECORD = avro(
    "Parent",
    [
        ("str", "string"),
        (
            "embedded",
            [
                {
                    "name": "EmbeddedRecord",
                    "type": "record",
                    "fields": [
                        {"name": "label", "type": "string"},
                        {
                            "name": "child",
                            "type": {
                                "name": "ChildRecord",
                                "type": "record",
                                "fields": [{"name": "name", "type": "string"}],
                            },
                        },
                    ],
                },
                "null",
            ],
        ),
    ],
)
STRING_OR_NULL = ["string", "null"]
ORGANISATION = avro(
    "organisation",
    [
        ("name", STRING_OR_NULL),
        (
            "departments",
            [
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "department",
                        "fields": [
                            {"name": "name", "type": STRING_OR_NULL},
                            {"name": "manager", "type": STRING_OR_NULL},
                        ],
                    },
                },
                "null",
            ],
        ),
        (
            "address",
            [
                {
                    "type": "record",
                    "name": "address",
                    "fields": [
                        {"name": n, "type": STRING_OR_NULL}
                        for n in ("address_1", "address_2", "postcode")
                    ],
                },
                "null",
            ],
        ),
    ],
)

PERSON = b"""{
\t"id": 485,
\t"name": {
\t\t"last": "Doe",
\t\t"first": "John"
\t},
\t"mother": {
\t    "last": "Doe",
\t    "first": "Jane"
\t}
}"""
PERSON_ADDRESS = b"""{"id": 485, "name": {"last": "Doe", "first": "John"},
 "address": [{"street": "1 nifi stree", "city": "nifi"}]}"""
PERSON_STRINGIFIED_NAME = (
    b'{"id": 485, "stringified_name": "{\\"last\\": \\"Doe\\", \\"first\\": \\"John\\"}"}'
)


def _people(name: str, kind: str) -> dict[str, object]:
    streets = [{"street": f"{i} nifi {kind}", "city": "nificity"} for i in range(1, 5)]
    return {"name": name, "addresses": streets}


MULTI_ARRAYS_RECORDS = [
    {
        "numbers": [1, None, 4],
        "peoples": [
            _people("John Doe", "street"),
            _people("Jane Doe", "avenue"),
            _people("Tom Doe", "boulevard"),
            _people("Mary Doe", "road"),
        ],
    }
]


def pretty(value: object, depth: int = 0) -> str:
    """Jackson's default pretty printer, as NiFi's JsonRecordSetWriter writes with Pretty Print."""
    if isinstance(value, dict):
        if not value:
            return "{ }"
        inner = "  " * (depth + 1)
        fields = ",".join(
            f"\n{inner}{json.dumps(k)} : {pretty(v, depth + 1)}" for k, v in value.items()
        )
        return "{" + fields + "\n" + "  " * depth + "}"
    if isinstance(value, list):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(pretty(v, depth) for v in value) + " ]"
    return json.dumps(value, ensure_ascii=False)


def json_runner(
    input_schema: str | None, output_schema: str | None, **properties: str
) -> TestRunner:
    """UpdateRecord with a JsonTreeReader and a pretty JsonRecordSetWriter (as NiFi's tests)."""
    reader = (
        JsonTreeReader(
            "reader", schema_access_strategy="schema-text-property", schema_text=input_schema
        )
        if input_schema
        else JsonTreeReader("reader")
    )
    writer_options = {"pretty_print_json": "true", "schema_write_strategy": "full-schema-attribute"}
    writer = (
        JsonRecordSetWriter(
            "writer",
            schema_access_strategy="schema-text-property",
            schema_text=output_schema,
            **writer_options,
        )
        if output_schema
        else JsonRecordSetWriter("writer", **writer_options)
    )
    runner = TestRunner(UpdateRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(reader)
    runner.add_service(writer)
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner


NAME_AGE = avro("nameAge", [("name", ["null", "string"]), ("age", ["null", "int"])])


def csv_runner(schema: str = NAME_AGE, **properties: str) -> TestRunner:
    """UpdateRecord over CSV lines without a header (NiFi's MockRecordParser/MockRecordWriter)."""
    runner = TestRunner(UpdateRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(
        CSVReader("reader", schema_access_strategy="schema-text-property", schema_text=schema)
    )
    runner.add_service(CSVRecordSetWriter("writer", include_header_line="false"))
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner


def only_success(runner: TestRunner) -> str:
    """The content of the one FlowFile all went to success."""
    runner.assert_all_flowfiles_transferred("success", 1)
    return runner.flowfiles_for("success")[0].content.decode()


def test_literal_replacement_value() -> None:
    """NiFi's testLiteralReplacementValue: /name becomes the literal."""
    runner = csv_runner(**{"/name": "Jane Doe"})
    runner.enqueue(b"John Doe,35\n")
    runner.run()
    assert only_success(runner) == "Jane Doe,35\n"
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("record.count", "1")
    assert [e.event_type for e in runner.provenance_events] == [
        ProvenanceEventType.CONTENT_MODIFIED
    ]


def test_literal_replacement_value_expression_language() -> None:
    """NiFi's testLiteralReplacementValueExpressionLanguage: EL over the FlowFile's attributes."""
    runner = csv_runner(**{"/name": "${newName}"})
    runner.enqueue(b"John Doe,35\n", {"newName": "Jane Doe"})
    runner.run()
    assert only_success(runner) == "Jane Doe,35\n"


def test_record_path_replacement_value() -> None:
    """NiFi's testRecordPathReplacementValue: /name takes /age's value."""
    runner = csv_runner(**{"/name": "/age", "Replacement Value Strategy": "record-path-value"})
    runner.enqueue(b"John Doe,35\n")
    runner.run()
    assert only_success(runner) == "35,35\n"


def test_record_path_replacement_with_filter_function_call() -> None:
    """NiFi's testRecordPathReplacementWithFilterFunctionCall: a new boolean field is added."""
    runner = csv_runner(
        **{"/hasAge": "not(isEmpty(/age))", "Replacement Value Strategy": "record-path-value"}
    )
    runner.enqueue(b"John Doe,35\n")
    runner.run()
    assert only_success(runner) == "John Doe,35,true\n"


def test_invalid_record_path_using_expression_language() -> None:
    """NiFi's testInvalidRecordPathUsingExpressionLanguage: a bad path from EL fails."""
    runner = csv_runner(
        **{"/name": "${recordPath}", "Replacement Value Strategy": "record-path-value"}
    )
    runner.enqueue(b"John Doe,35\n", {"recordPath": "hello"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_content_equals(b"John Doe,35\n")
    assert "hello" in out.attributes["record.error.message"]


def test_literal_replacement_row_index_value_expression_language() -> None:
    """NiFi's testLiteralReplacementRowIndexValueExpressionLanguage: record.index counts from 1."""
    schema = avro("r", [("id", ["null", "long"]), ("name", "string"), ("age", "int")])
    runner = csv_runner(schema, **{"/id": "${record.index}"})
    runner.enqueue(b",John Doe,35\n,Jane Doe,36\n,John Smith,37\n,Jane Smith,38\n")
    runner.run()
    expected = "1,John Doe,35\n2,Jane Doe,36\n3,John Smith,37\n4,Jane Smith,38\n"
    assert only_success(runner) == expected


def test_record_index_writes_numbers_as_nifi_chooses_the_choice() -> None:
    """A literal into a LONG field makes it CHOICE[LONG, STRING]; "1" is written as the LONG 1."""
    runner = json_runner(None, None, **{"/id": "${record.index}"})
    runner.remove_property("Pretty Print JSON")
    runner.enqueue(b'[{"id":null,"name":"a"},{"id":7,"name":"b"}]')
    runner.run()
    text = only_success(runner)
    assert json.loads(text) == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]


def test_replace_with_missing_record_path() -> None:
    """NiFi's testReplaceWithMissingRecordPath: a path that selects nothing sets null."""
    schema = avro(
        "r",
        [
            ("name", ["null", "string"]),
            ("siblings", ["null", {"type": "array", "items": "string"}]),
        ],
    )
    runner = json_runner(schema, None, **{"/name": "/siblings[0]/name"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(b'{"name": "John Doe", "siblings": null}')
    runner.run()
    assert json.loads(only_success(runner)) == [{"name": None, "siblings": None}]


def test_relative_path() -> None:
    """NiFi's testRelativePath: ../nickname starts at the selected field."""
    schema = avro("r", [("name", "string"), ("nickname", "string")])
    runner = csv_runner(
        schema, **{"/name": "../nickname", "Replacement Value Strategy": "record-path-value"}
    )
    runner.enqueue(b"John Doe,Johnny\n")
    runner.run()
    assert only_success(runner) == "Johnny,Johnny\n"


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


def test_changing_schema() -> None:
    """NiFi's testChangingSchema: a record field takes a string; the writer's schema says so."""
    runner = json_runner(
        PERSON_WITH_NAME_RECORD, PERSON_WITH_NAME_STRING, **{"/name": "/name/first"}
    )
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON)
    runner.run()
    assert only_success(runner) == '[ {\n  "id" : 485,\n  "name" : "John"\n} ]'


def test_changing_schema_inherited_makes_a_choice() -> None:
    """With the record's own schema, a RECORD field given a string becomes a CHOICE."""
    runner = json_runner(PERSON_WITH_NAME_RECORD, None, **{"/name": "/name/first"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON)
    runner.run()
    assert json.loads(only_success(runner)) == [{"id": 485, "name": "John"}]
    schema = json.loads(runner.flowfiles_for("success")[0].attributes["avro.schema"])
    kinds = schema["fields"][1]["type"]
    assert "string" in kinds
    assert any(isinstance(k, dict) and k.get("type") == "record" for k in kinds)


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


def test_add_field_not_in_input_record() -> None:
    """NiFi's testAddFieldNotInInputRecord: two new fields from the nested name."""
    runner = json_runner(
        PERSON_WITH_NAME_RECORD,
        PERSON_WITH_NAME_STRING_FIELDS,
        **{"/firstName": "/name/first", "/lastName": "/name/last"},
    )
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON)
    runner.run()
    assert only_success(runner) == pretty([{"id": 485, "firstName": "John", "lastName": "Doe"}])


def test_add_field_not_in_input_record_inherited() -> None:
    """With the record's own schema, the new fields are added after the old ones."""
    runner = json_runner(PERSON_WITH_NAME_RECORD, None, **{"/firstName": "/name/first"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON)
    runner.run()
    expected = [{"id": 485, "name": {"last": "Doe", "first": "John"}, "firstName": "John"}]
    assert json.loads(only_success(runner)) == expected


def test_field_values_in_el() -> None:
    """NiFi's testFieldValuesInEL: field.value is the selected field's value."""
    runner = json_runner(
        PERSON_WITH_NAME_RECORD,
        PERSON_WITH_NAME_RECORD,
        **{"/name/last": "${field.value:toUpper()}"},
    )
    runner.enqueue(PERSON)
    runner.run()
    expected = [{"id": 485, "name": {"last": "DOE", "first": "John"}}]
    assert only_success(runner) == pretty(expected)


def test_field_name_and_type_in_el() -> None:
    """field.name and field.type are the selected field's name and NiFi type name."""
    runner = json_runner(
        PERSON_WITH_NAME_RECORD, None, **{"/name/*": "${field.name}:${field.type}"}
    )
    runner.enqueue(PERSON)
    runner.run()
    expected = [{"id": 485, "name": {"last": "last:STRING", "first": "first:STRING"}}]
    assert json.loads(only_success(runner)) == expected


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


def test_column_literal_keeps_other_columns_and_adds_a_field() -> None:
    """A /field literal is a column operation: other columns untouched, a new field appended."""
    runner = json_runner(None, None, **{"/name": "x", "/added": "${tag}"})
    runner.remove_property("Pretty Print JSON")
    rows = [{"name": f"n{i}", "n": i} for i in range(5)]
    runner.enqueue(json.dumps(rows).encode(), {"tag": "t"})
    runner.run()
    expected = [{"name": "x", "n": i, "added": "t"} for i in range(5)]
    assert json.loads(only_success(runner)) == expected


def test_literal_that_does_not_fit_the_writer_schema_fails() -> None:
    """A literal the writer's schema cannot take (text for an int) sends the FlowFile to failure."""
    runner = json_runner(PERSON_WITH_NAME_RECORD, PERSON_WITH_NAME_RECORD, **{"/id": "abc"})
    runner.enqueue(PERSON)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "id" in runner.flowfiles_for("failure")[0].attributes["record.error.message"]


def test_needs_one_record_path_and_valid_names() -> None:
    """At least one dynamic property, each named by a valid RecordPath."""
    runner = csv_runner()
    runner.assert_not_valid()
    runner.set_property("/name", "x")
    runner.assert_valid()
    runner.set_property("not a path[", "x")
    runner.assert_not_valid()


def test_no_records_keeps_the_flowfile() -> None:
    """Content without records goes to success with record.count 0."""
    runner = json_runner(None, None, **{"/name": "x"})
    runner.enqueue(b"[]")
    runner.run()
    assert only_success(runner) == "[ ]"
    runner.flowfiles_for("success")[0].assert_attribute_equals("record.count", "0")


def test_many_batches_share_the_first_record_schema() -> None:
    """Records over several reader batches are all updated, record.index running on."""
    runner = json_runner(None, None, **{"/i": "${record.index}"})
    runner.remove_property("Pretty Print JSON")
    rows = [{"i": 0, "s": "a"} for _ in range(2500)]
    runner.enqueue(json.dumps(rows).encode())
    runner.run()
    out = json.loads(only_success(runner))
    assert [r["i"] for r in out] == list(range(1, 2501))


def test_record_path_value_of_same_named_values_fails_naming_them() -> None:
    """A Record Path Value selecting several values of one field name (an array's elements)
    cannot make one record (NiFi's SimpleRecordSchema: "Two fields are given with the same
    name"): the FlowFile fails, the message naming the field and record; it used to keep the
    last element alone as the value."""
    schema = avro(
        "r", [("id", "int"), ("numbers", {"type": "array", "items": "int"}), ("n", ["null", "int"])]
    )
    runner = json_runner(schema, schema, **{"/n": "/numbers[*]"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(
        json.dumps([{"id": 1, "numbers": [7], "n": None}, {"id": 2, "numbers": [1, 2], "n": None}])
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    message = runner.flowfiles_for("failure")[0].attributes["record.error.message"]
    assert message.startswith("record 2, property '/n': Two fields are given with the same name")
    assert "'numbers'" in message


def test_record_path_errors_are_record_failures() -> None:
    """RecordPathError is one of the shared RECORD_FAILURES (no processor adds it itself): a
    Record Path Value from EL that does not compile fails the FlowFile with its message."""
    from flowcore.errors import RecordPathError
    from processors._record_io import RECORD_FAILURES

    assert RecordPathError in RECORD_FAILURES
    runner = json_runner(PERSON_WITH_NAME_RECORD, None, **{"/name/first": "${path}"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON, {"path": "/name["})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert runner.flowfiles_for("failure")[0].attributes["record.error.message"]
