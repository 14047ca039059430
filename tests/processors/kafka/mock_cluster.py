"""librdkafka's built-in mock cluster on loopback: the Kafka the tests talk to.

No broker binary exists here: a Producer configured with ``test.mock.num.brokers`` starts three
in-process brokers on 127.0.0.1 and keeps them while it lives. Topics are auto-created on first
produce (4 partitions).
"""

from __future__ import annotations

import time
from typing import Any


class MockCluster:
    """A three-broker mock cluster, alive while this object is (close() ends it)."""

    def __init__(self) -> None:
        from confluent_kafka import Producer

        self._holder = Producer({"test.mock.num.brokers": 3, "log_level": 0})
        metadata = self._holder.list_topics(timeout=10)
        self.bootstrap = ",".join(f"{b.host}:{b.port}" for b in metadata.brokers.values())

    def produce(self, topic: str, values: list[bytes], **options: Any) -> None:
        """Write *values* to *topic* (one partition when ``partition=`` is given)."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "log_level": 0})
        for value in values:
            producer.produce(topic, value, **options)
        assert producer.flush(10) == 0

    def read_all(self, topic: str) -> list[Any]:
        """Every committed message of *topic*, from the start of each partition."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer(
            {"bootstrap.servers": self.bootstrap, "group.id": "reader", "log_level": 0}
        )
        try:
            topics = consumer.list_topics(topic, timeout=10).topics[topic]
            messages = []
            for partition in topics.partitions:
                high = consumer.get_watermark_offsets(TopicPartition(topic, partition), 5)[1]
                consumer.assign([TopicPartition(topic, partition, 0)])
                deadline = time.monotonic() + 10
                position = 0
                while position < high and time.monotonic() < deadline:
                    got = [m for m in consumer.consume(1000, timeout=0.2) if not m.error()]
                    messages.extend(got)
                    position = consumer.position([TopicPartition(topic, partition)])[0].offset
            return messages
        finally:
            consumer.close()

    def low_watermark(self, topic: str, partition: int) -> int:
        """The first offset *topic*'s *partition* still holds (the mock keeps 5 MiB of each)."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "marks"})
        try:
            return consumer.get_watermark_offsets(TopicPartition(topic, partition), 5)[0]
        finally:
            consumer.close()

    def close(self) -> None:
        """End the cluster."""
        self._holder.flush(1)
        del self._holder
