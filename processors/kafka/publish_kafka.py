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

import itertools
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

from flowcore.errors import ConfigurationError
from flowcore.process_context import ProcessContext
from flowcore.processor import Processor
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.relationship import Relationship
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    CHARACTER_SET_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    NON_BLANK_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    ValidationResult,
)
from processors.kafka.connection_service import (
    KAFKA_CONNECTION_SERVICE,
    LEGACY_CONNECTION,
    Kafka3ConnectionService,
    connection_for,
    import_kafka,
    legacy_problems,
)

__all__ = ["PublishKafka"]

#: FlowFiles one trigger publishes (and waits for) together.
BATCH = 1000

DEFAULT_PARTITIONER = "org.apache.kafka.clients.producer.internals.DefaultPartitioner"
ROUND_ROBIN = "org.apache.kafka.clients.producer.RoundRobinPartitioner"
EXPRESSION_PARTITIONER = (
    "org.apache.nifi.processors.kafka.pubsub.Partitioners.ExpressionLanguagePartitioner"
)

#: NiFi 1.x's partitioner values (PublishKafka_2_6), taken as their NiFi 2 counterparts.
_PARTITIONERS_1X = {
    "org.apache.nifi.processors.kafka.pubsub.Partitioners$RoundRobinPartitioner": ROUND_ROBIN,
    "org.apache.nifi.processors.kafka.pubsub.Partitioners$ExpressionLanguagePartitioner": (
        EXPRESSION_PARTITIONER
    ),
}

