"""NiFi's TestUpdateRecord schemas and records, and UpdateRecord harnesses, for the
test_update_record* modules."""

from __future__ import annotations

import json

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
