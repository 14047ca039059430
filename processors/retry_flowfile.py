"""RetryFlowFile: a bounded feedback loop counting tries in an attribute (NiFi's RetryFlowFile)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import ClassVar

from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_EMPTY_EL_VALIDATOR, create_long_validator

__all__ = ["RetryFlowFile"]

_JAVA_INT = re.compile(r"[-+]?[0-9]+")
_INT_MAX = 2**31 - 1
_INT_MIN = -(2**31)

FAIL_ON_REUSE = AllowableValue(
    "fail",
    "Fail on Reuse",
    "If the RetryFlowFile's UUID does not match the FlowFile's retry UUID, fail the FlowFile "
    "regardless of current retry count",
)
WARN_ON_REUSE = AllowableValue(
    "warn",
    "Warn on Reuse",
    "If the RetryFlowFile's UUID does not match the FlowFile's retry UUID, log a warning message "
    "before resetting the retry attribute and UUID for this instance",
)
RESET_ON_REUSE = AllowableValue(
    "reset",
    "Reset Reuse",
    "If the RetryFlowFile's UUID does not match the FlowFile's retry UUID, log a debug message "
    "before resetting the retry attribute and UUID for this instance",
)

RETRY = Relationship(
    "retry",
    "Input FlowFile has not exceeded the configured maximum retry count, pass this relationship "
    "back to the input Processor to create a limited feedback loop.",
)
RETRIES_EXCEEDED = Relationship(
    "retries_exceeded",
    "Input FlowFile has exceeded the configured maximum retry count, do not pass this "
    "relationship back to the input Processor to terminate the limited feedback loop.",
)
FAILURE = Relationship(
    "failure",
    "The processor is configured such that a non-numerical value on 'Retry Attribute' results in "
    "a failure instead of resetting that value to '1'. This will immediately terminate the "
    "limited feedback loop. Might also include when 'Maximum Retries' contains attribute "
    "expression language that does not resolve to an Integer.",
    auto_terminated=True,
)


def _java_int(text: str | None) -> int | None:
    """``Integer.parseInt(text.trim())``, or None where Java throws NumberFormatException."""
    if text is None:
        return None
    stripped = text.strip()
    if not _JAVA_INT.fullmatch(stripped):
        return None
    value = int(stripped)
    return value if _INT_MIN <= value <= _INT_MAX else None


class RetryFlowFile(Processor):
    """Counts a FlowFile's tries and routes it to ``retry`` until a maximum (NiFi's RetryFlowFile).

    The count lives in the Retry Attribute (``flowfile.retries``), with ``<attribute>.uuid``
    naming the RetryFlowFile that counted last. Each FlowFile's count goes up by one: at most
    Maximum Retries it goes to ``retry`` (penalized when Penalize Retries), above it to
    ``retries_exceeded`` with both attributes removed and the dynamic properties (evaluated
    against the FlowFile; blank results skipped) added as attributes. A count that is not a
    number starts again at 1, or sends the FlowFile to ``failure`` with Fail on Nonnumerical
    Overwrite. A count left by another RetryFlowFile (another ``.uuid``) is handled by Reuse
    Mode: ``failure``, or a warning (a debug line) and a count from 1. A Maximum Retries that
    does not evaluate to an integer sends the FlowFile to ``failure``. ``failure`` is
    auto-terminated unless connected, as in NiFi.
    """

    RETRY_ATTRIBUTE = PropertyDescriptor(
        "Retry Attribute",
        description="The name of the attribute that contains the current retry count for the "
        "FlowFile. WARNING: If the name matches an attribute already on the FlowFile that does "
        "not contain a numerical value, the processor will either overwrite that attribute with "
        "'1' or fail based on configuration.",
        required=True,
        default="flowfile.retries",
        validators=(NON_EMPTY_EL_VALIDATOR,),
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
        aliases=("retry-attribute",),
    )
    MAXIMUM_RETRIES = PropertyDescriptor(
        "Maximum Retries",
        description="The maximum number of times a FlowFile can be retried before being passed "
        "to the 'retries_exceeded' relationship",
        required=True,
        default="3",
        validators=(create_long_validator(1, _INT_MAX),),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("maximum-retries",),
    )
    PENALIZE_RETRIED = PropertyDescriptor(
        "Penalize Retries",
        description="If set to 'true', this Processor will penalize input FlowFiles before "
        "passing them to the 'retry' relationship. This does not apply to the "
        "'retries_exceeded' relationship.",
        required=True,
        default="true",
        allowable_values=("true", "false"),
        aliases=("penalize-retries",),
    )
    FAIL_ON_OVERWRITE = PropertyDescriptor(
        "Fail on Nonnumerical Overwrite",
        description="If the FlowFile already has the attribute defined in 'Retry Attribute' that "
        "is *not* a number, fail the FlowFile instead of resetting that value to '1'",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        aliases=("Fail on Non-numerical Overwrite",),
    )
    REUSE_MODE = PropertyDescriptor(
        "Reuse Mode",
        description="Defines how the Processor behaves if the retry FlowFile has a different "
        "retry UUID than the instance that received the FlowFile. This generally means that the "
        "attribute was not reset after being successfully retried by a previous instance of this "
        "processor.",
        required=True,
        default=FAIL_ON_REUSE.value,
        allowable_values=(FAIL_ON_REUSE, WARN_ON_REUSE, RESET_ON_REUSE),
        aliases=("reuse-mode",),
    )
    property_descriptors: ClassVar = (
        RETRY_ATTRIBUTE,
        MAXIMUM_RETRIES,
        PENALIZE_RETRIED,
        FAIL_ON_OVERWRITE,
        REUSE_MODE,
    )
    relationships: ClassVar = (RETRY, RETRIES_EXCEEDED, FAILURE)
    supports_batching: ClassVar = True
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = ("Retry", "FlowFile")
    reads_attributes: ClassVar[Mapping[str, str]] = {
        "Retry Attribute": "Will read the attribute or attribute expression language result as "
        "defined in 'Retry Attribute'"
    }
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "Retry Attribute": "User defined retry attribute is updated with the current retry count",
        "Retry Attribute .uuid": "User defined retry attribute with .uuid that determines what "
        "processor retried the FlowFile last",
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """An attribute placed on FlowFiles going to ``retries_exceeded``."""
        return PropertyDescriptor(
            name,
            description=f"Attribute {name} will be placed on FlowFiles exceeding the retry count",
            validators=(NON_EMPTY_EL_VALIDATOR,),
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            dynamic=True,
        )

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Count one FlowFile's try and route it."""
        flowfile = session.get()
        if flowfile is None:
            return
        session.transfer(*self._route(context, session, flowfile))

    def _route(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile
    ) -> tuple[FlowFile, Relationship]:
        """The FlowFile as it leaves, and where to."""
        attribute = context.get_property(self.RETRY_ATTRIBUTE).evaluate_attribute_expressions()
        name = attribute.value or "flowfile.retries"
        last_by = f"{name}.uuid"
        log = context.logger
        current = flowfile.attributes.get(name)
        count = _java_int(current)
        if current is None:
            retry = 1
        elif count is None:
            if context.get_property(self.FAIL_ON_OVERWRITE).as_boolean():
                return flowfile, FAILURE
            retry = 1
        else:
            retry = count + 1
        previous = flowfile.attributes.get(last_by)
        me = context.component.id
        if previous is not None and previous.strip() and previous != me:
            mode = context.get_property(self.REUSE_MODE).value
            if mode == FAIL_ON_REUSE.value:
                log.error(
                    "FlowFile %s was previously retried with the same attribute by a different "
                    "processor. Route to 'failure'",
                    flowfile,
                )
                log.debug(
                    "Current Processor: %s, Previous Processor: %s, Previous Retry: %s",
                    me,
                    previous,
                    retry - 1,
                )
                return flowfile, FAILURE
            level = logging.WARNING if mode == WARN_ON_REUSE.value else logging.DEBUG
            log.log(
                level,
                "FlowFile %s was previously retried with the same attribute by a different "
                "processor. Reset the current retry count to '1'. Consider changing the retry "
                "attribute for this processor.",
                flowfile,
            )
            retry = 1
        maximum_text = (
            context.get_property(self.MAXIMUM_RETRIES)
            .evaluate_attribute_expressions(flowfile)
            .value
        )
        maximum = _java_int(maximum_text)
        if maximum is None:
            log.warning("Maximum Retries was not a number for this FlowFile, route to 'failure'")
            return flowfile, FAILURE
        if retry > maximum:
            added = {}
            for key in self.dynamic_properties:
                value = context.get_property(key).evaluate_attribute_expressions(flowfile).value
                if value is not None and value.strip():
                    added[key] = value
            if added:
                flowfile = session.put_all_attributes(flowfile, added)
            flowfile = session.remove_attribute(flowfile, name)
            flowfile = session.remove_attribute(flowfile, last_by)
            return flowfile, RETRIES_EXCEEDED
        if context.get_property(self.PENALIZE_RETRIED).as_boolean():
            flowfile = session.penalize(flowfile)
        flowfile = session.put_all_attributes(flowfile, {name: str(retry), last_by: me})
        return flowfile, RETRY
