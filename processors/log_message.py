"""LogMessage: a message built with Expression Language, logged for each FlowFile."""

from __future__ import annotations

import re
from typing import ClassVar

from flowcore.errors import ProcessException
from flowcore.flowfile import FlowFile
from flowcore.process_context import ProcessContext
from flowcore.processor import Processor
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.relationship import Relationship
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

    def message(self, context: ProcessContext, flowfile: FlowFile) -> str:
        """The line logged for *flowfile*: Log Prefix (when not blank) then Log Message."""
        prefix = context.get_property(self.LOG_PREFIX).evaluate_attribute_expressions(flowfile)
        message = context.get_property(self.LOG_MESSAGE).evaluate_attribute_expressions(flowfile)
        text = message.value
        if prefix.value is None or not prefix.value.strip():
            return "null" if text is None else text  # Java's String.format of a null message
        return f"{prefix.value}{'null' if text is None else text}"
