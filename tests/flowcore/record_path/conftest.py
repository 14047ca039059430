"""NiFi's TestRecordPath example record and schema as Python mappings (for the tests here)."""

from __future__ import annotations

from typing import Any

import pytest

from flowcore.record_path import DataType, RecordSchema

ADDRESS = RecordSchema({"city": DataType("string"), "state": DataType("string")})
ACCOUNT = RecordSchema(
    {
        "id": DataType("int"),
        "balance": DataType("double"),
        "address": DataType("record", schema=ADDRESS),
    }
)
EXAMPLE = RecordSchema(
    {
        "id": DataType("int"),
        "firstName": DataType("string"),
        "lastName": DataType("string"),
        "name": DataType("string"),
        "missing": DataType("string"),
        "date": DataType("date"),
        "attributes": DataType("map", value_type=DataType("string")),
        "mainAccount": DataType("record", schema=ACCOUNT),
        "accounts": DataType("array", element_type=DataType("record", schema=ACCOUNT)),
        "numbers": DataType("array", element_type=DataType("int")),
        "friends": DataType("array", element_type=DataType("string")),
        "bytes": DataType("array", element_type=DataType("byte")),
        "shortNumber": DataType("short"),
        "longNumber": DataType("long"),
        "floatNumber": DataType("float"),
    }
)


def account(
    id_: int = 1, balance: float = 123.45, city: str = "Boston", state: str = "Massachusetts"
) -> dict[str, Any]:
    """NiFi's createAccountRecord."""
    return {"id": id_, "balance": balance, "address": {"city": city, "state": state}}


def example_record() -> dict[str, Any]:
    """NiFi's createExampleRecord (field ``missing`` left out on purpose)."""
    return {
        "id": 48,
        "firstName": "John",
        "lastName": "Doe",
        "name": "John Doe",
        "date": "2017-10-20T11:00:00Z",
        "attributes": {"city": "New York", "state": "NY"},
        "mainAccount": account(),
        "accounts": [
            account(6, 10_000.00, "Las Vegas", "Nevada"),
            account(9, 48.02, "Austin", "Texas"),
        ],
        "numbers": list(range(10)),
        "friends": ["John", "Jane", "Jacob", "Judy"],
        "bytes": list(b"Hello World!"),
        "shortNumber": 123,
        "longNumber": 1234567890123456789,
        "floatNumber": 123.45,
    }


@pytest.fixture
def record() -> dict[str, Any]:
    """A fresh copy of NiFi's example record."""
    return example_record()


@pytest.fixture
def schema() -> RecordSchema:
    """NiFi's example schema."""
    return EXAMPLE


@pytest.fixture
def run(record: dict[str, Any]) -> Any:
    """Evaluate a path on the example record with its schema: the list of (field name, value)."""
    from flowcore.record_path import compile_record_path

    def run_path(path: str, target: dict[str, Any] | None = None) -> list[Any]:
        chosen = record if target is None else target
        return [
            fv.value
            for fv in compile_record_path(path).evaluate(
                chosen, schema=EXAMPLE if target is None else None
            )
        ]

    return run_path
