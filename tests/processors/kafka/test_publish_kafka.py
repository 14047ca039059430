"""PublishKafka against librdkafka's mock cluster: messages, keys, headers, failures."""

from __future__ import annotations

import json

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


def _record_runner(bootstrap: str, topic: str, **properties) -> TestRunner:
    from processors.record_services import JsonRecordSetWriter, JsonTreeReader

    runner = _runner(bootstrap, topic, record_reader="reader", record_writer="writer", **properties)
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.add_service(JsonRecordSetWriter("key-writer"))
    return runner


PEOPLE = (
    b'[{"id": 1, "name": "A", "address": {"street-name": "Main", "street-number": 105}},'
    b' {"id": 2, "name": "B", "address": {"street-name": "Main", "street-number": 205}},'
    b' {"id": 3, "name": "C", "address": {"street-name": "Main", "street-number": 305}}]'
)


def test_record_reader_publishes_one_message_per_record_keyed_by_a_field(kafka_cluster, topic):
    """NiFi's PublishKafkaValueRecordIT: each record is a message written alone by the Record
    Writer; Message Key Field's record is the key (Record Key Writer); matching attributes
    are headers; msg.count counts the records."""
    runner = _record_runner(
        kafka_cluster.bootstrap,
        topic,
        message_key_field="address",
        record_key_writer="key-writer",
        flowfile_attribute_header_pattern="a.*",
    )
    runner.enqueue(PEOPLE, {"a1": "valueA1", "b1": "valueB1"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("msg.count", "3")
    messages = kafka_cluster.read_all(topic)
    assert len(messages) == 3
    for message in messages:
        value = json.loads(message.value())
        assert value["name"] in {"A", "B", "C"}
        assert json.loads(message.key())["street-name"] == "Main"
        assert message.headers() == [("a1", b"valueA1")]
    assert message.value().startswith(b"{")  # the record's object, not an array of one


def test_record_key_without_key_writer_fails_the_flowfile(kafka_cluster, topic, caplog):
    """A Message Key Field holding a record without a Record Key Writer routes to failure with
    NiFi's message."""
    runner = _record_runner(kafka_cluster.bootstrap, topic, message_key_field="address")
    runner.enqueue(PEOPLE)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert "'Record Key Writer' of the processor was not configured" in caplog.text


def test_use_wrapper_takes_key_value_headers_and_metadata_from_records(kafka_cluster, topic):
    """NiFi's PublishKafkaWrapperRecordIT: USE_WRAPPER publishes each record's value with its
    key (a record, by the Record Key Writer) and headers; Record Metadata Strategy FROM_RECORD
    takes the topic and partition from metadata."""
    wrapped = json.dumps(
        [
            {
                "key": {"street-name": "Main", "street-number": 100 + n},
                "value": {"id": n, "name": "ABC"[n - 1]},
                "headers": {"a1": "valueA1"},
                "metadata": {"topic": topic, "partition": 2},
            }
            for n in (1, 2, 3)
        ]
    ).encode()
    runner = _record_runner(
        kafka_cluster.bootstrap,
        "elsewhere",
        publish_strategy="USE_WRAPPER",
        record_key_writer="key-writer",
        record_metadata_strategy="FROM_RECORD",
    )
    runner.enqueue(wrapped)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    messages = kafka_cluster.read_all(topic)
    assert sorted(json.loads(m.value())["id"] for m in messages) == [1, 2, 3]
    assert {m.partition() for m in messages} == {2}
    assert all(m.headers() == [("a1", b"valueA1")] for m in messages)
    assert all(json.loads(m.key())["street-name"] == "Main" for m in messages)


def test_records_take_the_flowfiles_key_and_partition_without_a_key_field(kafka_cluster, topic):
    """Without Message Key Field every record's message has the FlowFile's kafka.key and its
    Partition, and no headers when no pattern is set."""
    runner = _record_runner(
        kafka_cluster.bootstrap, topic, partitioner_class=EXPRESSION_PARTITIONER, partition="1"
    )
    runner.enqueue(PEOPLE, {"kafka.key": "k1"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    messages = kafka_cluster.read_all(topic)
    assert [json.loads(m.value())["id"] for m in messages] == [1, 2, 3]
    assert {(m.key(), m.partition(), m.headers()) for m in messages} == {(b"k1", 1, None)}


def test_use_wrapper_records_without_headers_or_metadata_take_the_processors(kafka_cluster, topic):
    """USE_WRAPPER with FROM_RECORD: a record's metadata partition is used when given; a record
    without metadata topic goes to Topic Name, one without headers has none."""
    wrapped = (
        b'[{"value": {"id": 1}, "headers": {"h": "1"}, "metadata": {"partition": 3}},'
        b' {"value": {"id": 2}, "metadata": {"partition": 0}}]'
    )
    runner = _record_runner(
        kafka_cluster.bootstrap,
        topic,
        publish_strategy="USE_WRAPPER",
        record_metadata_strategy="FROM_RECORD",
    )
    runner.enqueue(wrapped)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    messages = {json.loads(m.value())["id"]: m for m in kafka_cluster.read_all(topic)}
    assert (messages[1].partition(), messages[1].headers()) == (3, [("h", b"1")])
    assert (messages[2].partition(), messages[2].headers()) == (0, None)
    assert messages[1].key() is None


def test_nifi_1x_publish_kafka_record_2_6_names(kafka_cluster, topic):
    """A 1.x PublishKafkaRecord_2_6's record-reader, record-writer and message-key-field work."""
    from processors.record_services import JsonRecordSetWriter, JsonTreeReader

    processor = PublishKafka(
        **{
            "bootstrap.servers": kafka_cluster.bootstrap,
            "topic": topic,
            "use-transactions": "false",
            "record-reader": "reader",
            "record-writer": "writer",
            "message-key-field": "id",
        }
    )
    runner = TestRunner(processor)
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.enqueue(b'{"id": 7, "v": "x"}')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    (message,) = kafka_cluster.read_all(topic)
    assert message.key() == b"7"
    assert json.loads(message.value()) == {"id": 7, "v": "x"}


def test_batch_form_publishes_a_whole_batch(kafka_cluster, topic):
    """The batch form sends a batch's FlowFiles in one produce loop: keys, headers, EL
    partition per FlowFile, msg.count, one SEND per FlowFile, all to success whole."""
    runner = TestRunner(
        PublishKafka(
            kafka_connection_service="kafka",
            topic_name=topic,
            flowfile_attribute_header_pattern="h",
            partitioner_class=EXPRESSION_PARTITIONER,
            partition="${p}",
        ),
        batches=True,
    )
    runner.add_service(Kafka3ConnectionService("kafka", bootstrap_servers=kafka_cluster.bootstrap))
    for n in range(6):
        runner.enqueue(f"m{n}".encode(), {"kafka.key": f"k{n % 2}", "h": f"v{n}", "p": str(n % 3)})
    runner.run()
    assert runner.batch_use.whole == 6
    runner.assert_all_flowfiles_transferred("success", 6)
    assert all(f.attributes["msg.count"] == "1" for f in runner.flowfiles_for("success"))
    sends = [e for e in runner.provenance_events if e.event_type.name == "SEND"]
    assert len(sends) == 6
    messages = {m.value(): m for m in kafka_cluster.read_all(topic)}
    assert sorted(messages) == [f"m{n}".encode() for n in range(6)]
    assert messages[b"m4"].key() == b"k0"
    assert messages[b"m4"].partition() == 1
    assert messages[b"m4"].headers() == [("h", b"v4")]


def test_batch_form_records_one_by_ones_events(kafka_cluster, topic):
    """The batch form's outputs and events agree with one by one's: a SEND per FlowFile and no
    ATTRIBUTES_MODIFIED for its msg.count (a FlowFile with a SEND gets none, as in NiFi)."""
    runner = TestRunner(
        PublishKafka(kafka_connection_service="kafka", topic_name=topic), batches=True
    )
    runner.add_service(Kafka3ConnectionService("kafka", bootstrap_servers=kafka_cluster.bootstrap))
    for n in range(4):
        runner.enqueue(f"agree {n}".encode(), {"kafka.key": f"k{n}"})
    runner.assert_batch_form_agrees()
    assert {e.event_type.name for e in runner.provenance_events} == {"SEND"}


def test_batch_form_failure_routes_one_by_one_without_sending_again(kafka_cluster, topic):
    """A refused message in a batch: the batch declines, its FlowFiles are routed one by one
    from the carried outcomes (failure penalized), nothing is published twice."""
    runner = TestRunner(
        PublishKafka(
            kafka_connection_service="kafka",
            topic_name=topic,
            transactions_enabled="false",
            max_request_size="1 KB",
        ),
        batches=True,
    )
    runner.add_service(Kafka3ConnectionService("kafka", bootstrap_servers=kafka_cluster.bootstrap))
    runner.enqueue(b"fits")
    runner.enqueue(b"x" * 5000)
    runner.run()
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("failure", 1)
    assert [m.value() for m in kafka_cluster.read_all(topic)] == [b"fits"]


def test_record_values_are_each_record_alone_whatever_their_text(kafka_cluster, topic):
    """Each message is exactly its record's JSON object, also when a string holds '},{' or a
    record holds an array of records (the batch's array is cut only where records end)."""
    records = [
        {"id": 1, "text": "a},{b", "items": [{"x": 1}, {"x": 2}]},
        {"id": 2, "text": 'q"}', "items": []},
    ]
    runner = _record_runner(kafka_cluster.bootstrap, topic, transactions_enabled="false")
    runner.enqueue(json.dumps(records).encode())
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    values = sorted(m.value() for m in kafka_cluster.read_all(topic))
    assert [json.loads(v) for v in values] == records
    assert all(v.startswith(b"{") and v.endswith(b"}") for v in values)


def test_record_reader_without_writer_publishes_the_content(kafka_cluster, topic):
    """A Record Reader without a Record Writer is not record mode (NiFi's test): the content is
    one message."""
    from processors.record_services import JsonTreeReader

    runner = _runner(
        kafka_cluster.bootstrap, topic, record_reader="reader", transactions_enabled="false"
    )
    runner.add_service(JsonTreeReader("reader"))
    runner.enqueue(b'[{"a": 1}, {"a": 2}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert [m.value() for m in kafka_cluster.read_all(topic)] == [b'[{"a": 1}, {"a": 2}]']
