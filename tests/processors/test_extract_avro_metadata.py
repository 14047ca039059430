"""Tests for ExtractAvroMetadata, ported from NiFi's TestExtractAvroMetadata."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro

from flowcore.testing import TestRunner
from processors import ExtractAvroMetadata
from tests.processors.test_convert_avro_to_json import USER_SCHEMA

ARRAY_SCHEMA = {"type": "array", "items": "string"}


def data_file(records: list[Any], schema: Any = USER_SCHEMA, codec: str = "null") -> bytes:
    """An Avro data file of *records*."""
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec=codec)
    return out.getvalue()


def users(count: int) -> list[dict[str, Any]]:
    """NiFi's getOutputStreamWithMultipleUsers records."""
    return [
        {"name": f"user{i}", "favorite_number": i, "favorite_color": None} for i in range(count)
    ]


def extract(content: bytes, **properties: str) -> TestRunner:
    """A runner that has run over *content*."""
    runner = TestRunner(ExtractAvroMetadata(**properties))
    runner.enqueue(content)
    runner.run()
    return runner


def one(runner: TestRunner) -> Any:
    """The one FlowFile on success."""
    runner.assert_all_flowfiles_transferred("success", 1)
    return runner.flowfiles_for("success")[0]


def test_default_extraction() -> None:
    """NiFi's testDefaultExtraction: CRC-64-AVRO fingerprint, type and name, nothing else."""
    out = one(extract(data_file(users(1))))
    out.assert_attribute_equals("schema.fingerprint", "b2d1d8d3de2833ce")
    out.assert_attribute_equals("schema.type", "record")
    out.assert_attribute_equals("schema.name", "User")
    out.assert_attribute_not_exists("avro.schema")
    out.assert_attribute_not_exists("item.count")


def test_extraction_with_item_count() -> None:
    """NiFi's testExtractionWithItemCount: 6,000 records over several blocks."""
    content = data_file(users(6000))
    out = one(extract(content, count_items="true"))
    out.assert_attribute_equals("item.count", "6000")
    assert sum(1 for _ in fastavro.block_reader(io.BytesIO(content))) > 1  # several blocks


def test_extraction_with_zero_users() -> None:
    """NiFi's testExtractionWithZeroUsers: item.count 0, the schema still read."""
    out = one(extract(data_file([]), count_items="true"))
    out.assert_attribute_equals("schema.fingerprint", "b2d1d8d3de2833ce")
    out.assert_attribute_equals("schema.type", "record")
    out.assert_attribute_equals("schema.name", "User")
    out.assert_attribute_equals("item.count", "0")


def test_extraction_with_md5() -> None:
    """NiFi's testExtractionWithMD5."""
    out = one(extract(data_file(users(1)), fingerprint_algorithm="MD5"))
    out.assert_attribute_equals("schema.fingerprint", "3c6a7bee8994be20314dd28c6a3af4f2")
    out.assert_attribute_equals("schema.name", "User")
    out.assert_attribute_not_exists("avro.schema")


def test_extraction_with_sha256() -> None:
    """NiFi's testExtractionWithSHA256."""
    out = one(extract(data_file(users(1)), fingerprint_algorithm="SHA-256"))
    out.assert_attribute_equals(
        "schema.fingerprint", "683f8f51ecd208038f4f0d39820ee9dd0ef3e32a3bee9371de0a2016d501b113"
    )


def test_extraction_with_metadata_key() -> None:
    """NiFi's testExtractionWithMetadataKey: avro.schema is the header's schema text."""
    content = data_file(users(1))
    header = fastavro.reader(io.BytesIO(content)).metadata["avro.schema"]
    out = one(extract(content, metadata_keys="avro.schema"))
    out.assert_attribute_exists("schema.fingerprint")
    out.assert_attribute_equals("schema.type", "record")
    out.assert_attribute_equals("avro.schema", header)
    assert json.loads(out.attributes["avro.schema"])["name"] == "example.avro.User"


def test_extraction_with_metadata_keys_whitespace() -> None:
    """NiFi's testExtractionWithMetadataKeysWhitespace: keys split on commas and spaces."""
    out = one(extract(data_file(users(1)), metadata_keys="foo, bar,   avro.schema"))
    out.assert_attribute_exists("avro.schema")
    out.assert_attribute_not_exists("foo")


def test_extraction_with_non_record_schema() -> None:
    """NiFi's testExtractionWithNonRecordSchema: arrays are counted as items, not elements."""
    data = ["one", "two", "three"]
    out = one(extract(data_file([data, data], ARRAY_SCHEMA), count_items="true"))
    out.assert_attribute_exists("schema.fingerprint")
    out.assert_attribute_equals("schema.type", "array")
    out.assert_attribute_equals("schema.name", "array")
    out.assert_attribute_equals("item.count", "2")


def test_extraction_with_codec() -> None:
    """NiFi's testExtractionWithCodec: avro.codec from the header."""
    content = data_file([["one", "two", "three"]], ARRAY_SCHEMA, codec="deflate")
    one(extract(content, metadata_keys="avro.codec")).assert_attribute_equals(
        "avro.codec", "deflate"
    )


def test_extraction_with_bad_input() -> None:
    """NiFi's testExtractionWithBadInput: not Avro goes to failure."""
    extract(b"not avro").assert_all_flowfiles_transferred("failure", 1)
