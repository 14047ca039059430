"""LogAttribute: log FlowFile attributes (and optionally content) through Python logging."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import ClassVar

from flowcore.flowfile import FlowFile
from flowcore.patterns import compile_pattern
from flowcore.process_context import ProcessContext
from flowcore.processor import Processor
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.relationship import SUCCESS
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    CHARACTER_SET_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
)

__all__ = ["LogAttribute"]

LEVELS: Mapping[str, int] = {
    "trace": 5,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
}
LINE_PER_ATTRIBUTE = "Line per Attribute"
SINGLE_LINE = "Single Line"
BATCH = 50  # FlowFiles logged per trigger, as NiFi's LogAttribute


def _names(value: str | None) -> set[str]:
    return {n.strip() for n in (value or "").split(",") if n.strip()}


class LogAttribute(Processor):
    """Emits FlowFile attributes (and optionally the payload) at a log level (NiFi's LogAttribute).

    Which attributes are logged: those in Attributes to Log (or matching its regex form), minus
    those in Attributes to Ignore (or matching its regex form). The record goes to the
    ``flowcore.processors.LogAttribute`` logger at Log Level; ``trace`` maps to level 5.

    Unlike NiFi, the record is emitted once the FlowFile's transaction is durable, by the
    driver (on Spark too): a task attempt that never commits, or its replay after a crash,
    never logs a FlowFile twice.
    """

    LOG_LEVEL = PropertyDescriptor(
        "Log Level",
        description="The Log Level to use when logging the Attributes",
        required=True,
        default="info",
        allowable_values=tuple(LEVELS),
    )
    LOG_PAYLOAD = PropertyDescriptor(
        "Log Payload",
        description="If true, the FlowFile's payload will be logged, in addition to its "
        "attributes; otherwise, just the Attributes will be logged.",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    ATTRIBUTES_TO_LOG = PropertyDescriptor(
        "Attributes to Log",
        description="A comma-separated list of Attributes to Log. If not specified, all "
        "attributes will be logged unless `Attributes to Log by Regular Expression` is modified.",
        required=False,
    )
    ATTRIBUTES_TO_LOG_REGEX = PropertyDescriptor(
        "Attributes to Log by Regular Expression",
        name="attributes-to-log-regex",
        description="A regular expression indicating the Attributes to Log.",
        required=False,
        default=".*",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
    )
    ATTRIBUTES_TO_IGNORE = PropertyDescriptor(
        "Attributes to Ignore",
        description="A comma-separated list of Attributes to ignore.",
        required=False,
    )
    ATTRIBUTES_TO_IGNORE_REGEX = PropertyDescriptor(
        "Attributes to Ignore by Regular Expression",
        name="attributes-to-ignore-regex",
        description="A regular expression indicating the Attributes to Ignore.",
        required=False,
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
    )
    LOG_FLOWFILE_PROPERTIES = PropertyDescriptor(
        "Log FlowFile Properties",
        description="Specifies whether or not to log FlowFile 'properties', such as Entry Date, "
        "Lineage Start Date, and content size",
        required=True,
        default="true",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    OUTPUT_FORMAT = PropertyDescriptor(
        "Output Format",
        description="Specifies the format to use for logging FlowFile attributes",
        required=True,
        default=LINE_PER_ATTRIBUTE,
        allowable_values=(LINE_PER_ATTRIBUTE, SINGLE_LINE),
    )
    LOG_PREFIX = PropertyDescriptor(
        "Log prefix",
        description="Log prefix appended to the log lines. It helps to distinguish the output of "
        "multiple LogAttribute processors.",
        required=False,
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
    )
    CHARSET = PropertyDescriptor(
        "Character Set",
        description="The name of the CharacterSet to use",
        required=True,
        default="UTF-8",
        validators=(CHARACTER_SET_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        LOG_LEVEL,
        LOG_PAYLOAD,
        ATTRIBUTES_TO_LOG,
        ATTRIBUTES_TO_LOG_REGEX,
        ATTRIBUTES_TO_IGNORE,
        ATTRIBUTES_TO_IGNORE_REGEX,
        LOG_FLOWFILE_PROPERTIES,
        OUTPUT_FORMAT,
        LOG_PREFIX,
        CHARSET,
    )
    relationships: ClassVar = (SUCCESS,)
    supports_batching: ClassVar = True
    tags: ClassVar = ("attributes", "logging")

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Log up to 50 FlowFiles and pass them on."""
        level = LEVELS[context.get_property(self.LOG_LEVEL).value or "info"]
        logger = context.logger.name
        logged = session.will_log(logger, level)  # rendering the payload costs a read
        for flowfile in session.get(BATCH):
            # Logged by the engine once the session's transaction is durable, on the driver:
            # a task attempt that never commits, or its replay, logs nothing twice.
            if logged:
                session.log_after_commit(logger, level, self.render(context, session, flowfile))
            session.transfer(flowfile, SUCCESS)

    def selected_attributes(self, context: ProcessContext, flowfile: FlowFile) -> dict[str, str]:
        """The attributes to log, sorted by name, after the include and ignore rules."""
        include = _names(context.get_property(self.ATTRIBUTES_TO_LOG).value)
        regex_text = context.get_property(self.ATTRIBUTES_TO_LOG_REGEX).value
        # As NiFi: a name list with the default regex logs only the listed names.
        if regex_text is None or (include and regex_text == ".*"):
            include_regex = None
        else:
            include_regex = compile_pattern(regex_text)
        ignore = _names(context.get_property(self.ATTRIBUTES_TO_IGNORE).value)
        ignore_text = context.get_property(self.ATTRIBUTES_TO_IGNORE_REGEX).value
        ignore_regex = compile_pattern(ignore_text) if ignore_text else None
        selected = {}
        for key in sorted(flowfile.attributes):
            if key in ignore or (ignore_regex is not None and ignore_regex.accepts(key)):
                continue
            if key in include or (include_regex is not None and include_regex.accepts(key)):
                selected[key] = flowfile.attributes[key]
        return selected

    def render(self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile) -> str:
        """The log message for one FlowFile, in NiFi's layout."""
        prefix = (
            context.get_property(self.LOG_PREFIX).evaluate_attribute_expressions(flowfile).value
            or ""
        )
        dashes = "-" * 50
        single_line = context.get_property(self.OUTPUT_FORMAT).value == SINGLE_LINE
        attributes = self.selected_attributes(context, flowfile)
        lines = [f"\n{prefix}{dashes}"]
        if context.get_property(self.LOG_FLOWFILE_PROPERTIES).as_boolean():
            properties = {
                "entryDate": str(flowfile.entry_date),
                "lineageStartDate": str(flowfile.lineage_start_date),
                "fileSize": str(flowfile.size),
            }
            lines.append("Standard FlowFile Attributes")
            lines.extend(f"Key: '{k}'\n\tValue: '{v}'" for k, v in properties.items())
        lines.append("FlowFile Attribute Map Content")
        if single_line:
            lines.append("[" + ", ".join(f"{k}={v}" for k, v in attributes.items()) + "]")
        else:
            lines.extend(f"Key: '{k}'\n\tValue: '{v}'" for k, v in attributes.items())
        lines.append(f"{prefix}{dashes}")
        if context.get_property(self.LOG_PAYLOAD).as_boolean():
            charset = context.get_property(self.CHARSET).value or "UTF-8"
            lines.append(session.read_bytes(flowfile).decode(charset, "replace"))
        return "\n".join(lines)
