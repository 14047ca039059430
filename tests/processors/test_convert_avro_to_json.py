"""Tests for ConvertAvroToJSON, ported from NiFi's TestConvertAvroToJSON (byte for byte)."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro

from flowcore.testing import TestRunner
from processors import ConvertAvroToJSON

USER_SCHEMA = {
    "namespace": "example.avro",
    "type": "record",
    "name": "User",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "favorite_number", "type": ["int", "null"]},
        {"name": "favorite_color", "type": ["string", "null"]},
    ],
}
ALYSSA = {"name": "Alyssa", "favorite_number": 256, "favorite_color": None}
GEORGE = {"name": "George", "favorite_number": 1024, "favorite_color": "red"}
ALYSSA_JSON = '{"name": "Alyssa", "favorite_number": 256, "favorite_color": null}'
GEORGE_JSON = '{"name": "George", "favorite_number": 1024, "favorite_color": "red"}'


def data_file(*records: dict[str, Any], schema: Any = USER_SCHEMA) -> bytes:
    """An Avro data file of *records* (NiFi's serializeAvroRecord)."""
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), list(records))
    return out.getvalue()


def datum(record: dict[str, Any]) -> bytes:
    """One bare datum, no header."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(USER_SCHEMA), record)
    return out.getvalue()


def convert(content: bytes, **properties: str) -> TestRunner:
    """A runner that has converted *content*."""
    runner = TestRunner(ConvertAvroToJSON(**properties))
    runner.enqueue(content)
    runner.run()
    return runner


def success(runner: TestRunner) -> bytes:
    """The one FlowFile on success, its content."""
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("mime.type", "application/json")
    return out.content


def test_single_avro_message() -> None:
    """NiFi's testSingleAvroMessage: one record, no array."""
    assert success(convert(data_file(ALYSSA))) == ALYSSA_JSON.encode()


def test_single_avro_message_no_container() -> None:
    """NiFi's testSingleAvroMessage_noContainer."""
    out = convert(data_file(ALYSSA), **{"JSON container options": "none"})
    assert success(out) == ALYSSA_JSON.encode()


def test_single_avro_message_wrap_single_message() -> None:
    """NiFi's testSingleAvroMessage_wrapSingleMessage: wrapped in an array."""
    out = convert(
        data_file(ALYSSA), **{"JSON container options": "array", "Wrap Single Record": "true"}
    )
    assert success(out) == f"[{ALYSSA_JSON}]".encode()


def test_single_avro_message_wrap_single_message_no_container() -> None:
    """NiFi's testSingleAvroMessage_wrapSingleMessage_noContainer: no container, no wrap."""
    out = convert(
        data_file(ALYSSA), **{"JSON container options": "none", "Wrap Single Record": "true"}
    )
    assert success(out) == ALYSSA_JSON.encode()


def test_single_schemaless_avro_message() -> None:
    """NiFi's testSingleSchemalessAvroMessage: a bare datum under the Avro schema property."""
    out = convert(datum(ALYSSA), **{"Avro schema": json.dumps(USER_SCHEMA)})
    assert success(out) == ALYSSA_JSON.encode()


def test_single_schemaless_avro_message_no_container() -> None:
    """NiFi's testSingleSchemalessAvroMessage_noContainer."""
    out = convert(
        datum(ALYSSA),
        **{"JSON container options": "none", "Avro schema": json.dumps(USER_SCHEMA)},
    )
    assert success(out) == ALYSSA_JSON.encode()


def test_single_schemaless_avro_message_wrap_single_message() -> None:
    """NiFi's testSingleSchemalessAvroMessage_wrapSingleMessage."""
    out = convert(
        datum(ALYSSA),
        **{
            "JSON container options": "array",
            "Wrap Single Record": "true",
            "Avro schema": json.dumps(USER_SCHEMA),
        },
    )
    assert success(out) == f"[{ALYSSA_JSON}]".encode()


