"""Tests for flowcore/definition/queues.py: back pressure, prioritizers, expiration, park queues."""

from __future__ import annotations

from flowcore.definition.component_settings import Prioritizer, QueueSettings
from flowcore.definition.flow import Connection
from flowcore.definition.queues import (
    back_pressured,
    expired,
    full_connections,
    park_queue_id,
    parked_component,
    prioritized,
)
from flowcore.flowfile import FlowFile


def _connection(**settings: object) -> Connection:
    return Connection("c1", "a", ("success",), "b", QueueSettings(**settings) if settings else None)


def test_back_pressure_by_count_or_bytes() -> None:
    """A queue is full at its object threshold or its data size threshold."""
    connection = _connection(
        back_pressure_object_threshold=10, back_pressure_data_size_threshold="1 KB"
    )
    assert not back_pressured(connection, (9, 1023))
    assert back_pressured(connection, (10, 0))
    assert back_pressured(connection, (0, 1024))


def test_back_pressure_defaults_are_nifis() -> None:
    """Without settings a connection is full at 10,000 FlowFiles or 1 GB."""
    connection = _connection()
    assert not back_pressured(connection, (9_999, 0))
    assert back_pressured(connection, (10_000, 0))
    assert back_pressured(connection, (0, 1024**3))


def test_zero_threshold_disables_that_dimension() -> None:
    """A threshold of 0 never applies."""
    connection = _connection(back_pressure_object_threshold=0)
    assert not back_pressured(connection, (10**9, 0))


def test_full_connections_ignore_the_stages_own_inputs() -> None:
    """A queue that is also the stage's input never holds the stage back (a cycle)."""
    connection = _connection(back_pressure_object_threshold=1)
    assert full_connections([connection], ["c1"], lambda _: (5, 0)) == []
    assert full_connections([connection], [], lambda _: (5, 0)) == [connection]


def test_prioritizers_order_then_fifo() -> None:
    """The priority attribute sorts first (numbers, then text, then none), FIFO breaks ties."""
    flowfiles = [
        FlowFile.create(1, 10, {"priority": "b"}),
        FlowFile.create(2, 20, {"priority": "2"}),
        FlowFile.create(3, 30, {}),
        FlowFile.create(4, 40, {"priority": "1"}),
        FlowFile.create(5, 50, {"priority": "2"}),
    ]
    ordered = prioritized(flowfiles, [Prioritizer.PRIORITY_ATTRIBUTE])
    assert [f.id for f in ordered] == [4, 2, 5, 1, 3]
    assert [f.id for f in prioritized(flowfiles[::-1], [])] == [1, 2, 3, 4, 5]


def test_expiration_counts_from_entry_into_the_flow() -> None:
    """A FlowFile expires once older than the threshold; no threshold, never."""
    flowfile = FlowFile.create(1, 1_000)
    assert not expired(flowfile, 500, 1_500)
    assert expired(flowfile, 500, 1_501)
    assert not expired(flowfile, None, 10**12)


def test_park_queues_name_their_component() -> None:
    """A park queue id leads back to its component; a connection's queue to none."""
    assert parked_component(park_queue_id("Tag-2")) == "Tag-2"
    assert parked_component("c1") is None
