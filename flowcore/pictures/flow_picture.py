"""A compiled flow as a picture: stages as clusters, every connection and exit as an edge.

Every relationship of every component appears once per place it leads: a connection (one edge,
labelled with all the relationships it carries, so parallel branches stay parallel) or the
auto-terminated exit (a dashed edge into a point of its own). Durable queues are drawn bold with
their reasons and NiFi queue settings (back pressure thresholds, prioritizers, expiration).
After a run, :class:`FlowCounts` (from the repository's ``status.json``) adds the FlowFiles and
bytes each edge carried and what is still queued.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from flowcore.compiler.stages import CompiledFlow, Stage, stage_notes
from flowcore.definition.component_settings import DEFAULT_FLOWFILE_EXPIRATION, LoadBalanceStrategy
from flowcore.definition.flow import Component, ComponentKind, Connection, FlowDefinition
from flowcore.pictures.model import Cluster, Edge, EdgeKind, Node, NodeKind, Picture
from flowcore.processor.base import ProcessorKind
from flowcore.settings import Settings
from flowcore.units import parse_time_period

__all__ = ["FlowCounts", "flow_picture", "format_bytes"]

_UNITS = ("B", "KB", "MB", "GB", "TB")


def format_bytes(size: int) -> str:
    """A byte count as people read it: ``512 B``, ``1.5 KB``, ``12.0 MB`` (1 KB is 1,024 B)."""
    value = float(size)
    for unit in _UNITS:
        if value < 1024 or unit == _UNITS[-1]:
            return f"{int(value):,} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    raise AssertionError  # pragma: no cover - the loop returns at the last unit


def _pair(value: Any) -> tuple[int, int]:
    count, size = value
    return int(count), int(size)


@attrs.frozen
class FlowCounts:
    """What a run moved, as the repository's ``status.json`` records it after each commit.

    Attributes:
        transfers: per component name, per relationship: ``(FlowFiles, bytes)`` of the last run.
        queued: per queue id (a durable connection's id): ``(FlowFiles, bytes)`` still queued.
    """

    transfers: Mapping[str, Mapping[str, tuple[int, int]]]
    queued: Mapping[str, tuple[int, int]] = attrs.field(factory=dict)

    @classmethod
    def from_status(cls, status: Mapping[str, Any]) -> FlowCounts:
        """Read the ``transfers`` and ``queues`` of a ``status.json`` (missing parts are empty)."""
        transfers = {
            component: {rel: _pair(value) for rel, value in relationships.items()}
            for component, relationships in (status.get("transfers") or {}).items()
        }
        queued = {
            queue_id: (int(queue.get("flowfiles", 0)), int(queue.get("bytes", 0)))
            for queue_id, queue in (status.get("queues") or {}).items()
        }
        return cls(transfers, queued)

    def carried(self, component: str, relationships: Iterable[str]) -> tuple[int, int]:
        """FlowFiles and bytes *component* sent to any of *relationships*."""
        mine = self.transfers.get(component, {})
        pairs = [mine.get(r, (0, 0)) for r in relationships]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)


def _count_text(count: int, size: int) -> str:
    return f"{count:,} FlowFile{'' if count == 1 else 's'}, {format_bytes(size)}"


def _type_line(component: Component) -> str:
    if component.kind is ComponentKind.FUNNEL:
        return "Funnel"
    return component.type_name


def _node(component: Component, flow: FlowDefinition) -> Node:
    """A component's node: its name, then its type when the name does not say it."""
    if component.kind is ComponentKind.FUNNEL:
        kind = NodeKind.FUNNEL
    elif flow.kind_of(component) is ProcessorKind.SOURCE:
        kind = NodeKind.SOURCE
    else:
        kind = NodeKind.PROCESSOR
    type_name = _type_line(component)
    label = (component.name,) if component.name == type_name else (component.name, type_name)
    data = {"component_id": component.id, "name": component.name, "type": type_name}
    if component.disabled:
        label = (*label, "DISABLED")
        data["disabled"] = True
    elif flow.is_dead_end(component):  # valid, as in NiFi: FlowFiles wait queued before it
        label = (*label, "no outgoing connection")
        data["dead_end"] = True
    return Node(component.id, label, kind, data=data)


def _queue_notes(compiled: CompiledFlow, connection: Connection) -> list[str]:
    """A durable connection's reasons and effective NiFi queue settings."""
    reasons = ", ".join(r.value for r in compiled.durable[connection.id])
    settings = connection.queue_settings
    notes = [
        f"durable: {reasons}",
        f"back pressure: {settings.back_pressure_object_threshold:,} FlowFiles / "
        f"{settings.back_pressure_data_size_threshold}",
    ]
    if settings.prioritizers:
        notes.append("prioritizers: " + ", ".join(p.value for p in settings.prioritizers))
    expires = settings.flowfile_expiration
    if parse_time_period(expires, "ms") != parse_time_period(DEFAULT_FLOWFILE_EXPIRATION, "ms"):
        notes.append(f"expires after {expires}")
    return notes


def _connection_edge(
    compiled: CompiledFlow, connection: Connection, counts: FlowCounts | None
) -> Edge:
    flow = compiled.flow
    durable = connection.id in compiled.durable
    notes = _queue_notes(compiled, connection) if durable else []
    data: dict[str, Any] = {
        "connection_id": connection.id,
        "relationships": list(connection.relationships),
        "durable": durable,
    }
    if durable:
        settings = connection.queue_settings
        data.update(
            reasons=[r.name.lower() for r in compiled.durable[connection.id]],
            back_pressure_object_threshold=settings.back_pressure_object_threshold,
            back_pressure_data_size_threshold=settings.back_pressure_data_size_threshold,
            flowfile_expiration=settings.flowfile_expiration,
            prioritizers=[p.value for p in settings.prioritizers],
        )
    strategy = connection.load_balance_strategy
    if strategy is not LoadBalanceStrategy.DO_NOT_LOAD_BALANCE:
        on = connection.partitioning_attribute
        notes.append(
            f"load balance: {strategy.value}{f' on {on!r}' if on else ''} (Spark spreads every "
            "stage over its tasks)"
        )
        data.update(load_balance_strategy=strategy.value, partitioning_attribute=on)
    if counts is not None:
        source = flow.component(connection.source).name
        count, size = counts.carried(source, connection.relationships)
        notes.append(_count_text(count, size))
        data.update(flowfiles=count, bytes=size)
        queued = counts.queued.get(connection.id)
        if queued and queued[0]:
            notes.append(f"queued: {_count_text(*queued)}")
            data.update(queued_flowfiles=queued[0], queued_bytes=queued[1])
    return Edge(
        connection.source,
        connection.destination,
        ", ".join(connection.relationships),
        EdgeKind.DURABLE if durable else EdgeKind.PIPELINED,
        notes,
        data,
    )


def _drop_id(component: Component) -> str:
    return f"{component.id}:auto-terminated"


def _dropped(
    flow: FlowDefinition, component: Component, counts: FlowCounts | None
) -> tuple[Node, Edge] | None:
    """The node and edge of *component*'s auto-terminated relationships, when it has any."""
    connected = {r for c in flow.outgoing(component) for r in c.relationships}
    dropped = flow.terminated(component) - connected  # a processor's defaults too; NiFi's rule
    names = [r for r in component.relationship_names() if r in dropped]
    if not names:
        return None
    notes = ["auto-terminated"]
    data: dict[str, Any] = {"relationships": names, "auto_terminated": True}
    if counts is not None:
        count, size = counts.carried(component.name, names)
        notes.append(_count_text(count, size))
        data.update(flowfiles=count, bytes=size)
    node = Node(_drop_id(component), "dropped", NodeKind.DROP)
    edge = Edge(component.id, node.id, ", ".join(names), EdgeKind.DROPPED, notes, data)
    return node, edge


def _cluster(
    compiled: CompiledFlow,
    stage: Stage,
    members: list[str],
    runner: str | None,
    settings: Settings | None,
) -> Cluster:
    """A stage's frame with the compiler's notes on it (the edges say why queues are durable)."""
    notes = stage_notes(compiled, stage, reasons=False, runner=runner, settings=settings)
    return Cluster(stage.id, stage.id, tuple(members), tuple(notes))


def flow_picture(
    compiled: CompiledFlow,
    counts: FlowCounts | None = None,
    *,
    runner: str | None = None,
    settings: Settings | None = None,
) -> Picture:
    """The picture of *compiled*: one cluster per stage, in execution order.

    Args:
        compiled: the compiled flow (``compile_flow(flow)``).
        counts: what the last run moved, to write on the edges; None before any run.
        runner: the runner a run would use (``"spark"`` notes which stage runs go to the
            driver's process instead); None when it is not known.
        settings: the settings a run would use (the limits those notes quote); None for the
            defaults.
    """
    flow = compiled.flow
    nodes: list[Node] = []
    edges: list[Edge] = []
    clusters: list[Cluster] = []
    for stage in compiled.stages:
        members: list[str] = []
        for component_id in stage.members:
            component = flow.component(component_id)
            nodes.append(_node(component, flow))
            members.append(component.id)
            edges.extend(_connection_edge(compiled, c, counts) for c in flow.outgoing(component))
            dropped = _dropped(flow, component, counts)
            if dropped is not None:
                nodes.append(dropped[0])
                edges.append(dropped[1])
                members.append(dropped[0].id)
        clusters.append(_cluster(compiled, stage, members, runner, settings))
    processors = sum(1 for c in flow.components if c.kind is ComponentKind.PROCESSOR)
    funnels = len(flow.components) - processors
    parts = [f"{processors} processor(s)"]
    if funnels:
        parts.append(f"{funnels} funnel(s)")
    parts += [f"{len(flow.connections)} connection(s)", f"{len(compiled.stages)} stage(s)"]
    title = f"flow '{flow.name}': " + ", ".join(parts)
    notes = ("counts: the last run's, from the repository",) if counts is not None else ()
    return Picture(title, tuple(nodes), tuple(edges), tuple(clusters), notes)
