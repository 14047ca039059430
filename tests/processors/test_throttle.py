"""Tests for ControlRate's throttles: NiFi's window, penalization, and their state."""

from __future__ import annotations

from processors._throttle import Throttle, load_throttles, save_throttles


def test_a_throttle_knows_when_it_opens() -> None:
    """The time a held FlowFile is retried: when the window's oldest buckets have left it."""
    throttle = Throttle(1000)
    assert throttle.try_add(2, 2, 10_000)
    assert not throttle.try_add(1, 2, 10_500)
    assert throttle.opens_at(2, 10_500) == 11_001


def test_a_changed_configuration_resets_the_throttles() -> None:
    """Throttles saved under one configuration are not loaded under another (NiFi clears them)."""
    throttle = Throttle(1000)
    throttle.try_add(1, 5, 10_000)
    state = save_throttles({("count", None): throttle}, "a", 10_000)
    assert load_throttles(state, "a", 1000)[("count", None)] == throttle
    assert load_throttles(state, "b", 1000) == {}


def test_unused_throttles_are_dropped_after_two_periods() -> None:
    """A throttle unused for two Time Durations is not kept in the state."""
    throttle = Throttle(1000)
    throttle.try_add(1, 5, 10_000)
    assert save_throttles({("count", "g"): throttle}, "a", 13_000) == {"config": "a"}
