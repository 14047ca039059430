"""PublishKafka against librdkafka's mock cluster: messages, keys, headers, failures."""

from __future__ import annotations

from flowcore.testing import TestRunner
from processors.kafka.connection_service import Kafka3ConnectionService
from processors.kafka.publish_kafka import EXPRESSION_PARTITIONER, PublishKafka


def _runner(bootstrap: str, topic: str, **properties) -> TestRunner:
    runner = TestRunner(
        PublishKafka(kafka_connection_service="kafka", topic_name=topic, **properties)
    )
    runner.add_service(
        Kafka3ConnectionService(
            "kafka",
            bootstrap_servers=bootstrap,
            acknowledgment_wait_time="2 sec",
            max_metadata_wait_time="1 sec",
            password="s3cret-pw",
        )
    )
    return runner


def test_publishes_each_flowfile_with_key_and_headers(kafka_cluster, topic):
    """Each FlowFile is a message; kafka.key is its key; matching attributes become headers."""
    runner = _runner(
        kafka_cluster.bootstrap,
        topic,
        flowfile_attribute_header_pattern="h\\..*",
        partitioner_class=EXPRESSION_PARTITIONER,
        partition="2",
    )
    runner.enqueue(b"one", {"kafka.key": "k1", "h.a": "x", "other": "y"})
    runner.enqueue(b"two")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    runner.flowfiles_for("success")[0].assert_attribute_equals("msg.count", "1")
    messages = kafka_cluster.read_all(topic)
    assert sorted(m.value() for m in messages) == [b"one", b"two"]
    first = next(m for m in messages if m.value() == b"one")
    assert first.key() == b"k1"
    assert first.headers() == [("h.a", b"x")]
    assert {m.partition() for m in messages} == {2}
    (send, *_) = [e for e in runner.provenance_events if e.event_type.name == "SEND"]
    assert send.transit_uri.startswith("kafka://127.0.0.1:")
    assert send.transit_uri.endswith(topic)


def test_demarcator_splits_messages(kafka_cluster, topic):
    """Message Demarcator splits; msg.count says how many; Topic Name takes EL per FlowFile."""
    runner = _runner(
        kafka_cluster.bootstrap, "${t}", message_demarcator="\n", transactions_enabled="false"
    )
    runner.enqueue(b"a\nb\nc", {"t": topic})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("msg.count", "3")
    assert sorted(m.value() for m in kafka_cluster.read_all(topic)) == [b"a", b"b", b"c"]


def test_unreachable_brokers_route_to_failure_without_the_password(caplog):
    """Brokers that do not answer send the FlowFile to failure, penalized; no secret is logged."""
    runner = _runner("127.0.0.1:1", "t", transactions_enabled="false")
    runner.enqueue(b"lost")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "s3cret-pw" not in caplog.text
    assert "s3cret-pw" not in repr(runner.controller_service("kafka"))


def test_nifi_1x_publish_kafka_2_6_properties_run(kafka_cluster, topic):
    """A 1.x PublishKafka_2_6 (brokers on the processor, 1.x partitioner) publishes as NiFi 2's."""
    processor = PublishKafka(
        **{
            "bootstrap.servers": kafka_cluster.bootstrap,
            "topic": topic,
            "use-transactions": "false",
            "partitioner.class": (
                "org.apache.nifi.processors.kafka.pubsub.Partitioners$RoundRobinPartitioner"
            ),
        }
    )
    assert processor.validate() == ()
    runner = TestRunner(processor)
    for n in range(4):
        runner.enqueue(f"m{n}".encode())
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 4)
    messages = kafka_cluster.read_all(topic)
    assert len({m.partition() for m in messages}) == 4


def test_1x_types_import_as_nifi_2_processors():
    """NiFi 1.x _2_6 types (and their Record variants) map onto ConsumeKafka and PublishKafka."""
    from flowcore.nifi.types import FORMER_TYPES, NIFI_PROCESSORS

    assert NIFI_PROCESSORS["ConsumeKafka"].type == "org.apache.nifi.kafka.processors.ConsumeKafka"
    assert (
        "org.apache.nifi.processors.kafka.pubsub.PublishKafkaRecord_2_6"
        in (FORMER_TYPES["PublishKafka"])
    )


def test_a_failed_message_rolls_the_transaction_back(kafka_cluster, topic, caplog):
    """With Transactions Enabled, one refused message aborts the trigger's transaction and
    sends all its FlowFiles to failure (the mock cluster does not filter aborted messages from
    read_committed fetches, so what a consumer sees is not asserted here)."""
    runner = _runner(kafka_cluster.bootstrap, topic, max_request_size="1 KB")
    runner.enqueue(b"fits")
    runner.enqueue(b"x" * 5000)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 2)
    assert "transaction rolled back: Kafka publish failed" in caplog.text
    assert "Message size too large" in caplog.text
