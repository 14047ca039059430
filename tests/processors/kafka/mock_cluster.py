"""librdkafka's built-in mock cluster on loopback: the Kafka the tests talk to.

No broker binary exists here: librdkafka's mock cluster, made through its C mock API
(``rdkafka_mock.h``, called with ctypes on the library confluent-kafka loads: confluent-kafka
does not expose it), runs three in-process brokers on 127.0.0.1 while the object lives. Topics
are auto-created on first produce (4 partitions).

The mock's Metadata answers name broker 0 as the controller, and its brokers are numbered from
1: admin requests sent to the controller (DescribeTopics, which gives topic IDs) waited for it
until their timeout. So the cluster also gets a broker 0, which answers them as any broker.
"""

from __future__ import annotations

import time
from typing import Any


class ControlledMockCluster:
    """A mock cluster whose topics and leaders tests set (module doc).

    Deleting a topic and making it again (a new topic ID), and moving a partition's leader
    (which bumps its leader epoch), make a truncated log with epochs as an unclean leader
    election leaves it, or a topic made again.
    """

    def __init__(self, brokers: int = 3) -> None:
        import ctypes

        lib = _librdkafka()
        errors = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        for name, value in (
            (b"test.mock.num.brokers", str(brokers).encode()),
            (b"log_level", b"0"),
        ):
            if lib.rd_kafka_conf_set(conf, name, value, errors, 512) != 0:
                raise RuntimeError(errors.value.decode())
        self._rk = lib.rd_kafka_new(0, conf, errors, 512)  # a producer handle owns the cluster
        if not self._rk:
            raise RuntimeError(errors.value.decode())
        self._lib = lib
        self._mock = lib.rd_kafka_handle_mock_cluster(self._rk)
        self._check(lib.rd_kafka_mock_broker_add(self._mock, 0))  # the controller (module doc)
        self.bootstrap = lib.rd_kafka_mock_cluster_bootstraps(self._mock).decode()

    def create_topic(self, topic: str, partitions: int = 1) -> None:
        """Make *topic* (its partitions' leader epoch starts at 0)."""
        self._check(self._lib.rd_kafka_mock_topic_create(self._mock, topic.encode(), partitions, 1))

    def delete_topic(self, topic: str) -> None:
        """Delete *topic* and its messages."""
        self._check(self._lib.rd_kafka_mock_topic_delete(self._mock, topic.encode()))

    def set_leader(self, topic: str, partition: int, broker: int) -> None:
        """Move *partition*'s leader to *broker* (1-based), bumping its leader epoch."""
        self._check(
            self._lib.rd_kafka_mock_partition_set_leader(
                self._mock, topic.encode(), partition, broker
            )
        )

    def delay_request(self, broker: int, api_key: int, milliseconds: int) -> None:
        """*broker* answers its next request of *api_key* (no error) *milliseconds* late."""
        import ctypes

        push = self._lib.rd_kafka_mock_broker_push_request_error_rtts  # variadic: no argtypes
        push.restype = ctypes.c_int
        once = (ctypes.c_int16(api_key), ctypes.c_size_t(1), ctypes.c_int(0), milliseconds)
        self._check(push(ctypes.c_void_p(self._mock), ctypes.c_int32(broker), *once))

    def topic_id(self, topic: str) -> str:
        """*topic*'s ID as Kafka writes it (URL-safe base64), described through the controller."""
        from confluent_kafka import TopicCollection
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        found = admin.describe_topics(TopicCollection([topic]), request_timeout=10)
        uuid = found[topic].result(10).topic_id
        return str(uuid).replace("+", "-").replace("/", "_")

    def produce(self, topic: str, values: list[bytes], **options: Any) -> None:
        """Write *values* to *topic* (one partition when ``partition=`` is given)."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "log_level": 0})
        for value in values:
            producer.produce(topic, value, **options)
        assert producer.flush(10) == 0

    def close(self) -> None:
        """End the cluster."""
        if self._rk:
            self._lib.rd_kafka_destroy(self._rk)
            self._rk = None

    def _check(self, error: int) -> None:
        if error:
            msg = f"librdkafka mock call failed: error {error}"
            raise RuntimeError(msg)


class MockCluster(ControlledMockCluster):
    """A three-broker mock cluster (and its controller), alive until close()."""

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

        consumer = Consumer(
            {"bootstrap.servers": self.bootstrap, "group.id": "marks", "log_level": 0}
        )
        try:
            return consumer.get_watermark_offsets(TopicPartition(topic, partition), 5)[0]
        finally:
            consumer.close()


def _librdkafka() -> Any:
    """The librdkafka confluent-kafka loads, its mock functions typed."""
    import ctypes
    import glob
    import os

    import confluent_kafka

    here = os.path.dirname(confluent_kafka.__file__)
    found = glob.glob(os.path.join(here, os.pardir, "confluent_kafka.libs", "librdkafka*"))
    lib = ctypes.CDLL(found[0] if found else "librdkafka.so.1")
    p, s, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    for name, restype, argtypes in (
        ("rd_kafka_conf_new", p, []),
        ("rd_kafka_conf_set", i, [p, s, s, s, ctypes.c_size_t]),
        ("rd_kafka_new", p, [i, p, s, ctypes.c_size_t]),
        ("rd_kafka_destroy", None, [p]),
        ("rd_kafka_handle_mock_cluster", p, [p]),
        ("rd_kafka_mock_cluster_bootstraps", s, [p]),
        ("rd_kafka_mock_topic_create", i, [p, s, i, i]),
        ("rd_kafka_mock_topic_delete", i, [p, s]),
        ("rd_kafka_mock_broker_add", i, [p, ctypes.c_int32]),
        ("rd_kafka_mock_partition_set_leader", i, [p, s, ctypes.c_int32, ctypes.c_int32]),
    ):
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib
