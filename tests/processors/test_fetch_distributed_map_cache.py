"""Tests for FetchDistributedMapCache: NiFi's TestFetchDistributedMapCache cases."""

from __future__ import annotations

from flowcore.services import MapCache, MapCacheService
from flowcore.testing import TestRunner
from processors import FetchDistributedMapCache
from processors._cache_values import from_bytes


def _runner(**properties: str) -> tuple[TestRunner, MapCache]:
    """A runner with the cache service 'service' and Cache Entry Identifier ${cacheKeyAttribute}."""
    runner = TestRunner(FetchDistributedMapCache())
    cache = runner.add_service(MapCacheService("service"))
    runner.set_property("Distributed Cache Service", "service")
    runner.set_property("Cache Entry Identifier", "${cacheKeyAttribute}")
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner, cache


def test_key_not_cached() -> None:
    """NiFi's testNoCacheKey: a key with no entry goes to not-found."""
    runner, _ = _runner()
    runner.enqueue(b"", {"cacheKeyAttribute": "1"})
    runner.run()
    runner.assert_all_flowfiles_transferred("not-found", 1)


def test_no_cache_key_value() -> None:
    """NiFi's testNoCacheKeyValue: an empty key goes to failure, penalized."""
    runner, _ = _runner()
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert runner.flowfiles_for("failure")[0].flowfile.penalty_expiration > 0


def test_single_flowfile() -> None:
    """NiFi's testSingleFlowFile: the cached value replaces the content."""
    runner, cache = _runner()
    cache.put("key", "value")
    runner.enqueue(b"content", {"cacheKeyAttribute": "key"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals("value")


def test_single_flowfile_to_attribute() -> None:
    """NiFi's testSingleFlowFileToAttribute: the value goes to the named attribute."""
    runner, cache = _runner(**{"Put Cache Value In Attribute": "test"})
    cache.put("key", "value")
    runner.enqueue(b"content", {"cacheKeyAttribute": "key"})
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("test", "value")
    out.assert_content_equals("content")


def test_to_attribute_too_long() -> None:
    """NiFi's testToAttributeTooLong: cut to Max Length To Put In Attribute characters."""
    runner, cache = _runner(
        **{"Put Cache Value In Attribute": "test", "Max Length To Put In Attribute": "3"}
    )
    cache.put("key", "value")
    runner.enqueue(b"content", {"cacheKeyAttribute": "key"})
    runner.run()
    runner.flowfiles_for("success")[0].assert_attribute_equals("test", "val")


def test_multiple_keys_to_attributes() -> None:
    """NiFi's testMultipleKeysToAttributes: invalid without the attribute; then test.key1/2."""
    runner, cache = _runner()
    cache.put("key1", "value1")
    cache.put("key2", "value2")
    runner.set_property("Cache Entry Identifier", "key1, key2")
    runner.assert_not_valid()
    runner.set_property("Put Cache Value In Attribute", "test")
    runner.assert_valid()
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("test.key1", "value1")
    out.assert_attribute_equals("test.key2", "value2")


def test_multiple_keys_one_not_found() -> None:
    """NiFi's testMultipleKeysOneNotFound: not-found, with the value found before kept."""
    runner, cache = _runner(**{"Put Cache Value In Attribute": "test"})
    cache.put("key1", "value1")
    runner.set_property("Cache Entry Identifier", "key1, key2")
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("not-found", 1)
    runner.flowfiles_for("not-found")[0].assert_attribute_equals("test.key1", "value1")


def test_binary_value_to_content_and_charset_to_attribute() -> None:
    """Cached bytes come back exact in content; Character Set decodes them for an attribute."""
    runner, cache = _runner()
    cache.put("bin", from_bytes(b"\xff\x00caf\xe9"))
    runner.enqueue(b"", {"cacheKeyAttribute": "bin"})
    runner.run()
    runner.flowfiles_for("success")[0].assert_content_equals(b"\xff\x00caf\xe9")
    latin, cache = _runner(**{"Put Cache Value In Attribute": "v", "Character Set": "ISO-8859-1"})
    cache.put("k", from_bytes("café".encode("latin-1")))
    latin.enqueue(b"", {"cacheKeyAttribute": "k"})
    latin.run()
    latin.flowfiles_for("success")[0].assert_attribute_equals("v", "café")


def test_multiple_keys_by_expression_without_attribute_fail() -> None:
    """Keys from EL pass validation; several at run time without the attribute fail."""
    runner, cache = _runner()
    cache.put("a", "1")
    runner.enqueue(b"", {"cacheKeyAttribute": "a,b"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
