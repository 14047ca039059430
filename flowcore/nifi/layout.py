"""Where an exported flow's components sit on NiFi's canvas: layered, top to bottom.

NiFi draws a processor as a 352 x 128 px box and a funnel as a 48 px square, at the position of
its top-left corner; flows read from the top down. Graphviz's ``dot`` (installed with flowcore's
pictures) lays the graph out in ranks with few crossings; without it, the components go in
networkx's topological generations (cycles broken where a depth-first walk meets them), each
row ordered by where its inputs sit. Both are deterministic: the same flow gets the same
positions (on the same Graphviz version).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import graphviz
import networkx as nx

from flowcore.definition.flow import ComponentKind, FlowDefinition

__all__ = ["FUNNEL_SIZE", "PROCESSOR_SIZE", "Position", "layout", "parse_plain"]

PROCESSOR_SIZE = (352.0, 128.0)  # px, NiFi's processor box
FUNNEL_SIZE = (48.0, 48.0)  # px, NiFi's funnel
COLUMN_GAP = 96.0  # px between boxes side by side
ROW_GAP = 112.0  # px between rows, room for a connection's label
_POINTS = 72.0  # Graphviz measures in inches of 72 points; NiFi's canvas is in px


@attrs.frozen
class Position:
    """A component's top-left corner on the canvas, in px (NiFi's ``Position``)."""

    x: float
    y: float

    def to_json(self) -> dict[str, float]:
        """NiFi's ``{"x", "y"}``."""
        return {"x": self.x, "y": self.y}


def _size(flow: FlowDefinition, component_id: str) -> tuple[float, float]:
    funnel = flow.component(component_id).kind is ComponentKind.FUNNEL
    return FUNNEL_SIZE if funnel else PROCESSOR_SIZE


def layout(flow: FlowDefinition, *, use_graphviz: bool = True) -> dict[str, Position]:
    """Each component's position by component id, laid out top to bottom.

    Args:
        flow: the flow to lay out.
        use_graphviz: lay out with Graphviz's ``dot`` when it is installed (the default);
            False always takes the layered layout of networkx.
    """
    centres = _graphviz_centres(flow) if use_graphviz else None
    if centres is None:
        centres = _layered_centres(flow)
    placed = {}
    for component_id, (x, y) in centres.items():
        width, height = _size(flow, component_id)
        placed[component_id] = Position(float(round(x - width / 2)), float(round(y - height / 2)))
    return placed


def _graphviz_centres(flow: FlowDefinition) -> dict[str, tuple[float, float]] | None:
    """Box centres as ``dot`` places them (px, y downwards), or None without Graphviz."""
    graph = graphviz.Digraph(
        graph_attr={
            "rankdir": "TB",
            "nodesep": str(COLUMN_GAP / _POINTS),
            "ranksep": str(ROW_GAP / _POINTS),
        },
        node_attr={"shape": "box", "fixedsize": "true"},
    )
    names = {}
    for index, component in enumerate(flow.components):
        names[f"n{index}"] = component.id
        width, height = _size(flow, component.id)
        graph.node(f"n{index}", width=str(width / _POINTS), height=str(height / _POINTS))
    ids = {v: k for k, v in names.items()}
    for connection in flow.connections:
        graph.edge(ids[connection.source], ids[connection.destination])
    try:
        plain = graph.pipe(format="plain", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        return None
    return parse_plain(plain, names)


def parse_plain(plain: str, names: Mapping[str, str]) -> dict[str, tuple[float, float]]:
    """``dot -Tplain``'s node centres (inches, y upwards) as px with y downwards.

    Args:
        plain: Graphviz's plain output (``graph``, ``node``, ``edge`` and ``stop`` lines).
        names: the node names given to ``dot`` -> what the centres are keyed by.
    """
    height = 0.0
    centres = {}
    for line in plain.splitlines():
        fields = line.split()
        if fields and fields[0] == "graph":
            height = float(fields[3])
        elif fields and fields[0] == "node":
            x, y = float(fields[2]), float(fields[3])
            centres[names[fields[1]]] = (x * _POINTS, (height - y) * _POINTS)
    return centres


def _acyclic(flow: FlowDefinition) -> nx.DiGraph:
    """The flow's graph without the edges that close cycles (found depth first, in order)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(c.id for c in flow.components)
    graph.add_edges_from(
        (c.source, c.destination) for c in flow.connections if c.source != c.destination
    )
    back = [(u, v) for u, v, kind in nx.dfs_labeled_edges(graph) if kind == "nontree"]
    for u, v in back:
        if nx.has_path(graph, v, u):  # a non-tree edge that closes a cycle
            graph.remove_edge(u, v)
    return graph


def _layered_centres(flow: FlowDefinition) -> dict[str, tuple[float, float]]:
    """Rows by topological generation, each row ordered by its inputs' places, centred on 0."""
    graph = _acyclic(flow)
    order = {c.id: n for n, c in enumerate(flow.components)}
    slot: dict[str, float] = {}
    centres = {}
    for row, generation in enumerate(nx.topological_generations(graph)):

        def place(node: str) -> tuple[float, int]:
            above = [slot[p] for p in graph.predecessors(node) if p in slot]
            return (sum(above) / len(above) if above else float(order[node]), order[node])

        ranked = sorted(generation, key=place)
        step = PROCESSOR_SIZE[0] + COLUMN_GAP
        for column, node in enumerate(ranked):
            slot[node] = float(column)
            x = (column - (len(ranked) - 1) / 2) * step
            y = row * (PROCESSOR_SIZE[1] + ROW_GAP) + PROCESSOR_SIZE[1] / 2
            centres[node] = (x, y)
    return centres
