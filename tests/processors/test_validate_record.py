"""Tests for ValidateRecord (cases after NiFi's TestValidateRecord, on CSV and JSON services)."""

from __future__ import annotations

import io
import json

import fastavro
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore import ProvenanceEventType
from flowcore.records import schema as s
from flowcore.testing import TestRunner
from processors import ValidateRecord
from processors._record_validation import _raw_fits, json_mismatches
from processors.record_services import (
    AvroRecordSetWriter,
    CSVReader,
    CSVRecordSetWriter,
    JsonRecordSetWriter,
    JsonTreeReader,
)

SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "person",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "name", "type": "string"},
            {"name": "balance", "type": ["double", "null"]},
        ],
    }
)


def validate(content: bytes, reader: object = None, **properties: str) -> TestRunner:
    """A ValidateRecord runner (schema text SCHEMA) that has validated *content*."""
    properties.setdefault("schema_access_strategy", "schema-text-property")
    properties.setdefault("schema_text", SCHEMA)
    runner = TestRunner(
        ValidateRecord(record_reader="reader", record_writer="writer", **properties)
    )
    runner.add_service(reader or JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.enqueue(content)
    runner.run()
    return runner


def test_valid_and_invalid_records_are_split() -> None:
    """Records of the wrong type or missing a required field go to invalid, the rest to valid;
    the original is dropped. The JSON 4 in a DOUBLE field is an Integer to NiFi's strict
    checking (its raw value, though the record was read as 4.0)."""
    content = (
        b'[{"id": 1, "name": "a", "balance": 1.5},'
        b' {"id": "x", "name": "b", "balance": 2},'
        b' {"id": 3, "balance": null},'
        b' {"id": 4, "name": "d", "balance": 4.5},'
        b' {"id": 5, "name": "e", "balance": 5}]'
    )
    runner = validate(content, validation_details_attribute_name="why")
    runner.assert_transfer_count("valid", 1)
    runner.assert_transfer_count("invalid", 1)
    runner.assert_transfer_count("failure", 0)
    valid = runner.flowfiles_for("valid")[0]
    valid.assert_attribute_equals("record.count", "2")
    valid.assert_content_equals(
        '[{"id":1,"name":"a","balance":1.5},{"id":4,"name":"d","balance":4.5}]'
    )
    invalid = runner.flowfiles_for("invalid")[0]
    invalid.assert_attribute_equals("record.count", "3")
    assert invalid.attributes["why"] == (
        "Records in this FlowFile were invalid for the following reasons: The following 1 "
        "fields were missing: [/name]; The following 2 fields had values whose type did not "
        "match the schema: [/balance, /id]"
    )
    routes = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.ROUTE]
    assert [e.relationship for e in routes] == ["valid", "invalid"]
    assert routes[1].details == invalid.attributes["why"]


def test_all_valid_makes_one_flowfile() -> None:
    """With every record valid, only valid gets a FlowFile."""
    runner = validate(b'{"id": 1, "name": "a", "balance": 1.0}')
    runner.assert_transfer_count("valid", 1)
    runner.assert_transfer_count("invalid", 0)


def test_strict_checking_refuses_an_int_column_for_a_double_field() -> None:
    """As NiFi's strict checking (an Integer is not a Double), an int column is invalid for a
    double field; without strict checking it converts."""
    content = b'{"id": 1, "name": "a", "balance": 1}'
    validate(content).assert_transfer_count("invalid", 1)
    validate(content, strict_type_checking="false").assert_transfer_count("valid", 1)


def test_extra_fields() -> None:
    """A field the schema lacks is allowed by default; with Allow Extra Fields false the record
    is invalid and the details name it (after NiFi's '; ' separator)."""
    content = b'{"id": 1, "name": "a", "balance": 1.5, "other": true}'
    validate(content).assert_transfer_count("valid", 1)
    runner = validate(content, allow_extra_fields="false", validation_details_attribute_name="why")
    runner.assert_transfer_count("invalid", 1)
    assert runner.flowfiles_for("invalid")[0].attributes["why"] == (
        "Records in this FlowFile were invalid for the following reasons: ; The following 1 "
        "fields were present in the Record but not in the schema: [/other]"
    )


