"""ConsumeKafka's range reads against librdkafka's mock cluster: ranges read together."""

from __future__ import annotations

import threading
import time

import confluent_kafka
import pytest

from flowcore.errors import ProcessException
from flowcore.processor.kinds import WorkItem
from processors.kafka._consume_ranges import _Ranges, fetch_ranges


def _item(topic: str, partition: int, start: int, end: int) -> WorkItem:
    payload = {"topic": topic, "partition": partition, "start": start, "end": end}
    return WorkItem(f"{topic}:{partition}@{start}", payload, flowfiles=end - start, size=0)


@pytest.fixture
def consumer(kafka_cluster):
    """A reader configured as ConsumeKafka's (earliest, no auto commit)."""
    made = confluent_kafka.Consumer(
        {
            "bootstrap.servers": kafka_cluster.bootstrap,
            "group.id": "ranges",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 10,
            "log_level": 0,
        }
    )
    yield made
    made.close()


def _values(read) -> list[bytes]:
    return [m.value() for m in read]


def test_ranges_of_several_topics_and_partitions_are_read_together(kafka_cluster, consumer):
    """Each range gets exactly its messages (none past its end), in offset order, whatever
    topic and partition; a later read of the same consumer reads again (no pause is left)."""
    kafka_cluster.produce("ranges-a", [b"a0", b"a1", b"a2", b"a3"], partition=0)
    kafka_cluster.produce("ranges-a", [b"b0", b"b1"], partition=3)
    kafka_cluster.produce("ranges-b", [b"c0", b"c1", b"c2"], partition=1)
    items = [_item("ranges-a", 0, 1, 3), _item("ranges-a", 3, 0, 2), _item("ranges-b", 1, 2, 3)]
    for topic in ("ranges-a", "ranges-b"):  # as ConsumeKafka's reader does (else ~1 s a topic)
        consumer.list_topics(topic, timeout=5)
    read = fetch_ranges(confluent_kafka, consumer, items, 10)
    assert [_values(r) for r in read] == [[b"a1", b"a2"], [b"b0", b"b1"], [b"c2"]]
    again = fetch_ranges(confluent_kafka, consumer, [_item("ranges-a", 0, 2, 4)], 10)
    assert [_values(r) for r in again] == [[b"a2", b"a3"]]


def test_one_partition_twice_is_read_range_after_range(kafka_cluster, consumer):
    """Two ranges of one partition (two listings in one task) each get their own messages."""
    kafka_cluster.produce("ranges-c", [b"x0", b"x1", b"x2"], partition=2)
    items = [_item("ranges-c", 2, 0, 1), _item("ranges-c", 2, 1, 3)]
    read = fetch_ranges(confluent_kafka, consumer, items, 10)
    assert [_values(r) for r in read] == [[b"x0"], [b"x1", b"x2"]]


def test_a_range_not_whole_in_time_gets_a_timeout_naming_it(kafka_cluster, consumer):
    """A range past the partition's end (its messages never come) times out, named; the
    other range still gets its messages."""
    kafka_cluster.produce("ranges-d", [b"y0"], partition=0)
    items = [_item("ranges-d", 0, 0, 1), _item("ranges-d", 1, 0, 5)]
    # long enough for a first fetch on a loaded machine (0.3 s timed the first range out in CI)
    read, missing = fetch_ranges(confluent_kafka, consumer, items, 2.0)
    assert _values(read) == [b"y0"]
    assert isinstance(missing, ProcessException)
    assert "ranges-d:1 offsets 0-5 timed out after 2 s" in str(missing)


def _later(delays_and_values, kafka_cluster, topic: str, partition: int) -> threading.Thread:
    """A started thread producing each ``(delay, values)`` after sleeping its delay."""

    def produce() -> None:
        for delay, values in delays_and_values:
            time.sleep(delay)
            kafka_cluster.produce(topic, values, partition=partition)

    thread = threading.Thread(target=produce)
    thread.start()
    return thread


@pytest.mark.parametrize("others", [False, True], ids=["one-range", "with-another-range"])
def test_offsets_below_a_range_start_fail_the_range_said_once(kafka_cluster, consumer, others):
    """A partition whose log ends below a range's start (truncated, or made again) is read from
    its log start: the range fails naming its offsets (listed again, its new messages not
    dropped), said once; another range still gets its messages."""
    topic = f"ranges-trunc-{others}"
    kafka_cluster.produce(topic, [b"m0", b"m1", b"m2"], partition=0)
    kafka_cluster.produce(topic, [b"o0"], partition=1)
    consumer.list_topics(topic, timeout=5)
    items = [_item(topic, 0, 5, 8)] + ([_item(topic, 1, 0, 1)] if others else [])
    said: list[str] = []
    read = fetch_ranges(confluent_kafka, consumer, items, 5, said.append)
    assert isinstance(read[0], ProcessException)
    assert f"Kafka read of {topic}:0 offsets 5-8 failed: it gave offset 0, below" in str(read[0])
    if others:
        assert _values(read[1]) == [b"o0"]
    assert len(said) == 1
    assert f"Kafka {topic}:0 gave offset 0 for the range 5-8: its log ended below 5" in said[0]


