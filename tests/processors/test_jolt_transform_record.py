"""Tests for JoltTransformRecord, ported from NiFi's TestJoltTransformRecord (no Java classes)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from flowcore import ProvenanceEventType
from flowcore.nifi.components import processor_class
from flowcore.nifi.types import nifi_type_of
from flowcore.testing import TestRunner
from processors import BUILTIN_PROCESSORS, JoltTransformRecord
from processors.record_services import JsonRecordSetWriter, JsonTreeReader

FIXTURES = Path(__file__).parent / "jolt_fixtures"
RECORD = FIXTURES / "nifi_record"
SPECS = FIXTURES / "nifi"

#: NiFi's generateTestData(1): one rating record.
RATING = {"rating": {"primary": {"value": 3}, "series": {"value": [5, 4]}, "quality": {"value": 3}}}


def schema_text(name: str) -> str:
    """An .avsc fixture without its license comment (Avro schema text is plain JSON)."""
    return re.sub(r"/\*.*?\*/", "", (RECORD / name).read_text(), flags=re.DOTALL).strip()


def jolt(output_schema: str | None, *, input_schema: str | None = "inputSchema.avsc",
         **properties: str) -> TestRunner:  # fmt: skip
    """JoltTransformRecord with a JSON reader and a pretty JSON writer, as NiFi's test sets up."""
    runner = TestRunner(JoltTransformRecord(record_reader="reader", record_writer="writer"))
    if input_schema is None:
        runner.add_service(JsonTreeReader("reader"))
    else:
        runner.add_service(
            JsonTreeReader(
                "reader",
                schema_access_strategy="schema-text-property",
                schema_text=schema_text(input_schema),
            )
        )
    access = (
        {
            "schema_access_strategy": "schema-text-property",
            "schema_text": schema_text(output_schema),
        }
        if output_schema
        else {}
    )
    runner.add_service(
        JsonRecordSetWriter(
            "writer",
            schema_write_strategy="full-schema-attribute",
            pretty_print_json="true",
            **access,
        )
    )
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner


def spec(name: str) -> str:
    """A NiFi specification fixture's text."""
    return (SPECS / name).read_text()


def transformed(runner: TestRunner) -> str:
    """The one transformed FlowFile's content, after checking the original went on."""
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("original", 1)
    runner.assert_transfer_count("failure", 0)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("mime.type", "application/json")
    return out.content.decode()


def test_relationships_created() -> None:
    """NiFi's testRelationshipsCreated: success, failure and original."""
    assert {r.name for r in JoltTransformRecord().get_relationships()} == {
        "success",
        "failure",
        "original",
    }


def test_invalid_jolt_spec() -> None:
    """NiFi's testInvalidJOLTSpec: an empty chain entry is not valid, the chainr spec is."""
    runner = jolt("chainrOutputSchema.avsc", jolt_specification="[{}]")
    runner.assert_not_valid()
    runner.set_property("Jolt Specification", spec("chainrSpec.json"))
    runner.assert_valid()


def test_incorrect_jolt_spec() -> None:
    """NiFi's testIncorrectJOLTSpec: a chain spec is not a shift spec."""
    runner = jolt(None, jolt_specification=spec("chainrSpec.json"))
    runner.set_property("Jolt Transform", "jolt-transform-shift")
    runner.assert_not_valid()


def test_spec_is_not_set_or_empty() -> None:
    """NiFi's testSpecIsNotSet and testSpecIsEmpty."""
    runner = jolt(None, jolt_transform="jolt-transform-shift")
    runner.assert_not_valid()
    runner.set_property("Jolt Specification", "")
    runner.assert_not_valid()


def test_spec_not_required_for_sort() -> None:
    """NiFi's testSpecNotRequired: Sort needs no specification."""
    runner = jolt(None, jolt_transform="jolt-transform-sort")
    runner.assert_valid()


def test_no_flowfile_content() -> None:
    """NiFi's testNoFlowFileContent: nothing queued, nothing transferred."""
    runner = jolt("chainrOutputSchema.avsc", jolt_specification=spec("chainrSpec.json"))
    runner.run()
    runner.assert_queue_empty()
    runner.assert_transfer_count("success", 0)
    runner.assert_transfer_count("failure", 0)


def test_no_records() -> None:
    """NiFi's testNoRecords: a FlowFile without records gives an empty transformed one."""
    runner = jolt("chainrOutputSchema.avsc", jolt_specification=spec("chainrSpec.json"))
    runner.enqueue(b"[]")
    runner.run()
    assert transformed(runner) == "[ ]"
    runner.flowfiles_for("success")[0].assert_attribute_equals("record.count", "0")


