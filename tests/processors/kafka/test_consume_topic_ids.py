"""ConsumeKafka's topic IDs: a topic deleted and made again is read from its start, once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flowcore.testing import TestRunner
from processors.kafka._consume_topic_ids import adopt_ids, id_key, moving_topics
from processors.kafka.connection_service import Kafka3ConnectionService
from processors.kafka.consume_kafka import ConsumeKafka
from tests.processors.kafka.mock_cluster import ControlledMockCluster


@pytest.fixture(scope="module")
def controlled() -> Iterator[ControlledMockCluster]:
    """A mock cluster whose topics the tests delete and make again."""
    cluster = ControlledMockCluster()
    yield cluster
    cluster.close()


def _runner(cluster: ControlledMockCluster, topic: str, **more: str) -> TestRunner:
    runner = TestRunner(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="ids",
            topics=topic,
            auto_offset_reset=more.pop("auto_offset_reset", "latest"),
        )
    )
    runner.add_service(
        Kafka3ConnectionService(
            "kafka", bootstrap_servers=cluster.bootstrap, client_timeout="5 sec", **more
        )
    )
    return runner


def _contents(runner: TestRunner) -> list[bytes]:
    return [f.content for f in runner.flowfiles_for("success")]


def test_a_topic_made_again_and_grown_past_the_flows_offset_is_read_from_its_start(
    controlled, caplog
):
    """A topic deleted and made again whose new log (7 messages) passes the flow's offset 5
    is read from offset 0, each new message once (epochs alone read n5, n6: n0-n4 lost),
    with a warning naming the topic and both IDs."""
    topic = "ids-grown"
    controlled.create_topic(topic)
    runner = _runner(controlled, topic)
    runner.run()  # latest: nothing yet, the position is the (empty) log's end
    controlled.produce(topic, [b"m%d" % i for i in range(5)])
    runner.run()
    assert _contents(runner) == [b"m0", b"m1", b"m2", b"m3", b"m4"]
    old_id = runner.state[id_key(topic)]
    assert old_id == controlled.topic_id(topic)
    assert runner.state[f"{topic}:0"] == "5:0"
    runner.clear_transfer_state()
    controlled.delete_topic(topic)
    controlled.create_topic(topic)
    controlled.produce(topic, [b"n%d" % i for i in range(7)])
    caplog.set_level("WARNING", logger="flowcore.processors")
    runner.run()
    assert _contents(runner) == [b"n%d" % i for i in range(7)]
    new_id = runner.state[id_key(topic)]
    assert new_id == controlled.topic_id(topic) != old_id
    assert runner.state[f"{topic}:0"] == "7:0"
    (warned,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert f"Kafka topic {topic} was deleted and made again: its topic ID is {new_id}" in warned
    assert f"offsets (0: 5:0) are of topic ID {old_id}" in warned
    runner.clear_transfer_state()
    runner.run()
    assert _contents(runner) == []


def test_a_topic_made_again_shorter_with_fewer_partitions_is_read_whole(controlled):
    """A two-partition topic made again with one partition and 2 messages (below the flow's
    offset 3) is read from 0 (epochs alone jumped to its end: n0, n1 lost), and the gone
    partition's position leaves the state."""
    topic = "ids-short"
    controlled.create_topic(topic, partitions=2)
    controlled.produce(topic, [b"a", b"b", b"c"], partition=0)
    controlled.produce(topic, [b"d"], partition=1)
    runner = _runner(controlled, topic, auto_offset_reset="earliest")
    runner.run()
    assert sorted(_contents(runner)) == [b"a", b"b", b"c", b"d"]
    runner.clear_transfer_state()
    controlled.delete_topic(topic)
    controlled.create_topic(topic, partitions=1)
    controlled.produce(topic, [b"n0", b"n1"])
    runner.run()
    assert _contents(runner) == [b"n0", b"n1"]
    assert f"{topic}:1" not in runner.state
    assert runner.state[f"{topic}:0"] == "2:0"


