"""LogAttribute: log FlowFile attributes (and optionally content) through Python logging."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import ClassVar

from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_column
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.patterns import compile_pattern
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import SUCCESS
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.batch_context import BatchContext
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

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> tuple[str, FlowFileBatch]:
        """Log every FlowFile of the batch, rendered from its columns, and pass them on.

        The lines are exactly ``on_trigger``'s, in the same order, deferred the same way
        (``context.log_after_commit``), and none is rendered when the level is not logged.
        """
        level = LEVELS[context.get_property(self.LOG_LEVEL).value or "info"]
        logger = context.logger.name
        if batch.count and context.will_log(logger, level):
            for message in self._render_batch(context, batch):
                context.log_after_commit(logger, level, message)
        return SUCCESS.name, batch

    def _render_batch(self, context: BatchContext, batch: FlowFileBatch) -> Iterator[str]:
        """Each FlowFile's message, in order, from the batch's columns."""
        count = batch.count
        prefix_text = context.get_property(self.LOG_PREFIX).value or ""
        if "{" in prefix_text:
            prefixes = evaluate_column(compile_expression(prefix_text), batch, clock=context.now)
            prefix_values = prefixes.values()
        else:
            prefix_values = [prefix_text] * count
        keep = self._selector(context)
        uuids = batch.uuids()
        names = sorted(
            n for n in {*batch.attributes, *batch.columns, *batch.uuid_named, "uuid"} if keep(n)
        )
        columns: list[tuple[str, list[str | None]]] = []
        for name in names:
            if name == "uuid" or name in batch.uuid_named:
                columns.append((name, uuids))  # type: ignore[arg-type]
            elif name in batch.columns:
                columns.append((name, batch.columns[name].values()))
            else:
                columns.append((name, [batch.attributes[name]] * count))
        properties = context.get_property(self.LOG_FLOWFILE_PROPERTIES).as_boolean()
        contents = None
        if context.get_property(self.LOG_PAYLOAD).as_boolean():
            contents = context.contents(batch)
        charset = context.get_property(self.CHARSET).value or "UTF-8"
        single_line = context.get_property(self.OUTPUT_FORMAT).value == SINGLE_LINE
        sizes = batch.sizes.tolist()
        for row in range(count):
            attributes = {n: v[row] for n, v in columns if v[row] is not None}
            standard = None
            if properties:
                standard = _standard(batch.entry_date, batch.lineage_start_date, sizes[row])
            payload = None
            if contents is not None:
                payload = b"".join(next(contents)).decode(charset, "replace")
            yield _layout(prefix_values[row] or "", standard, attributes, single_line, payload)

    def _selector(self, context: ProcessContext) -> Callable[[str], bool]:
        """Whether an attribute is logged, by its name: the include and ignore rules."""
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

        def keep(key: str) -> bool:
            if key in ignore or (ignore_regex is not None and ignore_regex.accepts(key)):
                return False
            return key in include or (include_regex is not None and include_regex.accepts(key))

        return keep

    def selected_attributes(self, context: ProcessContext, flowfile: FlowFile) -> dict[str, str]:
        """The attributes to log, sorted by name, after the include and ignore rules."""
        keep = self._selector(context)
        return {k: flowfile.attributes[k] for k in sorted(flowfile.attributes) if keep(k)}

    def render(self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile) -> str:
        """The log message for one FlowFile, in NiFi's layout."""
        prefix = (
            context.get_property(self.LOG_PREFIX).evaluate_attribute_expressions(flowfile).value
            or ""
        )
        standard = None
        if context.get_property(self.LOG_FLOWFILE_PROPERTIES).as_boolean():
            standard = _standard(flowfile.entry_date, flowfile.lineage_start_date, flowfile.size)
        payload = None
        if context.get_property(self.LOG_PAYLOAD).as_boolean():
            charset = context.get_property(self.CHARSET).value or "UTF-8"
            payload = session.read_bytes(flowfile).decode(charset, "replace")
        single_line = context.get_property(self.OUTPUT_FORMAT).value == SINGLE_LINE
        attributes = self.selected_attributes(context, flowfile)
        return _layout(prefix, standard, attributes, single_line, payload)


def _standard(entry_date: int, lineage_start_date: int, size: int) -> dict[str, str]:
    """NiFi's "Standard FlowFile Attributes" of a FlowFile."""
    return {
        "entryDate": str(entry_date),
        "lineageStartDate": str(lineage_start_date),
        "fileSize": str(size),
    }


def _layout(
    prefix: str,
    standard: Mapping[str, str] | None,
    attributes: Mapping[str, str],
    single_line: bool,
    payload: str | None,
) -> str:
    """One FlowFile's log message in NiFi's layout."""
    dashes = "-" * 50
    lines = [f"\n{prefix}{dashes}"]
    if standard is not None:
        lines.append("Standard FlowFile Attributes")
        lines.extend(f"Key: '{k}'\n\tValue: '{v}'" for k, v in standard.items())
    lines.append("FlowFile Attribute Map Content")
    if single_line:
        lines.append("[" + ", ".join(f"{k}={v}" for k, v in attributes.items()) + "]")
    else:
        lines.extend(f"Key: '{k}'\n\tValue: '{v}'" for k, v in attributes.items())
    lines.append(f"{prefix}{dashes}")
    if payload is not None:
        lines.append(payload)
    return "\n".join(lines)
