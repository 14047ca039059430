"""What a flow means, as a plain value two flows compare by: the round trips' equality.

``Flow.from_nifi(flow.to_nifi())`` and a flow written by ``flowcore convert --to python`` must be
the flow they came from; :func:`flow_structure` says what "the same" means (``Flow.same_as``
and ``Flow.describe_structure`` call it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flowcore.definition.component_settings import (
    DEFAULT_FLOWFILE_EXPIRATION,
    DEFAULT_MAX_BACKOFF_PERIOD,
    SchedulingStrategy,
)
from flowcore.definition.flow import Component, Connection, FlowDefinition
from flowcore.parameters import ParameterContext
from flowcore.processor.base import Processor
from flowcore.services import MapCacheService
from flowcore.units import parse_data_size, parse_time_period

__all__ = ["flow_structure", "same_flow"]


def flow_structure(flow: FlowDefinition) -> dict[str, Any]:
    """What the flow means, as a plain value two flows compare by (:func:`same_flow`).

    Components by name, with their type, effective property values as written (``#{p}``
    kept; a default stands for an unset property), advanced configuration and NiFi
    settings (periods in milliseconds, unset durations as NiFi's defaults); connections
    by their ends' names and relationships, with effective queue settings; the
    auto-terminated relationships; the parameter context's tree (a sensitive value never
    shows); the services processors use. Ids, positions and ``durable=True`` are left
    out: they are how a flow runs or is drawn, not what it does, and NiFi has no place for
    them.
    """
    names = {c.id: c.name for c in flow.components}
    used = {
        name
        for c in flow.components
        if c.processor is not None
        for name in c.processor.referenced_services().values()
    }
    return {
        "name": flow.name,
        "parameters": _context_structure(flow.parameters, flow.name),
        "components": {
            c.name: _component_structure(c, flow.auto_terminated(c))
            for c in sorted(flow.components, key=lambda c: c.name)
        },
        "connections": sorted(
            (_connection_structure(c, names) for c in flow.connections), key=repr
        ),
        "services": {  # those processors use: another has no effect
            name: (service.maximum_cache_entries, service.eviction_strategy.value)
            if isinstance(service, MapCacheService)
            else service.fingerprint()
            for name, service in sorted(flow.services.items())
            if name in used
        },
    }


def same_flow(one: FlowDefinition, other: FlowDefinition) -> bool:
    """Whether two flows mean the same (:func:`flow_structure`), however they were built."""
    return flow_structure(one) == flow_structure(other)


# --- the structure flows compare by ------------------------------------------------------------


def _millis(text: str | None, default: str) -> int | str:
    """A period in milliseconds (text that does not parse, a cron expression say, as it is)."""
    try:
        return int(parse_time_period(text or default, "ms"))
    except ValueError:
        return text or default


def _effective_properties(processor: Processor) -> dict[str, str]:
    raw = processor.raw_configured
    descriptors = processor.descriptors()
    values = {d.name: raw.get(d.name, d.default) for d in descriptors}
    values.update(raw)
    for descriptor in descriptors:  # "Tracking Timestamps" and "timestamps" are one value
        values[descriptor.name] = descriptor.stored_value(values[descriptor.name])
    return {name: value for name, value in sorted(values.items()) if value is not None}


def _component_structure(component: Component, terminated: frozenset[str]) -> dict[str, Any]:
    processor = component.processor
    retry = component.retry if component.retry and component.retry.relationships else None
    timer = component.scheduling_strategy is SchedulingStrategy.TIMER_DRIVEN
    return {
        "type": component.type_name,
        "properties": _effective_properties(processor) if processor else {},
        "advanced": processor.advanced_configuration() if processor else (),
        "auto_terminated": sorted(terminated),
        "concurrent_tasks": component.concurrent_tasks,
        "scheduling_strategy": component.scheduling_strategy.value,
        "run_schedule": _millis(component.run_schedule, "0 sec")
        if timer
        else component.run_schedule,
        "penalty_ms": _millis(component.penalty_duration, "30 sec"),
        "yield_ms": _millis(component.yield_duration, "1 sec"),
        "disabled": component.disabled,
        "retry": None
        if retry is None
        else (
            sorted(retry.relationships),
            retry.count,
            retry.backoff_mechanism.value,
            _millis(retry.max_backoff_period, DEFAULT_MAX_BACKOFF_PERIOD),
        ),
        "comments": component.comments,
    }


def _connection_structure(connection: Connection, names: Mapping[str, str]) -> dict[str, Any]:
    settings = connection.queue_settings
    try:
        size: float | str = parse_data_size(settings.back_pressure_data_size_threshold)
    except ValueError:
        size = settings.back_pressure_data_size_threshold
    return {
        "source": names[connection.source],
        "relationships": sorted(connection.relationships),
        "destination": names[connection.destination],
        "name": connection.name,
        "back_pressure_objects": settings.back_pressure_object_threshold,
        "back_pressure_bytes": size,
        "expiration_ms": _millis(settings.flowfile_expiration, DEFAULT_FLOWFILE_EXPIRATION),
        "prioritizers": [p.value for p in settings.prioritizers],
        "load_balance_strategy": connection.load_balance_strategy.value,
        "partitioning_attribute": connection.partitioning_attribute,
    }


def _context_structure(context: ParameterContext, default_name: str) -> dict[str, Any]:
    return {
        "name": context.name or default_name,
        "description": context.description,
        "parameters": sorted(
            (
                p.name,
                p.description,
                p.sensitive,
                None if p.sensitive else p.value,
            )
            for p in context.parameters
        ),
        "inherited": [_context_structure(c, "") for c in context.inherited],
    }
