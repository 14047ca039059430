"""ConsumeKafka against librdkafka's mock cluster: ranges from source state, attributes."""

from __future__ import annotations

import json

import pytest

from flowcore.testing import TestRunner
from processors.kafka.connection_service import Kafka3ConnectionService
from processors.kafka.consume_kafka import ConsumeKafka


def _runner(cluster, topic: str, **properties) -> TestRunner:
    runner = TestRunner(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="g1",
            topics=topic,
            auto_offset_reset=properties.pop("auto_offset_reset", "earliest"),
            **properties,
        )
    )
    runner.add_service(
        Kafka3ConnectionService(
            "kafka", bootstrap_servers=cluster.bootstrap, client_timeout="5 sec"
        )
    )
    return runner


def test_each_message_becomes_a_flowfile_once(kafka_cluster, topic):
    """Every message is read once with NiFi 2's attributes (KafkaUtils.toAttributes: header
    count, offsets committed); a second trigger reads nothing new."""
    kafka_cluster.produce(topic, [b"a", b"b", b"c"], partition=1, key=b"k1")
    runner = _runner(kafka_cluster, topic)
    runner.run()
    out = runner.flowfiles_for("success")
    assert [f.content for f in out] == [b"a", b"b", b"c"]
    out[0].assert_attribute_equals("kafka.topic", topic)
    out[0].assert_attribute_equals("kafka.partition", "1")
    out[2].assert_attribute_equals("kafka.offset", "2")
    out[0].assert_attribute_equals("kafka.key", "k1")
    out[0].assert_attribute_equals("kafka.header.count", "0")
    out[0].assert_attribute_equals("kafka.consumer.offsets.committed", "true")
    assert runner.state[f"{topic}:1"] == "3:0"  # next offset : leader epoch of offset 2
    runner.clear_transfer_state()
    kafka_cluster.produce(topic, [b"d"], partition=1)
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"d"]


def test_latest_skips_what_was_there(kafka_cluster, topic):
    """Auto Offset Reset latest starts at the end the first listing saw."""
    kafka_cluster.produce(topic, [b"old"], partition=0)
    runner = _runner(kafka_cluster, topic, auto_offset_reset="latest")
    runner.run()
    runner.assert_transfer_count("success", 0)
    kafka_cluster.produce(topic, [b"new"], partition=0)
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"new"]


def test_demarcator_joins_a_range(kafka_cluster, topic):
    """DEMARCATOR makes one FlowFile per partition range with kafka.count."""
    kafka_cluster.produce(topic, [b"x", b"y", b"z"], partition=2)
    runner = _runner(
        kafka_cluster, topic, processing_strategy="DEMARCATOR", message_demarcator="\n"
    )
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert out.content == b"x\ny\nz"
    out.assert_attribute_equals("kafka.count", "3")


def test_headers_and_hex_keys(kafka_cluster, topic):
    """Header Name Pattern picks headers as attributes; hex keys are lower-case hex (NiFi 2's
    HexFormat)."""
    kafka_cluster.produce(
        topic, [b"v"], partition=0, key=b"\x01\xff", headers=[("trace", b"t1"), ("x", b"no")]
    )
    runner = _runner(kafka_cluster, topic, header_name_pattern="tr.*", key_attribute_encoding="hex")
    runner.run()
    (out,) = runner.flowfiles_for("success")
    out.assert_attribute_equals("trace", "t1")
    out.assert_attribute_not_exists("x")
    out.assert_attribute_equals("kafka.key", "01ff")
    out.assert_attribute_equals("kafka.header.count", "2")  # every header, selected or not


def test_missing_topic_is_an_error_naming_it(kafka_cluster):
    """A topic that does not exist fails the trigger with a message naming it."""
    runner = _runner(kafka_cluster, "no-such-topic")
    with pytest.raises(Exception, match="no-such-topic"):
        runner.run()


