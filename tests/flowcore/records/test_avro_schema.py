"""Tests for Avro schemas to and from NiFi record schemas (NiFi's AvroTypeUtil rules)."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given, settings

from flowcore.errors import ConfigurationError
from flowcore.records import schema as s
from flowcore.records.avro_schema import parse_schema_text, schema_text, schema_to_avro
from tests.flowcore.records._strategies import schemas

# NiFi's TestAvroTypeUtil style: a schema with logical types, unions and a nested record
TEXT = json.dumps(
    {
        "type": "record",
        "name": "Person",
        "namespace": "ns",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": ["null", "string"], "default": None},
            {"name": "born", "type": {"type": "int", "logicalType": "date"}},
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "wake", "type": {"type": "int", "logicalType": "time-millis"}},
            {"name": "key", "type": {"type": "string", "logicalType": "uuid"}, "aliases": ["k"]},
            {
                "name": "amount",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 8, "scale": 2},
            },
            {"name": "either", "type": ["int", "string", "null"]},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "raw", "type": "bytes"},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
            {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
            {
                "name": "address",
                "type": {
                    "type": "record",
                    "name": "Address",
                    "fields": [{"name": "city", "type": "string"}],
                },
            },
            {"name": "home", "type": ["null", "Address"]},
        ],
    }
)


def test_avro_types_map_to_nifi_types() -> None:
    """Logical types, nullable unions, choices, enums, bytes and named references map as NiFi's."""
    schema = parse_schema_text(TEXT)
    types = {f.name: (f.type, f.nullable) for f in schema}
    address = s.RecordType(
        s.RecordSchema([s.RecordField("city", s.STRING, False)], "Address", "ns")
    )
    assert types == {
        "id": (s.LONG, False),
        "name": (s.STRING, True),
        "born": (s.DATE, False),
        "at": (s.TIMESTAMP, False),
        "wake": (s.TIME, False),
        "key": (s.UUID, False),
        "amount": (s.DecimalType(8, 2), False),
        "either": (s.ChoiceType([s.INT, s.STRING]), True),
        "kind": (s.EnumType(["A", "B"]), False),
        "raw": (s.ArrayType(s.BYTE, element_nullable=False), False),
        "tags": (s.ArrayType(s.STRING, element_nullable=False), False),
        "attrs": (s.MapType(s.LONG, value_nullable=True), False),
        "address": (address, False),
        "home": (address, True),
    }
    assert schema.field("k") is schema.fields[5]
    assert (schema.name, schema.namespace) == ("Person", "ns")


def test_nifi_schemas_become_nifis_avro_schema() -> None:
    """NiFi's names (nifiRecord, <field>Type), [T, "null"] unions, BIGINT as string."""
    schema = s.RecordSchema(
        [
            s.RecordField("id", s.INT, nullable=False),
            s.RecordField("big", s.BIGINT),
            s.RecordField("inner", s.RecordType(s.RecordSchema.of({"x": s.SHORT}))),
        ]
    )
    assert schema_to_avro(schema) == {
        "type": "record",
        "name": "nifiRecord",
        "namespace": "org.apache.nifi",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "big", "type": ["string", "null"]},
            {
                "name": "inner",
                "type": [
                    {
                        "type": "record",
                        "name": "innerType",
                        "namespace": "org.apache.nifi",
                        "fields": [{"name": "x", "type": ["int", "null"]}],
                    },
                    "null",
                ],
            },
        ],
    }


def test_bad_schema_text_names_the_problem() -> None:
    """Text that is not JSON, not Avro or not a record is refused with the reason."""
    with pytest.raises(ConfigurationError, match="not valid JSON"):
        parse_schema_text("{nope")
    with pytest.raises(ConfigurationError, match="not a valid Avro schema"):
        parse_schema_text('{"type": "record", "name": "r"}')
    with pytest.raises(ConfigurationError, match="of type 'record'"):
        parse_schema_text('"string"')


@settings(max_examples=40, deadline=None)
@given(schemas(depth=2))
def test_schemas_round_trip_through_avro_text(schema: s.RecordSchema) -> None:
    """A generated schema comes back from its Avro schema text (names aside)."""
    back = parse_schema_text(schema_text(schema))
    assert _plain(back) == _plain(schema)


def _plain(schema: s.RecordSchema) -> s.RecordSchema:
    """*schema* without record names, array elements non-nullable (NiFi writes Avro items so)."""
    return s.RecordSchema(attrs.evolve(f, type=_plain_type(f.type)) for f in schema)


def _plain_type(dtype: s.DataType) -> s.DataType:
    if isinstance(dtype, s.ArrayType):
        return s.ArrayType(dtype.element and _plain_type(dtype.element), element_nullable=False)
    if isinstance(dtype, s.RecordType):
        return s.RecordType(_plain(dtype.schema))
    return dtype
