"""Tests for the minimal schema protocol and type inference."""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Any

import pytest

from flowcore.record_path import (
    DataType,
    DataTypeLike,
    RecordSchema,
    RecordSchemaLike,
    compile_record_path,
    infer_type,
)


def test_minimal_schema_satisfies_the_protocols() -> None:
    """RecordSchema and DataType are RecordSchemaLike and DataTypeLike."""
    schema = RecordSchema({"a": DataType("string")})
    assert isinstance(schema, RecordSchemaLike)
    assert isinstance(DataType("int"), DataTypeLike)
    assert schema.field_names == ("a",)
    assert schema.field_type("a") == DataType("string")
    assert schema.field_type("b") is None


class _DuckSchema:
    """A schema from elsewhere (the record readers'), satisfying the protocol by duck typing."""

    field_names = ("z", "a")

    def field_type(self, name: str) -> Any:
        return {"z": DataType("string"), "a": DataType("map")}.get(name)


def test_a_foreign_schema_orders_fields_and_types_maps() -> None:
    """Any object with field_names and field_type serves: order of ``/*``, maps vs records."""
    record = {"a": {"k": "v"}, "z": "last"}
    path = compile_record_path("/*")
    assert [fv.field_name for fv in path.evaluate(record, schema=_DuckSchema())] == ["z", "a"]
    assert compile_record_path("/a/k").evaluate(record, schema=_DuckSchema())[0].value is None
    assert compile_record_path("/a['k']").evaluate(record, schema=_DuckSchema())[0].value == "v"


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ({}, "record"),
        ([], "array"),
        (b"", "array"),
        (True, "boolean"),
        (1, "int"),
        (2**40, "long"),
        (1.5, "double"),
        (decimal.Decimal(1), "decimal"),
        ("s", "string"),
        (datetime.datetime(2024, 1, 1), "timestamp"),
        (datetime.date(2024, 1, 1), "date"),
        (datetime.time(1, 2), "time"),
        (uuid.uuid4(), "uuid"),
        (object(), "string"),
    ],
)
def test_infer_type(value: Any, name: str) -> None:
    """Values without a schema get NiFi's inferred type names."""
    assert infer_type(value).name == name