def test_nifi_1x_consume_kafka_2_6_properties_run(kafka_cluster, topic):
    """A 1.x ConsumeKafka_2_6's own brokers and names (topic, group.id) work without a service;
    its hex keys are upper case, as 1.x's printHexBinary writes them."""
    kafka_cluster.produce(topic, [b"legacy"], partition=0, key=b"\x01\xff")
    processor = ConsumeKafka(
        **{
            "bootstrap.servers": kafka_cluster.bootstrap,
            "group.id": "g1x",
            "topic": topic,
            "topic_type": "names",
            "auto.offset.reset": "earliest",
            "honor-transactions": "true",
            "key-attribute-encoding": "hex",
        }
    )
    assert processor.validate() == ()
    runner = TestRunner(processor)
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"legacy"]
    runner.flowfiles_for("success")[0].assert_attribute_equals("kafka.key", "01FF")


def test_neither_service_nor_brokers_is_invalid():
    """Without a Kafka Connection Service or 1.x brokers the processor is invalid, saying so."""
    (problem,) = ConsumeKafka(group_id="g", topics="t").validate()
    assert "Kafka Connection Service is required" in problem.explanation


def test_nifi_export_and_1x_import_round_trip():
    """A flow exports ConsumeKafka under NiFi 2's type without the password, and a NiFi 1.x
    ConsumeKafka_2_6 of the same flow imports as ConsumeKafka."""
    import json

    from flowcore import Flow

    flow = Flow("rt")
    flow.add_service(Kafka3ConnectionService("kafka", bootstrap_servers="b:9092", password="pw-9"))
    flow.add(ConsumeKafka(kafka_connection_service="kafka", group_id="g", topics="t"), name="c")
    text = json.dumps(flow.to_nifi())
    assert "org.apache.nifi.kafka.processors.ConsumeKafka" in text
    assert "pw-9" not in text
    old = text.replace(
        "org.apache.nifi.kafka.processors.ConsumeKafka",
        "org.apache.nifi.processors.kafka.pubsub.ConsumeKafka_2_6",
    )
    imported = Flow.from_nifi(json.loads(old))
    (component,) = [c for c in imported.components if getattr(c, "processor", None)]
    assert type(component.processor) is ConsumeKafka


def test_unreachable_brokers_fail_the_listing_in_bounded_time():
    """Brokers that do not answer end the listing within Max Metadata Wait Time, naming Kafka."""
    import time

    runner = TestRunner(ConsumeKafka(kafka_connection_service="kafka", group_id="g", topics="t"))
    runner.add_service(
        Kafka3ConnectionService(
            "kafka", bootstrap_servers="127.0.0.1:1", max_metadata_wait_time="1 sec"
        )
    )
    started = time.monotonic()
    with pytest.raises(Exception, match=r"Kafka brokers 127\.0\.0\.1:1 unreachable") as raised:
        runner.run()
    assert time.monotonic() - started < 10
    assert "check Bootstrap Servers of Kafka3ConnectionService 'kafka'" in str(raised.value)


def test_librdkafka_logs_go_to_python_logging_not_stderr(caplog, capfd):
    """Unreachable brokers: librdkafka's FAIL lines are WARNING records of
    flowcore.processors.librdkafka (bulletins in a task), none on stderr."""
    import gc
    import logging

    from flowcore.errors import ProcessException

    runner = TestRunner(ConsumeKafka(kafka_connection_service="kafka", group_id="g", topics="t"))
    runner.add_service(
        Kafka3ConnectionService(
            "kafka", bootstrap_servers="127.0.0.1:1", max_metadata_wait_time="1 sec"
        )
    )
    with caplog.at_level(logging.DEBUG, "flowcore.processors.librdkafka"):
        with pytest.raises(ProcessException, match="unreachable"):
            runner.run()
        del runner  # the consumer closes: librdkafka hands over the lines it queued
        gc.collect()
    lines = [r for r in caplog.records if r.name == "flowcore.processors.librdkafka"]
    assert any("FAIL" in r.getMessage() and r.levelno == logging.WARNING for r in lines)
    assert "|FAIL|" not in capfd.readouterr().err


def _record_runner(cluster, topic: str, **properties) -> TestRunner:
    from processors.record_services import JsonRecordSetWriter, JsonTreeReader

    runner = _runner(cluster, topic, record_reader="reader", record_writer="writer", **properties)
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer"))
    return runner


