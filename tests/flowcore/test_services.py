"""Tests for the map cache service: its configuration, NiFi's eviction orders, and undo."""

from __future__ import annotations

import pytest

from flowcore import Flow
from flowcore.errors import ConfigurationError, FlowDefinitionError
from flowcore.services import EvictionStrategy, MapCache, MapCacheService
from processors import DetectDuplicate


class Clock:
    """A clock tests move by hand."""

    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        self.now += 1
        return self.now


def _cache(strategy: str, size: int = 2) -> MapCache:
    return MapCache(MapCacheService("c", size, strategy), {}, Clock())


def test_defaults_are_nifis() -> None:
    """Maximum Cache Entries 10,000 and Least Frequently Used, as NiFi's cache server."""
    service = MapCacheService("c")
    assert service.maximum_cache_entries == 10_000
    assert service.eviction_strategy is EvictionStrategy.LFU
    assert MapCacheService("c", eviction_strategy="FIFO").eviction_strategy.value == (
        "First In, First Out"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"name": ""}, "non-empty name"),
        ({"name": "c", "maximum_cache_entries": 0}, "positive integer"),
        ({"name": "c", "eviction_strategy": "random"}, "not one of"),
    ],
)
def test_bad_configuration_names_the_culprit(arguments: dict, message: str) -> None:
    """A service out of range fails when made, saying which value and what is allowed."""
    with pytest.raises(ConfigurationError, match=message):
        MapCacheService(**arguments)


@pytest.mark.parametrize(
    ("strategy", "evicted"),
    [("Least Frequently Used", "b"), ("Least Recently Used", "a"), ("First In, First Out", "a")],
)
def test_eviction_orders(strategy: str, evicted: str) -> None:
    """a then b are put, a is read twice, b once after: a new entry evicts NiFi's choice."""
    cache = _cache(strategy)
    cache.put("a", "1")
    cache.put("b", "2")
    cache.get("a")
    cache.get("a")
    cache.get("b")
    cache.put("c", "3")
    assert len(cache) == 2
    assert not cache.contains_key(evicted)


def test_undo_reverts_to_the_last_mark() -> None:
    """Puts, hits, removals and evictions since the mark all revert, and the state with them."""
    cache = _cache("Least Frequently Used")
    cache.put("a", "1")
    cache.mark()
    before = cache.to_state()
    cache.get("a")
    cache.put("b", "2")
    cache.put("c", "3")  # evicts
    cache.remove("b")
    cache.undo()
    assert cache.to_state() == before


@pytest.mark.parametrize(
    ("strategy", "entries", "changed"),
    [("LFU", 1, False), ("LRU", 1, False), ("FIFO", 2, False), ("LFU", 2, True), ("LRU", 2, True)],
)
def test_a_read_is_written_only_when_its_hit_can_change_eviction(
    strategy: str, entries: int, changed: bool
) -> None:
    """A read marks the cache changed (its whole state written) only when the hit can change
    which entry is evicted: not under FIFO, not for the only entry (a lister's own cache)."""
    cache = _cache(strategy, size=3)
    for i in range(entries):
        cache.put(f"k{i}", "v")
    state = MapCache(cache.service, cache.to_state(), Clock())
    assert state.get("k0") == "v"
    assert state.contains_key("k0")
    assert state.changed is changed


def test_state_round_trip() -> None:
    """A cache loaded from another's state has its entries and eviction order."""
    cache = _cache("Least Frequently Used", size=3)
    cache.put("k", "a value with spaces")
    cache.get("k")
    cache.put("x", "")
    loaded = MapCache(cache.service, cache.to_state(), Clock())
    assert loaded.to_state() == cache.to_state()
    assert loaded.get("k") == "a value with spaces"
    assert loaded.get("x") == ""


def test_a_flow_declares_each_service_once() -> None:
    """add_service returns the service; a second of the same name is refused."""
    flow = Flow("f")
    service = flow.add_service(MapCacheService("c"))
    assert flow.services == {"c": service}
    with pytest.raises(FlowDefinitionError, match="already has a service named 'c'"):
        flow.add_service(MapCacheService("c"))
    assert DetectDuplicate(distributed_cache_service=service).referenced_services() == {
        "Distributed Cache Service": "c"
    }