def test_strict_type_checking() -> None:
    """A CSV value read as text is invalid for an int field when strict, valid when not."""
    content = b"id,name,balance\n1,a,2.5\n"
    reader = CSVReader(
        "reader", treat_first_line_as_header="true", schema_access_strategy="csv-header-derived"
    )
    validate(content, reader).assert_transfer_count("invalid", 1)
    loose = validate(content, reader, strict_type_checking="false")
    loose.assert_transfer_count("valid", 1)
    loose.flowfiles_for("valid")[0].assert_content_equals('[{"id":1,"name":"a","balance":2.5}]')


def test_unreadable_content_goes_to_failure() -> None:
    """Content that is not JSON sends the original to failure, unchanged."""
    runner = validate(b"nonsense")
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals("nonsense")


def test_invalid_records_keep_the_readers_format_with_their_own_writer() -> None:
    """Record Writer for Invalid Records writes the invalid ones (here as CSV)."""
    runner = TestRunner(
        ValidateRecord(
            record_reader="reader",
            record_writer="writer",
            record_writer_for_invalid_records="bad",
            schema_access_strategy="schema-text-property",
            schema_text=SCHEMA,
        )
    )
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.add_service(CSVRecordSetWriter("bad"))
    runner.enqueue(b'{"id": "x", "name": "b", "balance": 2}')
    runner.run()
    runner.flowfiles_for("invalid")[0].assert_content_equals("id,name,balance\nx,b,2\n")


