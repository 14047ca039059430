"""ControlRate: let data through at most at a configured rate, holding or rerouting the rest."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import ClassVar

from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, PropertyDependency, PropertyDescriptor
from flowcore.session.host import FlowFileFilterResult
from flowcore.session.process_session import ProcessSession
from flowcore.units import parse_data_size, parse_time_period
from flowcore.validators import (
    DATA_SIZE_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    POSITIVE_LONG_VALIDATOR,
    ValidationResult,
    Validator,
    create_time_period_validator,
)
from processors._throttle import Throttle, load_throttles, save_throttles

__all__ = ["ControlRate"]

DATA_RATE = AllowableValue(
    "data rate", "data rate", "Rate is controlled by counting bytes transferred per time duration."
)
FLOWFILE_RATE = AllowableValue(
    "flowfile count",
    "flowfile count",
    "Rate is controlled by counting FlowFiles transferred per time duration",
)
ATTRIBUTE_RATE = AllowableValue(
    "attribute value",
    "attribute value",
    "Rate is controlled by accumulating the value of a specified attribute that is transferred "
    "per time duration",
)
DATA_OR_FLOWFILE_RATE = AllowableValue(
    "data rate or flowfile count",
    "data rate or flowfile count",
    "Rate is controlled by counting bytes and FlowFiles transferred per time duration; if either "
    "threshold is met, throttling is enforced",
)
HOLD_FLOWFILE = AllowableValue(
    "Hold FlowFile",
    "Hold FlowFile",
    "The FlowFile will be held in its input queue until the rate of data has fallen below the "
    "configured maximum and will then be allowed through.",
)
ROUTE_TO_RATE_EXCEEDED = AllowableValue(
    "Route to 'rate exceeded'",
    "Route to 'rate exceeded'",
    "The FlowFile will be routed to the 'rate exceeded' Relationship.",
)

REL_SUCCESS = Relationship(
    "success", "FlowFiles are transferred to this relationship under normal conditions"
)
REL_FAILURE = Relationship(
    "failure",
    "FlowFiles will be routed to this relationship if they are missing a necessary Rate "
    "Controlled Attribute or the attribute is not in the expected format",
)
REL_RATE_EXCEEDED = Relationship(
    "rate exceeded",
    "A FlowFile will be routed to this Relationship if it results in exceeding the maximum "
    "threshold allowed based on the Processor's configuration and if the Rate Exceeded Strategy "
    "is configured to use this Relationship.",
)

#: FlowFiles one trigger takes (NiFi's ``MAX_FLOW_FILES_PER_BATCH``).
MAX_FLOW_FILES_PER_BATCH = 1000
_DATA, _COUNT = "data", "count"


def _positive_long(value: str | None) -> bool:
    """NiFi's ``0*[1-9][0-9]*``: ASCII digits, not all zero."""
    return value is not None and value.isascii() and value.isdigit() and int(value) > 0


def _depends(*values: AllowableValue) -> tuple[PropertyDependency, ...]:
    return (PropertyDependency("Rate Control Criteria", tuple(v.value for v in values)),)


