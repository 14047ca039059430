"""ConsumeKafka's positions with leader epochs: log truncation detected, not silently skipped.

A partition's log can be cut below the flow's next offset (an unclean leader election truncates
it to the new leader's, or the topic is deleted and made again) and then grow back past that
offset before the next listing: the watermarks show nothing wrong, and the messages written
from the cut up to the flow's offset were skipped for good. Kafka's answer is KIP-320: keep,
beside the next offset, the leader epoch of the last message consumed before it, and ask the
leader where that epoch ends (OffsetForLeaderEpoch) before reading on. librdkafka does that
when a partition is assigned with a leader epoch, and on a divergence seeks to the offset where
the epoch ends, the first offset the flow did not read of the log now there (the Java
consumer's behaviour under an ``auto.offset.reset`` policy; ``none`` would raise instead).

The flow's SOURCE STATE keeps ``next offset:leader epoch`` per ``topic:partition`` (a state
without the epoch, from before, is the next offset alone and is not checked). The listing
*validates* each position with an epoch before handing out a range after it: sought to the
position with its epoch (librdkafka validates a seek's epoch; an assignment's only when the
leader's epoch it knows changes), a partition whose first message comes below the position
diverged there. And it *learns* the epoch of each new range's last message by reading it (the
last two offsets of the range: the last is a transaction's control record when the producer
used transactions, which is never delivered). Both are one fetch round trip for all partitions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

__all__ = ["Position", "format_position", "learn_epochs", "parse_position", "validate"]

#: ``(topic, partition)``
Place = tuple[str, int]
#: A partition's next offset and the leader epoch of the message before it (None: not known).
Position = tuple[int, int | None]

#: Seconds each ``consume`` of a probe waits: short, as it waits them whenever fewer than
#: :data:`_CONSUME_MAX` messages came (a probe wants a message or two a partition)
_POLL = 0.005
#: Messages a probe's ``consume`` takes at most.
_CONSUME_MAX = 1000


def parse_position(value: str) -> Position:
    """A state value ``offset`` or ``offset:epoch`` as its offset and epoch."""
    offset, _, epoch = value.partition(":")
    return int(offset), int(epoch) if epoch else None


def format_position(offset: int, epoch: int | None) -> str:
    """The state value of *offset* and *epoch* (``offset`` alone when no epoch is known)."""
    return str(offset) if epoch is None else f"{offset}:{epoch}"


def validate(
    kafka: Any, consumer: Any, checks: Mapping[Place, tuple[int, int, int]], wait: float
) -> dict[Place, int]:
    """The partitions whose log diverged below the flow's position, and where (module doc).

    Args:
        kafka: the ``confluent_kafka`` module.
        consumer: an unassigned consumer (``auto.offset.reset`` earliest); unassigned on return.
        checks: per partition, the flow's next offset, the leader epoch of the message before
            it, and the log's end now. A position at the log's end is not checked (nothing to
            read; a cut is seen once the log grows past it).
        wait: seconds to wait for the partitions' first messages.

    Returns:
        The offset each diverged partition's log must be read from (the log's end when the
        position was past it and no message came below it).
    """
    if not checks:
        return {}
    # a position past the log's end is checked at the end: fetched past it, the partition was
    # reset to its start before the validation's seek could move it to where the epoch ends
    positions = [
        kafka.TopicPartition(*p, min(at, high), leader_epoch=e)
        for p, (at, e, high) in checks.items()
    ]
    consumer.assign(positions)
    diverged: dict[Place, int] = {}
    open_ = set(checks)
    deadline = time.monotonic() + wait
    try:
        for position in positions:  # librdkafka validates a seek's epoch, not an assignment's
            _seek(kafka, consumer, position, deadline)
        while open_ and time.monotonic() < deadline:
            for message in consumer.consume(_CONSUME_MAX, _POLL):
                place = (message.topic(), message.partition())
                if message.error() is not None or place not in open_:
                    continue
                open_.discard(place)
                offset = message.offset()
                if offset < min(checks[place][0], checks[place][2]):
                    diverged[place] = offset
            if open_:  # read on from the position over control records only: not diverged
                rest = sorted(open_)
                found = consumer.position([kafka.TopicPartition(*p) for p in rest])
                open_.difference_update(
                    p
                    for p, at in zip(rest, found, strict=True)
                    if at.offset > min(checks[p][0], checks[p][2])
                )
    finally:
        consumer.unassign()
    for place in open_:  # past the log's end and nothing below it came: the log's end
        offset, _, high = checks[place]
        if offset > high:
            diverged[place] = high
    return diverged


def _seek(kafka: Any, consumer: Any, position: Any, deadline: float) -> None:
    """Seek to *position*, again while its just assigned partition is not fetching yet."""
    while True:
        try:
            consumer.seek(position)
            return
        except kafka.KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.001)


def learn_epochs(
    kafka: Any, consumer: Any, ranges: Mapping[Place, tuple[int, int]], wait: float
) -> dict[Place, int | None]:
    """The leader epoch of the last message each range ``[start, end)`` delivers (module doc).

    A range whose last two offsets deliver nothing (control records, aborted messages) or
    that does not answer in *wait* seconds gets None: its position is kept without an epoch.
    """
    if not ranges:
        return {}
    places = list(ranges)
    consumer.assign([kafka.TopicPartition(*p, max(ranges[p][0], ranges[p][1] - 2)) for p in places])
    epochs: dict[Place, int | None] = dict.fromkeys(places)
    open_ = set(places)
    deadline = time.monotonic() + wait
    try:
        while open_ and time.monotonic() < deadline:
            for message in consumer.consume(_CONSUME_MAX, _POLL):
                place = (message.topic(), message.partition())
                if message.error() is not None or place not in open_:
                    continue
                start, end = ranges[place]
                if max(start, end - 2) <= message.offset() < end:  # not one reset to the start
                    epochs[place] = message.leader_epoch()
                if message.offset() >= end - 1:
                    open_.discard(place)
            if open_:  # a range may end in control records: its position passed the end
                rest = sorted(open_)
                positions = consumer.position([kafka.TopicPartition(*p) for p in rest])
                open_.difference_update(
                    p for p, at in zip(rest, positions, strict=True) if at.offset >= ranges[p][1]
                )
    finally:
        consumer.unassign()
    return epochs