def test_invalid_flowfile_content() -> None:
    """NiFi's testInvalidFlowFileContent: content that does not parse goes to failure."""
    runner = jolt("chainrOutputSchema.avsc", jolt_specification=spec("chainrSpec.json"))
    runner.enqueue(b"invalid json")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_custom_transformation_with_missing_class_name() -> None:
    """NiFi's testCustomTransformationWithMissingClassName: Custom needs a class."""
    runner = jolt(None, jolt_specification=spec("chainrSpec.json"))
    runner.set_property("Jolt Transform", "jolt-transform-custom")
    runner.assert_not_valid()


def test_custom_transformation_with_invalid_class_name() -> None:
    """NiFi's testCustomTransformationWithInvalidClassName: a class that is not there."""
    runner = jolt(None, jolt_specification=spec("chainrSpec.json"))
    runner.set_property("Jolt Transform", "jolt-transform-custom")
    runner.set_property("Custom Transformation Class Name", "no.such.FakeCustomJoltTransform")
    runner.assert_not_valid()


@pytest.mark.parametrize("name", ["chainrSpec.json", "chainrSpecWithSingleLineComment.json"])
def test_transform_input_with_chainr(name: str) -> None:
    """NiFi's testTransformInputWithChainr (with and without a // comment in the spec)."""
    runner = jolt("chainrOutputSchema.avsc", jolt_specification=spec(name))
    runner.enqueue(json.dumps(RATING).encode())
    runner.run()
    assert transformed(runner) == (RECORD / "chainrOutput.json").read_text()
    types = [e.event_type for e in runner.provenance_events]
    assert ProvenanceEventType.FORK in types


@pytest.mark.parametrize(
    ("strategy", "spec_name", "schema", "expected"),
    [
        ("jolt-transform-shift", "shiftrSpec.json", "shiftrOutputSchema.avsc", "shiftrOutput.json"),
        (
            "jolt-transform-default",
            "defaultrSpec.json",
            "defaultrOutputSchema.avsc",
            "defaultrOutput.json",
        ),
        (
            "jolt-transform-remove",
            "removrSpec.json",
            "removrOutputSchema.avsc",
            "removrOutput.json",
        ),
        ("jolt-transform-card", "cardrSpec.json", "cardrOutputSchema.avsc", "cardrOutput.json"),
        (
            "jolt-transform-modify-default",
            "modifierDefaultSpec.json",
            "inputSchema.avsc",
            "modifierDefaultOutput.json",
        ),
        (
            "jolt-transform-modify-default",
            "modifierDefineSpec.json",
            "modifierDefineOutputSchema.avsc",
            "modifierDefineOutput.json",
        ),
        (
            "jolt-transform-modify-default",
            "modifierOverwriteSpec.json",
            "modifierOverwriteOutputSchema.avsc",
            "modifierOverwriteOutput.json",
        ),
    ],
)
def test_transform_input_with(strategy: str, spec_name: str, schema: str, expected: str) -> None:
    """NiFi's testTransformInputWith{Shiftr,Defaultr,Removr,Cardinality,Modifier*}."""
    runner = jolt(schema, jolt_specification=spec(spec_name), jolt_transform=strategy)
    runner.enqueue(json.dumps(RATING).encode())
    runner.run()
    assert transformed(runner) == (RECORD / expected).read_text()


def test_transform_input_with_shiftr_from_file() -> None:
    """NiFi's testTransformInputWithShiftrFromFile: the specification is a file's path."""
    runner = jolt(
        "shiftrOutputSchema.avsc",
        jolt_specification=str(SPECS / "shiftrSpec.json"),
        jolt_transform="jolt-transform-shift",
    )
    runner.enqueue(json.dumps(RATING).encode())
    runner.run()
    assert transformed(runner) == (RECORD / "shiftrOutput.json").read_text()


def test_transform_input_with_shiftr_multiple_output_records() -> None:
    """NiFi's testTransformInputWithShiftrMultipleOutputRecords: an array result is records."""
    xs = [
        {"x": [{"a": 1, "b": 2, "c": 3}, {"a": 11, "b": 21, "c": 31}, {"a": 21, "b": 2, "c": 3}]},
        {"x": [{"a": 100, "b": 200, "c": 300}, {"a": 101, "b": 201, "c": 301}]},
    ]
    runner = jolt(
        "shiftrOutputSchemaMultipleOutputRecords.avsc",
        input_schema=None,
        jolt_specification=(RECORD / "shiftrSpecMultipleOutputRecords.json").read_text(),
        jolt_transform="jolt-transform-shift",
    )
    runner.enqueue(json.dumps(xs).encode())
    runner.run()
    assert transformed(runner) == (RECORD / "shiftrOutputMultipleOutputRecords.json").read_text()
    runner.flowfiles_for("success")[0].assert_attribute_equals("record.count", "5")