def test_record_strategy_groups_a_range_and_routes_bad_messages_to_parse_failure(
    kafka_cluster, topic
):
    """RECORD: a range's records are one FlowFile with record.count, kafka.offset/max.offset
    and the writer's mime.type; a message that does not parse goes to parse failure as is."""
    values = [b'{"id": 1, "name": "A"}', b"{not json", b'[{"id": 2, "name": "B"}, {"id": 3}]']
    kafka_cluster.produce(topic, values, partition=3, key=b"k")
    runner = _record_runner(kafka_cluster, topic, processing_strategy="RECORD")
    assert "parse failure" in runner.processor.relationship_names()
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert json.loads(out.content) == [
        {"id": 1, "name": "A"},
        {"id": 2, "name": "B"},
        {"id": 3, "name": None},
    ]
    out.assert_attribute_equals("record.count", "3")
    out.assert_attribute_equals("kafka.count", "3")
    out.assert_attribute_equals("kafka.offset", "0")
    out.assert_attribute_equals("kafka.max.offset", "2")
    out.assert_attribute_equals("kafka.partition", "3")
    out.assert_attribute_equals("mime.type", "application/json")
    (bad,) = runner.flowfiles_for("parse failure")
    assert bad.content == b"{not json"
    bad.assert_attribute_equals("kafka.offset", "1")
    bad.assert_attribute_equals("kafka.key", "k")
    receives = [e for e in runner.provenance_events if e.event_type.name == "RECEIVE"]
    assert len(receives) == 1


def test_record_strategy_splits_by_selected_header_values(kafka_cluster, topic):
    """RECORD with Header Name Pattern: records of different header values never share a
    FlowFile, and the header becomes an attribute (NiFi's grouping)."""
    kafka_cluster.produce(topic, [b'{"a": 1}'], partition=0, headers=[("tenant", b"x")])
    kafka_cluster.produce(topic, [b'{"a": 2}'], partition=0, headers=[("tenant", b"y")])
    kafka_cluster.produce(topic, [b'{"a": 3}'], partition=0, headers=[("tenant", b"x")])
    runner = _record_runner(
        kafka_cluster, topic, processing_strategy="RECORD", header_name_pattern="ten.*"
    )
    runner.run()
    out = {f.attributes["tenant"]: f for f in runner.flowfiles_for("success")}
    assert json.loads(out["x"].content) == [{"a": 1}, {"a": 3}]
    assert json.loads(out["y"].content) == [{"a": 2}]
    out["x"].assert_attribute_equals("kafka.max.offset", "2")


MESSAGE_KEY = '{"id": 0,"name": "K"}'


@pytest.mark.parametrize(
    ("key_format", "expected"),
    [
        ("record", {"id": 0, "name": "K"}),
        ("string", MESSAGE_KEY),
        ("byte-array", list(MESSAGE_KEY.encode())),
    ],
)
def test_wrapper_output_per_key_format(kafka_cluster, topic, key_format, expected):
    """NiFi's ConsumeKafkaWrapperRecordIT: USE_WRAPPER writes metadata, headers, key (as Key
    Format says) and value per record; one RECEIVE."""
    from processors.record_services import JsonTreeReader

    message = b'[{"id": 1, "name": "A"}, {"id": 2, "name": "B"}, {"id": 3, "name": "C"}]'
    kafka_cluster.produce(
        topic, [message], partition=0, key=MESSAGE_KEY.encode(), headers=[("header1", b"value1")]
    )
    runner = _record_runner(
        kafka_cluster,
        topic,
        processing_strategy="RECORD",
        output_strategy="USE_WRAPPER",
        key_format=key_format,
        key_record_reader="key-reader",
        header_name_pattern="header*",
    )
    runner.add_service(JsonTreeReader("key-reader"))
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    (out,) = runner.flowfiles_for("success")
    out.assert_attribute_equals("record.count", "3")
    wrappers = json.loads(out.content)
    assert len(wrappers) == 3
    assert list(wrappers[0]) == ["metadata", "headers", "key", "value"]
    for wrapper in wrappers:
        assert wrapper["key"] == expected
        assert wrapper["value"]["name"] in {"A", "B", "C"}
        assert wrapper["headers"] == {"header1": "value1"}
        metadata = wrapper["metadata"]
        assert (metadata["topic"], metadata["partition"], metadata["offset"]) == (topic, 0, 0)
        assert isinstance(metadata["timestamp"], int)
        assert 1.5e12 < metadata["timestamp"] < 1e13  # epoch millis (the record keeps micros)
    assert [e.event_type.name for e in runner.provenance_events] == ["RECEIVE"]


