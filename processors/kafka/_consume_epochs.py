"""ConsumeKafka's positions with leader epochs: log truncation detected, not silently skipped.

A partition's log can be cut below the flow's next offset (an unclean leader election truncates
it to the new leader's) and then grow back past that offset before the next listing: the
watermarks show nothing wrong, and the messages written from the cut up to the flow's offset
were skipped for good. Kafka's answer is KIP-320: keep, beside the next offset, the leader epoch
of the last message consumed before it, and ask the leader where that epoch ends
(OffsetForLeaderEpoch) before reading on. librdkafka does that when a partition is assigned
with a leader epoch, and on a divergence seeks to the offset where the epoch ends, the first
offset the flow did not read of the log now there (the Java consumer's behaviour under an
``auto.offset.reset`` policy; ``none`` would raise instead). A topic deleted and made again,
whose epochs start again at 0, is told by its topic ID instead (:mod:`._consume_topic_ids`).

The flow's SOURCE STATE keeps ``next offset:leader epoch`` per ``topic:partition`` (a state
without the epoch, from before, is the next offset alone and is not checked). The listing
*validates* each position with an epoch before handing out a range after it: sought to the
position with its epoch (librdkafka validates a seek's epoch; an assignment's only when the
leader's epoch it knows changes), a partition whose first message comes below the position
diverged there. A position past the log's end is sought to at the log's last offset: a message
below it diverged, and the last message's epoch tells whether the flow's epoch ended before it.
A check that has not answered within the wait is no pass: the partition is *unchecked*, and the
listing hands out nothing of it and checks it again next time (reading on from the flow's
offset would skip a cut's messages for good). The listing also *learns* the epoch of each new
range's last message by reading it (the last two offsets of the range: the last is a
transaction's control record when the producer used transactions, which is never delivered);
a range whose epoch does not come within the wait is held back as well, as a position kept
without an epoch would not be checked. Both are one fetch round trip for all partitions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import attrs

from flowcore.errors import ProcessException

__all__ = [
    "Position",
    "Validation",
    "format_position",
    "learn_epochs",
    "parse_position",
    "validate",
]

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


@attrs.frozen
class Validation:
    """What a listing's checks found (:func:`validate`).

    Attributes:
        diverged: the offset each diverged partition's log must be read from.
        unchecked: the partitions whose check did not answer in time: whether their logs
            diverged is not known, so the listing hands out nothing of them (reading on from
            the flow's offset would skip a cut's messages for good) and checks them again.
    """

    diverged: dict[Place, int]
    unchecked: frozenset[Place]


def validate(
    kafka: Any, consumer: Any, checks: Mapping[Place, tuple[int, int, int]], wait: float
) -> Validation:
    """The partitions whose log diverged below the flow's position, and where (module doc).

    A position inside the log is sought to with its epoch: its first message, or the
    consumer's position passing it (control records), says the log did not diverge below it;
    a message below it came from where the epoch ends. A position past the log's end (the log
    was cut below it) is sought to at the log's last offset with its epoch: a message below
    that offset is where the epoch ends, and the last message itself tells by its epoch
    whether the flow's epoch ended just before it (a later epoch) or at the log's end.

    Args:
        kafka: the ``confluent_kafka`` module.
        consumer: an unassigned consumer (``auto.offset.reset`` earliest); unassigned on return.
        checks: per partition, the flow's next offset, the leader epoch of the message before
            it, and the log's end now. A position at the log's end is not checked (nothing to
            read; a cut is seen once the log grows past it), nor one in an empty log.
        wait: seconds to wait for the checks' answers (Max Metadata Wait Time).

    Returns:
        The diverged partitions and where to read them from, and those whose check did not
        answer in *wait* seconds (nor their seek succeed).

    Raises:
        ProcessException: a partition could not be sought to within *wait* seconds.
    """
    diverged: dict[Place, int] = {}
    probes: dict[Place, tuple[int, int]] = {}  # the offset sought to with the epoch
    for place, (at, epoch, high) in checks.items():
        probes[place] = (min(at, high - 1), epoch)
    if not probes:
        return Validation(diverged, frozenset())
    positions = [kafka.TopicPartition(*p, at, leader_epoch=e) for p, (at, e) in probes.items()]
    consumer.assign(positions)
    open_ = set(probes)
    deadline = time.monotonic() + wait
    try:
        for position in positions:  # librdkafka validates a seek's epoch, not an assignment's
            _seek(kafka, consumer, position, deadline, wait)
        while open_ and time.monotonic() < deadline:
            for message in consumer.consume(_CONSUME_MAX, _POLL):
                place = (message.topic(), message.partition())
                if message.error() is not None or place not in open_:
                    continue
                open_.discard(place)
                found = _diverged_at(checks[place], probes[place], message)
                if found is not None:
                    diverged[place] = found
            if open_:  # read on from the probe over control records only: not diverged there
                rest = sorted(open_)
                found_at = consumer.position([kafka.TopicPartition(*p) for p in rest])
                for place, at in zip(rest, found_at, strict=True):
                    if at.offset > probes[place][0]:
                        open_.discard(place)
                        if checks[place][0] > checks[place][2]:  # past the log's end
                            diverged[place] = checks[place][2]
    finally:
        consumer.unassign()
    return Validation(diverged, frozenset(open_))


def _diverged_at(check: tuple[int, int, int], probe: tuple[int, int], message: Any) -> int | None:
    """Where the log diverged, by the first *message* a probe got (None: it did not)."""
    at, epoch, high = check
    offset = message.offset()
    if offset < probe[0]:  # librdkafka sought to where the flow's epoch ends
        return offset
    if at <= high:
        return None
    later = message.leader_epoch()  # the log's last message: of a later epoch than the flow's?
    return offset if later is not None and later > epoch else high


def _seek(kafka: Any, consumer: Any, position: Any, deadline: float, wait: float) -> None:
    """Seek to *position*, again while its just assigned partition is not fetching yet.

    Raises:
        ProcessException: the seek still failed after the *deadline*, naming the partition.
    """
    while True:
        try:
            consumer.seek(position)
            return
        except kafka.KafkaException as ex:
            if time.monotonic() > deadline:
                key = f"{position.topic}:{position.partition}"
                msg = (
                    f"Kafka {key}'s position {position.offset} could not be checked: the "
                    f"consumer could not seek there within Max Metadata Wait Time ({wait:g} s): "
                    f"{ex.args[0].str()}"
                )
                raise ProcessException(msg) from None
            time.sleep(0.001)


def learn_epochs(
    kafka: Any, consumer: Any, ranges: Mapping[Place, tuple[int, int]], wait: float
) -> dict[Place, int | None]:
    """The leader epoch of the last message each range ``[start, end)`` delivers (module doc).

    A range whose last two offsets deliver nothing (control records) gets None: its position
    is kept without an epoch. A range that does not answer in *wait* seconds is left out: kept
    without an epoch, its position's next check would be skipped, so the listing holds it back.
    """
    if not ranges:
        return {}
    places = list(ranges)
    consumer.assign([kafka.TopicPartition(*p, max(ranges[p][0], ranges[p][1] - 2)) for p in places])
    epochs: dict[Place, int | None] = {}
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
                    epochs.setdefault(place, None)
            if open_:  # a range may end in control records: its position passed the end
                rest = sorted(open_)
                positions = consumer.position([kafka.TopicPartition(*p) for p in rest])
                for place, at in zip(rest, positions, strict=True):
                    if at.offset >= ranges[place][1]:
                        open_.discard(place)
                        epochs.setdefault(place, None)
    finally:
        consumer.unassign()
    for place in open_:  # not answered in time
        epochs.pop(place, None)
    return epochs
