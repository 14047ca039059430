"""Tests for NiFi's record types and their Arrow mapping."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import given, settings

from flowcore.errors import ConfigurationError
from flowcore.records import schema as s
from tests.flowcore.records._strategies import schemas


def test_every_nifi_type_has_an_arrow_type_and_comes_back() -> None:
    """Each NiFi type maps to Arrow and back to itself, metadata keeping what Arrow cannot say."""
    every = s.RecordSchema(
        [
            s.RecordField("boolean", s.BOOLEAN),
            s.RecordField("byte", s.BYTE),
            s.RecordField("short", s.SHORT),
            s.RecordField("int", s.INT, nullable=False),
            s.RecordField("long", s.LONG),
            s.RecordField("bigint", s.BIGINT),
            s.RecordField("float", s.FLOAT),
            s.RecordField("double", s.DOUBLE),
            s.RecordField("decimal", s.DecimalType(12, 3)),
            s.RecordField("date", s.DATE),
            s.RecordField("time", s.TIME),
            s.RecordField("timestamp", s.TIMESTAMP),
            s.RecordField("uuid", s.UUID),
            s.RecordField("char", s.CHAR),
            s.RecordField("enum", s.EnumType(["A", "B"])),
            s.RecordField("string", s.STRING),
            s.RecordField("array", s.ArrayType(s.INT)),
            s.RecordField("bytes", s.ArrayType(s.BYTE, element_nullable=False)),
            s.RecordField("map", s.MapType(s.LONG)),
            s.RecordField("record", s.RecordType(s.RecordSchema.of({"x": s.UUID}))),
            s.RecordField("choice", s.ChoiceType([s.INT, s.STRING])),
        ]
    )
    arrow = every.to_arrow()
    assert arrow.field("int").type == pa.int32()
    assert not arrow.field("int").nullable
    assert arrow.field("timestamp").type == pa.timestamp("us")
    assert arrow.field("time").type == pa.time32("ms")
    assert arrow.field("bytes").type == pa.binary()
    assert arrow.field("decimal").type == pa.decimal128(12, 3)
    assert json.loads(arrow.field("choice").metadata[s.NIFI_TYPE_KEY]) == {
        "type": "choice",
        "options": ["int", "string"],
    }
    assert s.RecordSchema.from_arrow(arrow) == every


def test_plain_arrow_types_map_to_the_nearest_nifi_type() -> None:
    """An Arrow schema from elsewhere (Parquet, DuckDB) gets NiFi types without metadata."""
    arrow = pa.schema(
        [
            ("a", pa.uint64()),
            ("b", pa.large_string()),
            ("c", pa.list_(pa.float32())),
            ("d", pa.struct([("x", pa.date64())])),
            ("e", pa.dictionary(pa.int32(), pa.string())),
        ]
    )
    nifi = s.RecordSchema.from_arrow(arrow)
    assert [f.type for f in nifi] == [
        s.BIGINT,
        s.STRING,
        s.ArrayType(s.FLOAT),
        s.RecordType(s.RecordSchema.of({"x": s.DATE})),
        s.STRING,
    ]


def test_a_field_is_found_by_name_or_alias_and_names_are_unique() -> None:
    """``field`` looks up aliases as NiFi's getField does; a repeated name is refused."""
    schema = s.RecordSchema([s.RecordField("id", s.INT, aliases=["ident"])])
    assert schema.field("ident") is schema.fields[0]
    assert schema.field("nope") is None
    with pytest.raises(ConfigurationError, match="'id' twice"):
        s.RecordSchema([s.RecordField("id", s.INT), s.RecordField("id", s.LONG)])


def test_unknown_arrow_types_are_refused_with_a_hint() -> None:
    """An Arrow type without a NiFi type says to cast the column."""
    with pytest.raises(ConfigurationError, match="cast the column"):
        s.nifi_type_of_arrow(pa.month_day_nano_interval())


@settings(max_examples=40, deadline=None)
@given(schemas(depth=2))
def test_schemas_round_trip_through_arrow(schema: s.RecordSchema) -> None:
    """Any generated schema comes back from its Arrow schema unchanged."""
    assert s.RecordSchema.from_arrow(schema.to_arrow()) == schema
