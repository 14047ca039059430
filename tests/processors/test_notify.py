"""Tests for Notify: NiFi's TestNotify cases and the signal's JSON in the cache."""

from __future__ import annotations

import json

from flowcore.services import MapCache, MapCacheService
from flowcore.testing import TestRunner
from processors import Notify
from processors._wait_notify import get_signal


def _runner(**properties: str) -> tuple[TestRunner, MapCache]:
    """A runner with service 'service', signal id ${releaseSignalAttribute}, attributes cached."""
    runner = TestRunner(Notify())
    cache = runner.add_service(MapCacheService("service"))
    runner.set_property("Distributed Cache Service", "service")
    runner.set_property("Release Signal Identifier", "${releaseSignalAttribute}")
    runner.set_property("Attribute Cache Regular Expression", ".*")
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner, cache


def _enqueue_three(runner: TestRunner, counts: tuple[str, str, str] = ("1", "1", "1")) -> None:
    for key, status, count in zip(
        ("data1", "data2", "data3"), ("success", "success", "failure"), counts, strict=True
    ):
        runner.enqueue(
            b"",
            {
                "releaseSignalAttribute": "someDataProcessing",
                "key": key,
                "status": status,
                "record.count": count,
            },
        )


def test_notify() -> None:
    """NiFi's testNotify: notified=true, the attributes cached, the count reached."""
    runner, cache = _runner()
    runner.enqueue(b"", {"releaseSignalAttribute": "1", "key": "value"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("notified", "true")
    signal = get_signal(cache, "1")
    assert signal is not None
    assert signal.attributes["key"] == "value"
    assert "uuid" not in signal.attributes
    assert signal.is_count_reached(None, 1)


def test_signal_is_nifis_json() -> None:
    """The cache value is NiFi's Signal JSON: counts, attributes, releasableCount."""
    runner, cache = _runner(**{"Attribute Cache Regular Expression": "key"})
    runner.enqueue(b"", {"releaseSignalAttribute": "1", "key": "value"})
    runner.run()
    assert (
        cache.get("1")
        == '{"counts":{"default":1},"attributes":{"key":"value"},"releasableCount":0}'
    )
    assert json.loads(cache.get("1") or "")["counts"] == {"default": 1}


def test_notify_counters() -> None:
    """NiFi's testNotifyCounters: counters by ${status}, the latest attributes win."""
    runner, cache = _runner(**{"Signal Counter Name": "${status}"})
    _enqueue_three(runner)
    runner.run(3)
    runner.assert_all_flowfiles_transferred("success", 3)
    signal = get_signal(cache, "someDataProcessing")
    assert signal is not None
    assert signal.attributes["key"] == "data3"
    assert signal.is_count_reached(None, 3)
    assert (signal.count("success"), signal.count("failure")) == (2, 1)


def test_notify_counters_batch() -> None:
    """NiFi's testNotifyCountersBatch: Signal Buffer Count 2 takes two per trigger."""
    runner, cache = _runner(**{"Signal Counter Name": "${status}", "Signal Buffer Count": "2"})
    _enqueue_three(runner)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    signal = get_signal(cache, "someDataProcessing")
    assert signal is not None
    assert signal.attributes["key"] == "data2"
    assert (signal.count("success"), signal.count("failure")) == (2, 0)
    runner.clear_transfer_state()
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    signal = get_signal(cache, "someDataProcessing")
    assert signal is not None
    assert signal.attributes["key"] == "data3"
    assert (signal.count("success"), signal.count("failure")) == (2, 1)


def test_notify_counters_using_delta() -> None:
    """NiFi's testNotifyCountersUsingDelta: deltas from ${record.count}."""
    runner, cache = _runner(
        **{
            "Signal Counter Name": "${status}",
            "Signal Counter Delta": "${record.count}",
            "Signal Buffer Count": "10",
        }
    )
    _enqueue_three(runner, ("1024", "2048", "512"))
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 3)
    signal = get_signal(cache, "someDataProcessing")
    assert signal is not None
    assert signal.is_count_reached(None, 3584)
    assert (signal.count("success"), signal.count("failure")) == (3072, 512)


def test_illegal_delta() -> None:
    """NiFi's testIllegalDelta: '2048 records' fails that FlowFile alone, notified=false."""
    runner, cache = _runner(
        **{
            "Signal Counter Name": "${status}",
            "Signal Counter Delta": "${record.count}",
            "Signal Buffer Count": "10",
        }
    )
    _enqueue_three(runner, ("1024", "2048 records", "512"))
    runner.run()
    runner.assert_transfer_count("success", 2)
    runner.assert_transfer_count("failure", 1)
    runner.flowfiles_for("failure")[0].assert_attribute_equals("notified", "false")
    signal = get_signal(cache, "someDataProcessing")
    assert signal is not None
    assert (signal.count("success"), signal.count("failure")) == (1024, 512)


def test_regex() -> None:
    """NiFi's testRegex: only attributes whose whole name matches are cached."""
    runner, cache = _runner(**{"Attribute Cache Regular Expression": "key[0-9]*"})
    runner.enqueue(b"", {"releaseSignalAttribute": "1", "key1": "value", "other.key1": "value"})
    runner.run()
    signal = get_signal(cache, "1")
    assert signal is not None
    assert signal.attributes == {"key1": "value"}


def test_empty_release_signal() -> None:
    """NiFi's testEmptyReleaseSignal: no signal id goes to failure."""
    runner, cache = _runner()
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_attribute_equals("notified", "false")
    assert len(cache) == 0


def test_delta_zero_resets_the_counter() -> None:
    """A delta of 0 clears the counter (the gate closes)."""
    runner, cache = _runner(**{"Signal Counter Delta": "${d}"})
    for delta in ("1", "1", "0"):
        runner.enqueue(b"", {"releaseSignalAttribute": "gate", "d": delta})
    runner.run(3)
    signal = get_signal(cache, "gate")
    assert signal is not None
    assert signal.count("default") == 0


def test_nifi_1x_property_names() -> None:
    """NiFi's migrateProperties names are still read (release-signal-id and the rest)."""
    processor = Notify(
        **{
            "release-signal-id": "${a}",
            "signal-counter-name": "c",
            "signal-counter-delta": "2",
            "signal-buffer-count": "5",
            "distributed-cache-service": "service",
            "attribute-cache-regex": "x",
        }
    )
    assert processor.effective_value(Notify.SIGNAL_COUNTER_DELTA) == "2"
    assert processor.effective_value(Notify.DISTRIBUTED_CACHE_SERVICE) == "service"
