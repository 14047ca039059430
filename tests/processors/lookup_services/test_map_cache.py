"""Tests for DistributedMapCacheLookupService (NiFi's TestDistributedMapCacheLookupService)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.compiler.plan import serial
from flowcore.driver.controller import run_flow
from flowcore.services import MapCacheService
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import (
    GetFile,
    LookupRecord,
    PutDistributedMapCache,
    PutFile,
    RouteOnAttribute,
)
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


def test_put_then_look_up_in_a_flow(tmp_path: Path) -> None:
    """PutDistributedMapCache fills the cache in one run; LookupRecord reads it in the next.

    The cache is the repository's state, so the entry outlives the first run; the lookup
    service names the cache, and the stage's plan carries both services.
    """
    inbox, out = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    flow = Flow("cached")
    cache = flow.add_service(MapCacheService("client"))
    lookup_service = flow.add_service(
        DistributedMapCacheLookupService("lookup", distributed_cache_service=cache)
    )
    reader = flow.add_service(JsonTreeReader("reader"))
    writer = flow.add_service(CSVRecordSetWriter("writer", include_header_line="false"))
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    route = flow.add(RouteOnAttribute(cache="${filename:equals('myKey')}"), name="route")
    put_cache = flow.add(
        PutDistributedMapCache(
            cache_entry_identifier="${filename}", distributed_cache_service=cache
        ),
        name="put-cache",
    )
    enrich = flow.add(
        LookupRecord(
            record_reader=reader,
            record_writer=writer,
            lookup_service=lookup_service,
            result_recordpath="/value",
            key="/name",
        ),
        name="enrich",
    )
    put = flow.add(PutFile(directory=str(out), conflict_resolution_strategy="replace"), name="put")
    flow.connect(get, route)
    flow.connect(route, put_cache, "cache")
    flow.connect(route, enrich, "unmatched")
    flow.connect(enrich, put, "success")
    flow.auto_terminate(put_cache, ["success", "failure"])
    flow.auto_terminate(enrich, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    settings = Settings(sync=False, parallelism=1)
    (inbox / "myKey").write_bytes(b"myValue")
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    (inbox / "people.json").write_bytes(b'[{"name": "myKey"}, {"name": "absentKey"}]')
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("enrich", "success") == 1
    assert (out / "people.json").read_bytes() == b"myKey,myValue\nabsentKey,\n"
