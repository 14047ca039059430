"""PublishKafka's NiFi properties (NiFi 2's names, 1.x ``PublishKafka_2_6`` names as aliases).

The record properties live with the record publishing, in :mod:`processors.kafka._publish_records`.
"""

from __future__ import annotations

from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import (
    CHARACTER_SET_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    NON_BLANK_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
)

__all__ = [
    "ATTRIBUTE_HEADER_PATTERN",
    "BATCH",
    "COMPRESSION_TYPE",
    "DEFAULT_PARTITIONER",
    "DELIVERY_GUARANTEE",
    "EXPRESSION_PARTITIONER",
    "FAILURE_STRATEGY",
    "HEADER_ENCODING",
    "KAFKA_KEY",
    "KEY_ATTRIBUTE_ENCODING",
    "MAX_REQUEST_SIZE",
    "MESSAGE_DEMARCATOR",
    "PARTITION",
    "PARTITIONERS_1X",
    "PARTITIONER_CLASS",
    "ROUND_ROBIN",
    "TOPIC_NAME",
    "TRANSACTIONAL_ID_PREFIX",
    "TRANSACTIONS_ENABLED",
]

#: FlowFiles one trigger publishes (and waits for) together.
BATCH = 1000

DEFAULT_PARTITIONER = "org.apache.kafka.clients.producer.internals.DefaultPartitioner"
ROUND_ROBIN = "org.apache.kafka.clients.producer.RoundRobinPartitioner"
EXPRESSION_PARTITIONER = (
    "org.apache.nifi.processors.kafka.pubsub.Partitioners.ExpressionLanguagePartitioner"
)

#: NiFi 1.x's partitioner values (PublishKafka_2_6), taken as their NiFi 2 counterparts.
PARTITIONERS_1X = {
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
    allowable_values=(ROUND_ROBIN, DEFAULT_PARTITIONER, EXPRESSION_PARTITIONER, *PARTITIONERS_1X),
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
