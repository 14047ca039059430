"""ConsumeKafka's messages as FlowFiles: their attributes, columns and demarcated runs.

What :class:`processors.kafka.consume_kafka.ConsumeKafka` makes of a range's messages once
read: NiFi 2's attributes of a message (``kafka.topic``, ``kafka.offset``, ``kafka.key`` as Key
Attribute Encoding says, selected headers), the same as shared values and columns of a batch,
and DEMARCATOR's FlowFile per run of messages. *configured* is the processor's configured
values: a processor with its own brokers came from a NiFi 1.x flow (:func:`key_encoding`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from flowcore.flowfile_batch import BatchMaker, FlowFileBatch
from flowcore.flowfile_batch.columns import Column, IntColumn, column_of
from flowcore.processor.context import ProcessContext
from flowcore.session.process_session import ProcessSession
from processors.kafka._consume_properties import (
    COMMIT_OFFSETS,
    HEADER_ENCODING,
    HEADER_NAME_PATTERN,
    KEY_ATTRIBUTE_ENCODING,
    MESSAGE_DEMARCATOR,
    SEPARATE_BY_KEY,
    SUCCESS,
)
from processors.kafka.connection_service import KAFKA_CONNECTION_SERVICE

__all__ = [
    "attribute_columns",
    "committed_attribute",
    "demarcated_batch",
    "demarcated_runs",
    "groups_messages",
    "header_attributes",
    "key_encoding",
    "message_attributes",
]

_second = itemgetter(1)  # a message's timestamp() is (type, milliseconds)


def groups_messages(context: ProcessContext) -> bool:
    """Whether DEMARCATOR splits a range by key (Separate By Key) or by header values."""
    by_key = context.get_property(SEPARATE_BY_KEY).as_boolean()
    return bool(by_key or context.get_property(HEADER_NAME_PATTERN).value)


def demarcated_batch(
    context: ProcessContext, maker: BatchMaker, messages: Sequence[Any]
) -> FlowFileBatch:
    """A range's messages joined by the demarcator: a batch of one FlowFile.

    Its attributes are those :func:`demarcated_runs` gives a run with no key or header.
    """
    demarcator = (context.get_property(MESSAGE_DEMARCATOR).value or "").encode()
    value = type(messages[0]).value
    content = demarcator.join(v or b"" for v in map(value, messages))
    claim = maker.write(content)
    sizes = np.array([len(content)], np.int64)
    return maker.create_spans(claim, sizes, _demarcated_attributes(messages))


def attribute_columns(
    context: ProcessContext,
    configured: Mapping[str, str],
    messages: Sequence[Any],
    values: Sequence[bytes | None],
) -> tuple[dict[str, str], dict[str, Column]]:
    """A range's attributes (``message_attributes`` of each message) as shared values and columns.

    Topic and partition are one value for a range; offsets and timestamps are integer
    columns made at once; keys, tombstones and selected headers are columns only when
    some message has them.
    """
    first = messages[0]
    shared = {
        "kafka.topic": first.topic(),
        "kafka.partition": str(first.partition()),
        "kafka.consumer.offsets.committed": committed_attribute(context),
    }
    count = len(messages)
    message = type(first)  # its methods, mapped over the range: no Python frame a message
    offsets = np.fromiter(map(message.offset, messages), np.int64, count)
    stamps = np.fromiter(map(_second, map(message.timestamp, messages)), np.int64, count)
    found_headers = list(map(message.headers, messages))
    if found_headers.count(None) == count:
        headers = np.zeros(count, np.int64)
    else:
        headers = np.fromiter((len(h or ()) for h in found_headers), np.int64, count)
    columns: dict[str, Column] = {}
    for name, numbers in (
        ("kafka.offset", offsets),
        ("kafka.timestamp", stamps),
        ("kafka.header.count", headers),
    ):
        if (numbers == numbers[0]).all():  # one value for all: shared, as a session's
            shared[name] = str(int(numbers[0]))
        else:
            columns[name] = IntColumn(numbers)
    if None in values:
        columns["kafka.tombstone"] = column_of(["true" if v is None else None for v in values])
    raw_keys = list(map(message.key, messages))
    encoding = key_encoding(context, configured)
    if raw_keys.count(None) < count and encoding != "do-not-add":
        columns["kafka.key"] = column_of([_key_attribute(encoding, k) for k in raw_keys])
    if context.get_property(HEADER_NAME_PATTERN).value:
        rows = [header_attributes(context, m) for m in messages]
        for name in dict.fromkeys(n for row in rows for n in row):
            columns[name] = column_of([row.get(name) for row in rows])
    for name, column in list(columns.items()):  # one value for all: shared, as a session's
        if isinstance(column, IntColumn):
            continue
        found = column.values()
        if found[0] is not None and found.count(found[0]) == count:
            shared[name] = found[0]
            del columns[name]
    return shared, columns


def message_attributes(
    context: ProcessContext, configured: Mapping[str, str], message: Any
) -> dict[str, str]:
    """A message's FlowFile attributes (NiFi 2's ``kafka.*``, then the selected headers)."""
    attributes = {
        "kafka.topic": message.topic(),
        "kafka.partition": str(message.partition()),
        "kafka.offset": str(message.offset()),
        "kafka.consumer.offsets.committed": committed_attribute(context),
        "kafka.timestamp": str(message.timestamp()[1]),
        "kafka.header.count": str(len(message.headers() or ())),
    }
    if message.value() is None:
        attributes["kafka.tombstone"] = "true"
    key = _key_attribute(key_encoding(context, configured), message.key())
    if key is not None:
        attributes["kafka.key"] = key
    attributes.update(header_attributes(context, message))
    return attributes


def committed_attribute(context: ProcessContext) -> str:
    """``kafka.consumer.offsets.committed``: Commit Offsets, as NiFi 2's KafkaUtils writes it.

    The flow's own offsets are committed with its FlowFiles either way (module doc).
    """
    return "true" if context.get_property(COMMIT_OFFSETS).as_boolean() else "false"


def key_encoding(context: ProcessContext, configured: Mapping[str, str]) -> str | None:
    """Key Attribute Encoding; ``HEX`` (upper case) for a NiFi 1.x flow's processor.

    NiFi 2 writes hex keys with ``HexFormat`` (lower case); NiFi 1.x's ConsumeKafka_2_6
    with ``DatatypeConverter.printHexBinary`` (upper case). A processor with its own
    brokers and no Kafka Connection Service came from a 1.x flow.
    """
    encoding = context.get_property(KEY_ATTRIBUTE_ENCODING).value
    legacy = not configured.get(KAFKA_CONNECTION_SERVICE.name) and configured.get(
        "bootstrap.servers"
    )
    return "HEX" if encoding == "hex" and legacy else encoding


def header_attributes(context: ProcessContext, message: Any) -> dict[str, str]:
    """The message's headers Header Name Pattern selects, decoded with Header Encoding."""
    pattern = context.get_property(HEADER_NAME_PATTERN).value
    if not pattern or not message.headers():
        return {}
    encoding = context.get_property(HEADER_ENCODING).value or "UTF-8"
    regex = re.compile(pattern)
    return {
        name: (value or b"").decode(encoding, "replace")
        for name, value in message.headers()
        if regex.fullmatch(name)
    }


