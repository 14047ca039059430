"""Tests for flowcore.nifi.services: the NiFi controller services flowcore provides, and how."""

from __future__ import annotations

import pytest

from flowcore.definition.flow import FlowDefinition
from flowcore.errors import ConfigurationError
from flowcore.nifi.services import SERVICES, ServiceMapping, ServiceUse, unavailable
from flowcore.services import EvictionStrategy

CLIENT = "org.apache.nifi.distributed.cache.client.MapCacheClientService"
SERVER = "org.apache.nifi.distributed.cache.server.map.MapCacheServer"


def _server(port: str, entries: str, strategy: str) -> dict:
    properties = {"Port": port, "Maximum Cache Entries": entries, "Eviction Strategy": strategy}
    return {"identifier": f"s{port}", "type": SERVER, "properties": properties}


def _use(name: str = "G/cache", port: str = "4557", peers: tuple = ()) -> ServiceUse:
    return ServiceUse("c1", name, CLIENT, {"Server Port": port}, ("G/Dedupe",), peers)


def test_the_map_cache_services_of_1x_and_2x_are_one_mapping() -> None:
    """DetectDuplicate's cache clients and servers, by their 1.x and 2.x names, map alike."""
    names = {
        "DistributedMapCacheClientService",
        "DistributedMapCacheServer",
        "MapCacheClientService",
        "MapCacheServer",
    }
    assert names <= set(SERVICES)
    assert len({id(SERVICES[n]) for n in names}) == 1
    assert SERVICES["MapCacheClientService"].provide is not None


def test_unavailable_says_why_a_type_cannot_be_provided() -> None:
    """No mapping, or one waiting for what it needs, says why; a wired mapping says nothing."""
    assert unavailable(None) == "flowcore has no equivalent"
    waiting = ServiceMapping("a record reader", waits_for="record readers")
    assert unavailable(waiting) == "a record reader stands in for it once record readers land"
    assert unavailable(SERVICES["MapCacheClientService"]) is None


def test_a_client_becomes_a_local_cache_sized_as_its_server() -> None:
    """The server on the client's port gives Maximum Cache Entries and Eviction Strategy."""
    flow = FlowDefinition("f")
    peers = (
        _server("4557", "50", "First In, First Out"),
        _server("9000", "7", "Least Recently Used"),
    )
    provide = SERVICES["MapCacheClientService"].provide
    assert provide is not None
    assert provide(flow, _use(peers=peers)) == "G/cache"
    cache = flow.services["G/cache"]
    assert (cache.maximum_cache_entries, cache.eviction_strategy) == (50, EvictionStrategy.FIFO)
    assert provide(flow, _use(port="9000", peers=peers)) == "G/cache-2"
    assert flow.services["G/cache-2"].maximum_cache_entries == 7


def test_without_a_server_the_cache_has_nifis_defaults() -> None:
    """No server in the flow: 10,000 entries, least frequently used first."""
    flow = FlowDefinition("f")
    provide = SERVICES["MapCacheServer"].provide
    assert provide is not None
    name = provide(flow, _use())
    cache = flow.services[name]
    assert (cache.maximum_cache_entries, cache.eviction_strategy) == (10_000, EvictionStrategy.LFU)


def test_a_server_setting_flowcore_cannot_take_names_the_service() -> None:
    """An unknown eviction strategy is an error naming the service."""
    provide = SERVICES["MapCacheClientService"].provide
    assert provide is not None
    with pytest.raises(ConfigurationError, match="controller service 'G/cache'"):
        provide(FlowDefinition("f"), _use(peers=(_server("4557", "5", "Random"),)))


def test_clients_of_one_server_share_one_cache() -> None:
    """Two clients talking to one server share its entries in NiFi: they get one local cache;
    a client of another server gets its own."""
    flow = FlowDefinition("f")
    peers = (
        _server("4557", "50", "First In, First Out"),
        _server("9000", "7", "Least Recently Used"),
    )
    provide = SERVICES["MapCacheClientService"].provide
    assert provide is not None
    first = provide(flow, _use("G/cache", peers=peers))
    second = provide(
        flow, ServiceUse("c2", "other client", CLIENT, {"Server Port": "4557"}, (), peers)
    )
    third = provide(flow, _use("G/elsewhere", port="9000", peers=peers))
    assert first == second == "G/cache"
    assert third == "G/elsewhere"
    assert set(flow.services) == {"G/cache", "G/elsewhere"}


def test_a_registered_service_type_maps_generically_by_its_nifi_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A registered type is found by the simple name of its NiFi type, one mapping per type,
    and declares the service with its NiFi properties; an unknown type has none."""
    from flowcore.registry import BUILTIN_SERVICES
    from tests.flowcore.nifi._nifi_json import KeyValueLookup

    monkeypatch.setitem(BUILTIN_SERVICES, "KeyValueLookup", KeyValueLookup)
    mapping = SERVICES["SimpleKeyValueLookupService"]
    assert mapping is SERVICES.get("KeyValueLookup")
    assert "SimpleKeyValueLookupService" in set(SERVICES)
    assert SERVICES.get("CEFReader") is None
    flow = FlowDefinition("f")
    use = ServiceUse("k1", "G/codes", KeyValueLookup.nifi_types[0], {"a": "1", "Token": None})
    assert mapping.provide is not None
    assert mapping.provide(flow, use) == "G/codes"
    assert flow.services["G/codes"].raw_configured == {"a": "1"}
    assert mapping.provide(flow, use) == "G/codes"  # the same NiFi service: declared once
