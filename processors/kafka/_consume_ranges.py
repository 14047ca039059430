"""ConsumeKafka's reads: the messages of offset ranges ``[start, end)``, read together.

A task reads every range it was given at once: each range's partition assigned at its start,
so the brokers' fetches serve them together (read one after another, each range paid an
assignment and its fetches' round trips: most of a read's time on a quiet broker). A range
read whole while others are still read is paused; its messages past its end are dropped. A
range whose read fails, or that is not whole when no range made progress for the client timeout,
gets that error instead of messages (its item is then listed again). The timeout bounds each
idle period, not the whole read: a task of many large ranges on a slow broker makes progress
however long all of them take (one deadline for all timed every such task out, again and again).
Control records and aborted messages hold offsets but are never delivered, so a range is whole
when its last message is at ``end - 1`` or the consumer's position reached ``end``.

A range given an offset below its ``start`` fails (its FlowFiles are not made): the partition's
log was cut below ``start`` (an unclean leader election truncated it, or the topic was deleted
and made again), and the reader's ``auto.offset.reset`` (earliest) started at the log's start.
The offsets below the cut were read into the flow already, but those from the cut up to
``start`` are new messages written since: dropped, they were lost for good. Failed, the range
is listed again, and the listing (:mod:`._consume_epochs`) reads from where the log diverged.
A range whose payload names the leader ``epoch`` its last message had at the listing fails
too when the message read there has another: the log was cut and grew back past the range
between listing and read, and the messages from the cut up to ``start`` are new ones the
listing, validating the flow's position, reads. *warn* says each once a range. A range that
fails is paused as a finished one is, and only messages taken or ranges finished count as
progress.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from flowcore.errors import ProcessException
from flowcore.processor.kinds import WorkItem

__all__ = ["fetch_ranges"]

#: Messages asked of librdkafka at most per ``consume`` call.
_CONSUME_MAX = 10_000
#: Seconds a ``consume`` call waits for its messages (it returns early once it has them).
_CONSUME_WAIT = 0.2


def fetch_ranges(
    kafka: Any,
    consumer: Any,
    items: Sequence[WorkItem],
    timeout: float,
    warn: Callable[[str], None] | None = None,
) -> list[list[Any] | ProcessException]:
    """The messages of each item's range, or the error that ended its read (module doc).

    Args:
        kafka: the ``confluent_kafka`` module.
        consumer: an unassigned consumer; it is unassigned again on return.
        items: ConsumeKafka's work items (payload ``topic``, ``partition``, ``start``, ``end``,
            and ``epoch``, the leader epoch of its last message, when known).
        timeout: seconds the read may go without progress (Client Timeout): no message came
            and no range finished.
        warn: told once per range whose partition gave offsets below its start (module doc).
    """
    places = [_place(item) for item in items]
    if len(set(places)) < len(places):  # a partition twice: one range after the other
        return [r for item in items for r in fetch_ranges(kafka, consumer, [item], timeout, warn)]
    ranges = _Ranges(items, warn)
    partitions = [kafka.TopicPartition(*place) for place in places]
    starts = [int(item.payload["start"]) for item in items]
    consumer.assign([kafka.TopicPartition(*p, s) for p, s in zip(places, starts, strict=True)])
    deadline = time.monotonic() + timeout
    paused: list[Any] = []  # pause and resume wait for librdkafka's thread: only when needed
    try:
        while ranges.reading:
            # as many as the ranges still hold: consume waits its time out for more
            batch = consumer.consume(max(1, min(_CONSUME_MAX, ranges.left())), _CONSUME_WAIT)
            took = ranges.take(batch)
            rest = ranges.unfinished()
            if rest:  # a range may end in control records or aborted messages: no message
                positions = consumer.position([partitions[i] for i in rest])
                ends = ranges.ends
                ranges.reached(
                    [i for i, p in zip(rest, positions, strict=True) if p.offset >= ends[i]]
                )
            stopped = ranges.finished + ranges.failed
            if stopped and ranges.reading:  # others go on: stop fetching these
                done = [partitions[i] for i in stopped]
                consumer.pause(done)
                paused += done
            if took or ranges.finished:  # progress: a deadline per idle period (module doc)
                deadline = time.monotonic() + timeout
            ranges.finished.clear()
            ranges.failed.clear()
            if ranges.reading and time.monotonic() > deadline:
                ranges.time_out(timeout)
    finally:
        if paused:  # a pause outlives the assignment: the next would not read
            consumer.resume(paused)
        consumer.unassign()
    return ranges.results


class _Ranges:
    """The ranges of one read: their messages so far, and each one's result once finished."""

    def __init__(self, items: Sequence[WorkItem], warn: Callable[[str], None] | None) -> None:
        self.items = items
        self.warn = warn
        self.one_topic = len({item.payload["topic"] for item in items}) == 1
        # a message's partition alone names its range when the ranges share one topic
        self.index = {
            item.payload["partition"] if self.one_topic else _place(item): i
            for i, item in enumerate(items)
        }
        self.starts = [int(item.payload["start"]) for item in items]
        self.ends = [int(item.payload["end"]) for item in items]
        self.nexts = list(self.starts)  # each range's least offset still to take
        self.read: list[list[Any]] = [[] for _ in items]
        self.results: list[Any] = [None] * len(items)
        self.reading = set(range(len(items)))
        self.finished: list[int] = []  # finished since the last pause
        self.failed: list[int] = []  # failed since the last pause

    def left(self) -> int:
        """Offsets the unfinished ranges still span (at most the messages to come)."""
        total = 0
        for i in self.reading:
            read = self.read[i]
            after = read[-1].offset() + 1 if read else self.starts[i]
            total += self.ends[i] - after
        return total

    def take(self, batch: Sequence[Any]) -> int:
        """Give each message of *batch* to its range; an error ends its range's read.

        Returns:
            The messages taken (a message already taken, or of a range no longer read, is not).
        """
        if not batch:
            return 0
        if list(map(type(batch[0]).error, batch)).count(None) < len(batch):
            return self._take_failing(batch)
        if len(self.items) > 1:
            return self._take_each(batch)
        if 0 not in self.reading:
            return 0
        # one range: every message is its; a batch of offsets ascending one by one from the
        # next to take (the common case) is told by its ends, any other one message by message
        # (a reset to the log's start mid-read gives one like [5, 6, 0, 1, 2])
        first = batch[0].offset()
        last = batch[-1].offset()
        if first >= self.nexts[0] and last - first == len(batch) - 1:
            self.read[0].extend(batch)
            self.nexts[0] = last + 1
            return len(batch)
        return self._take_each(batch)

    def _take_each(self, batch: Sequence[Any]) -> int:
        """:meth:`take` message by message (none an error): one below its start fails a range."""
        read = self.read
        nexts = self.nexts
        reading = self.reading
        before = sum(map(len, read))
        for message in batch:
            at = self._range_of(message)
            if at is None or at not in reading:
                continue
            offset = message.offset()
            if offset >= nexts[at]:
                read[at].append(message)
                nexts[at] = offset + 1
            elif offset < self.starts[at]:
                self._below_start(at, offset)
            # else taken already (a fetch given again): not twice
        return sum(map(len, read)) - before

    def _take_failing(self, batch: Sequence[Any]) -> int:
        """:meth:`_take_each` with errors: a range's fails it, one of no range every range."""
        reading = self.reading
        taken = 0
        for message in batch:
            failed = message.error()
            if failed is None:
                taken += self._take_each([message])
                continue
            at = self._range_of(message)
            for i in sorted(reading) if at is None else [at] if at in reading else ():
                topic, partition = _place(self.items[i])
                text = f"Kafka read of {topic}:{partition} failed: {failed.str()}"
                self._fail(i, ProcessException(text))
        return taken

    def _fail(self, i: int, error: ProcessException) -> None:
        """Range *i* ends with *error*, not its messages (it is listed again)."""
        self.results[i] = error
        self.reading.discard(i)
        self.failed.append(i)

    def _below_start(self, i: int, offset: int) -> None:
        """Range *i* was given *offset*, below its start: it fails, said once (module doc)."""
        topic, partition = _place(self.items[i])
        start, end = self.starts[i], self.ends[i]
        self._fail(
            i,
            ProcessException(
                f"Kafka read of {topic}:{partition} offsets {start}-{end} failed: it gave offset "
                f"{offset}, below the range's start: its log was cut below {start} (truncated by "
                f"an unclean leader election, or the topic made again); the range is listed "
                f"again, from the log's end when that is below {start}"
            ),
        )
        if self.warn is not None:
            self.warn(
                f"Kafka {topic}:{partition} gave offset {offset} for the range {start}-{end}: "
                f"its log ended below {start} (truncated by an unclean leader election, or the "
                f"topic made again); offsets below the cut were read into the flow already, "
                f"those from it on are new: the range fails and is listed again, to read them"
            )

    def _range_of(self, message: Any) -> int | None:
        if self.one_topic:
            return self.index.get(message.partition())
        return self.index.get((message.topic(), message.partition()))

    def unfinished(self) -> list[int]:
        """The ranges still read, each finished first when its last message came."""
        done = [
            i
            for i in self.reading
            if self.read[i] and self.read[i][-1].offset() >= self.ends[i] - 1
        ]
        self.reached(done)
        return sorted(self.reading)

    def reached(self, done: Sequence[int]) -> None:
        """Finish ranges *done*: their messages, without any past the range's end.

        A range whose last message's leader epoch is not the one the listing saw there fails
        (module doc): the log was cut and written again since the listing.
        """
        for i in done:
            messages = self.read[i]
            while messages and messages[-1].offset() >= self.ends[i]:
                messages.pop()
            expected = self.items[i].payload.get("epoch")
            last = messages[-1] if messages else None
            if expected is not None and last is not None and last.offset() >= self.ends[i] - 2:
                found = last.leader_epoch()
                if found is not None and found != expected:
                    self._rewritten(i, last.offset(), expected, found)
                    continue
            self.results[i] = messages
            self.reading.discard(i)
            self.finished.append(i)

    def _rewritten(self, i: int, offset: int, expected: int, found: int) -> None:
        """Range *i*'s last message is not the one listed: it fails, said once (module doc)."""
        topic, partition = _place(self.items[i])
        start, end = self.starts[i], self.ends[i]
        text = (
            f"Kafka read of {topic}:{partition} offsets {start}-{end} failed: offset {offset} "
            f"has leader epoch {found}, where the listing saw {expected}: the log was cut and "
            f"written again since (an unclean leader election); the range is listed again, "
            f"from where the log diverged"
        )
        self._fail(i, ProcessException(text))
        if self.warn is not None:
            self.warn(text)

    def time_out(self, timeout: float) -> None:
        """The ranges still read fail: not whole within *timeout* seconds."""
        for i in sorted(self.reading):
            payload = self.items[i].payload
            self.results[i] = ProcessException(
                f"Kafka read of {payload['topic']}:{payload['partition']} offsets "
                f"{payload['start']}-{self.ends[i]} timed out after {timeout:g} s "
                f"without progress (no message came and no range finished)"
            )
        self.reading.clear()


def _place(item: WorkItem) -> tuple[str, int]:
    """A work item's topic and partition."""
    return item.payload["topic"], item.payload["partition"]
