"""Tests for processors._wait_notify: NiFi's Signal arithmetic and JSON over the map cache."""

from __future__ import annotations

import pytest

from flowcore.errors import ProcessException
from flowcore.services import MapCache, MapCacheService
from processors._wait_notify import Signal, complete, get_signal, notify


def _cache() -> MapCache:
    return MapCache(MapCacheService("s"), {}, lambda: 0)


def test_release_with_a_counter_keeps_its_remainder() -> None:
    """Seven signals, target 3, 2 per pass: 4 releasable, the counter keeps 1."""
    signal = Signal("id", {"c": 7})
    assert signal.release_candidates("c", 3, 2, 3) == 3
    assert (signal.counts["c"], signal.releasable_count) == (1, 1)


def test_release_without_a_counter_records_consumed() -> None:
    """With no counter, a 'consumed' counter subtracts what was used from the total."""
    signal = Signal("id", {"a": 2, "b": 3})
    assert signal.release_candidates(None, 5, 1, 1) == 1
    assert signal.counts["consumed"] == -5
    assert signal.total_count == 0


def test_notify_adds_resets_and_merges() -> None:
    """Deltas add up, 0 resets a counter, attributes merge (later values win)."""
    cache = _cache()
    notify(cache, "k", {"a": 2}, {"x": "1"})
    notify(cache, "k", {"a": 3, "b": 1}, {"x": "2", "y": "3"})
    signal = get_signal(cache, "k")
    assert signal is not None
    assert (signal.counts, signal.attributes) == ({"a": 5, "b": 1}, {"x": "2", "y": "3"})
    notify(cache, "k", {"a": 0}, {})
    assert get_signal(cache, "k").counts["a"] == 0  # type: ignore[union-attr]
    complete(cache, signal)
    assert get_signal(cache, "k") is None


def test_signal_json_is_nifis() -> None:
    """Jackson's field order and compact form: counts, attributes, releasableCount."""
    text = Signal("k", {"default": 1}, {"a": "é"}, 2).to_json()
    assert text == '{"counts":{"default":1},"attributes":{"a":"é"},"releasableCount":2}'


def test_an_entry_that_is_no_signal_is_an_error() -> None:
    """Another processor's value under the key cannot be read as a signal."""
    cache = _cache()
    cache.put("k", "1700000000 some description")
    with pytest.raises(ProcessException, match="not a serialized Signal"):
        get_signal(cache, "k")