class ControlRate(Processor):
    """Controls the rate at which data is transferred to follow-on processors (NiFi's).

    Rates count per ``Time Duration`` (a sliding window in one-second buckets, as NiFi's), per
    value of the ``Grouping Attribute`` when set. FlowFiles over the rate stay in the input
    queue (``Hold FlowFile``: durable, retried when the window allows; a batch run waits for
    them) or go to ``rate exceeded``. The throttles are the processor's state, committed with
    the FlowFiles that passed, so the processor triggers serially (NiFi's ``@TriggerSerially``).
    """

    RATE_CONTROL_CRITERIA = PropertyDescriptor(
        "Rate Control Criteria",
        description="Indicates the criteria that is used to control the throughput rate. "
        "Changing this value resets the rate counters.",
        required=True,
        default=DATA_RATE.value,
        allowable_values=(DATA_RATE, FLOWFILE_RATE, ATTRIBUTE_RATE, DATA_OR_FLOWFILE_RATE),
    )
    TIME_PERIOD = PropertyDescriptor(
        "Time Duration",
        description="The amount of time to which the Maximum Rate pertains. Changing this value "
        "resets the rate counters.",
        required=True,
        default="1 min",
        validators=(create_time_period_validator("1 sec", f"{2**31 - 1} sec"),),
    )
    MAX_RATE = PropertyDescriptor(
        "Maximum Rate",
        description="The maximum rate at which data should pass through this processor. The "
        "format of this property is expected to be a positive integer, or a Data Size (such as "
        "'1 MB') if Rate Control Criteria is set to 'data rate'.",
        validators=(NON_EMPTY_VALIDATOR,),
        dependencies=_depends(DATA_RATE, FLOWFILE_RATE, ATTRIBUTE_RATE),
    )
    MAX_DATA_RATE = PropertyDescriptor(
        "Maximum Data Rate",
        description="The maximum rate at which data should pass through this processor. The "
        "format of this property is expected to be a Data Size (such as '1 MB') representing "
        "bytes per Time Duration.",
        validators=(DATA_SIZE_VALIDATOR,),
        dependencies=_depends(DATA_OR_FLOWFILE_RATE),
    )
    MAX_COUNT_RATE = PropertyDescriptor(
        "Maximum FlowFile Rate",
        description="The maximum rate at which FlowFiles should pass through this processor. The "
        "format of this property is expected to be a positive integer representing FlowFiles "
        "count per Time Duration",
        validators=(POSITIVE_LONG_VALIDATOR,),
        dependencies=_depends(DATA_OR_FLOWFILE_RATE),
    )
    RATE_EXCEEDED_STRATEGY = PropertyDescriptor(
        "Rate Exceeded Strategy",
        description="Specifies how to handle an incoming FlowFile when the maximum data rate has "
        "been exceeded.",
        required=True,
        default=HOLD_FLOWFILE.value,
        allowable_values=(HOLD_FLOWFILE, ROUTE_TO_RATE_EXCEEDED),
    )
    RATE_CONTROL_ATTRIBUTE_NAME = PropertyDescriptor(
        "Rate Controlled Attribute",
        description="The name of an attribute whose values build toward the rate limit if Rate "
        "Control Criteria is set to 'attribute value'. The value of the attribute referenced by "
        "this property must be a positive long, or the FlowFile will be routed to failure. This "
        "value is ignored if Rate Control Criteria is not set to 'attribute value'. Changing "
        "this value resets the rate counters.",
        validators=(NON_EMPTY_VALIDATOR,),
        dependencies=_depends(ATTRIBUTE_RATE),
    )
    GROUPING_ATTRIBUTE_NAME = PropertyDescriptor(
        "Grouping Attribute",
        description='By default, a single "throttle" is used for all FlowFiles. If this value is '
        "specified, a separate throttle is used for each value specified by the attribute with "
        "this name. Changing this value resets the rate counters.",
        validators=(NON_EMPTY_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        RATE_CONTROL_CRITERIA,
        TIME_PERIOD,
        MAX_RATE,
        MAX_DATA_RATE,
        MAX_COUNT_RATE,
        RATE_EXCEEDED_STRATEGY,
        RATE_CONTROL_ATTRIBUTE_NAME,
        GROUPING_ATTRIBUTE_NAME,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE, REL_RATE_EXCEEDED)
    triggers_serially: ClassVar = True
    tags: ClassVar = ("rate control", "throttle", "rate", "throughput")

    # --- configuration ----------------------------------------------------------------------

    def _value(self, descriptor: PropertyDescriptor) -> str | None:
        return self.effective_value(descriptor)

    def _criteria(self) -> str:
        return self._value(self.RATE_CONTROL_CRITERIA) or DATA_RATE.value

    def _routes_exceeded(self) -> bool:
        return self._value(self.RATE_EXCEEDED_STRATEGY) == ROUTE_TO_RATE_EXCEEDED.value

    def get_relationships(self) -> tuple[Relationship, ...]:
        """``success`` and ``failure``, plus ``rate exceeded`` when routing there."""
        if self._routes_exceeded():
            return (REL_SUCCESS, REL_FAILURE, REL_RATE_EXCEEDED)
        return (REL_SUCCESS, REL_FAILURE)

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """The maximum rates the criteria needs, in the form it needs (NiFi's checks)."""
        criteria = values.get(self.RATE_CONTROL_CRITERIA.name) or DATA_RATE.value
        checks: list[tuple[str, str, Validator]] = []
        if criteria == DATA_OR_FLOWFILE_RATE.value:
            checks += [
                (self.MAX_DATA_RATE.name, self.MAX_DATA_RATE.display_name, DATA_SIZE_VALIDATOR),
                (
                    self.MAX_COUNT_RATE.name,
                    self.MAX_COUNT_RATE.display_name,
                    POSITIVE_LONG_VALIDATOR,
                ),
            ]
        elif criteria == DATA_RATE.value:
            checks.append((self.MAX_RATE.name, "Maximum Rate", DATA_SIZE_VALIDATOR))
        else:
            if criteria == ATTRIBUTE_RATE.value and not values.get(
                self.RATE_CONTROL_ATTRIBUTE_NAME.name
            ):
                yield ValidationResult(
                    self.RATE_CONTROL_ATTRIBUTE_NAME.name,
                    None,
                    False,
                    "property must be set if using <Rate Control Criteria> of 'attribute value'",
                )
            checks.append((self.MAX_RATE.name, "Maximum Rate", POSITIVE_LONG_VALIDATOR))
        for name, subject, validator in checks:
            value = values.get(name)
            if value is None:
                yield ValidationResult(subject, None, False, f"{subject} is required")
            else:
                yield validator(subject, value)

    # --- the throttles ----------------------------------------------------------------------

    def _config(self) -> str:
        """What the throttles depend on: changing it resets them (NiFi's onPropertyModified)."""
        return json.dumps(
            [
                self._criteria(),
                self._value(self.TIME_PERIOD),
                self._value(self.RATE_CONTROL_ATTRIBUTE_NAME),
                self._value(self.GROUPING_ATTRIBUTE_NAME),
            ]
        )

    def _period_ms(self) -> int:
        seconds = int(parse_time_period(self._value(self.TIME_PERIOD) or "1 min", "s"))
        return seconds * 1000

    def _maximums(self) -> dict[str, int]:
        """The data and count maximums the criteria uses."""
        criteria = self._criteria()
        if criteria == DATA_OR_FLOWFILE_RATE.value:
            return {
                _DATA: int(parse_data_size(self._value(self.MAX_DATA_RATE) or "0")),
                _COUNT: int(self._value(self.MAX_COUNT_RATE) or "0"),
            }
        maximum = self._value(self.MAX_RATE) or "0"
        if criteria == DATA_RATE.value:
            return {_DATA: int(parse_data_size(maximum))}
        return {_COUNT: int(maximum)}

    def _rate_attribute_valid(self, flowfile: FlowFile) -> bool:
        if self._criteria() != ATTRIBUTE_RATE.value:
            return True
        return _positive_long(
            flowfile.attributes.get(self._value(self.RATE_CONTROL_ATTRIBUTE_NAME) or "")
        )

    def _count_accrual(self, flowfile: FlowFile) -> int:
        if self._criteria() != ATTRIBUTE_RATE.value:
            return 1
        value = flowfile.attributes.get(self._value(self.RATE_CONTROL_ATTRIBUTE_NAME) or "")
        return int(value) if _positive_long(value) else -1  # type: ignore[arg-type]

    # --- triggering -------------------------------------------------------------------------

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Pass up to 1,000 FlowFiles the rate allows; hold or reroute the others."""
        now = context.now()
        config, period = self._config(), self._period_ms()
        committed = session.get_state().values
        throttles = load_throttles(committed, config, period)
        gate = _Gate(self, throttles, period, now)
        if self._routes_exceeded():
            flowfiles = session.get(MAX_FLOW_FILES_PER_BATCH)
            for flowfile in flowfiles:
                if not self._rate_attribute_valid(flowfile):
                    relationship = REL_FAILURE.name
                elif gate(flowfile).accept:
                    relationship = REL_SUCCESS.name
                else:
                    relationship = REL_RATE_EXCEEDED.name
                session.transfer(flowfile, relationship)
                context.logger.info("Routing %s to %s", flowfile, relationship)
                session.provenance.route(flowfile, relationship)
        else:
            flowfiles = session.get(gate)
            for flowfile in flowfiles:
                if self._rate_attribute_valid(flowfile):
                    context.logger.info("transferring %s to 'success'", flowfile)
                    session.transfer(flowfile, REL_SUCCESS.name)
                else:
                    context.logger.error(
                        "Routing %s to 'failure' due to missing or invalid attribute", flowfile
                    )
                    session.transfer(flowfile, REL_FAILURE.name)
        state = save_throttles(throttles, config, now)
        if state != dict(committed):  # a refusal may start a penalization: kept too
            session.set_state(state)
        if flowfiles:
            return
        if gate.rejected:
            context.yield_until(gate.opens_at())  # held: retried when the window allows
        else:
            context.yield_()


class _Gate:
    """NiFi's ``ThrottleFilter``: accepts what the group's throttles let through, 1,000 at most."""

    def __init__(
        self,
        processor: ControlRate,
        throttles: dict[tuple[str, str | None], Throttle],
        period_ms: int,
        now: int,
    ) -> None:
        self.processor = processor
        self.throttles = throttles
        self.period_ms = period_ms
        self.now = now
        self.maximums = processor._maximums()
        self.grouping = processor._value(processor.GROUPING_ATTRIBUTE_NAME)
        self.in_batch = 0
        #: the throttles that refused a FlowFile, with their maximum
        self.rejected: dict[tuple[str, str | None], int] = {}

    def _throttle(self, kind: str, group: str | None) -> Throttle:
        return self.throttles.setdefault((kind, group), Throttle(self.period_ms))

    def _accepted(self) -> FlowFileFilterResult:
        self.in_batch += 1
        if self.in_batch >= MAX_FLOW_FILES_PER_BATCH:
            self.in_batch = 0
            return FlowFileFilterResult.ACCEPT_AND_TERMINATE
        return FlowFileFilterResult.ACCEPT_AND_CONTINUE

    def __call__(self, flowfile: FlowFile) -> FlowFileFilterResult:
        processor = self.processor
        if not processor._rate_attribute_valid(flowfile):
            return FlowFileFilterResult.ACCEPT_AND_TERMINATE  # the processor routes it
        group = None if self.grouping is None else flowfile.attributes.get(self.grouping)
        data_limited = False
        if _DATA in self.maximums:
            throttle = self._throttle(_DATA, group)
            if throttle.try_add(flowfile.size, self.maximums[_DATA], self.now):
                result = self._accepted()
                if not result.proceed or _COUNT not in self.maximums:
                    return result
            else:
                data_limited = True
                self.rejected[(_DATA, group)] = self.maximums[_DATA]
        if _COUNT in self.maximums and not data_limited:
            throttle = self._throttle(_COUNT, group)
            accrual = processor._count_accrual(flowfile)
            if throttle.try_add(accrual, self.maximums[_COUNT], self.now):
                return self._accepted()
            self.rejected[(_COUNT, group)] = self.maximums[_COUNT]
        if self.grouping is None:
            return FlowFileFilterResult.REJECT_AND_TERMINATE
        return FlowFileFilterResult.REJECT_AND_CONTINUE

    def opens_at(self) -> int:
        """When the first throttle that refused a FlowFile may accept again (epoch ms)."""
        return min(self.throttles[k].opens_at(m, self.now) for k, m in self.rejected.items())