def demarcated_runs(
    context: ProcessContext,
    configured: Mapping[str, str],
    session: ProcessSession,
    messages: list[Any],
    transit: str,
) -> None:
    """One FlowFile per run of messages (per key with Separate By Key, per header values)."""
    demarcator = (context.get_property(MESSAGE_DEMARCATOR).value or "").encode()
    by_key = context.get_property(SEPARATE_BY_KEY).as_boolean()
    groups: dict[tuple[Any, ...], list[Any]] = {}
    if not by_key and not context.get_property(HEADER_NAME_PATTERN).value:
        groups[None, ()] = list(messages)  # one run: no key or header to tell apart
    for message in messages if not groups else ():
        headers = tuple(sorted(header_attributes(context, message).items()))
        groups.setdefault((message.key() if by_key else None, headers), []).append(message)
    for (key, headers), group in groups.items():
        if not group:
            continue  # a range of control records or aborted messages only
        flowfile = session.create()
        flowfile = session.write(flowfile, demarcator.join(m.value() or b"" for m in group))
        attributes = {**_demarcated_attributes(group), **dict(headers)}
        encoded = _key_attribute(key_encoding(context, configured), key)
        if by_key and encoded is not None:
            attributes["kafka.key"] = encoded
        flowfile = session.put_all_attributes(flowfile, attributes)
        session.provenance.receive(flowfile, transit)
        session.transfer(flowfile, SUCCESS)


def _demarcated_attributes(group: Sequence[Any]) -> dict[str, str]:
    """A demarcated FlowFile's attributes from its run of messages (NiFi's)."""
    first = group[0]
    return {
        "kafka.topic": first.topic(),
        "kafka.partition": str(first.partition()),
        "kafka.offset": str(first.offset()),
        "kafka.max.offset": str(group[-1].offset()),
        "kafka.timestamp": str(first.timestamp()[1]),
        "kafka.count": str(len(group)),
    }


def _key_attribute(encoding: str | None, key: bytes | None) -> str | None:
    """The kafka.key attribute as Key Attribute Encoding says (None: not added).

    ``hex`` is lower-case hex (NiFi 2), ``HEX`` upper case (NiFi 1.x, see :func:`key_encoding`).
    """
    if key is None or encoding == "do-not-add":
        return None
    if encoding == "hex":
        return key.hex()
    if encoding == "HEX":
        return key.hex().upper()
    return key.decode("utf-8", "replace")
