"""Tests for flowcore.nifi.services: the table of NiFi controller services flowcore provides."""

from __future__ import annotations

from flowcore.nifi.services import SERVICES


def test_the_map_cache_services_of_1x_and_2x_are_known() -> None:
    """DetectDuplicate's cache clients and servers, by their 1.x and 2.x names, are one mapping."""
    names = {
        "DistributedMapCacheClientService",
        "DistributedMapCacheServer",
        "MapCacheClientService",
        "MapCacheServer",
    }
    assert names <= set(SERVICES)
    assert len({id(SERVICES[n]) for n in names}) == 1


def test_a_mapping_not_wired_yet_says_what_it_waits_for() -> None:
    """Until its provider lands, a mapping has no provide and names what it waits for."""
    mapping = SERVICES["MapCacheClientService"]
    assert mapping.provide is None
    assert "DetectDuplicate" in mapping.waits_for
    assert "MapCacheService" in mapping.provided_by