def test_columns_order_is_kept_when_every_record_is_valid() -> None:
    """NiFi's testColumnsOrder: an inferred CSV schema writes the columns back in their order."""
    content = (
        b"fieldA,fieldB,fieldC,fieldD,fieldE,fieldF\n"
        b"valueA,valueB,valueC,valueD,valueE,valueF\nvalueA,valueB,valueC,valueD,valueE,valueF\n"
    )
    runner = TestRunner(ValidateRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(CSVRecordSetWriter("writer"))
    runner.enqueue(content)
    runner.run()
    runner.assert_all_flowfiles_transferred("valid", 1)
    runner.flowfiles_for("valid")[0].assert_content_equals(content)


def test_a_missing_required_array_is_invalid_unless_it_has_a_default() -> None:
    """NiFi's testValidateMissingRequiredArray / ...WithDefault: a record without a required
    array field is invalid; with "default": [] in the schema it is valid."""
    items = {
        "type": "record",
        "name": "Records_record",
        "fields": [{"name": "id", "type": "string"}],
    }
    field = {"name": "Records", "type": {"type": "array", "items": items}}
    schema = {"name": "Test", "type": "record", "fields": [field]}
    content = b'{"NotRecords": [{"id": "1"}]}'
    loose = {"strict_type_checking": "false", "allow_extra_fields": "true"}
    runner = validate(content, schema_text=json.dumps(schema), **loose)
    runner.assert_transfer_count("valid", 0)
    runner.assert_transfer_count("invalid", 1)
    runner.assert_transfer_count("failure", 0)
    schema["fields"] = [{**field, "default": []}]
    runner = validate(content, schema_text=json.dumps(schema), **loose)
    runner.assert_transfer_count("valid", 1)
    runner.assert_transfer_count("invalid", 0)


def test_validation_details_attribute_for_invalid_records() -> None:
    """NiFi's testValidationsDetailsAttributeForInvalidRecords: a headerless CSV read with the
    schema; the row whose id is not an int is invalid and the details name /id."""
    schema = json.dumps(
        {
            "name": "personWithNameRecord",
            "namespace": "nifi",
            "type": "record",
            "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}],
        }
    )
    runner = TestRunner(
        ValidateRecord(
            record_reader="reader",
            record_writer="writer",
            record_writer_for_invalid_records="bad",
            allow_extra_fields="false",
            maximum_validation_details_length="150",
            validation_details_attribute_name="valDetails",
        )
    )
    runner.add_service(
        CSVReader("reader", schema_access_strategy="schema-text-property", schema_text=schema)
    )
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.add_service(CSVRecordSetWriter("bad", include_header_line="false"))
    runner.enqueue(b"1, John Doe\n2, Jane Doe\nThree, Jack Doe\n")
    runner.run()
    runner.assert_transfer_count("invalid", 1)
    runner.assert_transfer_count("failure", 0)
    invalid = runner.flowfiles_for("invalid")[0]
    invalid.assert_attribute_equals("record.count", "1")
    invalid.assert_content_equals("Three,Jack Doe\n")
    invalid.assert_attribute_equals(
        "valDetails",
        "Records in this FlowFile were invalid for the following reasons: ; "
        "The following 1 fields had values whose type did not match the schema: [/id]",
    )
    runner.flowfiles_for("valid")[0].assert_content_equals(
        '[{"id":1,"name":"John Doe"},{"id":2,"name":"Jane Doe"}]'
    )


TIMESTAMP_SCHEMA = json.dumps(
    {
        "name": "ts",
        "namespace": "nifi",
        "type": "record",
        "fields": [
            {"name": "timestamp", "type": {"type": "long", "logicalType": "timestamp-millis"}}
        ],
    }
)


def _timestamps(reader: object) -> TestRunner:
    """ValidateRecord over NiFi's timestamp.json, written with the slash Timestamp Format."""
    runner = TestRunner(
        ValidateRecord(
            record_reader="reader",
            record_writer="writer",
            schema_access_strategy="schema-text-property",
            schema_text=TIMESTAMP_SCHEMA,
            allow_extra_fields="false",
            strict_type_checking="true",
        )
    )
    runner.add_service(reader)
    runner.add_service(JsonRecordSetWriter("writer", timestamp_format="yyyy/MM/dd HH:mm:ss"))
    runner.enqueue(b'[{"timestamp":"2019/06/27 12:45:28"}]')
    runner.run()
    return runner


def test_validate_json_timestamp() -> None:
    """NiFi's testValidateJsonTimestamp: a timestamp read with the reader's format (given schema
    or inferred) is valid and written back the same."""
    slash = "yyyy/MM/dd HH:mm:ss"
    for reader in (
        JsonTreeReader(
            "reader",
            schema_access_strategy="schema-text-property",
            schema_text=TIMESTAMP_SCHEMA,
            timestamp_format=slash,
        ),
        JsonTreeReader("reader", timestamp_format=slash),
    ):
        runner = _timestamps(reader)
        runner.assert_transfer_count("valid", 1)
        runner.flowfiles_for("valid")[0].assert_content_equals(
            '[{"timestamp":"2019/06/27 12:45:28"}]'
        )


def test_validate_json_timestamp_in_another_format_is_invalid() -> None:
    """NiFi's testValidateJsonTimestamp, third part: read with the dashed format the timestamp
    does not fit, so the record is invalid (written unchanged)."""
    dashed = JsonTreeReader(
        "reader",
        schema_access_strategy="schema-text-property",
        schema_text=TIMESTAMP_SCHEMA,
        timestamp_format="yyyy-MM-dd HH:mm:ss",
    )
    runner = _timestamps(dashed)
    runner.assert_transfer_count("invalid", 1)
    runner.flowfiles_for("invalid")[0].assert_content_equals(
        '[{"timestamp":"2019/06/27 12:45:28"}]'
    )


def test_validate_maps() -> None:
    """NiFi's testValidateMaps: MAP[INT] fields at the root and in an array of records are
    valid and come out of the Avro writer whole."""
    int_map = {"type": "map", "values": "int"}
    item = {
        "name": "data",
        "type": "record",
        "fields": [
            {"name": "version", "type": ["null", "string"], "default": None},
            {"name": "points", "type": int_map},
        ],
    }
    schema = json.dumps(
        {
            "name": "statistic",
            "type": "record",
            "fields": [
                {"name": "id", "type": "string"},
                {"name": "points", "type": int_map},
                {"name": "data", "type": {"type": "array", "items": item}},
            ],
        }
    )
    access = {"schema_access_strategy": "schema-text-property", "schema_text": schema}
    runner = TestRunner(
        ValidateRecord(
            record_reader="reader",
            record_writer="writer",
            record_writer_for_invalid_records="writer",
            allow_extra_fields="false",
            **access,
        )
    )
    runner.add_service(JsonTreeReader("reader", **access))
    runner.add_service(AvroRecordSetWriter("writer"))
    runner.enqueue(
        b'{"id": "uuid", "points": {"1": 0, "2": 0}, "data": [{"points": {"3": 0, "4": 0}},'
        b' {"points": {"5": 0, "6": 0}}, {"points": {"7": 0, "8": 0}}]}'
    )
    runner.run()
    runner.assert_transfer_count("valid", 1)
    (record,) = fastavro.reader(io.BytesIO(runner.flowfiles_for("valid")[0].content))
    assert record["id"] == "uuid"
    assert len(record["points"]) == 2
    assert [len(d["points"]) for d in record["data"]] == [2, 2, 2]


def test_validate_csv_timestamp_zone_offset() -> None:
    """NiFi's testValidateCsvTimestampZoneOffset: a timestamp with its zone offset (ZZZZZ, "Z"
    for UTC) is valid and written back the same."""
    schema = json.dumps(
        {
            "name": "ts",
            "namespace": "nifi",
            "type": "record",
            "fields": [
                {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}}
            ],
        }
    )
    # NiFi's case in a UTC JVM: timestamps here are written in UTC (docs/records.md)
    serialized = "2020-01-01 12:00:00Z"
    fmt = "yyyy-MM-dd HH:mm:ssZZZZZ"
    access = {"schema_access_strategy": "schema-text-property", "schema_text": schema}
    runner = TestRunner(
        ValidateRecord(
            record_reader="reader",
            record_writer="writer",
            record_writer_for_invalid_records="writer",
            strict_type_checking="true",
            **access,
        )
    )
    runner.add_service(CSVReader("reader", timestamp_format=fmt, **access))
    runner.add_service(
        CSVRecordSetWriter("writer", timestamp_format=fmt, include_header_line="false")
    )
    runner.enqueue(serialized.encode())
    runner.run()
    runner.assert_transfer_count("valid", 1)
    assert runner.flowfiles_for("valid")[0].content.decode().strip() == serialized


