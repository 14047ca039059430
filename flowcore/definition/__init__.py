"""The flow definition and its validation: the first step of the path of data.

A flow is a :class:`~flowcore.definition.flow.FlowDefinition` (components, connections and
their settings, a frozen value, :mod:`flowcore.definition.flow`), the queue, scheduling and retry
settings of its parts (:mod:`flowcore.definition.component_settings`), what its queues do (back
pressure, prioritizers, expiration, park queues: :mod:`flowcore.definition.queues`), and the
checks a flow passes before it is compiled (:mod:`flowcore.definition.validation`).
"""

from flowcore.definition.component_settings import (
    BackoffMechanism,
    LoadBalanceStrategy,
    Prioritizer,
    QueueSettings,
    RetrySettings,
    SchedulingStrategy,
)
from flowcore.definition.flow import Component, ComponentKind, Connection, FlowDefinition
from flowcore.definition.validation import FlowProblem, problems_of, validate_flow

__all__ = [
    "BackoffMechanism",
    "Component",
    "ComponentKind",
    "Connection",
    "FlowDefinition",
    "FlowProblem",
    "LoadBalanceStrategy",
    "Prioritizer",
    "QueueSettings",
    "RetrySettings",
    "SchedulingStrategy",
    "problems_of",
    "validate_flow",
]