def test_nifi_1x_consume_kafka_record_2_6_reads_records(kafka_cluster, topic):
    """A 1.x ConsumeKafkaRecord_2_6 (record-reader, record-writer, no Processing Strategy)
    consumes as the RECORD strategy."""
    from processors.record_services import JsonRecordSetWriter, JsonTreeReader

    kafka_cluster.produce(topic, [b'{"v": 1}', b'{"v": 2}'], partition=1)
    processor = ConsumeKafka(
        **{
            "bootstrap.servers": kafka_cluster.bootstrap,
            "group.id": "g1x-record",
            "topic": topic,
            "auto.offset.reset": "earliest",
            "record-reader": "reader",
            "record-writer": "writer",
        }
    )
    runner = TestRunner(processor)
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert json.loads(out.content) == [{"v": 1}, {"v": 2}]


def test_record_strategy_without_writer_is_invalid():
    """Processing Strategy RECORD without a Record Writer is invalid, naming it."""
    processor = ConsumeKafka(
        kafka_connection_service="k",
        group_id="g",
        topics="t",
        processing_strategy="RECORD",
        record_reader="r",
    )
    (problem,) = processor.validate()
    assert "Record Writer" in problem.explanation


def test_batch_form_in_a_flow_makes_each_message_once(kafka_cluster, topic, tmp_path):
    """In a flow the batch form reads each range as one batch (its service found through the
    batch maker): contents, offsets and keys land as one by one would write them."""
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from processors import PutFile, UpdateAttribute

    kafka_cluster.produce(topic, [b"a", b"bb", b""], partition=2, key=b"k", headers=[("h", b"")])
    flow = Flow("batch-form")
    flow.add_service(Kafka3ConnectionService("kafka", bootstrap_servers=kafka_cluster.bootstrap))
    consume = flow.add(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="gf",
            topics=topic,
            auto_offset_reset="earliest",
        ),
        name="consume",
    )
    name = flow.add(
        UpdateAttribute(
            filename="${kafka.partition}-${kafka.offset}-${kafka.key}-${kafka.header.count}"
            "-${kafka.consumer.offsets.committed}"
        ),
        name="name",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(consume, name)
    flow.connect(name, put)
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo")
    assert result.count("consume", "success") == 3
    written = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert written == {"2-0-k-1-true": b"a", "2-1-k-1-true": b"bb", "2-2-k-1-true": b""}


def test_record_key_format_without_key_reader_is_invalid():
    """USE_WRAPPER with Key Format record needs a Key Record Reader, named in the problem."""
    processor = ConsumeKafka(
        kafka_connection_service="k",
        group_id="g",
        topics="t",
        processing_strategy="RECORD",
        record_reader="r",
        record_writer="w",
        output_strategy="USE_WRAPPER",
        key_format="record",
    )
    (problem,) = processor.validate()
    assert "Key Record Reader" in problem.explanation


def test_nifi_1x_record_parse_failure_relationship_imports_as_nifi_2s():
    """A NiFi 1.x ConsumeKafkaRecord_2_6's ``parse.failure`` connection (and auto-termination)
    imports as NiFi 2's ``parse failure``."""
    from flowcore import Flow
    from processors import LogAttribute
    from processors.record_services import JsonRecordSetWriter, JsonTreeReader

    flow = Flow("rec")
    flow.add_service(Kafka3ConnectionService("kafka", bootstrap_servers="b:9092"))
    flow.add_service(JsonTreeReader("reader"))
    flow.add_service(JsonRecordSetWriter("writer"))
    consume = flow.add(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="g",
            topics="t",
            processing_strategy="RECORD",
            record_reader="reader",
            record_writer="writer",
        ),
        name="c",
    )
    log = flow.add(LogAttribute(), name="log")
    flow.connect(consume, log, "parse failure")
    flow.auto_terminate(consume, ["success"])
    flow.auto_terminate(log, ["success"])
    text = json.dumps(flow.to_nifi())
    consume_type = "org.apache.nifi.kafka.processors.ConsumeKafka"
    assert '"parse failure"' in text
    old = json.loads(
        text.replace('"parse failure"', '"parse.failure"').replace(
            consume_type, "org.apache.nifi.processors.kafka.pubsub.ConsumeKafkaRecord_2_6"
        )
    )
    imported = Flow.from_nifi(old)
    (component,) = [c for c in imported.components if c.name == "c"]
    (connection,) = [c for c in imported.connections if c.source == component.id]
    assert connection.relationships == ("parse failure",)
    assert type(component.processor) is ConsumeKafka


