"""Tests for the FreeFormTextRecordSetWriter codec."""

from __future__ import annotations

import datetime as dt
import io

import pyarrow as pa

from flowcore.records import schema as s
from flowcore.records.text_writer import field_text, write_text


def test_each_record_is_the_template_of_its_text_values_and_a_newline() -> None:
    """NiFi's getAsString values; fields win over attributes of the same name."""
    schema = s.RecordSchema.of({"name": s.STRING, "age": s.INT, "at": s.TIMESTAMP, "f": s.FLOAT})
    rows = [
        {"name": "John", "age": 30, "at": dt.datetime(2017, 1, 1, 17), "f": 8.1},
        {"name": None, "age": None, "at": None, "f": None},
    ]
    out = io.BytesIO()
    attributes = write_text(
        [pa.RecordBatch.from_pylist(rows, schema.to_arrow())],
        out,
        lambda v: f"{v['name']} is {v['age']} at {v['at']} ({v['f']}) in {v['filename']}",
        variables={"filename": "people.csv", "name": "not me"},
    )
    assert out.getvalue() == (
        b"John is 30 at 2017-01-01 17:00:00 (8.1) in people.csv\n"
        b"None is None at None (None) in people.csv\n"
    )
    assert attributes == {"record.count": "2", "mime.type": "text/plain"}


def test_field_text_is_java_text() -> None:
    """Doubles, booleans and arrays as NiFi's Record.getAsString gives them."""
    assert field_text(1e10, "double") == "1.0E10"
    assert field_text(True, "boolean") == "true"
    assert field_text(["a", None], "array") == "[a, null]"
    assert field_text(None, "string") is None


def test_bytes_are_javas_arrays_to_string() -> None:
    """FreeFormTextRecordSetWriter's getAsString of an Avro bytes value (an Object[] of Byte in
    NiFi) is Arrays.toString: "[0, -1, 65]", not the bytes decoded as text."""
    schema = s.RecordSchema.of({"b": s.ArrayType(s.BYTE)})
    out = io.BytesIO()
    batch = pa.RecordBatch.from_pylist([{"b": b"\x00\xffA"}], schema.to_arrow())
    write_text([batch], out, lambda v: f"b={v['b']}")
    assert out.getvalue() == b"b=[0, -1, 65]\n"
    assert field_text(b"\xc3\xa9", "array") == "[-61, -87]"


def test_a_timestamp_with_microseconds_is_its_default_format_text() -> None:
    """Record.getAsString formats a TIMESTAMP in its type's default format: no fraction."""
    schema = s.RecordSchema.of({"at": s.TIMESTAMP})
    batch = pa.RecordBatch.from_pylist(
        [{"at": dt.datetime(2024, 2, 6, 16, 51, 28, 351567)}], schema.to_arrow()
    )
    out = io.BytesIO()
    write_text([batch], out, lambda values: values["at"])
    assert out.getvalue() == b"2024-02-06 16:51:28\n"