RAW_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "event",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "name", "type": "string"},
            {"name": "when", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
        ],
    }
)


def _raw(reader: object, content: bytes, **properties: str) -> TestRunner:
    """ValidateRecord (schema text RAW_SCHEMA, details in "why") over *content*."""
    runner = TestRunner(
        ValidateRecord(
            record_reader="reader",
            record_writer="writer",
            schema_access_strategy="schema-text-property",
            schema_text=RAW_SCHEMA,
            validation_details_attribute_name="why",
            **properties,
        )
    )
    runner.add_service(reader)
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.enqueue(content)
    runner.run()
    runner.assert_transfer_count("failure", 0)
    return runner


def test_csv_values_that_do_not_convert_make_their_records_invalid() -> None:
    """CSV read raw: a value converts to its field's type (valid, written typed) or its record
    is invalid, written as read, naming the field; the FlowFile does not fail."""
    reader = CSVReader(
        "reader",
        schema_access_strategy="schema-text-property",
        schema_text=RAW_SCHEMA,
        treat_first_line_as_header="true",
    )
    content = b"id,name,when\n1,a,2020-01-01 00:00:00\nx,b,\n3,c,nope\n4,d,\n"
    for strict in ("true", "false"):
        runner = _raw(reader, content, strict_type_checking=strict)
        valid = runner.flowfiles_for("valid")[0]
        valid.assert_attribute_equals("record.count", "2")
        valid.assert_content_equals(
            '[{"id":1,"name":"a","when":1577836800000},{"id":4,"name":"d","when":null}]'
        )
        invalid = runner.flowfiles_for("invalid")[0]
        invalid.assert_attribute_equals("record.count", "2")
        invalid.assert_content_equals(
            '[{"id":"x","name":"b","when":null},{"id":"3","name":"c","when":"nope"}]'
        )
        assert invalid.attributes["why"].endswith(
            "The following 2 fields had values whose type did not match the schema: [/id, /when]"
        )


