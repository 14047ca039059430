"""ConsumeKafka's topic IDs: a topic deleted and made again is read anew, not from old offsets.

A topic deleted and made again under the same name is a new log whose offsets and leader epochs
start again at 0: the flow's positions there (next offset and epoch, :mod:`._consume_epochs`)
are the old topic's. The epoch check cannot tell (the broker answers for the new topic's epoch
0, which ends at the new log's end), so a new log grown past the flow's offset was read from
that offset, its first messages skipped for good, and a shorter one from its end. Kafka tells
the two apart by topic ID (KIP-516, Kafka 2.8): made with the topic, never reused.

The flow's SOURCE STATE keeps each topic's ID under ``topic:id`` beside its ``topic:partition``
positions (a state without it, from before, gains it; nothing is checked until then). A listing
asks the IDs of the topics whose positions it is about to move (a range to hand out, a partition
new to the state or past its log's end): one DescribeTopics round trip for all of them; a
listing whose partitions are all at their log ends asks nothing. A topic whose ID is not the
kept one is a new topic: its positions are dropped and each of its partitions is read from its
log start, whatever Auto Offset Reset says, with a warning naming the topic and both IDs. Auto
Offset Reset is for a topic the flow has never read; every message of the new topic is one the
flow has not read, and ``latest`` would skip, for good, those written between the topic's
re-creation and the listing that saw it: from the start, none is lost and none read twice.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from processors.kafka._consume_epochs import parse_position

__all__ = ["TopicIdReader", "adopt_ids", "describe_ids", "id_key", "is_id_key", "moving_topics"]

#: ``(topic, partition)``
Place = tuple[str, int]

#: Seconds a reader whose request went unanswered waits before asking again: a cluster whose
#: controller cannot be found would otherwise hold every listing for the whole timeout.
RETRY_AFTER = 300.0

#: The state key suffix of a topic's ID (a topic name has no ``:``; a partition key ends in digits).
_ID = ":id"


def id_key(topic: str) -> str:
    """The state key of *topic*'s ID."""
    return topic + _ID


def is_id_key(key: str) -> bool:
    """Whether a state key holds a topic's ID, not a partition's position."""
    return key.endswith(_ID)


def moving_topics(marks: Mapping[Place, tuple[int, int]], state: Mapping[str, str]) -> list[str]:
    """The topics the listing moves a position of: one not in *state*, or not at its log end.

    A partition at its log end hands out nothing and keeps its position: its topic's ID is
    asked when it has something to read (a topic made again is caught then, before any range).
    """
    moving: dict[str, None] = {}
    for (topic, partition), (_, high) in marks.items():
        value = state.get(f"{topic}:{partition}")
        if value is None or parse_position(value)[0] != high:
            moving[topic] = None
    return list(moving)


def describe_ids(
    kafka: Any, admin: Any, topics: Sequence[str], timeout: float
) -> tuple[dict[str, str], dict[str, str]]:
    """The *topics*' IDs (AdminClient ``describe_topics``), and why any could not be read.

    A broker before Kafka 2.8 gives no ID (all zero): such a topic is in neither mapping.

    Returns:
        The IDs by topic, as Kafka writes them (URL-safe base64, ``kafka-topics --describe``),
        and the cause by topic for those whose description failed.

    Raises:
        TimeoutError: no answer within *timeout* seconds (no controller found, brokers down).
    """
    found = admin.describe_topics(kafka.TopicCollection(list(topics)), request_timeout=timeout)
    ids: dict[str, str] = {}
    failed: dict[str, str] = {}
    for name, future in found.items():
        try:
            description = future.result(timeout + 1)  # librdkafka ends it at request_timeout
        except kafka.KafkaException as ex:
            error = ex.args[0]
            if error.code() == kafka.KafkaError._TIMED_OUT:
                raise TimeoutError(error.str()) from None
            failed[name] = error.str()
            continue
        except concurrent.futures.TimeoutError:
            msg = f"no answer within {timeout:g} s"
            raise TimeoutError(msg) from None
        uuid = description.topic_id
        if uuid.get_most_significant_bits() or uuid.get_least_significant_bits():
            ids[name] = str(uuid).replace("+", "-").replace("/", "_")
    return ids, failed


class TopicIdReader:
    """A ConsumeKafka copy's reader of topic IDs (DescribeTopics through an AdminClient).

    The AdminClient is made at the first request; after a timeout, the reader asks nothing
    for :data:`RETRY_AFTER` seconds.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._config = dict(config)
        self._admin: Any = None
        self._retry_at = 0.0

    def read(
        self, kafka: Any, topics: Sequence[str], timeout: float, warn: Callable[[str], None]
    ) -> dict[str, str]:
        """The *topics*' IDs that could be read; *warn* names each topic that could not.

        Such a topic is not checked by this listing (its positions are read on from).
        """
        if time.monotonic() < self._retry_at:
            return {}
        if self._admin is None:
            self._admin = kafka.admin.AdminClient(self._config)
        unread = "a topic deleted and made again is not detected by its ID"
        try:
            ids, failed = describe_ids(kafka, self._admin, topics, timeout)
        except TimeoutError as ex:
            self._retry_at = time.monotonic() + RETRY_AFTER
            names = ", ".join(topics)
            warn(
                f"Kafka topic IDs of {names} could not be read ({ex}): {unread}; asked again "
                f"in {RETRY_AFTER:g} s"
            )
            return {}
        for topic, cause in failed.items():
            warn(f"Kafka topic ID of {topic} could not be read ({cause}): {unread}")
        return ids


def adopt_ids(
    state: Mapping[str, str], ids: Mapping[str, str], warn: Callable[[str], None]
) -> tuple[dict[str, str], set[str]]:
    """The *state* with the topics' *ids*; a topic whose ID changed loses its positions.

    Returns:
        The state, and the topics made again (to be read from their log start, module doc).
    """
    adopted = dict(state)
    remade: set[str] = set()
    for topic, found in ids.items():
        kept = state.get(id_key(topic))
        adopted[id_key(topic)] = found
        if kept is None or kept == found:
            continue
        remade.add(topic)
        dropped = sorted(_positions_of(topic, state), key=lambda k: int(k.rpartition(":")[2]))
        for key in dropped:
            del adopted[key]
        offsets = ", ".join(f"{k.rpartition(':')[2]}: {state[k]}" for k in dropped)
        warn(
            f"Kafka topic {topic} was deleted and made again: its topic ID is {found}, the "
            f"flow's offsets ({offsets or 'none'}) are of topic ID {kept}; reading the new "
            "topic from its start"
        )
    return adopted, remade


def _positions_of(topic: str, state: Iterable[str]) -> list[str]:
    """*topic*'s partition keys in *state*."""
    return [k for k in state if k.rpartition(":")[0] == topic and not is_id_key(k)]
