"""Queue behaviour, as NiFi's connections have it (reference/nifi-framework.md §5).

What a queue does to the FlowFiles in it, in one place for the driver and the tasks: back
pressure (a queue at its object or size threshold holds back the stage that feeds it),
prioritizers (the order FlowFiles leave a queue in: FIFO unless prioritizers say otherwise),
FlowFile expiration, and the park queues where FlowFiles that came by a pipelined connection
wait after their processor failed on them or returned them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from flowcore.definition.component_settings import Prioritizer
from flowcore.definition.flow import Connection
from flowcore.flowfile import FlowFile
from flowcore.units import parse_data_size

__all__ = [
    "back_pressured",
    "expired",
    "full_connections",
    "park_queue_id",
    "parked_component",
    "prioritized",
    "queue_order",
]

_PARK = "park:"


def park_queue_id(component_id: str) -> str:
    """The park queue of *component_id*.

    FlowFiles that arrived by a pipelined connection wait there after the processor failed on
    them or returned them (rollback, yield).
    """
    return f"{_PARK}{component_id}"


def parked_component(queue_id: str) -> str | None:
    """The component whose park queue *queue_id* is, or None for a connection's queue."""
    return queue_id.removeprefix(_PARK) if queue_id.startswith(_PARK) else None


def back_pressured(connection: Connection, queued: tuple[int, int]) -> bool:
    """NiFi's ``isFull``: count or bytes at or over its threshold (a threshold <= 0 is off)."""
    settings = connection.queue_settings
    count, size = queued
    max_count = settings.back_pressure_object_threshold
    max_bytes = parse_data_size(settings.back_pressure_data_size_threshold, "B")
    return (max_count > 0 and count >= max_count) or (max_bytes > 0 and size >= max_bytes)


def full_connections(
    outputs: Iterable[Connection],
    inputs: Iterable[str],
    queued: Callable[[str], tuple[int, int]],
) -> list[Connection]:
    """The stage's output queues that are full, so the stage must not be scheduled.

    Queues that are also the stage's own inputs (a cycle inside one stage) never hold it back:
    only running it can drain them.
    """
    own = set(inputs)
    return [c for c in outputs if c.id not in own and back_pressured(c, queued(c.id))]


def queue_order(flowfile: FlowFile) -> tuple[int, int, int]:
    """FIFO order (NiFi's FirstInFirstOutPrioritizer): queue date, then index, then id."""
    return (flowfile.queue_date, flowfile.queue_date_index, flowfile.id)


def _priority_key(flowfile: FlowFile) -> tuple[int, int, str]:
    value = flowfile.attributes.get("priority")
    if value is None:
        return (2, 0, "")
    try:
        return (0, int(value.strip()), "")
    except ValueError:
        return (1, 0, value)


_PRIORITIZER_KEYS: dict[Prioritizer, Callable[[FlowFile], Any]] = {
    Prioritizer.FIRST_IN_FIRST_OUT: queue_order,
    Prioritizer.OLDEST_FLOWFILE_FIRST: lambda f: (f.lineage_start_date, f.lineage_start_index),
    Prioritizer.NEWEST_FLOWFILE_FIRST: lambda f: (-f.lineage_start_date, -f.lineage_start_index),
    Prioritizer.PRIORITY_ATTRIBUTE: _priority_key,
}


def prioritized(flowfiles: list[FlowFile], prioritizers: Sequence[Prioritizer]) -> list[FlowFile]:
    """Queue order: the prioritizers in turn, then FIFO (NiFi's QueuePrioritizer)."""
    keys = [_PRIORITIZER_KEYS[p] for p in prioritizers]
    return sorted(flowfiles, key=lambda f: (*(k(f) for k in keys), queue_order(f)))


def expired(flowfile: FlowFile, expiration_ms: int | None, now: int) -> bool:
    """NiFi's FlowFile Expiration: older than the queue's threshold since it entered the flow."""
    return expiration_ms is not None and now - flowfile.entry_date > expiration_ms