def test_a_state_without_topic_ids_gains_them_and_reads_on(controlled):
    """A state kept before topic IDs (positions alone) is read on from, and gains the ID."""
    topic = "ids-old-state"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"a", b"b", b"c"])
    runner = _runner(controlled, topic)
    runner.set_state({f"{topic}:0": "1:0"})
    runner.run()
    assert _contents(runner) == [b"b", b"c"]
    assert len(runner.state[id_key(topic)]) == 22  # 16 bytes in base64, no padding


def test_a_listing_with_every_partition_at_its_end_asks_no_topic_id():
    """Topics whose partitions are all at their log ends move no position: no ID is asked."""
    marks = {("a", 0): (0, 5), ("a", 1): (0, 2), ("b", 0): (0, 9)}
    state = {"a:0": "5:0", "a:1": "2", "b:0": "4:0", id_key("a"): "X"}
    assert moving_topics(marks, state) == ["b"]
    assert moving_topics(marks, {}) == ["a", "b"]


def test_adopting_ids_keeps_a_same_topics_positions_and_drops_a_new_ones():
    """The same ID keeps the positions; a new one drops them and warns; a first one is kept."""
    warned: list[str] = []
    state = {"a:0": "5:0", "a:1": "3", id_key("a"): "OLD", "b:0": "2:0", id_key("b"): "B"}
    adopted, remade = adopt_ids(state, {"a": "NEW", "b": "B", "c": "C"}, warned.append)
    assert remade == {"a"}
    assert adopted == {id_key("a"): "NEW", "b:0": "2:0", id_key("b"): "B", id_key("c"): "C"}
    (text,) = warned
    assert "offsets (0: 5:0, 1: 3) are of topic ID OLD" in text


def test_an_unread_range_of_a_topic_made_again_is_put_back_to_its_start():
    """A range of the new topic that could not be read returns to its start, not to the
    committed offset of the old topic; a range of the same topic to the committed offset."""
    from flowcore.processor.kinds import WorkItem

    committed = {"a:0": "5:0", id_key("a"): "OLD", "b:0": "7:0", id_key("b"): "B"}
    state = {"a:0": "3:0", id_key("a"): "NEW", "b:0": "9:0", id_key("b"): "B"}
    items = [
        WorkItem("a:0@0", {"topic": "a", "partition": 0, "start": 0, "end": 3}),
        WorkItem("b:0@7", {"topic": "b", "partition": 0, "start": 7, "end": 9}),
    ]
    restored = ConsumeKafka().requeue_work(state, items, committed)
    assert restored == {"a:0": "0", id_key("a"): "NEW", "b:0": "7:0", id_key("b"): "B"}


def test_two_unread_ranges_of_a_topic_made_again_go_back_to_the_first_ones_start():
    """One micro-batch listed two ranges of one partition of a re-made topic and read neither:
    the partition returns to the lower start whatever their order (the later start skipped
    messages 0-99 for good)."""
    from flowcore.processor.kinds import WorkItem

    committed = {"t:0": "5:0", id_key("t"): "OLD"}
    state = {"t:0": "200:0", id_key("t"): "NEW"}
    items = [
        WorkItem("t:0@0", {"topic": "t", "partition": 0, "start": 0, "end": 100}),
        WorkItem("t:0@100", {"topic": "t", "partition": 0, "start": 100, "end": 200}),
    ]
    for order in (items, items[::-1]):
        restored = ConsumeKafka().requeue_work(state, order, committed)
        assert restored == {"t:0": "0", id_key("t"): "NEW"}


def test_topic_ids_unanswered_warn_and_are_not_asked_again_for_a_while():
    """Brokers that do not answer the ID request within the timeout give no IDs (positions read
    on, unchecked) and a warning saying so; the next listings do not wait for them again."""
    from processors.kafka._consume_topic_ids import RETRY_AFTER, TopicIdReader
    from processors.kafka.connection_service import import_kafka

    warned: list[str] = []
    reader = TopicIdReader({"bootstrap.servers": "127.0.0.1:1", "log_level": 0})
    assert reader.read(import_kafka(), ["t"], 0.2, warned.append) == {}
    assert reader.read(import_kafka(), ["t"], 0.2, warned.append) == {}
    (text,) = warned
    assert text.startswith("Kafka topic IDs of t could not be read (")
    assert f"not detected by its ID; asked again in {RETRY_AFTER:g} s" in text