TOPIC_NAME = PropertyDescriptor(
    "Topic Name",
    description="Name of the Kafka Topic to which the Processor publishes Kafka Records",
    required=True,
    validators=(NON_BLANK_VALIDATOR,),
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    aliases=("topic",),
)
FAILURE_STRATEGY = PropertyDescriptor(
    "Failure Strategy",
    description="Specifies how the processor handles a FlowFile if it is unable to publish the "
    "data to Kafka",
    default="Route to Failure",
    required=True,
    allowable_values=("Route to Failure", "Rollback"),
)
DELIVERY_GUARANTEE = PropertyDescriptor(
    "Delivery Guarantee",
    "acks",
    description="Specifies the requirement for guaranteeing that a message is sent to Kafka. "
    "Corresponds to Kafka Client acks property.",
    default="all",
    required=True,
    allowable_values=("all", "1", "0"),
)
COMPRESSION_TYPE = PropertyDescriptor(
    "Compression Type",
    "compression.type",
    description="Specifies the compression strategy for records sent to Kafka.",
    default="none",
    required=True,
    allowable_values=("none", "gzip", "snappy", "lz4"),
)
MAX_REQUEST_SIZE = PropertyDescriptor(
    "Max Request Size",
    "max.request.size",
    description="The maximum size of a request in bytes.",
    default="1 MB",
    required=True,
    validators=(DATA_SIZE_VALIDATOR,),
)
TRANSACTIONS_ENABLED = PropertyDescriptor(
    "Transactions Enabled",
    description="Whether a trigger's messages are one Kafka transaction, rolled back on failure",
    default="true",
    required=True,
    allowable_values=("true", "false"),
    aliases=("use-transactions",),
)
TRANSACTIONAL_ID_PREFIX = PropertyDescriptor(
    "Transactional ID Prefix",
    description="The producer's transactional.id is a generated UUID prefixed with this string.",
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("transactional-id-prefix",),
)
PARTITIONER_CLASS = PropertyDescriptor(
    "Partitioner Class",
    "partitioner.class",
    description="Specifies which class to use to compute a partition id for a message.",
    default=DEFAULT_PARTITIONER,
    required=True,
    allowable_values=(ROUND_ROBIN, DEFAULT_PARTITIONER, EXPRESSION_PARTITIONER, *_PARTITIONERS_1X),
)
PARTITION = PropertyDescriptor(
    "Partition",
    "partition",
    description="Specifies the Kafka Partition destination for Records.",
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
)
MESSAGE_DEMARCATOR = PropertyDescriptor(
    "Message Demarcator",
    description="A string (interpreted as UTF-8) splitting a FlowFile's content into messages; "
    "unset: the whole content is one message.",
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    aliases=("message-demarcator",),
)
ATTRIBUTE_HEADER_PATTERN = PropertyDescriptor(
    "FlowFile Attribute Header Pattern",
    description="A Regular Expression that is matched against all FlowFile attribute names. Any "
    "attribute whose name matches the pattern will be added to the Kafka messages as a Header.",
    validators=(REGULAR_EXPRESSION_VALIDATOR,),
    aliases=("attribute-name-regex",),
)
HEADER_ENCODING = PropertyDescriptor(
    "Header Encoding",
    description="The Character Encoding used to serialize the headers.",
    default="UTF-8",
    required=True,
    validators=(CHARACTER_SET_VALIDATOR,),
    aliases=("message-header-encoding",),
)
KAFKA_KEY = PropertyDescriptor(
    "Kafka Key",
    description="The Key to use for the Message. If not specified, the FlowFile attribute "
    "'kafka.key' is used as the message key, if it is present.",
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    aliases=("kafka-key",),
)
KEY_ATTRIBUTE_ENCODING = PropertyDescriptor(
    "Kafka Key Attribute Encoding",
    description="How the key is encoded: utf-8, hex, or not added",
    default="utf-8",
    required=True,
    allowable_values=("utf-8", "hex", "do-not-add"),
    aliases=("key-attribute-encoding",),
)

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
        ATTRIBUTE_HEADER_PATTERN,
        HEADER_ENCODING,
        KAFKA_KEY,
        KEY_ATTRIBUTE_ENCODING,
        *LEGACY_CONNECTION,
    )
    relationships: ClassVar[tuple[Relationship, ...]] = (SUCCESS, FAILURE)
    tags: ClassVar[tuple[str, ...]] = ("Apache", "Kafka", "Put", "Send", "Message", "PubSub")

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
        """Publish up to BATCH FlowFiles, wait for Kafka's acknowledgements, route each."""
        flowfiles = session.get(BATCH)
        if not flowfiles:
            return
        service = connection_for(self, context, session.controller_service)
        kafka = import_kafka()
        producer = self._producer_for(context, service)
        transactional = context.get_property(TRANSACTIONS_ENABLED).as_boolean()
        errors: dict[int, str] = {}
        counts: dict[int, int] = {}
        topics: dict[int, str] = {}
        started = time.monotonic()
        if transactional:
            producer.begin_transaction()
        for index, flowfile in enumerate(flowfiles):
            try:
                topics[index], counts[index] = self._produce(
                    context, session, producer, flowfile, (index, errors)
                )
            except (ValueError, BufferError, kafka.KafkaException) as ex:
                errors.setdefault(index, f"Kafka publish failed: {_cause(ex)}")
        left = producer.flush(service.ack_wait + service.metadata_wait)
        if left:
            for index in range(len(flowfiles)):
                errors.setdefault(index, f"Kafka did not acknowledge {left} message(s) in time")
        if transactional:
            errors = self._end_transaction(producer, service, errors, len(flowfiles))
        elapsed = int((time.monotonic() - started) * 1000)
        rollback = context.get_property(FAILURE_STRATEGY).value == "Rollback"
        if errors and rollback:
            session.rollback(penalize=True)
            context.yield_()
            return
        base = service.transit_uri_base
        for index, flowfile in enumerate(flowfiles):
            if index in errors:
                context.logger.error(f"Failed to send {flowfile} to Kafka: {errors[index]}")
                session.transfer(session.penalize(flowfile), FAILURE)
                continue
            sent = session.put_attribute(flowfile, "msg.count", str(counts[index]))
            session.provenance.send(sent, f"{base}/{topics[index]}", duration_ms=elapsed)
            session.transfer(sent, SUCCESS)

    def _end_transaction(
        self, producer: Any, service: Kafka3ConnectionService, errors: dict[int, str], count: int
    ) -> dict[int, str]:
        kafka = import_kafka()
        try:
            if errors:
                producer.abort_transaction(service.client_timeout)
                cause = next(iter(errors.values()))
                return {i: errors.get(i, f"transaction rolled back: {cause}") for i in range(count)}
            producer.commit_transaction(service.client_timeout)
        except kafka.KafkaException as ex:
            self.__dict__.pop("_producer", None)  # a fenced or broken producer: start anew
            return {i: f"Kafka transaction failed: {_cause(ex)}" for i in range(count)}
        return errors

    def _produce(
        self,
        context: ProcessContext,
        session: ProcessSession,
        producer: Any,
        flowfile: Any,
        slot: tuple[int, dict[int, str]],
    ) -> tuple[str, int]:
        """Produce one FlowFile's messages; delivery errors land in ``slot``'s dict at flush."""
        index, errors = slot
        attributes = flowfile.attributes
        topic = _evaluated(context, TOPIC_NAME, flowfile)
        key = self._key(context, flowfile)
        headers = self._headers(context, attributes)
        partition = self._partition(context, producer, flowfile, topic)
        content = session.read_bytes(flowfile)
        demarcator = _evaluated(context, MESSAGE_DEMARCATOR, flowfile)
        if demarcator:
            values: list[bytes | None] = [v for v in content.split(demarcator.encode()) if v]
        elif not content and attributes.get("kafka.tombstone") == "true":
            values = [None]
        else:
            values = [content]

        def delivered(error: Any, _message: Any) -> None:
            if error is not None:
                errors.setdefault(index, f"Kafka rejected a message for {topic!r}: {error.str()}")

        for value in values:
            options: dict[str, Any] = {"key": key, "headers": headers, "on_delivery": delivered}
            if partition is not None:
                options["partition"] = partition
            producer.produce(topic, value, **options)
            producer.poll(0)
        return topic, len(values)

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
        strategy = _PARTITIONERS_1X.get(strategy or "", strategy)
        if strategy == EXPRESSION_PARTITIONER:
            given = context.get_property(PARTITION).evaluate_attribute_expressions(flowfile).value
            return None if given is None else int(str(given).strip())
        if strategy == ROUND_ROBIN:
            partitions = producer.list_topics(topic, timeout=5).topics[topic].partitions
            return next(self._round_robin) % max(1, len(partitions))
        return None


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
