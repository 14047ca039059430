"""The flow definition and its validation: the first step of the path of data.

A flow is a :class:`~flowcore.definition.flow.FlowDefinition` (components, connections and
their settings, a frozen value, :mod:`flowcore.definition.flow`), the queue, scheduling and retry
settings of its parts (:mod:`flowcore.definition.component_settings`), what its queues do (back
pressure, prioritizers, expiration, park queues: :mod:`flowcore.definition.queues`), and the
checks a flow passes before it is compiled (:mod:`flowcore.definition.validation`).

The names below are loaded when first asked for (PEP 562): ``import flowcore`` loads
``component_settings`` through this package, and a Spark worker must not pay for the
definition and its validation too.
"""

from typing import Any

#: Each re-exported name, with the module that defines it.
_DEFINED_IN = {
    "BackoffMechanism": "flowcore.definition.component_settings",
    "Component": "flowcore.definition.flow",
    "ComponentKind": "flowcore.definition.flow",
    "Connection": "flowcore.definition.flow",
    "FlowDefinition": "flowcore.definition.flow",
    "FlowProblem": "flowcore.definition.validation",
    "LoadBalanceStrategy": "flowcore.definition.component_settings",
    "Prioritizer": "flowcore.definition.component_settings",
    "QueueSettings": "flowcore.definition.component_settings",
    "RetrySettings": "flowcore.definition.component_settings",
    "SchedulingStrategy": "flowcore.definition.component_settings",
    "problems_of": "flowcore.definition.validation",
    "validate_flow": "flowcore.definition.validation",
}

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


def __getattr__(name: str) -> Any:
    """A re-exported name, imported from its module when first asked for."""
    if name not in _DEFINED_IN:
        msg = f"module 'flowcore.definition' has no attribute {name!r}"
        raise AttributeError(msg)
    import importlib  # noqa: PLC0415 - only when a name is asked for

    return getattr(importlib.import_module(_DEFINED_IN[name]), name)


def __dir__() -> list[str]:
    """The package's names, the lazy ones included."""
    return sorted({*globals(), *__all__})
