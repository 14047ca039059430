"""PublishKafka: FlowFile contents as Kafka messages, with an idempotent producer.

NiFi 2's ``org.apache.nifi.kafka.processors.PublishKafka`` (NiFi 1.x ``PublishKafka_2_6`` names
accepted). Each trigger takes up to :data:`BATCH` FlowFiles, produces their messages, waits for
every acknowledgement (bounded by the service's Acknowledgment Wait Time) and only then routes
them: a FlowFile reaches ``success`` once Kafka holds all of its messages.

Guarantee: at-least-once. The producer is idempotent (no duplicates from librdkafka's own
retries), and with Transactions Enabled a trigger's messages are one Kafka transaction,
committed before the session commits, so a failure part way leaves nothing visible to
``read_committed`` consumers. A librdkafka transaction cannot outlive its producer (a new
producer with the same ``transactional.id`` aborts it), so it cannot wait for the flow's WAL
commit in another process: a crash between the Kafka commit and the WAL commit sends the
FlowFiles again (documented in docs/kafka.md).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from flowcore.errors import ConfigurationError
from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_column
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import column_of
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.records.record_io import RECORD_FAILURES
from flowcore.session.batch_context import BatchContext
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    ValidationResult,
)
from processors.kafka._publish_produce import (
    Order,
    produce_columns,
    produce_one,
    report_delivery,
    split_values,
)
from processors.kafka._publish_properties import (
    ATTRIBUTE_HEADER_PATTERN,
    BATCH,
    COMPRESSION_TYPE,
    DELIVERY_GUARANTEE,
    EXPRESSION_PARTITIONER,
    FAILURE_STRATEGY,
    HEADER_ENCODING,
    KAFKA_KEY,
    KEY_ATTRIBUTE_ENCODING,
    MAX_REQUEST_SIZE,
    MESSAGE_DEMARCATOR,
    PARTITION,
    PARTITIONER_CLASS,
    PARTITIONERS_1X,
    ROUND_ROBIN,
    TOPIC_NAME,
    TRANSACTIONAL_ID_PREFIX,
    TRANSACTIONS_ENABLED,
)
from processors.kafka._publish_records import (
    MESSAGE_KEY_FIELD,
    PUBLISH_STRATEGY,
    RECORD_KEY_WRITER,
    RECORD_METADATA_STRATEGY,
    RECORD_READER,
    RECORD_WRITER,
    MessageColumns,
    record_messages,
)
from processors.kafka.connection_service import (
    KAFKA_CONNECTION_SERVICE,
    LEGACY_CONNECTION,
    Kafka3ConnectionService,
    connection_for,
    import_kafka,
    legacy_problems,
    service_properties,
)

__all__ = ["PublishKafka"]

SUCCESS = Relationship("success", "FlowFiles for which all content was sent to Kafka.")
FAILURE = Relationship(
    "failure", "Any FlowFile that cannot be sent to Kafka will be routed to this Relationship"
)


class PublishKafka(Processor):
    """Publishes FlowFile contents to Kafka with an idempotent producer (at-least-once)."""

    property_descriptors: ClassVar[tuple[PropertyDescriptor, ...]] = (
        KAFKA_CONNECTION_SERVICE,
        TOPIC_NAME,
        FAILURE_STRATEGY,
        DELIVERY_GUARANTEE,
        COMPRESSION_TYPE,
        MAX_REQUEST_SIZE,
        TRANSACTIONS_ENABLED,
        TRANSACTIONAL_ID_PREFIX,
        PARTITIONER_CLASS,
        PARTITION,
        MESSAGE_DEMARCATOR,
        RECORD_READER,
        RECORD_WRITER,
        PUBLISH_STRATEGY,
        MESSAGE_KEY_FIELD,
        ATTRIBUTE_HEADER_PATTERN,
        HEADER_ENCODING,
        KAFKA_KEY,
        KEY_ATTRIBUTE_ENCODING,
        RECORD_KEY_WRITER,
        RECORD_METADATA_STRATEGY,
        *LEGACY_CONNECTION,
    )
    properties_elsewhere: ClassVar[Mapping[str, str]] = service_properties(property_descriptors)
    relationships: ClassVar[tuple[Relationship, ...]] = (SUCCESS, FAILURE)
    tags: ClassVar[tuple[str, ...]] = (
        "Apache",
        "Kafka",
        "Record",
        "csv",
        "json",
        "avro",
        "logs",
        "Put",
        "Send",
        "Message",
        "PubSub",
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """A Kafka Connection Service, or a NiFi 1.x flow's Kafka Brokers."""
        return legacy_problems(values)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the live producer (Spark ships the processor)."""
        state = dict(self.__dict__)
        state.pop("_producer", None)
        state.pop("_legacy_service", None)
        return state

    def on_stopped(self, context: ProcessContext) -> None:
        """Flush and drop the producer this copy opened."""
        del context
        producer = self.__dict__.pop("_producer", None)
        if producer is not None:
            producer.flush(5)

    def _producer_for(self, context: ProcessContext, service: Kafka3ConnectionService) -> Any:
        producer = getattr(self, "_producer", None)
        if producer is not None:
            return producer
        kafka = import_kafka()
        value = context.get_property
        acks = value(DELIVERY_GUARANTEE).value or "all"
        transactional = value(TRANSACTIONS_ENABLED).as_boolean()
        more: dict[str, Any] = {
            "acks": acks,
            "enable.idempotence": acks == "all",
            "compression.type": value(COMPRESSION_TYPE).value or "none",
            "message.max.bytes": int(value(MAX_REQUEST_SIZE).as_data_size("B") or 1 << 20),
            "message.timeout.ms": int((service.ack_wait + service.metadata_wait) * 1000),
            "partitioner": "murmur2_random",  # Kafka's Java DefaultPartitioner for keys
        }
        if transactional:
            if acks != "all":
                msg = "PublishKafka: Transactions Enabled needs Delivery Guarantee 'all'"
                raise ConfigurationError(msg)
            prefix = value(TRANSACTIONAL_ID_PREFIX).evaluate_attribute_expressions({}).value
            more["transactional.id"] = f"{prefix or ''}{uuid.uuid4()}"
            more["transaction.timeout.ms"] = 60_000
        producer = kafka.Producer(service.client_config(**more))
        if transactional:
            try:
                producer.init_transactions(service.client_timeout)
            except kafka.KafkaException as ex:
                msg = f"Kafka transactions could not start: {ex.args[0].str()}"
                raise ConfigurationError(msg) from None
        self._producer = producer
        self._round_robin = itertools.count()
        return producer

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Publish up to BATCH FlowFiles, wait for Kafka's acknowledgements, route each.

        FlowFiles whose batch form already published them (an outcome carried from
        :meth:`transform_batch`) are routed as it decided, never sent again.
        """
        flowfiles = session.get(BATCH)
        if not flowfiles:
            return
        service = connection_for(self, context, session.controller_service)
        outcomes: dict[int, _Outcome] = {}
        fresh = []
        for index, flowfile in enumerate(flowfiles):
            carried = context.carried_outcome(flowfile)
            if isinstance(carried, _Outcome):
                outcomes[index] = carried
            else:
                fresh.append(index)
        if fresh:
            orders = (
                (index, lambda i=index: self._order(context, session, flowfiles[i]))
                for index in fresh
            )
            outcomes.update(self._publish(context, service, orders))
        failed = [i for i, o in outcomes.items() if o.error is not None]
        rollback = context.get_property(FAILURE_STRATEGY).value == "Rollback"
        if failed and rollback:
            session.rollback(penalize=True)
            context.yield_()
            return
        base = service.transit_uri_base
        for index, flowfile in enumerate(flowfiles):
            outcome = outcomes[index]
            if outcome.error is not None:
                context.logger.error(f"Failed to send {flowfile} to Kafka: {outcome.error}")
                session.transfer(session.penalize(flowfile), FAILURE)
                continue
            sent = session.put_attribute(flowfile, "msg.count", str(outcome.count))
            session.provenance.send(
                sent, f"{base}/{outcome.topic}", duration_ms=outcome.duration_ms
            )
            session.transfer(sent, SUCCESS)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> tuple[str, FlowFileBatch] | None:
        """Publish a whole batch: one produce loop, one flush, SEND events as one run.

        Each FlowFile's message is made from the batch's columns (Topic Name, Kafka Key and
        Partition evaluated over them) and its content read from windows of its claim, so no
        FlowFile object or session is made. When every message is acknowledged the batch goes
        to ``success`` whole with ``msg.count``; otherwise the outcomes (sent or failed, per
        FlowFile) are carried to :meth:`on_trigger`, which routes them one by one (penalizing
        the failed) without sending anything again. Record Reader configurations decline
        (their FlowFiles hold many records each: one by one costs little per message).
        """
        if _record_mode(context):
            return None
        service = connection_for(self, context, context.controller_service)
        count = batch.count
        topics = _column_values(context, batch, TOPIC_NAME)
        keys = self._batch_keys(context, batch)
        headers = self._batch_headers(context, batch)
        partitions = self._batch_partitions(context, batch, topics)
        demarcators = (
            _column_values(context, batch, MESSAGE_DEMARCATOR)
            if context.get_property(MESSAGE_DEMARCATOR).value
            else None
        )
        tombstones = batch.column("kafka.tombstone")
        tombstone = tombstones.values() if tombstones is not None else None
        contents = context.contents(batch)
        sent_counts = [0] * count

        def produce_all(producer: Any, errors: dict[int, str]) -> range:
            kafka = import_kafka()
            produce, poll = producer.produce, producer.poll
            delivered = functools.partial(report_delivery, errors)
            for row in range(count):
                try:
                    content = b"".join(next(contents))
                    values = split_values(
                        content,
                        demarcators[row] if demarcators is not None else None,
                        tombstone is not None and tombstone[row] == "true",
                    )
                    options: dict[str, Any] = {"on_delivery": functools.partial(delivered, row)}
                    if keys[row] is not None:
                        options["key"] = keys[row]
                    if headers[row]:
                        options["headers"] = headers[row]
                    if partitions[row] is not None:
                        options["partition"] = partitions[row]
                    topic = topics[row] or ""
                    for value in values:
                        produce_one(produce, poll, topic, value, options)
                        sent_counts[row] += 1
                except (ValueError, BufferError, kafka.KafkaException) as ex:
                    errors.setdefault(row, f"Kafka publish failed: {_cause(ex)}")
            return range(count)

        errors, elapsed = self._send(context, service, produce_all)
        if errors:
            outcomes = [
                _Outcome(topics[row] or "", sent_counts[row], elapsed, errors.get(row))
                for row in range(count)
            ]
            context.carry_outcomes(batch.flowfiles(), outcomes)
            return None
        if len(set(sent_counts)) == 1:
            done = batch.with_attributes({"msg.count": str(sent_counts[0])})
        else:
            done = batch.with_columns({"msg.count": column_of([str(n) for n in sent_counts])})
        base = service.transit_uri_base
        uris = [f"{base}/{topic or ''}" for topic in topics]
        context.report_send(batch, uris[0] if len(set(uris)) == 1 else uris, as_sent=done)
        return SUCCESS.name, done

    def _publish(
        self,
        context: ProcessContext,
        service: Kafka3ConnectionService,
        orders: Iterable[tuple[int, Callable[[], Order]]],
    ) -> dict[int, _Outcome]:
        """Produce every order's messages, flush once, end the transaction: each outcome.

        An order is made when its turn comes (its content read then), so one FlowFile's
        content is held at a time; a record FlowFile's messages are produced as they are read.
        """
        counts: dict[int, int] = {}
        topics: dict[int, str] = {}

        def produce_all(producer: Any, errors: dict[int, str]) -> Iterable[int]:
            self._produce_orders(producer, orders, errors, counts, topics)
            return counts

        errors, elapsed = self._send(context, service, produce_all)
        return {
            index: _Outcome(topics.get(index, ""), counts[index], elapsed, errors.get(index))
            for index in counts
        }

    def _send(
        self,
        context: ProcessContext,
        service: Kafka3ConnectionService,
        produce_all: Callable[[Any, dict[int, str]], Iterable[int]],
    ) -> tuple[dict[int, str], int]:
        """One trigger's publishing: the transaction, *produce_all*, one flush; errors by index.

        *produce_all(producer, errors)* produces and returns the indexes it produced for;
        delivery failures and refusals land in *errors*. Unacknowledged messages after the
        flush fail every index; with Transactions Enabled any failure aborts them all.
        Returns the errors and the milliseconds it took.
        """
        kafka = import_kafka()
        producer = self._producer_for(context, service)
        transactional = context.get_property(TRANSACTIONS_ENABLED).as_boolean()
        errors: dict[int, str] = {}
        started = time.monotonic()
        if transactional:
            producer.begin_transaction()
        try:
            indexes = list(produce_all(producer, errors))
        except BaseException:  # an unexpected failure: nothing of the trigger stays in Kafka
            if transactional:
                with contextlib.suppress(kafka.KafkaException):
                    producer.abort_transaction(service.client_timeout)
            raise
        left = producer.flush(service.ack_wait + service.metadata_wait)
        if left:
            for index in indexes:
                errors.setdefault(index, f"Kafka did not acknowledge {left} message(s) in time")
        if transactional:
            errors = self._end_transaction(producer, service, errors, indexes)
        return errors, int((time.monotonic() - started) * 1000)

    def _produce_orders(
        self,
        producer: Any,
        orders: Iterable[tuple[int, Callable[[], Order]]],
        errors: dict[int, str],
        counts: dict[int, int],
        topics: dict[int, str],
    ) -> None:
        """Produce each order's messages; a FlowFile's failure is kept in *errors*."""
        kafka = import_kafka()
        produce, poll = producer.produce, producer.poll
        for index, make in orders:
            counts[index] = 0
            delivered = functools.partial(report_delivery, errors, index)
            counted = functools.partial(_count, counts, index)
            try:
                order = make()
                topics[index] = order.topic
                for columns in order.messages():
                    produce_columns(produce, poll, order, columns, delivered, counted=counted)
            except (ValueError, BufferError, kafka.KafkaException, *RECORD_FAILURES) as ex:
                errors.setdefault(index, f"Kafka publish failed: {_cause(ex)}")

    def _end_transaction(
        self,
        producer: Any,
        service: Kafka3ConnectionService,
        errors: dict[int, str],
        indexes: Sequence[int],
    ) -> dict[int, str]:
        kafka = import_kafka()
        try:
            if errors:
                producer.abort_transaction(service.client_timeout)
                cause = next(iter(errors.values()))
                return {i: errors.get(i, f"transaction rolled back: {cause}") for i in indexes}
            producer.commit_transaction(service.client_timeout)
        except kafka.KafkaException as ex:
            self.__dict__.pop("_producer", None)  # a fenced or broken producer: start anew
            return {i: f"Kafka transaction failed: {_cause(ex)}" for i in indexes}
        return errors

    def _order(self, context: ProcessContext, session: ProcessSession, flowfile: Any) -> Order:
        """One FlowFile's messages: its content whole, demarcated, or its records."""
        attributes = flowfile.attributes
        topic = _evaluated(context, TOPIC_NAME, flowfile)
        partition = self._partition(context, self._producer, flowfile, topic)
        if _record_mode(context):
            return self._record_order(context, session, flowfile, topic, partition)
        key = self._key(context, flowfile)
        headers = self._headers(context, attributes)
        demarcator = _evaluated(context, MESSAGE_DEMARCATOR, flowfile)
        content = session.read_bytes(flowfile)
        tombstone = attributes.get("kafka.tombstone") == "true"
        return Order(topic, partition, key, headers, split_values(content, demarcator, tombstone))

    def _record_order(
        self,
        context: ProcessContext,
        session: ProcessSession,
        flowfile: Any,
        topic: str,
        partition: int | None,
    ) -> Order:
        """A record FlowFile's messages, read and written as they are produced."""

        def service(descriptor: PropertyDescriptor) -> Any:
            name = context.get_property(descriptor).value
            return session.controller_service(name) if name else None

        writer = service(RECORD_WRITER)
        wrapper = context.get_property(PUBLISH_STRATEGY).value == "USE_WRAPPER"
        key_field = (
            None
            if wrapper
            else context.get_property(MESSAGE_KEY_FIELD)
            .evaluate_attribute_expressions(flowfile)
            .value
        )
        key = None if wrapper or key_field else self._key(context, flowfile)
        headers = None if wrapper else self._headers(context, flowfile.attributes)
        from_record = context.get_property(RECORD_METADATA_STRATEGY).value == "FROM_RECORD"

        def messages() -> Iterator[MessageColumns]:
            with session.read(flowfile) as raw:
                yield from record_messages(
                    flowfile.attributes,
                    raw,
                    reader=service(RECORD_READER),
                    writer=writer,
                    key_writer=service(RECORD_KEY_WRITER),
                    wrapper=wrapper,
                    key_field=key_field,
                    from_record=from_record,
                )

        return Order(topic, partition, key, headers, messages)

    def _batch_keys(self, context: ProcessContext, batch: FlowFileBatch) -> list[bytes | None]:
        """Each FlowFile's key: Kafka Key evaluated over the batch, else ``kafka.key``."""
        given = context.get_property(KAFKA_KEY)
        if given.is_set():
            texts: list[str | None] = _column_values(context, batch, KAFKA_KEY)
        else:
            column = batch.column("kafka.key")
            texts = column.values() if column is not None else [None] * batch.count
        hexed = context.get_property(KEY_ATTRIBUTE_ENCODING).value == "hex"
        return [None if t is None else (bytes.fromhex(t) if hexed else t.encode()) for t in texts]

    def _batch_headers(
        self, context: ProcessContext, batch: FlowFileBatch
    ) -> list[list[tuple[str, bytes]]]:
        """Each FlowFile's headers: its attributes the header pattern matches."""
        pattern = context.get_property(ATTRIBUTE_HEADER_PATTERN).value
        if not pattern:
            return [[]] * batch.count
        encoding = context.get_property(HEADER_ENCODING).value or "UTF-8"
        regex = re.compile(pattern)
        names = dict.fromkeys([*batch.attributes, *batch.columns, *batch.uuid_named, "uuid"])
        matched = [n for n in names if regex.fullmatch(n)]
        columns = [(n, batch.column(n)) for n in matched]
        values = [(n, c.values()) for n, c in columns if c is not None]
        return [
            [(n, v[row].encode(encoding)) for n, v in values if v[row] is not None]
            for row in range(batch.count)
        ]

    def _batch_partitions(
        self, context: ProcessContext, batch: FlowFileBatch, topics: Sequence[str | None]
    ) -> list[int | None]:
        """Each FlowFile's partition as Partitioner Class says (None: librdkafka's)."""
        strategy = context.get_property(PARTITIONER_CLASS).value
        strategy = PARTITIONERS_1X.get(strategy or "", strategy)
        if strategy == EXPRESSION_PARTITIONER:
            given = _column_values(context, batch, PARTITION)
            return [None if g is None or g == "" else int(str(g).strip()) for g in given]
        if strategy == ROUND_ROBIN:
            service = connection_for(self, context, context.controller_service)
            producer = self._producer_for(context, service)
            spread = []
            for topic in topics:
                partitions = producer.list_topics(topic, timeout=5).topics[topic].partitions
                spread.append(next(self._round_robin) % max(1, len(partitions)))
            return spread
        return [None] * batch.count

    def _key(self, context: ProcessContext, flowfile: Any) -> bytes | None:
        given = context.get_property(KAFKA_KEY)
        key = given.evaluate_attribute_expressions(flowfile).value if given.is_set() else None
        if key is None:
            key = flowfile.attributes.get("kafka.key")
        if key is None:
            return None
        if context.get_property(KEY_ATTRIBUTE_ENCODING).value == "hex":
            return bytes.fromhex(key)
        return key.encode()

    def _headers(self, context: ProcessContext, attributes: Any) -> list[tuple[str, bytes]]:
        pattern = context.get_property(ATTRIBUTE_HEADER_PATTERN).value
        if not pattern:
            return []
        encoding = context.get_property(HEADER_ENCODING).value or "UTF-8"
        regex = re.compile(pattern)
        return [(n, v.encode(encoding)) for n, v in attributes.items() if regex.fullmatch(n)]

    def _partition(
        self, context: ProcessContext, producer: Any, flowfile: Any, topic: str
    ) -> int | None:
        strategy = context.get_property(PARTITIONER_CLASS).value
        strategy = PARTITIONERS_1X.get(strategy or "", strategy)
        if strategy == EXPRESSION_PARTITIONER:
            given = context.get_property(PARTITION).evaluate_attribute_expressions(flowfile).value
            return None if given is None else int(str(given).strip())
        if strategy == ROUND_ROBIN:
            partitions = producer.list_topics(topic, timeout=5).topics[topic].partitions
            return next(self._round_robin) % max(1, len(partitions))
        return None


