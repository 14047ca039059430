"""PublishKafka's produce loop: a FlowFile's messages, and how they reach librdkafka.

Kept apart from the processor (:mod:`processors.kafka.publish_kafka`), which decides what each
FlowFile publishes and routes it; this module walks the messages into ``produce`` (the hot path
of every strategy) and waits out a full queue.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs

from processors.kafka._publish_records import MessageColumns

__all__ = ["Order", "produce_columns", "produce_one", "report_delivery", "split_values"]


@attrs.frozen
class Order:
    """One FlowFile's messages to produce.

    Its topic, partition, key and headers, and values: a list of message values, or a callable
    yielding record messages batch by batch, column-wise (a column a batch gives overrides the
    order's for each of its messages).
    """

    topic: str
    partition: int | None
    key: bytes | None
    headers: list[tuple[str, bytes]] | None
    values: list[bytes | None] | Callable[[], Iterator[MessageColumns]]

    def messages(self) -> Iterable[MessageColumns]:
        """The messages column-wise, a batch at a time, made as they are produced."""
        if callable(self.values):
            return self.values()
        return [MessageColumns(self.values, None, None, None, None)]


def report_delivery(errors: dict[int, str], row: int, error: Any, message: Any) -> None:
    """A delivery report: a refused message fails its FlowFile (row *row*)."""
    if error is not None:
        errors.setdefault(row, f"Kafka rejected a message for {message.topic()!r}: {error.str()}")


def produce_columns(
    produce: Any,
    poll: Any,
    order: Order,
    columns: MessageColumns,
    delivered: Any,
    *,
    counted: Callable[[int], None],
) -> None:
    """Produce one batch of *order*'s messages; *counted(n)* is told how many were produced.

    The hot path of every strategy: the batch's lists are walked with the order's values for
    the columns the batch does not give, one ``produce`` and ``poll(0)`` a message and no
    object made per message. Headers are passed only when there are some; a partition of None
    is librdkafka's own (-1: its partitioner). A full queue is waited out by :func:`produce_one`.
    """
    values, keys, headers, topics, partitions = columns
    count = len(values)
    default = -1 if order.partition is None else order.partition
    key_of = itertools.repeat(order.key, count) if keys is None else keys
    sent = 0
    try:
        if headers is None and topics is None and partitions is None:
            topic, fixed = order.topic, order.headers or None
            for value, key in zip(values, key_of, strict=True):
                try:
                    if fixed is None:
                        produce(topic, value, key, default, delivered)
                    else:
                        produce(topic, value, key, default, delivered, headers=fixed)
                    poll(0)
                except BufferError:
                    produce_one(
                        produce, poll, topic, value, _options(key, default, delivered, fixed)
                    )
                sent += 1
            return
        none = itertools.repeat(None, count)
        rows = zip(
            values,
            key_of,
            itertools.repeat(order.headers, count) if headers is None else headers,
            none if topics is None else topics,
            none if partitions is None else partitions,
            strict=True,
        )
        for value, key, pairs, topic, partition in rows:
            where = default if partition is None else partition
            options = _options(key, where, delivered, pairs or None)
            produce_one(produce, poll, topic or order.topic, value, options)
            sent += 1
    finally:
        counted(sent)


def _options(key: bytes | None, partition: int, delivered: Any, headers: Any) -> dict[str, Any]:
    """``produce``'s keyword arguments for one message (headers only when it has some)."""
    options = {"key": key, "partition": partition, "on_delivery": delivered}
    if headers:
        options["headers"] = headers
    return options


def produce_one(produce: Any, poll: Any, topic: str, value: bytes | None, options: Any) -> None:
    """``produce``, waiting for room when librdkafka's queue is full (then ``poll(0)``).

    A full queue (BufferError) is waited out by serving delivery reports, up to about 30
    seconds; then the BufferError stands (the FlowFile fails).
    """
    for _ in range(300):
        try:
            produce(topic, value, **options)
            break
        except BufferError:
            poll(0.1)
    else:
        produce(topic, value, **options)
    poll(0)


def split_values(content: bytes, demarcator: str | None, tombstone: bool) -> list[bytes | None]:
    """A FlowFile's message values: split on the demarcator, else the content.

    An empty content with ``kafka.tombstone`` true is a tombstone, a null value.
    """
    if demarcator:
        return [v for v in content.split(demarcator.encode()) if v]
    if not content and tombstone:
        return [None]
    return [content]
