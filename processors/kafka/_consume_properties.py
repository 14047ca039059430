"""ConsumeKafka's property descriptors and relationship (NiFi 2's names and defaults).

Kept apart from the processor (:mod:`processors.kafka.consume_kafka`) so its module holds the
listing and reading only; the record properties live in :mod:`._consume_records`.
"""

from __future__ import annotations

from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import (
    CHARACTER_SET_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    NON_BLANK_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
)

GROUP_ID = PropertyDescriptor(
    "Group ID",
    description="Kafka Consumer Group Identifier corresponding to Kafka group.id property",
    required=True,
    validators=(NON_BLANK_VALIDATOR,),
    aliases=("group.id",),
)
TOPIC_FORMAT = PropertyDescriptor(
    "Topic Format",
    description="Specifies whether the Topics provided are a comma separated list of names or "
    "a single regular expression",
    default="names",
    required=True,
    allowable_values=("names", "pattern"),
    aliases=("topic_type",),
)
TOPICS = PropertyDescriptor(
    "Topics",
    description="The name or pattern of the Kafka Topics from which the Processor consumes "
    "Kafka Records. More than one can be supplied if comma separated.",
    required=True,
    validators=(NON_BLANK_VALIDATOR,),
    el_scope=ExpressionLanguageScope.ENVIRONMENT,
    aliases=("topic",),
)
AUTO_OFFSET_RESET = PropertyDescriptor(
    "Auto Offset Reset",
    "auto.offset.reset",
    description="Automatic offset configuration applied when no previous consumer offset found "
    "corresponding to Kafka auto.offset.reset property",
    default="latest",
    required=True,
    allowable_values=("earliest", "latest", "none"),
)
COMMIT_OFFSETS = PropertyDescriptor(
    "Commit Offsets",
    description="Whether to also commit the offsets the flow committed to the Kafka consumer "
    "group (for lag tools); the flow's own position is its source state.",
    default="true",
    required=True,
    allowable_values=("true", "false"),
)
MAX_UNCOMMITTED_SIZE = PropertyDescriptor(
    "Max Uncommitted Size",
    description="Maximum total size of records to consume from Kafka before transferring "
    "FlowFiles to an output relationship (the serialized keys and values), for a trigger; in a "
    "flow, offsets are committed with each micro-batch.",
    validators=(DATA_SIZE_VALIDATOR,),
)
MAX_UNCOMMITTED_TIME = PropertyDescriptor(
    "Max Uncommitted Time",
    description="Maximum amount of time to spend consuming records from Kafka before "
    "transferring FlowFiles to an output relationship, for a trigger; in a flow, offsets are "
    "committed with each micro-batch.",
    default="100 millis",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
    aliases=("max-uncommit-offset-wait",),
)
HEADER_NAME_PATTERN = PropertyDescriptor(
    "Header Name Pattern",
    description="Regular Expression Pattern applied to Kafka Record Header Names for selecting "
    "Header Values to be written as FlowFile attributes",
    validators=(REGULAR_EXPRESSION_VALIDATOR,),
    aliases=("header-name-regex",),
)
HEADER_ENCODING = PropertyDescriptor(
    "Header Encoding",
    description="Character encoding applied when reading Kafka Record Header values and "
    "writing FlowFile attributes",
    default="UTF-8",
    required=True,
    validators=(CHARACTER_SET_VALIDATOR,),
    aliases=("message-header-encoding",),
)
PROCESSING_STRATEGY = PropertyDescriptor(
    "Processing Strategy",
    description="Strategy for processing Kafka Records and writing serialized output to FlowFiles",
    default="FLOW_FILE",
    required=True,
    allowable_values=("FLOW_FILE", "DEMARCATOR", "RECORD"),
)
KEY_ATTRIBUTE_ENCODING = PropertyDescriptor(
    "Key Attribute Encoding",
    description="Encoding for value of configured FlowFile attribute containing Kafka Record Key.",
    default="utf-8",
    required=True,
    allowable_values=("utf-8", "hex", "do-not-add"),
    aliases=("key-attribute-encoding",),
)
MESSAGE_DEMARCATOR = PropertyDescriptor(
    "Message Demarcator",
    description="A string (interpreted as UTF-8) written between the messages of one FlowFile "
    "(Processing Strategy DEMARCATOR)",
    aliases=("message-demarcator",),
)
SEPARATE_BY_KEY = PropertyDescriptor(
    "Separate By Key",
    description="When this property is enabled, two messages will only be added to the same "
    "FlowFile if both of the Kafka Messages have identical keys.",
    default="false",
    required=True,
    allowable_values=("true", "false"),
    aliases=("separate-by-key",),
)

SUCCESS = Relationship("success", "FlowFiles containing one or more serialized Kafka Records")
