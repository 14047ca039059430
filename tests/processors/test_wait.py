"""Tests for Wait: NiFi's TestWait cases over the map cache service."""

from __future__ import annotations

from pathlib import Path

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.services import MapCache, MapCacheService
from flowcore.settings import Settings
from flowcore.testing import MockFlowFile, TestRunner
from processors import GetFile, Notify, SplitText, UpdateAttribute, Wait
from processors._wait_notify import get_signal, notify
from repositories.repository_set import RepositorySet

CACHED = {"both": "notifyValue", "uuid": "notifyUuid", "notify.only": "notifyValue"}
WAITING = {"releaseSignalAttribute": "key", "wait.only": "waitValue", "both": "waitValue"}


def _runner(**properties: str) -> tuple[TestRunner, MapCache]:
    """A runner with service 'service' and signal id ${releaseSignalAttribute}."""
    runner = TestRunner(Wait())
    cache = runner.add_service(MapCacheService("service"))
    runner.set_property("Distributed Cache Service", "service")
    runner.set_property("Release Signal Identifier", "${releaseSignalAttribute}")
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner, cache


def _again(runner: TestRunner, relationship: str = "wait") -> MockFlowFile:
    """The one FlowFile routed to *relationship*, enqueued again (the wait loop)."""
    runner.assert_all_flowfiles_transferred(relationship, 1)
    flowfile = runner.flowfiles_for(relationship)[0]
    runner.clear_transfer_state()
    runner.enqueue(flowfile)
    return flowfile


def _contents(runner: TestRunner, relationship: str) -> list[str]:
    return [f.content.decode() for f in runner.flowfiles_for(relationship)]


def test_wait() -> None:
    """NiFi's testWait: no signal yet: to wait, with wait.start.timestamp."""
    runner, _ = _runner()
    runner.enqueue(b"", {"releaseSignalAttribute": "1"})
    runner.run()
    runner.assert_all_flowfiles_transferred("wait", 1)
    runner.flowfiles_for("wait")[0].assert_attribute_exists("wait.start.timestamp")


def test_wait_keep_in_upstream_connection() -> None:
    """NiFi's testWaitKeepInUpstreamConnection: the FlowFile stays in the incoming queue."""
    runner, _ = _runner(**{"Wait Mode": "keep"})
    runner.enqueue(b"", {"releaseSignalAttribute": "1"})
    runner.run()
    runner.assert_queue_not_empty()
    runner.assert_transfer_count("wait", 0)


def test_expired() -> None:
    """NiFi's testExpired: past Expiration Duration to expired, the timestamp removed."""
    runner, _ = _runner(**{"Expiration Duration": "100 ms"})
    runner.enqueue(b"", {"releaseSignalAttribute": "1"})
    runner.run()
    _again(runner)
    runner.advance_time(0.101)
    runner.run()
    runner.assert_all_flowfiles_transferred("expired", 1)
    runner.flowfiles_for("expired")[0].assert_attribute_not_exists("wait.start.timestamp")


def test_counter_expired() -> None:
    """NiFi's testCounterExpired: an expired FlowFile still gets the counts and attributes."""
    runner, cache = _runner(**{"Target Signal Count": "5", "Expiration Duration": "100 ms"})
    runner.enqueue(b"", {"releaseSignalAttribute": "notification-id"})
    runner.run()
    _again(runner)
    attributes = {"signal-attr-1": "signal-attr-1-value", "signal-attr-2": "signal-attr-2-value"}
    notify(cache, "notification-id", {"counter-A": 1}, attributes)
    notify(cache, "notification-id", {"counter-B": 2}, attributes)
    runner.advance_time(0.101)
    runner.run()
    runner.assert_all_flowfiles_transferred("expired", 1)
    out = runner.flowfiles_for("expired")[0]
    out.assert_attribute_not_exists("wait.start.timestamp")
    out.assert_attribute_equals("wait.counter.total", "3")
    out.assert_attribute_equals("wait.counter.counter-A", "1")
    out.assert_attribute_equals("wait.counter.counter-B", "2")
    out.assert_attribute_equals("signal-attr-1", "signal-attr-1-value")
    out.assert_attribute_equals("signal-attr-2", "signal-attr-2-value")