@attrs.frozen
class _Outcome:
    """What publishing one FlowFile came to: its topic, messages sent, time, or the error."""

    topic: str
    count: int
    duration_ms: int
    error: str | None


def _record_mode(context: ProcessContext) -> bool:
    """Whether records are published: a Record Reader and a Record Writer (NiFi's test)."""
    value = context.get_property
    return bool(value(RECORD_READER).value and value(RECORD_WRITER).value)


def _count(counts: dict[int, int], index: int, sent: int) -> None:
    counts[index] += sent


def _column_values(
    context: ProcessContext, batch: FlowFileBatch, descriptor: PropertyDescriptor
) -> list[str | None]:
    """A property's value for each FlowFile of *batch* (Expression Language over columns)."""
    raw = context.get_property(descriptor).value
    if raw is None or "${" not in raw:
        return [raw] * batch.count
    column = evaluate_column(compile_expression(raw), batch, clock=context.now)
    return column.values()


def _evaluated(context: ProcessContext, descriptor: PropertyDescriptor, flowfile: Any) -> Any:
    """A property's value for *flowfile*; a value without Expression Language is read once."""
    value = context.get_property(descriptor)
    raw = value.value
    if raw is None or "${" not in raw:
        return raw
    return value.evaluate_attribute_expressions(flowfile).value


def _cause(ex: BaseException) -> str:
    first = ex.args[0] if ex.args else ex
    return first.str() if hasattr(first, "str") else str(first)
