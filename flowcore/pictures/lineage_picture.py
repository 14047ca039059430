"""A FlowFile's lineage as a picture, with large fan-outs shown compactly.

The provenance repository gives lineage as a networkx graph (``repository.lineage(uuid)``):
FlowFile nodes (their uuids) and event nodes (``event:ID`` with ``event_type``, ``time`` and
``component``), edges parent -> event -> child, and FlowFile -> event for events that link no
other FlowFile. A split makes one FORK with a thousand children; drawing each is a thousand
lines nobody reads. So an event with more than :data:`SHOWN_PER_FAN` children (or parents)
keeps its first and last few, the FlowFile asked about and its ancestors, and one ``more`` node
counting the others and the events they had. What is then no longer connected to the FlowFile
asked about is left out too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import networkx as nx

from flowcore.pictures.model import Edge, Node, NodeKind, Picture

__all__ = ["FIRST_SHOWN", "LAST_SHOWN", "SHOWN_PER_FAN", "lineage_picture"]

SHOWN_PER_FAN = 8  # children (or parents) of one event shown whole; past it, first and last few
FIRST_SHOWN = 3  # FlowFiles kept at the start of a fan past SHOWN_PER_FAN
LAST_SHOWN = 2  # FlowFiles kept at its end


def _is_event(graph: nx.DiGraph, node: str) -> bool:
    return graph.nodes[node].get("kind") == "event"


def _event_id(node: str) -> int:
    return int(node.split(":", 1)[1])


def _order(graph: nx.DiGraph, node: str) -> tuple[int, ...]:
    data = graph.nodes[node]
    return (int(data.get("time") or 0), _event_id(node)) if _is_event(graph, node) else ()


def _hidden_in(fan: Sequence[str], keep: set[str]) -> list[str]:
    """The FlowFiles of a fan that are left out: all but the first and last few and *keep*."""
    if len(fan) <= SHOWN_PER_FAN:
        return []
    middle = fan[FIRST_SHOWN : len(fan) - LAST_SHOWN]
    return [f for f in middle if f not in keep]


def _ancestry(graph: nx.DiGraph, flowfile_uuid: str) -> set[str]:
    """The FlowFile asked about and the ancestors that connect it to its roots.

    Of a large fan of parents (a JOIN's) only those a picture shows anyway are followed, so a
    merged FlowFile does not keep all its parents.
    """
    keep = {flowfile_uuid}
    stack = [flowfile_uuid]
    while stack:
        for event in graph.predecessors(stack.pop()):
            parents = list(graph.predecessors(event))
            if len(parents) > SHOWN_PER_FAN:
                parents = parents[:FIRST_SHOWN] + parents[len(parents) - LAST_SHOWN :]
            fresh = [p for p in parents if p not in keep]
            keep.update(fresh)
            stack.extend(fresh)
    return keep


def _cuts(graph: nx.DiGraph, flowfile_uuid: str) -> dict[str, list[str]]:
    """Per event with a large fan of children or parents: the FlowFiles left out of it."""
    keep = _ancestry(graph, flowfile_uuid)
    cuts: dict[str, list[str]] = {}
    for node in graph.nodes:
        if _is_event(graph, node):
            for fan in (list(graph.successors(node)), list(graph.predecessors(node))):
                hidden = _hidden_in(fan, keep)
                if hidden:
                    cuts.setdefault(node, []).extend(hidden)
    return cuts


def _compact(graph: nx.DiGraph, flowfile_uuid: str, hidden: set[str]) -> nx.DiGraph:
    """The graph without *hidden* FlowFiles and whatever that cuts off from *flowfile_uuid*.

    An event that only touched hidden FlowFiles (a split child's ROUTE) then stands alone, and
    goes with them.
    """
    compact = graph.copy()
    compact.remove_nodes_from(hidden)
    connected = nx.node_connected_component(compact.to_undirected(as_view=True), flowfile_uuid)
    compact.remove_nodes_from([n for n in list(compact.nodes) if n not in connected])
    return compact


def _when(millis: int) -> str:
    moment = datetime.fromtimestamp(millis / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _fan_text(graph: nx.DiGraph, node: str) -> list[str]:
    """How many parents and children an event links, when more than one."""
    parents = sum(1 for p in graph.predecessors(node) if not _is_event(graph, p))
    children = graph.out_degree(node)
    fans = []
    if parents > 1:
        fans.append(f"{parents:,} parents")
    if children > 1:
        fans.append(f"{children:,} children")
    return [", ".join(fans)] if fans else []


def _event_node(graph: nx.DiGraph, node: str) -> Node:
    data = graph.nodes[node]
    event_id = _event_id(node)
    kind = data.get("event_type", "UNKNOWN")
    component = data.get("component") or ""
    time = data.get("time")
    fans = _fan_text(graph, node)
    when = _when(int(time)) if time is not None else ""
    label = [f"{kind} event {event_id}", *([component] if component else []), *fans]
    if when:
        label.append(when)
    line = " ".join(
        part
        for part in (when, f"{kind} event {event_id}", f"({component})" if component else "", *fans)
        if part
    )
    facts: dict[str, Any] = {"event_id": event_id, "event_type": kind, "component": component}
    if time is not None:
        facts["time"] = int(time)
    return Node(node, tuple(label), NodeKind.EVENT, _order(graph, node), data=facts, line=line)


def _more_node(graph: nx.DiGraph, event: str, hidden: list[str], position: int) -> Node:
    """The node standing for an event's children left out, with the events they went through."""
    children = set(graph.successors(event))
    left_out = [f for f in hidden if f in children]
    types: Counter[str] = Counter()
    for flowfile in left_out:
        for after in graph.successors(flowfile):
            types[graph.nodes[after].get("event_type", "UNKNOWN")] += 1
    label = [f"{len(left_out):,} more FlowFiles"]
    if types:
        label.append(", ".join(f"{kind} x{count:,}" for kind, count in sorted(types.items())))
    line = f"... {label[0]}" + (f" (their events: {label[1]})" if types else "")
    data = {"count": len(left_out), "event_id": _event_id(event), "uuids": left_out}
    order = (*_order(graph, event), position)
    return Node(f"more:{event}", tuple(label), NodeKind.MORE, order, data=data, line=line)


def _flowfile_orders(graph: nx.DiGraph) -> dict[str, tuple[int, ...]]:
    """Each FlowFile's place: its creating event's order, then its place among the children."""
    orders = {}
    for node in graph.nodes:
        if _is_event(graph, node):
            for position, child in enumerate(graph.successors(node)):
                orders[child] = (*_order(graph, node), position)
    return orders


def _title(graph: nx.DiGraph, flowfile_uuid: str, limit: int | None) -> tuple[str, list[str]]:
    events = sum(1 for n in graph.nodes if _is_event(graph, n))
    flowfiles = graph.number_of_nodes() - events
    title = f"lineage of FlowFile {flowfile_uuid}: {flowfiles:,} FlowFiles, {events:,} events"
    notes = []
    if limit is not None and events >= limit:
        notes.append(f"(stopped at {limit:,} events, as NiFi bounds lineage)")
    return title, notes


def lineage_picture(graph: nx.DiGraph, flowfile_uuid: str, *, limit: int | None = None) -> Picture:
    """The picture of a lineage graph around *flowfile_uuid* (marked), large fans compacted.

    Args:
        graph: what ``ProvenanceRepository.lineage(flowfile_uuid)`` returned.
        flowfile_uuid: the FlowFile asked about.
        limit: the events bound the repository applied, to say when it was reached.
    """
    cuts = _cuts(graph, flowfile_uuid)
    compact = _compact(graph, flowfile_uuid, {f for hidden in cuts.values() for f in hidden})
    title, notes = _title(graph, flowfile_uuid, limit)
    if cuts:
        notes.append(
            f"of more than {SHOWN_PER_FAN} children or parents of one event, the first "
            f"{FIRST_SHOWN} and the last {LAST_SHOWN} are shown"
        )
    orders = _flowfile_orders(graph)
    nodes: list[Node] = []
    for node in compact.nodes:
        if _is_event(compact, node):
            nodes.append(_event_node(graph, node))
        else:
            marked = node == flowfile_uuid
            line = f"FlowFile {node}" + ("  <- this FlowFile" if marked else "")
            nodes.append(
                Node(
                    node,
                    ("FlowFile", node),
                    NodeKind.FLOWFILE,
                    orders.get(node, ()),
                    marked=marked,
                    data={"uuid": node},
                    line=line,
                )
            )
    edges = [Edge(a, b) for a, b in compact.edges]
    for event, hidden in cuts.items():
        if event in compact:
            place = {child: n for n, child in enumerate(graph.successors(event))}
            first = min((place[f] for f in hidden if f in place), default=None)
            if first is not None:
                more = _more_node(graph, event, hidden, first)
                nodes.append(more)
                edges.append(Edge(event, more.id))
    return Picture(title, tuple(nodes), tuple(edges), notes=tuple(notes), tree=True, direction="LR")
