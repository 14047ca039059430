"""Tests for UpdateRecord, ported from NiFi's TestUpdateRecord (its inputs and outputs inline):
replacement values (literals, Expression Language, Record Path Values), schema changes, failures
and validation. What a RecordPath selects (the root, records, arrays) is in
test_update_record_paths.py; the schemas and harnesses are in _update_record.py."""

from __future__ import annotations

import json

import pytest

from flowcore import ProvenanceEventType
from tests.processors._update_record import (
    NAME_FIELDS_ONLY,
    PERSON,
    PERSON_WITH_NAME_RECORD,
    PERSON_WITH_NAME_STRING,
    PERSON_WITH_NAME_STRING_FIELDS,
    avro,
    csv_runner,
    json_runner,
    only_success,
    pretty,
)


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
    from flowcore.records.record_io import RECORD_FAILURES

    assert RecordPathError in RECORD_FAILURES
    runner = json_runner(PERSON_WITH_NAME_RECORD, None, **{"/name/first": "${path}"})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON, {"path": "/name["})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert runner.flowfiles_for("failure")[0].attributes["record.error.message"]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("/", "/name/*"),  # testSetRootPathAbsoluteWithMultipleValues
        ("/", "/name"),  # testSetRootPathAbsoluteWithSingleValue
        ("/name/..", "/name/*"),  # testSetRootPathRelativeWithMultipleValues
        ("/name/..", "/name"),  # testSetRootPathRelativeWithSingleValue
    ],
)
def test_set_root_path(path: str, value: str) -> None:
    """NiFi's testSetRootPathAbsolute/RelativeWithMultiple/SingleValue(s): setting the root
    (/ or /name/..) to the name record or its fields makes the record those fields."""
    runner = json_runner(PERSON_WITH_NAME_RECORD, NAME_FIELDS_ONLY, **{path: value})
    runner.set_property("Replacement Value Strategy", "record-path-value")
    runner.enqueue(PERSON)
    runner.run()
    assert only_success(runner) == '[ {\n  "last" : "Doe",\n  "first" : "John"\n} ]'


def test_a_fraction_set_on_an_int_field_widens_it_and_stays_text() -> None:
    """NiFi widens /a (INT) to CHOICE[INT, STRING] for the literal "1.5", which is no INT
    (isIntegral), so the STRING "1.5" is written, not the truncated 1."""
    runner = json_runner(None, None, **{"/a": "1.5"})
    runner.enqueue(b'[{"a": 1}]')
    runner.run()
    assert json.loads(only_success(runner)) == [{"a": "1.5"}]
