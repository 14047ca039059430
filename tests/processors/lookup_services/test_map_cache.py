"""Tests for DistributedMapCacheLookupService (NiFi's TestDistributedMapCacheLookupService)."""

from __future__ import annotations

import pytest

from flowcore.compiler.plan import serial
from flowcore.services import MapCacheService
from flowcore.testing import TestRunner
from processors import LookupRecord
from processors.lookup_services import DistributedMapCacheLookupService
from processors.record_services import CSVRecordSetWriter, JsonTreeReader


def lookup_runner(**service: str) -> TestRunner:
    """LookupRecord over the map cache 'client' holding myKey -> myValue."""
    runner = TestRunner(
        LookupRecord(
            record_reader="reader",
            record_writer="writer",
            lookup_service="lookup-service",
            routing_strategy="route-to-matched-unmatched",
            result_recordpath="/value",
            key="/name",
        )
    )
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(CSVRecordSetWriter("writer", include_header_line="false"))
    cache = runner.add_service(MapCacheService("client"))
    cache.put("myKey", "myValue")  # type: ignore[union-attr]
    runner.add_service(
        DistributedMapCacheLookupService(
            "lookup-service", distributed_cache_service="client", **service
        )
    )
    return runner


def test_distributed_map_cache_lookup_service() -> None:
    """NiFi's testDistributedMapCacheLookupService: a cached key matches, an absent one not."""
    runner = lookup_runner()
    runner.enqueue(b'[{"name": "myKey"}, {"name": "absentKey"}]')
    runner.run()
    runner.flowfiles_for("matched")[0].assert_content_equals("myKey,myValue\n")
    runner.flowfiles_for("unmatched")[0].assert_content_equals("absentKey,\n")


def test_lookup_without_a_session_says_how() -> None:
    """Looking up on the service itself (no session) explains for_session."""
    runner = lookup_runner()
    service = runner.enable_controller_service("lookup-service")
    with pytest.raises(NotImplementedError, match="for_session"):
        service.lookup({"key": "myKey"})  # type: ignore[attr-defined]


def test_properties_and_serial_use() -> None:
    """NiFi's names and default; a processor naming it runs serially, as the cache's users."""
    service = DistributedMapCacheLookupService(
        "l", **{"distributed-map-cache-service": "c", "character-encoding": "UTF-16"}
    )
    assert service.configured == {
        "Distributed Cache Service": "c",
        "Character Encoding": "UTF-16",
    }
    assert DistributedMapCacheLookupService("l").effective_values()["Character Encoding"] == (
        "UTF-8"
    )
    assert serial(LookupRecord(lookup_service="l"), {"l": service})