def test_bad_wait_start_timestamp() -> None:
    """NiFi's testBadWaitStartTimestamp: an unreadable timestamp goes to failure, removed."""
    runner, _ = _runner(**{"Expiration Duration": "100 ms"})
    runner.enqueue(b"", {"releaseSignalAttribute": "1", "wait.start.timestamp": "blue bunny"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_attribute_not_exists("wait.start.timestamp")


def test_empty_release_signal() -> None:
    """NiFi's testEmptyReleaseSignal: no signal id: failure, no timestamp nor counts."""
    runner, _ = _runner()
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_attribute_not_exists("wait.start.timestamp")
    out.assert_attribute_not_exists("wait.counter.total")
    assert out.flowfile.penalty_expiration > 0


def test_wait_penalty_duration() -> None:
    """NiFi's testWaitPenaltyDuration: an id that released nothing is skipped for a while."""
    runner, _ = _runner(**{"Wait Penalty Duration": "1 hour"})
    runner.enqueue(b"", {"releaseSignalAttribute": "1"})
    runner.run(1, stop_on_finish=False)
    runner.assert_all_flowfiles_transferred("wait", 1)
    assert set(runner.processor._penalties) == {"1"}
    runner.clear_transfer_state()
    runner.enqueue(b"", {"releaseSignalAttribute": "1"})
    runner.run(1, stop_on_finish=False)
    runner.assert_transfer_count("wait", 0)
    runner.assert_queue_not_empty()
    runner.advance_time(3601)
    runner.run(1, stop_on_finish=False)
    runner.assert_transfer_count("wait", 1)


def test_replace_attributes() -> None:
    """NiFi's testReplaceAttributes: cached attributes replace the FlowFile's; the signal goes."""
    runner, cache = _runner(**{"Attribute Copy Mode": "replace"})
    notify(cache, "key", {"default": 1}, CACHED)
    runner.enqueue(b"content", WAITING)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_not_exists("wait.start.timestamp")
    out.assert_attribute_equals("notify.only", "notifyValue")
    out.assert_attribute_equals("wait.only", "waitValue")
    out.assert_attribute_equals("both", "notifyValue")
    assert out.attributes["uuid"] != "notifyUuid"
    assert get_signal(cache, "key") is None


def test_keep_original_attributes() -> None:
    """NiFi's testKeepOriginalAttributes: the FlowFile's own values are kept."""
    runner, cache = _runner(**{"Attribute Copy Mode": "keeporiginal"})
    notify(cache, "key", {"default": 1}, CACHED)
    runner.enqueue(b"content", WAITING)
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("notify.only", "notifyValue")
    out.assert_attribute_equals("both", "waitValue")


def test_wait_for_total_count() -> None:
    """NiFi's testWaitForTotalCount: three signals over any counters release the FlowFile."""
    runner, cache = _runner(**{"Target Signal Count": "${targetSignalCount}"})
    notify(cache, "key", {"counter-A": 1}, CACHED)
    runner.enqueue(b"content", {**WAITING, "targetSignalCount": "3"})
    runner.run()
    first = _again(runner)
    stamp = first.attributes["wait.start.timestamp"]
    notify(cache, "key", {"counter-B": 1}, CACHED)
    runner.advance_time(1)
    runner.run()
    second = _again(runner)
    second.assert_attribute_equals("wait.start.timestamp", stamp)
    runner.run()
    _again(runner)
    notify(cache, "key", {"counter-C": 1}, CACHED)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_not_exists("wait.start.timestamp")
    out.assert_attribute_equals("notify.only", "notifyValue")
    out.assert_attribute_equals("both", "waitValue")
    assert get_signal(cache, "key") is None


def test_wait_for_specific_count() -> None:
    """NiFi's testWaitForSpecificCount: counter-B must reach 2; counts copied on release."""
    runner, cache = _runner(
        **{
            "Target Signal Count": "${targetSignalCount}",
            "Signal Counter Name": "${signalCounterName}",
        }
    )
    notify(cache, "key", {"counter-A": 1}, CACHED)
    attributes = {**WAITING, "targetSignalCount": "2", "signalCounterName": "counter-B"}
    runner.enqueue(b"content", attributes)
    runner.run()
    _again(runner)
    notify(cache, "key", {"counter-B": 1}, CACHED)
    runner.run()
    _again(runner)
    notify(cache, "key", {"counter-C": 1}, CACHED)
    runner.run()
    _again(runner)
    notify(cache, "key", {"counter-B": 1}, CACHED)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("wait.counter.total", "4")
    out.assert_attribute_equals("wait.counter.counter-A", "1")
    out.assert_attribute_equals("wait.counter.counter-B", "2")
    out.assert_attribute_equals("wait.counter.counter-C", "1")


def test_decrement_cache() -> None:
    """NiFi's testDecrementCache: two signals, target 1: two releases, then the signal goes."""
    runner, cache = _runner(
        **{"Signal Counter Name": "${signalCounterName}", "Target Signal Count": "1"}
    )
    notify(cache, "key", {"counter": 1}, CACHED)
    notify(cache, "key", {"counter": 1}, CACHED)
    attributes = {**WAITING, "signalCounterName": "counter"}
    runner.enqueue(b"content", attributes)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("wait.counter.counter", "2")
    signal = get_signal(cache, "key")
    assert signal is not None
    assert (signal.count("counter"), signal.releasable_count) == (0, 1)
    runner.clear_transfer_state()
    runner.enqueue(b"content", attributes)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("wait.counter.counter", "0")
    assert get_signal(cache, "key") is None


def test_wait_buffer_count() -> None:
    """NiFi's testWaitBufferCount: one signal id per trigger, up to Wait Buffer Count of it;
    FlowFiles without an id fail on the way; others wait their turn in the queue."""
    runner, cache = _runner(
        **{
            "Target Signal Count": "${targetSignalCount}",
            "Signal Counter Name": "${signalCounterName}",
            "Wait Buffer Count": "2",
        }
    )
    key_a = {
        "releaseSignalAttribute": "key-A",
        "targetSignalCount": "1",
        "signalCounterName": "counter",
    }
    key_b = {**key_a, "releaseSignalAttribute": "key-B", "targetSignalCount": "3"}
    invalid = {k: v for k, v in key_b.items() if k != "releaseSignalAttribute"}
    for content, attributes in (
        ("1", key_b),
        ("2", key_a),
        ("3", invalid),
        ("4", key_a),
        ("5", key_b),
        ("6", key_b),
    ):
        runner.enqueue(content.encode(), attributes)
    runner.run()
    assert _contents(runner, "wait") == ["1", "5"]
    assert _contents(runner, "failure") == ["3"]
    runner.clear_transfer_state()
    runner.run()  # the queue now starts with 2: key-A, which has no signal yet
    assert _contents(runner, "wait") == ["2", "4"]
    runner.clear_transfer_state()
    notify(cache, "key-B", {"counter": 3}, {"notified": "notified-value"})
    runner.run()  # 6 is first now; one pass for three signals: 6 goes
    assert _contents(runner, "success") == ["6"]


def test_release_multiple_flowfiles() -> None:
    """NiFi's testReleaseMultipleFlowFiles: 3 signals release 6 FlowFiles, 2 per trigger."""
    runner, cache = _runner(
        **{
            "Target Signal Count": "${targetSignalCount}",
            "Signal Counter Name": "${signalCounterName}",
            "Wait Buffer Count": "2",
            "Releasable FlowFile Count": "${fragmentCount}",
        }
    )
    attributes = {
        "releaseSignalAttribute": "key",
        "targetSignalCount": "3",
        "signalCounterName": "counter",
        "fragmentCount": "6",
    }
    for i in range(1, 7):
        runner.enqueue(str(i).encode(), attributes)
    runner.run()
    assert _contents(runner, "wait") == ["1", "2"]
    assert get_signal(cache, "key") is None
    runner.clear_transfer_state()
    notify(cache, "key", {"counter": 3}, {"notified": "notified-value"})
    runner.run()
    assert _contents(runner, "success") == ["3", "4"]
    signal = get_signal(cache, "key")
    assert signal is not None
    assert (signal.count("counter"), signal.releasable_count) == (0, 4)
    runner.clear_transfer_state()
    runner.run()
    assert _contents(runner, "success") == ["5", "6"]
    signal = get_signal(cache, "key")
    assert signal is not None
    assert signal.releasable_count == 2


def test_open_gate() -> None:
    """NiFi's testOpenGate: Releasable FlowFile Count 0 lets all through, the signal kept."""
    runner, cache = _runner(
        **{
            "Target Signal Count": "${targetSignalCount}",
            "Signal Counter Name": "${signalCounterName}",
            "Wait Buffer Count": "2",
            "Releasable FlowFile Count": "0",
        }
    )
    attributes = {
        "releaseSignalAttribute": "key",
        "targetSignalCount": "3",
        "signalCounterName": "counter",
    }
    for i in range(1, 7):
        runner.enqueue(str(i).encode(), attributes)
    runner.run()
    assert _contents(runner, "wait") == ["1", "2"]
    runner.clear_transfer_state()
    notify(cache, "key", {"counter": 3}, {"notified": "notified-value"})
    for expected in (["3", "4"], ["5", "6"]):
        runner.run()
        assert _contents(runner, "success") == expected
        runner.clear_transfer_state()
        signal = get_signal(cache, "key")
        assert signal is not None
        assert (signal.count("counter"), signal.releasable_count) == (3, 0)


def test_a_rollback_restores_the_signal() -> None:
    """A session rolled back after Wait consumed a signal leaves the signal as it was."""
    runner, cache = _runner()
    notify(cache, "key", {"default": 1}, {})
    before = cache.get("key")
    runner.enqueue(b"", {"releaseSignalAttribute": "key"})
    session = runner.create_session()
    runner.processor.on_trigger(runner.context, session)
    assert cache.get("key") is None
    session.rollback()
    assert cache.get("key") == before


def test_nifi_1x_property_names() -> None:
    """NiFi's testMigrateProperties names are read as the current ones."""
    old = {
        "distributed-cache-service": "service",
        "release-signal-id": "${x}",
        "target-signal-count": "2",
        "signal-counter-name": "c",
        "wait-buffer-count": "3",
        "releasable-flowfile-count": "4",
        "expiration-duration": "1 min",
        "attribute-copy-mode": "replace",
        "wait-mode": "keep",
        "wait-penalty-duration": "1 sec",
    }
    processor = Wait(**old)
    assert processor.effective_value(Wait.WAIT_MODE) == "keep"
    assert processor.effective_value(Wait.RELEASABLE_FLOWFILE_COUNT) == "4"
    assert processor.effective_value(Wait.WAIT_PENALTY_DURATION) == "1 sec"


# --- in the engine -----------------------------------------------------------------------------


def _fork_join_flow(root: Path) -> Flow:
    """GetFile -> SplitText: splits -> UpdateAttribute -> Notify; original -> Wait (wait loop)."""
    flow = Flow("fork-join")
    flow.add_service(MapCacheService("signals"))
    get = flow.add(GetFile(input_directory=str(root / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    work = flow.add(UpdateAttribute(processed="yes"), name="work")
    tell = flow.add(
        Notify(
            release_signal_identifier="${fragment.identifier}",
            distributed_cache_service="signals",
            attribute_cache_regular_expression="processed",
        ),
        name="notify",
    )
    wait = flow.add(
        Wait(
            release_signal_identifier="${fragment.identifier}",
            target_signal_count="${fragment.count}",
            distributed_cache_service="signals",
        ),
        name="wait",
    )
    flow.connect(get, split)
    flow.connect(split, work, "splits", durable=True)
    flow.connect(work, tell)
    flow.connect(split, wait, "original")
    flow.connect(wait, wait, "wait")
    flow.auto_terminate(split, "failure")
    flow.auto_terminate(tell, ["success", "failure"])
    flow.auto_terminate(wait, ["success", "expired", "failure"])
    return flow


def test_fork_join_flow_releases_each_original_after_its_splits(tmp_path: Path) -> None:
    """The classic fork-join, run: each file's original waits for fragment.count Notify signals
    of its splits, is released once with their counts and attributes, and no signal is left."""
    (tmp_path / "in").mkdir()
    sizes = {"a.txt": 3, "b.txt": 7, "c.txt": 12}
    for name, lines in sizes.items():
        (tmp_path / "in" / name).write_text("".join(f"{name} {i}\n" for i in range(lines)))
    flow = _fork_join_flow(tmp_path)
    settings = Settings(sync=False, batch_max_flowfiles=5, batch_max_batched_flowfiles=5)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.transfers["notify"]["success"][0] == sum(sizes.values())
    assert result.transfers["wait"]["success"][0] == 3
    assert "expired" not in result.transfers["wait"]
    assert result.transfers["wait"]["wait"][0] > 0  # Notify lagged (5 a micro-batch): it waited
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        left = repos.flowfiles.state("service:signals")
        events = repos.provenance.search(limit=10_000)
    finally:
        repos.close()
    assert not left  # every signal was used up and removed
    released = [
        e
        for e in events
        if e.component_name == "wait"
        and e.event_type.value == "DROP"  # auto-terminated at success
        and "wait.counter.total" in e.updated_attributes
    ]
    totals = sorted(int(e.updated_attributes["wait.counter.total"]) for e in released)
    assert totals == sorted(sizes.values())
    assert all(e.updated_attributes.get("processed") == "yes" for e in released)


def test_a_nifi_1x_wait_notify_flow_imports_and_runs(tmp_path: Path) -> None:
    """A NiFi 1.x flow definition (legacy property names, DistributedMapCacheClientService and
    Server) with the fork-join pattern imports with no note and runs: two batches of five
    orders, each original released once with its even/odd counters and a cached attribute."""
    flow = Flow.from_nifi(Path(__file__).parent / "nifi_flows" / "wait_notify_fork_join.json")
    assert flow.notes == ()
    assert list(flow.services) == ["Order signals"]
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.transfers["Notify order done"]["success"][0] == 10
    assert result.transfers["Wait for all orders"]["success"][0] == 2
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        left = repos.flowfiles.state("service:Order signals")
        events = repos.provenance.search(limit=1_000)
    finally:
        repos.close()
    assert not left
    done = [
        e
        for e in events
        if e.component_name == "Wait for all orders" and e.event_type.value == "ATTRIBUTES_MODIFIED"
    ]
    assert len(done) == 2
    for event in done:
        attributes = event.updated_attributes
        assert (attributes["wait.counter.odd"], attributes["wait.counter.even"]) == ("3", "2")
        assert attributes["wait.counter.total"] == "5"
        assert attributes["fragment.index"] == "5"  # cached by Notify, absent on the original
