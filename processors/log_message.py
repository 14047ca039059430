"""LogMessage: a message built with Expression Language, logged for each FlowFile."""

from __future__ import annotations

import re
from typing import ClassVar

from flowcore.errors import ProcessException
from flowcore.expression import compile_expression
from flowcore.expression._columns import evaluate_column
from flowcore.flowfile import FlowFile
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.batch_context import BatchContext
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_EMPTY_VALIDATOR, Validator
from processors.log_attribute import LEVELS

__all__ = ["LogMessage"]

_LEVEL = re.compile(r"(?i)(?:trace|debug|info|warn|error)")
BATCH = 50  # FlowFiles logged per trigger, as LogAttribute here

REL_SUCCESS = Relationship("success", "All FlowFiles are routed to this relationship")


def _log_level(value: str) -> str | None:
    if _LEVEL.fullmatch(value):
        return None
    return "must be either trace, debug, info, warn or error"


LOG_LEVEL_VALIDATOR = Validator("LOG_LEVEL_VALIDATOR", _log_level)


class LogMessage(Processor):
    """Emits a log message at a log level for each FlowFile (NiFi's LogMessage).

    Log Level (trace, debug, info, warn or error, any case), Log Prefix and Log Message are
    evaluated against each FlowFile; the message is the prefix followed by the message. It goes
    to the ``flowcore.processors.LogMessage`` logger (``trace`` is level 5) and, as LogAttribute
    here, once the FlowFile's transaction is durable, by the driver: a task attempt that never
    commits, or its replay after a crash, logs nothing twice. A Log Level that evaluates to
    none of the five levels is a processor error (NiFi's ProcessException): the FlowFile stays
    queued. The FlowFile itself passes to ``success`` unchanged.
    """

    LOG_LEVEL = PropertyDescriptor(
        "Log Level",
        description="The Log Level to use when logging the message: trace, debug, info, warn, "
        "error (case-insensitive)",
        required=True,
        default="info",
        validators=(LOG_LEVEL_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("log-level",),
    )
    LOG_PREFIX = PropertyDescriptor(
        "Log Prefix",
        description="Log prefix appended to the log lines. It helps to distinguish the output of "
        "multiple LogMessage processors.",
        required=False,
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("log-prefix",),
    )
    LOG_MESSAGE = PropertyDescriptor(
        "Log Message",
        description="The log message to emit",
        required=False,
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("log-message",),
    )
    property_descriptors: ClassVar = (LOG_LEVEL, LOG_PREFIX, LOG_MESSAGE)
    relationships: ClassVar = (REL_SUCCESS,)
    supports_batching: ClassVar = True
    tags: ClassVar = ("attributes", "logging")

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Log the message of up to 50 FlowFiles and pass them on."""
        logger = context.logger.name
        for flowfile in session.get(BATCH):
            text = context.get_property(self.LOG_LEVEL).evaluate_attribute_expressions(flowfile)
            level_name = (text.value or "").strip().lower()
            level = LEVELS.get(level_name)
            if level is None:
                msg = (
                    f"Log Level evaluated to {text.value!r} for {flowfile}; expected trace, "
                    "debug, info, warn or error"
                )
                raise ProcessException(msg, flowfile_uuid=flowfile.uuid)
            if session.will_log(logger, level):
                session.log_after_commit(logger, level, self.message(context, flowfile))
            session.transfer(flowfile, REL_SUCCESS)

    def transform_batch(
        self, context: BatchContext, batch: FlowFileBatch
    ) -> tuple[str, FlowFileBatch] | None:
        """Log every FlowFile's message, evaluated from the batch's columns, and pass them on.

        The lines are exactly ``on_trigger``'s, in the same order, deferred the same way
        (``context.log_after_commit``), and none is evaluated when the logger emits no level
        asked for. A Log Level that is not a level declines the batch: one by one, that
        FlowFile's error names it.
        """
        if not batch.count:
            return None
        logger = context.logger.name
        names = _column(context, self.LOG_LEVEL, batch)
        levels = [LEVELS.get((name or "").strip().lower()) for name in names]
        if None in levels:
            return None
        logged = {level: context.will_log(logger, level) for level in set(levels)}
        if any(logged.values()):
            prefixes = _column(context, self.LOG_PREFIX, batch)
            messages = _column(context, self.LOG_MESSAGE, batch)
            for row, level in enumerate(levels):
                if logged[level]:
                    line = _line(prefixes[row], messages[row])
                    context.log_after_commit(logger, level, line)
        return REL_SUCCESS.name, batch

    def message(self, context: ProcessContext, flowfile: FlowFile) -> str:
        """The line logged for *flowfile*: Log Prefix (when not blank) then Log Message."""
        prefix = context.get_property(self.LOG_PREFIX).evaluate_attribute_expressions(flowfile)
        message = context.get_property(self.LOG_MESSAGE).evaluate_attribute_expressions(flowfile)
        return _line(prefix.value, message.value)


def _line(prefix: str | None, message: str | None) -> str:
    """NiFi's line: the prefix (when not blank) then the message (``null`` when unset)."""
    text = "null" if message is None else message  # as Java's String.format prints null
    if prefix is None or not prefix.strip():
        return text
    return f"{prefix}{text}"


def _column(
    context: ProcessContext, descriptor: PropertyDescriptor, batch: FlowFileBatch
) -> list[str | None]:
    """*descriptor*'s value for each FlowFile of *batch* (None where it is not set)."""
    text = context.get_property(descriptor).value
    if text is None or "$" not in text:
        return [text] * batch.count
    column = evaluate_column(compile_expression(text), batch, clock=context.now)
    return list(column.values())
