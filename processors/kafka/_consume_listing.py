"""ConsumeKafka's listing: offset ranges after the flow's positions, validated by leader epoch.

The driver's side of :class:`processors.kafka.consume_kafka.ConsumeKafka`: each partition's
watermarks, the flow's position there (its SOURCE STATE, ``next offset[:leader epoch]`` per
``topic:partition``, and each topic's ID under ``topic:id``) checked against the topic's ID
(:mod:`._consume_topic_ids`) and validated by leader epoch (:mod:`._consume_epochs`), and a
range ``[start, end)`` of at most Max Poll Records after it, with the state after the ranges.
A partition whose check did not answer in time gets no range and keeps its state (warned):
the next listing checks it again. The watermarks come from a consumer at the service's
isolation level; the epoch probes from one that reads uncommitted messages.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flowcore.errors import ProcessException
from flowcore.processor.kinds import WorkItem, WorkListing
from processors.kafka._consume_epochs import (
    format_position,
    learn_epochs,
    parse_position,
    validate,
)
from processors.kafka._consume_topic_ids import adopt_ids, is_id_key, moving_topics

__all__ = ["commit_to_group", "list_ranges", "ranges_left", "watermarks"]

#: ``(topic, partition)``
Place = tuple[str, int]


def watermarks(
    kafka: Any, consumer: Any, topics: Sequence[Any], timeout: float
) -> dict[Place, tuple[int, int]]:
    """Each partition's low and high watermarks, for the *topics*' metadata given."""
    marks: dict[Place, tuple[int, int]] = {}
    for topic in topics:
        for partition in sorted(topic.partitions):
            tp = kafka.TopicPartition(topic.topic, partition)
            try:
                marks[topic.topic, partition] = consumer.get_watermark_offsets(tp, timeout=timeout)
            except kafka.KafkaException as ex:
                key = f"{topic.topic}:{partition}"
                msg = f"Kafka watermarks of {key} could not be read: {ex.args[0].str()}"
                raise ProcessException(msg) from None
    return marks


def list_ranges(
    kafka: Any,
    consumer: Any,
    marks: Mapping[Place, tuple[int, int]],
    state: Mapping[str, str],
    *,
    reset: str,
    room: int,
    timeout: float,
    warn: Callable[[str], None],
    topic_ids: Callable[[Sequence[str]], Mapping[str, str]],
) -> WorkListing:
    """Ranges after the *state*'s positions, each validated by its leader epoch first.

    The topics whose positions the listing moves are asked their IDs first (*topic_ids*, the
    IDs it could read by topic): a topic made again since the state's ID was kept is read from
    its log start (:mod:`._consume_topic_ids`). A position whose partition's log diverged below
    it (:mod:`._consume_epochs`) moves back to where the log diverged, with a warning naming
    both offsets; the new positions carry the leader epoch of their ranges' last messages,
    learnt by reading them. A position whose check did not answer within *timeout* (Max
    Metadata Wait Time) gets no range, its state kept, with a warning naming it: the next
    listing checks it again. *consumer* is the probes' (read uncommitted); *marks* were read
    at the service's isolation level. *reset* is Auto Offset Reset, for a partition the state
    has no position for; *room* Max Poll Records.
    """
    moving = moving_topics(marks, state)
    state, remade = adopt_ids(state, topic_ids(moving) if moving else {}, warn)
    positions = {p: parse_position(state[_key(p)]) for p in marks if _key(p) in state}
    checks = {  # an empty log (low == high) holds nothing the flow could miss: not checked
        place: (offset, epoch, marks[place][1])
        for place, (offset, epoch) in positions.items()
        if epoch is not None
        and offset != marks[place][1]
        and offset > marks[place][0]
        and marks[place][1] > marks[place][0]
    }
    checked = validate(kafka, consumer, checks, timeout)
    diverged = checked.diverged
    new_state = dict(state)
    ranges: dict[tuple[str, int], tuple[int, int]] = {}
    for place, (low, high) in marks.items():
        key = _key(place)
        if place in checked.unchecked:  # held back, its state kept: checked again next listing
            offset, epoch = positions[place]
            warn(
                f"Kafka {key}'s position {offset} (leader epoch {epoch}) was not checked "
                f"within Max Metadata Wait Time ({timeout:g} s): its log may have been cut "
                f"below it, so nothing of {key} is read this listing; the next one checks again"
            )
            continue
        if place in positions:
            offset = positions[place][0]
            start = max(diverged.get(place, offset), low)
            if place in diverged:
                warn(
                    f"Kafka {key}'s log diverged from the flow's below its next offset "
                    f"{offset} (leader epoch {positions[place][1]} ends at {start}: "
                    f"truncated by an unclean leader election, or the topic made again): "
                    f"reading from offset {start} on"
                )
            elif start > high:  # no epoch to ask: the state moves back to the log end
                warn(
                    f"Kafka {key}'s log ends at offset {high}, below the flow's next "
                    f"offset {start} (truncated by an unclean leader election, or the "
                    f"topic made again): reading from offset {high} on"
                )
        elif reset == "earliest" or place[0] in remade:
            start = low
        elif reset == "latest":
            start = high
        else:
            msg = f"no committed offset for Kafka {key} and Auto Offset Reset is none"
            raise ProcessException(msg)
        end = min(high, start + room)
        if end > start:
            ranges[place] = (start, end)
        elif place not in positions or end != positions[place][0]:
            new_state[key] = str(end)
    epochs = learn_epochs(kafka, consumer, ranges, timeout)
    items = []
    for (topic, partition), (start, end) in ranges.items():
        key = f"{topic}:{partition}"
        if (topic, partition) not in epochs:  # held back: checked again next listing
            new_state[key] = state.get(key, str(start))
            warn(
                f"Kafka {key}'s range [{start}, {end}) was not handed out: the leader epoch of "
                f"its last message did not come within Max Metadata Wait Time ({timeout:g} s), "
                f"and without it the next listing could not check the position after it"
            )
            continue
        epoch = epochs[topic, partition]
        new_state[key] = format_position(end, epoch)
        payload = {"topic": topic, "partition": partition, "start": start, "end": end}
        if epoch is not None:  # the reader checks its last message still has it
            payload["epoch"] = epoch
        items.append(WorkItem(f"{key}@{start}", payload, flowfiles=end - start, size=0))
    return WorkListing(items, new_state)


def ranges_left(
    marks: Mapping[Place, tuple[int, int]], state: Mapping[str, str], *, reset: str, room: int
) -> int:
    """The ranges of at most *room* messages between the *state*'s positions and the *marks*.

    A partition the state has no position for counts from its log start with *reset*
    ``earliest``, else nothing (``latest`` starts at the end; ``none`` fails the listing).
    """
    left = 0
    for place, (low, high) in marks.items():
        value = state.get(_key(place))
        if value is not None:
            offset = max(parse_position(value)[0], low)
        else:
            offset = low if reset == "earliest" else high
        left += -(-max(high - offset, 0) // room)
    return left


def commit_to_group(kafka: Any, consumer: Any, state: Mapping[str, str]) -> None:
    """Commit the flow's committed offsets to the consumer group (best effort, for lag tools)."""
    offsets = []
    for key, value in state.items():
        if is_id_key(key):
            continue
        topic, _, partition = key.rpartition(":")
        offset, epoch = parse_position(value)
        offsets.append(
            kafka.TopicPartition(
                topic, int(partition), offset, leader_epoch=-1 if epoch is None else epoch
            )
        )
    with contextlib.suppress(kafka.KafkaException):  # informational: the flow's is its state
        consumer.commit(offsets=offsets, asynchronous=False)


def _key(place: Place) -> str:
    """A partition's state key, ``topic:partition``."""
    return f"{place[0]}:{place[1]}"