def test_a_range_cut_by_retention_reads_what_is_left(kafka_cluster, topic):
    """A range whose first messages retention deleted after the listing gives the messages
    still there (the reader resets to the log start, as the listing does), not none."""
    big = [bytes([65 + i]) * 900_000 for i in range(7)]  # the mock keeps 5 MiB a partition
    for value in big[:5]:  # one message set each, so the mock deletes them one by one
        kafka_cluster.produce(topic, [value], partition=0)
    runner = _runner(kafka_cluster, topic)
    runner.run(iterations=0, stop_on_finish=False)
    processor, context = runner.processor, runner.context
    (item,) = processor.list_work(context, {}).items
    assert (item.payload["start"], item.payload["end"]) == (0, 5)
    for value in big[5:]:
        kafka_cluster.produce(topic, [value], partition=0)
    low = kafka_cluster.low_watermark(topic, 0)
    assert 0 < low < 5  # retention cut the range after it was listed
    session = runner.create_session()
    processor.read_work(context, session, item)
    session.commit()
    runner.stop()
    assert [f.content for f in runner.flowfiles_for("success")] == big[low:5]


def test_demarcator_batch_form_in_a_flow_joins_each_range(kafka_cluster, topic, tmp_path):
    """In a flow DEMARCATOR's batch form makes one FlowFile per partition range with the
    attributes one by one gives it (first and last offset, count); an empty message joins as
    nothing."""
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from processors import PutFile, UpdateAttribute

    kafka_cluster.produce(topic, [b"a", b"", b"c"], partition=1)
    kafka_cluster.produce(topic, [b"d"], partition=3)
    flow = Flow("demarcated-batches")
    flow.add_service(Kafka3ConnectionService("kafka", bootstrap_servers=kafka_cluster.bootstrap))
    consume = flow.add(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="gd",
            topics=topic,
            auto_offset_reset="earliest",
            processing_strategy="DEMARCATOR",
            message_demarcator="|",
        ),
        name="consume",
    )
    name = flow.add(
        UpdateAttribute(
            filename="${kafka.topic:equals('" + topic + "')}-${kafka.partition}-${kafka.offset}"
            "-${kafka.max.offset}-${kafka.count}-${kafka.timestamp:gt(0)}"
        ),
        name="name",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(consume, name)
    flow.connect(name, put)
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo")
    assert result.count("consume", "success") == 2
    written = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert written == {"true-1-0-2-3-true": b"a||c", "true-3-0-0-1-true": b"d"}


def test_topic_names(kafka_cluster, topic):
    """NiFi's ConsumeKafkaIT testTopicNames: a comma-separated list reads every topic named."""
    other = f"{topic}-b"
    kafka_cluster.produce(topic, [b"one"], partition=0)
    kafka_cluster.produce(other, [b"two"], partition=0)
    runner = _runner(kafka_cluster, f"{topic},{other}")
    runner.run()
    out = runner.flowfiles_for("success")
    assert sorted((f.attributes["kafka.topic"], f.content) for f in out) == [
        (topic, b"one"),
        (other, b"two"),
    ]


def test_topic_pattern(kafka_cluster, topic):
    """NiFi's ConsumeKafkaIT testTopicPattern: Topic Format pattern reads the matching topics
    only."""
    kafka_cluster.produce(f"{topic}-p1", [b"a"], partition=0)
    kafka_cluster.produce(f"{topic}-p2", [b"b"], partition=0)
    kafka_cluster.produce(f"{topic}-q", [b"c"], partition=0)
    runner = _runner(kafka_cluster, f"{topic}-p.*", topic_format="pattern")
    runner.run()
    assert sorted(f.content for f in runner.flowfiles_for("success")) == [b"a", b"b"]


def test_a_truncated_partition_fails_its_range_said_once(kafka_cluster, topic, caplog):
    """A range above its partition's log end (truncated, or the topic made again) fails naming
    its offsets (listed again: the listing reads the new messages from the log's end, none is
    dropped), and is warned of once however often it is retried."""
    from flowcore.errors import ProcessException
    from flowcore.processor.kinds import WorkItem

    kafka_cluster.produce(topic, [b"m0", b"m1", b"m2"], partition=0)
    runner = TestRunner(ConsumeKafka(kafka_connection_service="kafka", group_id="g", topics=topic))
    runner.add_service(
        Kafka3ConnectionService(
            "kafka", bootstrap_servers=kafka_cluster.bootstrap, client_timeout="5 sec"
        )
    )
    runner.run(iterations=0, stop_on_finish=False)
    payload = {"topic": topic, "partition": 0, "start": 5, "end": 7}
    item = WorkItem(f"{topic}:0@5", payload, flowfiles=2, size=0)
    caplog.set_level("WARNING", logger="flowcore.processors")
    for _ in range(2):
        session = runner.create_session()
        with pytest.raises(ProcessException, match="offsets 5-7 failed: it gave offset 0, below"):
            runner.processor.read_work(runner.context, session, item)
        session.rollback()
    runner.stop()
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warned == [
        f"Kafka {topic}:0 gave offset 0 for the range 5-7: its log ended below 5 (truncated by "
        "an unclean leader election, or the topic made again); offsets below the cut were read "
        "into the flow already, those from it on are new: the range fails and is listed again, "
        "to read them"
    ]
    runner.assert_transfer_count("success", 0)


def test_warnings_said_once_are_remembered_within_a_bound():
    """The warnings a ConsumeKafka copy remembers (to say each once) are bounded: the oldest
    forgotten, a recent one still not said again."""
    from types import SimpleNamespace

    from processors.kafka.consume_kafka import _WARNED_MAX

    said: list[str] = []
    context = SimpleNamespace(logger=SimpleNamespace(warning=said.append))
    processor = ConsumeKafka(kafka_connection_service="kafka", group_id="g", topics="t")
    for n in range(_WARNED_MAX + 10):
        processor._warn_once(context, f"w{n}")
    processor._warn_once(context, f"w{_WARNED_MAX + 9}")
    assert len(said) == _WARNED_MAX + 10
    assert len(processor._warned) == _WARNED_MAX


def test_a_log_ending_below_the_state_is_said_and_read_from_its_end(kafka_cluster, topic, caplog):
    """A listing whose partition's log ends below the flow's next offset (truncated, or the
    topic made again) warns naming both offsets and moves the state back to the log end."""
    kafka_cluster.produce(topic, [b"m0", b"m1", b"m2"], partition=0)
    runner = _runner(kafka_cluster, topic)
    runner.run(iterations=0, stop_on_finish=False)
    caplog.set_level("WARNING", logger="flowcore.processors")
    listing = runner.processor.list_work(runner.context, {f"{topic}:0": "5"})
    runner.stop()
    assert not [i for i in listing.items if i.payload["partition"] == 0]
    assert listing.state[f"{topic}:0"] == "3"
    (warned,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert f"Kafka {topic}:0's log ends at offset 3, below the flow's next offset 5" in warned


def test_max_uncommitted_size_bounds_a_trigger_of_several_listings(kafka_cluster, topic):
    """NiFi's ConsumeKafkaIT testMaxUncommittedSize: with Max Poll Records 10, one trigger
    keeps listing until its 100 records' values make Max Uncommitted Size: ten DEMARCATOR
    FlowFiles, one per listing's range, larger together than the size."""
    value = b'{"id": "abcdefghij"}'
    kafka_cluster.produce(topic, [value] * 100, partition=0)
    runner = TestRunner(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="uncommitted",
            topics=topic,
            auto_offset_reset="earliest",
            processing_strategy="DEMARCATOR",
            message_demarcator="\n",
            max_uncommitted_size=f"{len(value) * 100} B",
            max_uncommitted_time="5 s",
        )
    )
    runner.add_service(
        Kafka3ConnectionService(
            "kafka", bootstrap_servers=kafka_cluster.bootstrap, max_poll_records="10"
        )
    )
    runner.run()
    out = runner.flowfiles_for("success")
    assert len(out) == 10
    assert sum(len(f.content) for f in out) > len(value) * 100
    assert runner.state[f"{topic}:0"].startswith("100:")


def test_a_trigger_stops_listing_at_max_uncommitted_size(kafka_cluster, topic):
    """A trigger whose first listing's records already make Max Uncommitted Size lists no
    more: the rest waits for the next triggers, ten records each."""
    kafka_cluster.produce(topic, [b"0123456789"] * 30, partition=0)
    runner = TestRunner(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="uncommitted-small",
            topics=topic,
            auto_offset_reset="earliest",
            max_uncommitted_size="50 B",
            max_uncommitted_time="5 s",
        )
    )
    runner.add_service(
        Kafka3ConnectionService(
            "kafka", bootstrap_servers=kafka_cluster.bootstrap, max_poll_records="10"
        )
    )
    runner.run(stop_on_finish=False)
    runner.assert_transfer_count("success", 10)
    runner.run()
    runner.assert_transfer_count("success", 20)