def test_json_values_that_do_not_fit_make_their_records_invalid() -> None:
    """JSON read raw: its own values, timestamps parsed with the reader's format; a record
    whose value does not fit is invalid and written unchanged, the others valid."""
    reader = JsonTreeReader(
        "reader", schema_access_strategy="schema-text-property", schema_text=RAW_SCHEMA
    )
    content = (
        b'[{"id": 1, "name": "a", "when": "2020-01-01 00:00:00"},'
        b' {"id": 2, "name": "b", "when": "nope"},'
        b' {"id": "x", "name": "c"},'
        b' {"id": 4, "name": "d"}]'
    )
    runner = _raw(reader, content)
    valid = runner.flowfiles_for("valid")[0]
    valid.assert_attribute_equals("record.count", "2")
    valid.assert_content_equals(
        '[{"id":1,"name":"a","when":1577836800000},{"id":4,"name":"d","when":null}]'
    )
    invalid = runner.flowfiles_for("invalid")[0]
    invalid.assert_content_equals(
        '[{"id":2,"name":"b","when":"nope"},{"id":"x","name":"c","when":null}]'
    )
    assert invalid.attributes["why"].endswith("[/id, /when]")


def _strict_json(content: bytes, schema: str = SCHEMA, **properties: str) -> TestRunner:
    """ValidateRecord over a JsonTreeReader that reads with *schema* (so it coerces)."""
    access = {"schema_access_strategy": "schema-text-property", "schema_text": schema}
    reader = JsonTreeReader("reader", **access)
    properties.setdefault("validation_details_attribute_name", "why")
    return validate(content, reader, schema_text=schema, **properties)


def test_strict_type_checking_judges_the_raw_json_value() -> None:
    """NiFi's raw JSON read under strict checking: "4" in an INT field is a String and 6 in a
    STRING field an Integer (invalid, though the reader converts both); without strict
    checking both convert and are valid."""
    content = b'[{"id": "4", "name": "a"}, {"id": 5, "name": 6}, {"id": 7, "name": "g"}]'
    strict = _strict_json(content)
    strict.flowfiles_for("valid")[0].assert_content_equals('[{"id":7,"name":"g","balance":null}]')
    invalid = strict.flowfiles_for("invalid")[0]
    invalid.assert_attribute_equals("record.count", "2")
    assert invalid.attributes["why"].endswith(
        "The following 2 fields had values whose type did not match the schema: [/id, /name]"
    )
    loose = _strict_json(content, strict_type_checking="false")
    loose.assert_transfer_count("invalid", 0)
    loose.flowfiles_for("valid")[0].assert_attribute_equals("record.count", "3")


def test_strict_checking_of_raw_json_keeps_maps_and_names_nested_fields() -> None:
    """A MAP[INT] stays a map (its values judged: "0" is a String), an object in a RECORD
    field is judged field by field and named /parent/child, as NiFi's validator names it."""
    int_map = {"type": "map", "values": "int"}
    address = {"type": "record", "name": "address", "fields": [{"name": "zip", "type": "int"}]}
    schema = json.dumps(
        {
            "type": "record",
            "name": "r",
            "fields": [
                {"name": "points", "type": int_map},
                {"name": "address", "type": address},
            ],
        }
    )
    content = (
        b'[{"points": {"a": 1}, "address": {"zip": 1}},'
        b' {"points": {"a": "0"}, "address": {"zip": 2}},'
        b' {"points": {"a": 3}, "address": {"zip": "3"}}]'
    )
    runner = _strict_json(content, schema)
    runner.flowfiles_for("valid")[0].assert_content_equals(
        '[{"points":{"a":1},"address":{"zip":1}}]'
    )
    invalid = runner.flowfiles_for("invalid")[0]
    invalid.assert_attribute_equals("record.count", "2")
    assert invalid.attributes["why"].endswith(
        "The following 2 fields had values whose type did not match the schema: "
        "[/address/zip, /points]"
    )


