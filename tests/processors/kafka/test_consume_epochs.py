"""ConsumeKafka's positions with leader epochs: a truncated log that grew back is not skipped."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from flowcore.errors import ProcessException
from flowcore.testing import TestRunner
from processors.kafka._consume_epochs import format_position, parse_position, validate
from processors.kafka._consume_topic_ids import id_key
from processors.kafka.connection_service import Kafka3ConnectionService
from processors.kafka.consume_kafka import ConsumeKafka
from tests.processors.kafka.mock_cluster import ControlledMockCluster

#: Kafka's ApiKey of OffsetForLeaderEpoch, the request a position's check sends
OFFSET_FOR_LEADER_EPOCH = 23
#: Kafka's ApiKey of Fetch, the request a range's epoch is learnt by
FETCH = 1


@pytest.fixture(scope="module")
def controlled() -> Iterator[ControlledMockCluster]:
    """A mock cluster whose topics and leaders the tests set."""
    cluster = ControlledMockCluster()
    yield cluster
    cluster.close()


def _runner(cluster: ControlledMockCluster, topic: str, wait: str = "5 sec") -> TestRunner:
    runner = TestRunner(
        ConsumeKafka(
            kafka_connection_service="kafka",
            group_id="epochs",
            topics=topic,
            auto_offset_reset="earliest",
        )
    )
    runner.add_service(
        Kafka3ConnectionService(
            "kafka",
            bootstrap_servers=cluster.bootstrap,
            client_timeout="5 sec",
            max_metadata_wait_time=wait,
        )
    )
    return runner


def _unclean_election(
    cluster: ControlledMockCluster, topic: str, kept: int, new: int, state: Mapping[str, str]
) -> dict[str, str]:
    """*topic*'s partition 0 cut to its first *kept* messages under a new leader (epoch 1),
    which then takes *new* messages: what an unclean leader election leaves.

    The mock cuts a log only by making the topic again, which gives it a new topic ID; an
    election keeps the topic's, so the flow's *state* is returned with the new one.
    """
    cluster.delete_topic(topic)
    cluster.create_topic(topic)
    cluster.produce(topic, [b"m%d" % i for i in range(kept)])
    cluster.set_leader(topic, 0, 2)
    cluster.produce(topic, [b"n%d" % i for i in range(kept, kept + new)])
    assert id_key(topic) in state
    return {**state, id_key(topic): cluster.topic_id(topic)}


def test_a_log_cut_below_the_state_and_grown_back_past_it_is_read_from_the_cut(controlled, caplog):
    """A log truncated to offset 2 below the flow's next offset 5 and grown back to 7 before
    the next listing is read from 2 (n2-n6), not from 5 (n2-n4 lost), with a warning."""
    topic = "epochs-grown-back"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"m%d" % i for i in range(5)])
    runner = _runner(controlled, topic)
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [
        b"m0",
        b"m1",
        b"m2",
        b"m3",
        b"m4",
    ]
    assert runner.state[f"{topic}:0"] == "5:0"
    runner.clear_transfer_state()
    runner.set_state(_unclean_election(controlled, topic, 2, 5, runner.state))
    caplog.set_level("WARNING", logger="flowcore.processors")
    runner.run()
    out = runner.flowfiles_for("success")
    assert [f.content for f in out] == [b"n2", b"n3", b"n4", b"n5", b"n6"]
    assert [f.attributes["kafka.offset"] for f in out] == ["2", "3", "4", "5", "6"]
    assert runner.state[f"{topic}:0"] == "7:1"
    (warned,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert f"Kafka {topic}:0's log diverged from the flow's below its next offset 5" in warned
    assert "leader epoch 0 ends at 2" in warned


def test_a_log_cut_below_the_state_and_not_grown_back_is_read_from_the_cut(controlled):
    """A log truncated to 2 below the flow's next offset 5 that holds 4 messages at the next
    listing (below the flow's offset) is read from 2, not from its end 4 (n2, n3 lost)."""
    topic = "epochs-short"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"m%d" % i for i in range(5)])
    runner = _runner(controlled, topic)
    runner.run()
    runner.clear_transfer_state()
    runner.set_state(_unclean_election(controlled, topic, 2, 2, runner.state))
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"n2", b"n3"]
    assert runner.state[f"{topic}:0"] == "4:1"