@pytest.mark.parametrize("populated", [False, True])
def test_transform_input_with_sortr(populated: bool) -> None:
    """NiFi's testTransformInputWithSortr and ...SortrPopulatedSpec: the spec is ignored."""
    runner = jolt("sortrOutputSchema.avsc", jolt_transform="jolt-transform-sort")
    if populated:
        runner.set_property("Jolt Specification", "abcd")
    runner.enqueue(json.dumps(RATING).encode())
    runner.run()
    assert transformed(runner) == (RECORD / "sortrOutput.json").read_text()


def test_transform_input_with_defaultr_expression_language() -> None:
    """NiFi's testTransformInputWithDefaultrExpressionLanguage (quota from an attribute here)."""
    runner = jolt(
        "defaultrELOutputSchema.avsc",
        jolt_specification=spec("defaultrELSpec.json"),
        jolt_transform="jolt-transform-default",
    )
    runner.enqueue(json.dumps(RATING).encode(), {"quota": "5"})
    runner.run()
    assert transformed(runner) == (RECORD / "defaultrELOutput.json").read_text()


def test_transform_input_custom_transformation_ignored() -> None:
    """NiFi's testTransformInputCustomTransformationIgnored: the class only counts for Custom."""
    runner = jolt(
        "defaultrOutputSchema.avsc",
        jolt_specification=spec("defaultrSpec.json"),
        jolt_transform="jolt-transform-default",
    )
    runner.enqueue(json.dumps(RATING).encode())
    runner.run()
    assert transformed(runner) == (RECORD / "defaultrOutput.json").read_text()


def test_jolt_spec_el() -> None:
    """NiFi's testJoltSpecEL: the whole specification from an attribute."""
    runner = jolt(
        "defaultrOutputSchema.avsc",
        jolt_specification="${joltSpec}",
        jolt_transform="jolt-transform-default",
    )
    the_spec = (
        '{"RatingRange":5,"rating":{"*":{"MaxLabel":"High","MinLabel":"Low",'
        '"DisplayType":"NORMAL"}}}'
    )
    runner.enqueue(json.dumps(RATING).encode(), {"joltSpec": the_spec})
    runner.run()
    assert transformed(runner) == (RECORD / "defaultrOutput.json").read_text()


def test_jolt_spec_invalid_el() -> None:
    """NiFi's testJoltSpecInvalidEL: an unknown EL function is not valid."""
    runner = jolt(None, jolt_specification="${joltSpec:nonExistingFunction()}")
    runner.assert_not_valid()


def test_jolt_complex_choice_field() -> None:
    """NiFi's testJoltComplexChoiceField: inferred schemas, a record written as Java's text."""
    runner = jolt(
        None,
        input_schema=None,
        jolt_specification=(RECORD / "flattenSpec.json").read_text(),
    )
    runner.enqueue((RECORD / "input.json").read_bytes())
    runner.run()
    assert transformed(runner) == (RECORD / "flattenedOutput.json").read_text()


def test_first_record_that_transforms_to_nothing_fails() -> None:
    """NiFi: a first record whose transform gives nothing fails the FlowFile."""
    runner = jolt(
        None,
        jolt_specification='{"nothing": "x"}',
        jolt_transform="jolt-transform-shift",
    )
    runner.enqueue(json.dumps(RATING).encode())
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_inherited_schema_comes_from_the_first_record() -> None:
    """With the writer inheriting, the schema is inferred from the first transformed record
    (the reader's null field is in it, as NiFi's record maps hold every schema field)."""
    runner = jolt(
        None,
        input_schema=None,
        jolt_specification='{"a": "out.a", "b": "out.b"}',
        jolt_transform="jolt-transform-shift",
    )
    runner.remove_property("Pretty Print JSON")
    runner.enqueue(b'[{"a": 1}, {"a": 2, "b": "x"}]')
    runner.run()
    assert json.loads(transformed(runner)) == [
        {"out": {"a": 1, "b": None}},
        {"out": {"a": 2, "b": "x"}},
    ]


def test_nifi_types_import_and_export() -> None:
    """NiFi 2's class (nifi-jolt-nar) exports; NiFi 1's jolt.record class imports too."""
    exported = nifi_type_of("JoltTransformRecord")
    assert exported.type == "org.apache.nifi.processors.jolt.JoltTransformRecord"
    assert exported.bundle.artifact == "nifi-jolt-nar"
    for name in (exported.type, "org.apache.nifi.processors.jolt.record.JoltTransformRecord"):
        assert processor_class(name, {}, BUILTIN_PROCESSORS) is JoltTransformRecord


def test_a_writer_failure_removes_the_transformed_child_and_fails_the_original() -> None:
    """A Record Writer that fails once the child exists (its schema text does not parse) sends
    the original to failure and leaves no child behind."""
    runner = TestRunner(JoltTransformRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(
        JsonRecordSetWriter(
            "writer", schema_access_strategy="schema-text-property", schema_text="${bad}"
        )
    )
    runner.set_property("Jolt Transform", "jolt-transform-sort")
    runner.enqueue(b'[{"b": 1, "a": 2}]', {"bad": "{not json"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
