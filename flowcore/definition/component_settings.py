"""The settings a flow's components and connections carry, as values with NiFi's names.

A connection's queue settings (back pressure at 10,000 FlowFiles or 1 GB, FlowFile expiration
``0 sec``: never, prioritizers: FIFO when none, reference/nifi-framework.md §5), a component's
scheduling strategy and its relationships' retry settings. They are apart from
:mod:`flowcore.definition.flow` because they are plain values the queues, the compiler and the NiFi
import read on their own, without the graph of a flow definition.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

import attrs

from flowcore.errors import FlowDefinitionError
from flowcore.processor.relationship import Relationship
from flowcore.validators import DATA_SIZE_VALIDATOR, TIME_PERIOD_VALIDATOR

__all__ = [
    "DEFAULT_BACK_PRESSURE_DATA_SIZE",
    "DEFAULT_BACK_PRESSURE_OBJECTS",
    "DEFAULT_FLOWFILE_EXPIRATION",
    "DEFAULT_MAX_BACKOFF_PERIOD",
    "DEFAULT_RETRY_COUNT",
    "DEFAULT_RUN_SCHEDULE",
    "BackoffMechanism",
    "LoadBalanceStrategy",
    "Prioritizer",
    "QueueSettings",
    "RetrySettings",
    "SchedulingStrategy",
    "enum_member",
    "period_text",
]

DEFAULT_BACK_PRESSURE_OBJECTS = 10_000  # nifi.queue.backpressure.count
DEFAULT_BACK_PRESSURE_DATA_SIZE = "1 GB"  # nifi.queue.backpressure.size
DEFAULT_FLOWFILE_EXPIRATION = "0 sec"  # never
DEFAULT_RUN_SCHEDULE = "0 sec"  # NiFi's: as often as there is work and room
DEFAULT_RETRY_COUNT = 10  # NiFi's Number of Retry Attempts
DEFAULT_MAX_BACKOFF_PERIOD = "10 mins"  # NiFi's Max Backoff Period


class Prioritizer(enum.Enum):
    """NiFi's standard prioritizers, by their class names."""

    FIRST_IN_FIRST_OUT = "FirstInFirstOutPrioritizer"
    OLDEST_FLOWFILE_FIRST = "OldestFlowFileFirstPrioritizer"
    NEWEST_FLOWFILE_FIRST = "NewestFlowFileFirstPrioritizer"
    PRIORITY_ATTRIBUTE = "PriorityAttributePrioritizer"


def enum_member(kind: type[enum.Enum], what: str) -> Any:
    """A converter to a member of *kind* from the member, its value or its name (any case)."""

    def convert(value: enum.Enum | str) -> enum.Enum:
        if isinstance(value, kind):
            return value
        for member in kind:
            if str(value).upper() in (str(member.value).upper(), member.name):
                return member
        known = ", ".join(m.value for m in kind)
        msg = f"unknown {what} {value!r}; use one of {known}"
        raise FlowDefinitionError(msg)

    return convert


_prioritizer = enum_member(Prioritizer, "prioritizer")


def _prioritizers(values: Iterable[Prioritizer | str]) -> tuple[Prioritizer, ...]:
    return tuple(_prioritizer(v) for v in values)


def _size_text(value: str | int) -> str:
    return value if isinstance(value, str) else DATA_SIZE_VALIDATOR.to_string(value)


def period_text(value: str | int | float) -> str:
    """A time period as NiFi writes it (``"30 sec"``); numbers are seconds."""
    return value if isinstance(value, str) else TIME_PERIOD_VALIDATOR.to_string(value)


@attrs.frozen
class QueueSettings:
    """A connection's queue settings, NiFi's names and defaults.

    Attributes:
        back_pressure_object_threshold: FlowFiles queued before upstream stops being scheduled
            (0 disables).
        back_pressure_data_size_threshold: bytes queued before upstream stops, e.g. ``"1 GB"``.
        flowfile_expiration: age (from entry into the flow) after which a queued FlowFile is
            dropped with an EXPIRE event; ``"0 sec"`` never expires.
        prioritizers: ordering of the queue; FIFO when empty.
    """

    back_pressure_object_threshold: int = DEFAULT_BACK_PRESSURE_OBJECTS
    back_pressure_data_size_threshold: str = attrs.field(
        default=DEFAULT_BACK_PRESSURE_DATA_SIZE, converter=_size_text
    )
    flowfile_expiration: str = attrs.field(
        default=DEFAULT_FLOWFILE_EXPIRATION, converter=period_text
    )
    prioritizers: tuple[Prioritizer, ...] = attrs.field(default=(), converter=_prioritizers)


class SchedulingStrategy(enum.Enum):
    """NiFi's Scheduling Strategy: what a component's ``run_schedule`` means."""

    TIMER_DRIVEN = "TIMER_DRIVEN"  # run_schedule is a period ("0 sec", "1 min")
    CRON_DRIVEN = "CRON_DRIVEN"  # run_schedule is a Quartz cron expression ("0 0 * * * ?")


class BackoffMechanism(enum.Enum):
    """NiFi's Retry Back Off Policy: what waits before a retried FlowFile is tried again."""

    PENALIZE_FLOWFILE = "PENALIZE_FLOWFILE"  # the FlowFile waits; others go on
    YIELD_PROCESSOR = "YIELD_PROCESSOR"  # the processor waits; nothing else runs through it


class LoadBalanceStrategy(enum.Enum):
    """NiFi's connection Load Balance Strategy (how a cluster spreads a queue over its nodes)."""

    DO_NOT_LOAD_BALANCE = "DO_NOT_LOAD_BALANCE"
    PARTITION_BY_ATTRIBUTE = "PARTITION_BY_ATTRIBUTE"
    ROUND_ROBIN = "ROUND_ROBIN"
    SINGLE_NODE = "SINGLE_NODE"


def _names(values: str | Iterable[str | Relationship]) -> tuple[str, ...]:
    if isinstance(values, str | Relationship):
        return (str(values),)
    return tuple(str(v) for v in values)


@attrs.frozen
class RetrySettings:
    """NiFi's relationship retry (1.16+): FlowFiles routed to *relationships* are tried again.

    A FlowFile the processor routes to a retried relationship goes back to the processor's input
    instead, up to *count* times, waiting between tries per *backoff_mechanism*, doubling the
    wait from the Penalty (or Yield) Duration up to *max_backoff_period*; after the last try
    it follows the relationship.

    Attributes:
        relationships: the retried relationships.
        count: NiFi's Number of Retry Attempts (default 10).
        backoff_mechanism: penalize the FlowFile (default) or yield the processor.
        max_backoff_period: the longest wait between tries (default ``10 mins``).
    """

    relationships: tuple[str, ...] = attrs.field(converter=_names)
    count: int = DEFAULT_RETRY_COUNT
    backoff_mechanism: BackoffMechanism = attrs.field(
        default=BackoffMechanism.PENALIZE_FLOWFILE,
        converter=enum_member(BackoffMechanism, "backoff mechanism"),
    )
    max_backoff_period: str = attrs.field(default=DEFAULT_MAX_BACKOFF_PERIOD, converter=period_text)