@pytest.mark.parametrize("new", [5, 1], ids=["grown-back", "past-the-end"])
def test_a_check_not_answered_in_time_holds_the_partition_back_until_one_is(
    controlled, caplog, new
):
    """A cut log (grown back past the flow's offset 5, or ending below it) whose leader answers
    OffsetForLeaderEpoch after Max Metadata Wait Time is not read from 5 nor moved to its end
    (n2... lost) but held back with a warning, its state kept; the next listing checks again
    and reads from the cut."""
    topic = f"epochs-late-check-{new}"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"m%d" % i for i in range(5)])
    runner = _runner(controlled, topic, wait="1 sec")
    runner.run()
    runner.clear_transfer_state()
    runner.set_state(_unclean_election(controlled, topic, 2, new, runner.state))
    controlled.delay_request(2, OFFSET_FOR_LEADER_EPOCH, 1500)  # the new leader
    caplog.set_level("WARNING", logger="flowcore.processors")
    runner.run()
    assert runner.flowfiles_for("success") == []
    assert runner.state[f"{topic}:0"] == "5:0"
    (warned,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert f"Kafka {topic}:0's position 5 (leader epoch 0) was not checked" in warned
    runner.run()
    wanted = [b"n%d" % i for i in range(2, 2 + new)]
    assert [f.content for f in runner.flowfiles_for("success")] == wanted
    assert runner.state[f"{topic}:0"] == f"{2 + new}:1"


def test_a_range_whose_epoch_is_not_learnt_in_time_is_held_back_until_it_is(controlled, caplog):
    """A range whose last message's leader epoch does not come within Max Metadata Wait Time
    is not handed out (its position would be kept without an epoch, so the next listing could
    not check it): the state is kept, a warning names it, and the next listing reads it."""
    topic = "epochs-late-learning"
    controlled.create_topic(topic)
    controlled.set_leader(topic, 0, 2)
    controlled.produce(topic, [b"a", b"b", b"c"])
    runner = _runner(controlled, topic, wait="1 sec")
    runner.set_state({f"{topic}:0": "1"})  # no epoch: no check, only the learning fetches
    controlled.delay_request(2, FETCH, 1500)
    caplog.set_level("WARNING", logger="flowcore.processors")
    runner.run()
    assert runner.flowfiles_for("success") == []
    assert runner.state[f"{topic}:0"] == "1"
    (warned,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert f"Kafka {topic}:0's range [1, 3) was not handed out" in warned
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"b", b"c"]
    assert runner.state[f"{topic}:0"] == "3:1"


def test_a_log_cut_below_the_state_to_one_message_of_a_later_epoch_reads_it(controlled, caplog):
    """A log cut to 2 below the flow's next offset 5 whose new leader wrote one message (n2,
    the log's last, below the flow's offset) is read from 2: the last message's epoch says
    the flow's ended before it (n2 lost otherwise)."""
    topic = "epochs-one-later"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"m%d" % i for i in range(5)])
    runner = _runner(controlled, topic)
    runner.run()
    runner.clear_transfer_state()
    runner.set_state(_unclean_election(controlled, topic, 2, 1, runner.state))
    caplog.set_level("WARNING", logger="flowcore.processors")
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"n2"]
    assert runner.state[f"{topic}:0"] == "3:1"
    (warned,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "leader epoch 0 ends at 2" in warned


def test_a_log_cut_below_the_state_within_its_epoch_reads_on_from_the_log_end(controlled):
    """A log cut to 3 below the flow's next offset 5, all of the flow's leader epoch (the flow
    read m0-m2 already), moves the position to the log's end 3 and reads what comes next."""
    topic = "epochs-cut-same-epoch"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"m%d" % i for i in range(5)])
    runner = _runner(controlled, topic)
    runner.run()
    runner.clear_transfer_state()
    state = runner.state
    controlled.delete_topic(topic)
    controlled.create_topic(topic)
    controlled.produce(topic, [b"m0", b"m1", b"m2"])
    runner.set_state({**state, id_key(topic): controlled.topic_id(topic)})
    runner.run()
    assert runner.flowfiles_for("success") == []
    assert runner.state[f"{topic}:0"] == "3"
    controlled.produce(topic, [b"m3"])
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"m3"]


def test_a_seek_failing_past_max_metadata_wait_names_the_partition():
    """A check whose seek keeps failing past its wait is a ProcessException naming the
    partition and its position, not librdkafka's KafkaException."""
    import confluent_kafka

    class Refusing:
        def assign(self, positions):
            pass

        def unassign(self):
            pass

        def seek(self, position):
            error = confluent_kafka.KafkaError(confluent_kafka.KafkaError._STATE, "not fetching")
            raise confluent_kafka.KafkaException(error)

    with pytest.raises(ProcessException, match="Kafka t:3's position 7 could not be checked"):
        validate(confluent_kafka, Refusing(), {("t", 3): (7, 0, 9)}, 0.0)


def test_a_leader_change_without_truncation_reads_on(controlled, caplog):
    """A new leader that kept the whole log (a clean election) is validated and read on from
    the flow's offset: nothing read twice, no warning."""
    topic = "epochs-clean"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"a", b"b"])
    runner = _runner(controlled, topic)
    runner.run()
    runner.clear_transfer_state()
    controlled.set_leader(topic, 0, 3)
    controlled.produce(topic, [b"c"])
    caplog.set_level("WARNING", logger="flowcore.processors")
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"c"]
    assert runner.state[f"{topic}:0"] == "3:1"
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_a_state_without_epochs_is_read_on_and_gains_them(controlled):
    """A position kept before epochs (the offset alone) is read on from, unchecked, and the
    new position carries its last message's epoch."""
    topic = "epochs-old-state"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"a", b"b", b"c"])
    runner = _runner(controlled, topic)
    runner.set_state({f"{topic}:0": "1"})
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"b", b"c"]
    assert runner.state[f"{topic}:0"] == "3:0"


