"""Tests for processors._avro_text: Java Avro's toString and JSON encoding of datums."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from uuid import UUID

from processors._avro_text import escape, raw_value, to_avro_json, to_string

NAMED = {
    "type": "record",
    "name": "Outer",
    "namespace": "n",
    "fields": [
        {
            "name": "inner",
            "type": [
                "null",
                {"type": "record", "name": "Inner", "fields": [{"name": "v", "type": "int"}]},
            ],
        },
        {"name": "again", "type": ["null", "Inner"]},
        {"name": "m", "type": ["null", {"type": "map", "values": "string"}]},
    ],
}


def test_escape_follows_avro_rules() -> None:
    """Quotes, backslashes and control, C1 and U+2000..U+20FF characters are escaped."""
    assert escape('a"b\\c\n\x01\x85\u2014/é') == 'a\\"b\\\\c\\n\\u0001\\u0085\\u2014/é'


def test_raw_values_of_logical_types() -> None:
    """Logical values go back to what Java reads without conversions."""
    assert raw_value(dt.date(1970, 1, 11), {"type": "int", "logicalType": "date"}) == 10
    stamp = dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC)
    assert raw_value(stamp, {"type": "long", "logicalType": "timestamp-millis"}) == 1000
    assert raw_value(stamp, {"type": "long", "logicalType": "timestamp-micros"}) == 1_000_000
    assert raw_value(dt.time(0, 0, 2), {"type": "int", "logicalType": "time-millis"}) == 2000
    decimal = {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}
    assert raw_value(Decimal("-1.28"), decimal) == b"\xff\x80"
    uuid = UUID("12345678-1234-5678-1234-567812345678")
    assert raw_value(uuid, {"type": "string", "logicalType": "uuid"}) == str(uuid)


def test_named_references_and_unions() -> None:
    """A named type used again by name, and a map in a union, print as Java prints them."""
    value = {"inner": {"v": 1}, "again": {"v": 2}, "m": {"k": "x"}}
    assert to_string(value, NAMED) == '{"inner": {"v": 1}, "again": {"v": 2}, "m": {"k": "x"}}'
    assert to_avro_json(value, NAMED) == (
        '{"inner":{"n.Inner":{"v":1}},"again":{"n.Inner":{"v":2}},"m":{"map":{"k":"x"}}}'
    )


def test_avro_json_of_null_and_numbers() -> None:
    """A null union value is bare null; floats print as Java's."""
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": ["null", "double"]}, {"name": "b", "type": "float"}],
    }
    assert to_avro_json({"a": None, "b": 2.5}, schema) == '{"a":null,"b":2.5}'
    assert to_avro_json({"a": 1e-5, "b": 2.5}, schema) == '{"a":{"double":1.0E-5},"b":2.5}'


def test_avro_json_strings_escape_as_jackson() -> None:
    """Control characters as upper-case \\u00XX, an escaped backslash left alone, é kept."""
    schema = {"type": "record", "name": "R", "fields": [{"name": "s", "type": "string"}]}
    assert to_avro_json({"s": "a\x1f\\u001fé"}, schema) == '{"s":"a\\u001F\\\\u001fé"}'