def test_pending_work_counts_the_ranges_left_after_the_committed_state(kafka_cluster, topic):
    """pending_work is unknown before a listing, then the ranges of Max Poll Records left
    between the committed positions and the log ends the last listing saw."""
    from flowcore.processor.kinds import PendingWork

    kafka_cluster.produce(topic, [b"x%d" % i for i in range(25)], partition=0)
    runner = TestRunner(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="gp",
            topics=topic,
            auto_offset_reset="earliest",
        )
    )
    runner.add_service(
        Kafka3ConnectionService(
            "kafka", bootstrap_servers=kafka_cluster.bootstrap, max_poll_records="10"
        )
    )
    runner.run(iterations=0, stop_on_finish=False)
    processor, context = runner.processor, runner.context
    assert processor.pending_work(context, {}) is None
    listing = processor.list_work(context, {})
    assert [(i.payload["start"], i.payload["end"]) for i in listing.items] == [(0, 10)]
    assert processor.pending_work(context, {}) == PendingWork(3)
    assert processor.pending_work(context, listing.state) == PendingWork(2)
    assert processor.pending_work(context, {f"{topic}:0": "25:0"}) == PendingWork(0)
    runner.stop()


def test_a_flow_run_reports_the_ranges_left_as_its_input_progress(kafka_cluster, topic, tmp_path):
    """A run's progress counts ConsumeKafka's ranges read and left (no bytes): 25 messages in
    ranges of 10, a range a micro-batch, go 1 read 2 left, then 3 read none left."""
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings

    kafka_cluster.produce(topic, [b"x%d" % i for i in range(25)], partition=0)
    flow = Flow("backlog")
    flow.add_service(
        Kafka3ConnectionService(
            "kafka", bootstrap_servers=kafka_cluster.bootstrap, max_poll_records="10"
        )
    )
    consume = flow.add(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="backlog",
            topics=topic,
            auto_offset_reset="earliest",
        ),
        name="consume",
    )
    flow.auto_terminate(consume, "success")
    reports: list = []
    settings = Settings(sync=False, parallelism=1, batch_max_flowfiles=10)
    run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=settings, progress=reports.append
    )
    inputs = [(r.input.read_items, r.input.pending_items) for r in reports if r.input]
    assert inputs == [(1, 2), (2, 1), (3, 0)]
    assert all(r.input.pending_bytes is None for r in reports if r.input)