def test_positions_round_trip_through_state_values():
    """A state value is the offset alone or offset:epoch; both read back as they were."""
    assert parse_position("17") == (17, None)
    assert parse_position(format_position(17, 3)) == (17, 3)
    assert format_position(17, None) == "17"
    assert format_position(0, 0) == "0:0"


def test_a_log_cut_between_listing_and_read_fails_the_range_then_reads_each_message_once(
    controlled,
):
    """A range listed [5, 10) whose log is cut to 7 and grown back to 12 before the task reads
    it fails (its last message has the new leader's epoch), and the next listing, from the
    committed position, reads m5, m6 and n7-n11: none lost, none twice."""
    topic = "epochs-between"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"m%d" % i for i in range(5)])
    runner = _runner(controlled, topic)
    runner.run(stop_on_finish=False)
    committed = runner.state
    assert committed[f"{topic}:0"] == "5:0"
    controlled.produce(topic, [b"m%d" % i for i in range(5, 10)])
    processor, context = runner.processor, runner.context
    (item,) = processor.list_work(context, committed).items
    assert (item.payload["start"], item.payload["end"], item.payload["epoch"]) == (5, 10, 0)
    committed = _unclean_election(controlled, topic, 7, 5, committed)
    session = runner.create_session()
    with pytest.raises(ProcessException, match="offset 9 has leader epoch 1, where the listing"):
        processor.read_work(context, session, item)
    session.rollback()
    listing = processor.list_work(context, committed)
    (again,) = listing.items
    session = runner.create_session()
    processor.read_work(context, session, again)
    session.commit()
    runner.stop()
    contents = [f.content for f in runner.flowfiles_for("success")][5:]
    assert contents == [b"m5", b"m6", b"n7", b"n8", b"n9", b"n10", b"n11"]
    assert listing.state[f"{topic}:0"] == "12:1"


def test_ranges_ending_in_a_transactions_commit_marker_keep_their_epochs(controlled, caplog):
    """A transactional producer's ranges end in commit markers (never delivered): the position
    keeps the epoch of the last message before the marker, validates, and reads on."""
    from confluent_kafka import Producer

    topic = "epochs-transactions"
    controlled.create_topic(topic)
    producer = Producer(
        {"bootstrap.servers": controlled.bootstrap, "transactional.id": "tx", "log_level": 0}
    )
    producer.init_transactions(10)

    def transaction(values: list[bytes]) -> None:
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value, partition=0)
        producer.commit_transaction(10)

    transaction([b"a", b"b"])  # offsets 0, 1 and the marker at 2
    runner = _runner(controlled, topic)
    runner.run()
    assert runner.state[f"{topic}:0"] == "3:0"
    transaction([b"c"])
    caplog.set_level("WARNING", logger="flowcore.processors")
    runner.run()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"a", b"b", b"c"]
    assert runner.state[f"{topic}:0"] == "5:0"
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_watermarks_are_read_at_the_services_isolation_level_and_probes_uncommitted(
    controlled, monkeypatch
):
    """The listing's watermarks come from a consumer at the service's isolation level
    (read_committed: its high watermark is the last stable offset, so no range ends inside
    an open transaction); only the epoch probes, which assign and seek, read uncommitted."""
    import confluent_kafka

    made = []

    class Recording(confluent_kafka.Consumer):
        def __init__(self, config):
            super().__init__(config)
            self.isolation, self.calls = config.get("isolation.level"), set()
            made.append(self)

        def get_watermark_offsets(self, *args, **kwargs):
            self.calls.add("watermarks")
            return super().get_watermark_offsets(*args, **kwargs)

        def assign(self, *args, **kwargs):
            self.calls.add("assign")
            return super().assign(*args, **kwargs)

    topic = "epochs-isolation"
    controlled.create_topic(topic)
    controlled.produce(topic, [b"a", b"b"])
    runner = _runner(controlled, topic)
    runner.run(stop_on_finish=False)
    controlled.produce(topic, [b"c"])
    processor, context = runner.processor, runner.context
    processor.on_stopped(context)  # its consumers are made again, recorded
    monkeypatch.setattr(confluent_kafka, "Consumer", Recording)
    (item,) = processor.list_work(context, runner.state).items  # checked, and its epoch learnt
    runner.stop()
    assert (item.payload["start"], item.payload["end"], item.payload["epoch"]) == (2, 3, 0)
    assert {(c.isolation, frozenset(c.calls)) for c in made} == {
        ("read_committed", frozenset({"watermarks"})),
        ("read_uncommitted", frozenset({"assign"})),
    }