_RAW = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([2**31 - 1, 2**31, -(2**31), 2**63 - 1, 2**63])
    | st.floats(allow_nan=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=4,
)
_TYPES = [
    *(s.SimpleType(name) for name in ("string", "boolean", "int", "long", "bigint", "double")),
    s.SimpleType("float"),
    s.SimpleType("timestamp"),
    s.ArrayType(s.INT),
    s.MapType(s.STRING),
    s.ChoiceType([s.INT, s.STRING]),
    s.RecordType(s.RecordSchema.of({"a": s.INT})),
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.just("v"), _RAW), max_size=6), st.sampled_from(_TYPES))
def test_raw_json_judged_a_column_at_a_time_is_judged_value_by_value(
    records: list[dict], dtype: s.DataType
) -> None:
    """json_mismatches' C-level pass over a column gives the per-value verdict of _raw_fits
    (Integer up to 32 bits, Long to 64, Double only for a JSON number with a point)."""
    bad, paths = json_mismatches(records, s.RecordSchema.of({"v": dtype}))
    expected = [not _raw_fits(record.get("v"), dtype) for record in records]
    if isinstance(dtype, s.RecordType):  # its fields are judged and named one by one
        expected = [
            type(r.get("v")) not in (dict, type(None))
            or not _raw_fits(r["v"].get("a") if isinstance(r.get("v"), dict) else None, s.INT)
            for r in records
        ]
    assert bad.tolist() == expected
    assert bool(paths) == any(expected)


def test_a_value_read_as_a_choice_is_written_as_its_fields_type() -> None:
    """Without strict checking, a field the reader inferred as a CHOICE (a string in one record,
    a number in another) is written as the validation schema's type: "a", not "\\"a\\"" (the
    CHOICE's JSON text) in a STRING field, 6 as "6"."""
    content = b'[{"id": "4", "name": "a", "balance": 1.5}, {"id": 5, "name": 6, "balance": 2.5}]'
    runner = validate(content, strict_type_checking="false")
    runner.flowfiles_for("valid")[0].assert_content_equals(
        '[{"id":4,"name":"a","balance":1.5},{"id":5,"name":"6","balance":2.5}]'
    )


def _one_field(kind: str) -> str:
    return json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": kind}]})


def test_lenient_checking_takes_what_nifis_is_compatible_data_type_takes() -> None:
    """Without strict type checking a value is valid when NiFi's isCompatibleDataType takes
    it: no boolean for an int nor a number for a boolean, 1.5 for an int (it truncates), an
    array for a string; CSV text that parseInt refuses (hex) makes its record invalid."""
    cases = [
        ("int", b'[{"a":true}]', "invalid"),
        ("boolean", b'[{"a":1}]', "invalid"),
        ("int", b'[{"a":"0x1F"}]', "invalid"),
        ("int", b'[{"a":1.5}]', "valid"),
        ("string", b'[{"a":[1,2]}]', "valid"),
        ("boolean", b'[{"a":"TRUE"}]', "valid"),
    ]
    for kind, content, verdict in cases:
        runner = validate(content, schema_text=_one_field(kind), strict_type_checking="false")
        routed = [r for r in ("valid", "invalid", "failure") if runner.flowfiles_for(r)]
        assert routed == [verdict], (kind, content)
    csv = CSVReader(
        "reader",
        schema_access_strategy="schema-text-property",
        schema_text=_one_field("int"),
        treat_first_line_as_header="true",
    )
    runner = validate(b"a\n0x10\n+2\n", csv, schema_text=_one_field("int"))
    runner.flowfiles_for("valid")[0].assert_content_equals('[{"a":2}]')
    runner.flowfiles_for("invalid")[0].assert_content_equals('[{"a":"0x10"}]')