class _Message:
    """A message as confluent_kafka gives it, of topic ``t``."""

    def __init__(self, partition: int, offset: int, error: object = None) -> None:
        self._partition = partition
        self._offset = offset
        self._error = error

    def topic(self) -> str:
        return "t"

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def error(self) -> object:
        return self._error

    def value(self) -> bytes:
        return b"v%d" % self._offset


def _batch(*offsets: int, partition: int = 0) -> list[_Message]:
    return [_Message(partition, o) for o in offsets]


def test_one_range_reset_mid_batch_fails_the_range():
    """One range given a batch whose offsets go back below its start mid-batch (a reset to the
    log start while read) fails, none of that batch's messages taken."""
    said: list[str] = []
    ranges = _Ranges([_item("t", 0, 5, 10)], said.append)
    ranges.take(_batch(5, 6))
    ranges.take(_batch(7, 8, 0, 1, 2))
    assert isinstance(ranges.results[0], ProcessException)
    assert "t:0 offsets 5-10 failed: it gave offset 0, below the range's start" in str(
        ranges.results[0]
    )
    assert not ranges.reading
    assert len(said) == 1


def test_one_range_takes_gaps_and_skips_offsets_taken_already():
    """One range takes a batch with a gap (a control record) and skips offsets it has taken
    already (a fetch given again): each offset once, in order."""
    ranges = _Ranges([_item("t", 0, 5, 10)], None)
    taken = [ranges.take(_batch(5, 6)), ranges.take(_batch(6, 7, 9))]
    assert [m.offset() for m in ranges.read[0]] == [5, 6, 7, 9]
    assert taken == [2, 2]
    assert ranges.reading == {0}


class _Error:
    def str(self) -> str:
        return "Broker: Not leader for partition"


class _Consumer:
    """A consumer whose partition 0 fails, then gives a message a call until paused; its
    partition 1 gives nothing."""

    def __init__(self) -> None:
        self.paused: set[int] = set()
        self.calls = 0
        self.began = time.monotonic()

    def assign(self, partitions) -> None:
        pass

    def unassign(self) -> None:
        pass

    def consume(self, count: int, wait: float) -> list[_Message]:
        assert time.monotonic() - self.began < 5, "the stalled range never timed out"
        self.calls += 1
        time.sleep(0.001)
        if self.calls == 1:
            return [_Message(0, 0, _Error())]
        return [] if 0 in self.paused else _batch(self.calls)

    def position(self, partitions):
        return [confluent_kafka.TopicPartition(p.topic, p.partition, -1001) for p in partitions]

    def pause(self, partitions) -> None:
        self.paused.update(p.partition for p in partitions)

    def resume(self, partitions) -> None:
        self.paused.difference_update(p.partition for p in partitions)


def test_a_failed_partition_still_sending_does_not_keep_a_stalled_range_alive():
    """A range failed by its partition's error is paused, and its partition's messages are no
    progress: another range that gets nothing times out."""
    consumer = _Consumer()
    failed, stalled = fetch_ranges(
        confluent_kafka, consumer, [_item("t", 0, 0, 100), _item("t", 1, 0, 5)], 0.2
    )
    assert "t:0 failed: Broker: Not leader for partition" in str(failed)
    assert "t:1 offsets 0-5 timed out after 0.2 s" in str(stalled)
    assert not consumer.paused  # resumed on return


def test_the_timeout_bounds_each_idle_period_not_the_whole_read(kafka_cluster, consumer):
    """A range whose messages come slowly, each well within the timeout but all of them past
    it, is read whole (one deadline for the whole read timed it out every time)."""
    kafka_cluster.produce("ranges-slow", [b"s0"], partition=0)
    consumer.list_topics("ranges-slow", timeout=5)
    later = _later([(0.3, [b"s%d" % i]) for i in range(1, 7)], kafka_cluster, "ranges-slow", 0)
    (read,) = fetch_ranges(confluent_kafka, consumer, [_item("ranges-slow", 0, 0, 7)], 1.2)
    later.join()
    assert _values(read) == [b"s%d" % i for i in range(7)]


def test_a_range_whose_last_message_changed_epoch_since_the_listing_fails(kafka_cluster, consumer):
    """A range whose last message has another leader epoch than the listing saw there (the log
    cut and written again between listing and read) fails naming both epochs, said once; a
    range whose epoch matches gets its messages."""
    topic = "ranges-epoch"
    kafka_cluster.produce(topic, [b"a0", b"a1"], partition=0)
    kafka_cluster.produce(topic, [b"b0", b"b1"], partition=1)
    consumer.list_topics(topic, timeout=5)
    (found,) = {
        m.leader_epoch()
        for m in fetch_ranges(confluent_kafka, consumer, [_item(topic, 0, 0, 2)], 10)[0]
    }
    same, changed = _item(topic, 0, 0, 2), _item(topic, 1, 0, 2)
    same.payload["epoch"] = found
    changed.payload["epoch"] = found + 3
    said: list[str] = []
    read, failed = fetch_ranges(confluent_kafka, consumer, [same, changed], 10, said.append)
    assert _values(read) == [b"a0", b"a1"]
    assert isinstance(failed, ProcessException)
    assert f"{topic}:1 offsets 0-2 failed: offset 1 has leader epoch {found}, where the " in str(
        failed
    )
    assert f"listing saw {found + 3}" in str(failed)
    assert said == [str(failed)]