def test_single_schemaless_avro_message_wrap_single_message_no_container() -> None:
    """NiFi's testSingleSchemalessAvroMessage_wrapSingleMessage_noContainer."""
    out = convert(
        datum(ALYSSA),
        **{
            "JSON container options": "none",
            "Wrap Single Record": "true",
            "Avro schema": json.dumps(USER_SCHEMA),
        },
    )
    assert success(out) == ALYSSA_JSON.encode()


def test_multiple_avro_messages() -> None:
    """NiFi's testMultipleAvroMessages: an array, no space after the records' commas."""
    out = convert(data_file(ALYSSA, GEORGE), **{"JSON container options": "array"})
    assert success(out) == f"[{ALYSSA_JSON},{GEORGE_JSON}]".encode()


def test_non_json_handled_properly() -> None:
    """NiFi's testNonJsonHandledProperly: content that is not Avro goes to failure."""
    convert(b"hello").assert_all_flowfiles_transferred("failure", 1)


def test_multiple_avro_messages_container_none() -> None:
    """NiFi's testMultipleAvroMessagesContainerNone: one object per line."""
    out = convert(data_file(ALYSSA, GEORGE), **{"JSON container options": "none"})
    assert success(out) == f"{ALYSSA_JSON}\n{GEORGE_JSON}".encode()


def test_empty_flowfile() -> None:
    """NiFi's testEmptyFlowFile: empty content goes to failure."""
    convert(b"").assert_all_flowfiles_transferred("failure", 1)


def test_zero_records() -> None:
    """NiFi's testZeroRecords: a data file without records is an empty object."""
    assert success(convert(data_file())) == b"{}"


def test_zero_records_wrap_single_record() -> None:
    """NiFi's testZeroRecords_wrapSingleRecord: an empty object in an array."""
    assert success(convert(data_file(), wrap_single_record="true")) == b"[{}]"


def test_use_avro_json_encodes_the_first_record_as_avro_json() -> None:
    """Use AVRO JSON: the first record in Avro's JSON encoding (NiFi's quirk: only the first)."""
    out = convert(data_file(ALYSSA, GEORGE), use_avro_json="true")
    assert success(out) == (
        b'[{"name":"Alyssa","favorite_number":{"int":256},"favorite_color":null},'
        + GEORGE_JSON.encode()
        + b"]"
    )


def test_java_renderings_of_types() -> None:
    """Java Avro's toString: raw logical values, Java floats, quoted NaN, bytes, fixed, maps."""
    schema = {
        "type": "record",
        "name": "T",
        "fields": [
            {"name": "d", "type": {"type": "int", "logicalType": "date"}},
            {"name": "f", "type": "float"},
            {"name": "g", "type": "double"},
            {"name": "b", "type": "bytes"},
            {"name": "x", "type": {"type": "fixed", "name": "two", "size": 2}},
            {"name": "m", "type": {"type": "map", "values": "double"}},
            {"name": "a", "type": {"type": "array", "items": "long"}},
            {"name": "s", "type": "string"},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        ],
    }
    record = {
        "d": 2,
        "f": 0.1,
        "g": 1e10,
        "b": b"\x01\xe9",
        "x": b"\x01\xff",
        "m": {"n": float("nan")},
        "a": [1, 2],
        "s": 'q"\\/\u2028',
        "e": "B",
    }
    out = success(convert(data_file(record, schema=schema)))
    assert out.decode() == (
        '{"d": 2, "f": 0.1, "g": 1.0E10, "b": "\\u0001\u00e9", "x": [1, -1], '
        '"m": {"n": "NaN"}, "a": [1, 2], "s": "q\\"\\\\/\\u2028", "e": "B"}'
    )


def test_invalid_schema_property_is_refused() -> None:
    """An Avro schema that does not parse makes the processor invalid."""
    runner = TestRunner(ConvertAvroToJSON(**{"Avro schema": "{not json"}))
    runner.assert_not_valid()
