"""``/api/lineage/{uuid}``: the part of a FlowFile's lineage the user has opened, laid out.

NiFi's lineage graph starts at one FlowFile and grows as the user expands an event's parents or
children. Here the provenance repository's lineage graph (FlowFile and event nodes, edges
parent -> event -> child) is cut to the events of the FlowFiles opened so far (the first one,
and each one the user expanded) and the FlowFiles those events link; Graphviz's ``dot`` places
them top to bottom, as NiFi draws lineage. A FlowFile whose events are not all shown says so
(``more``), which the page draws as a FlowFile to expand.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import graphviz
import networkx as nx

__all__ = ["lineage_document"]

_POINTS = 72.0  # Graphviz's inches of 72 points; the page draws in px
_EVENT = (1.9, 0.45)  # inches: an event box
_FLOWFILE = 0.3  # inches: a FlowFile circle


def _visible(graph: nx.DiGraph, opened: Iterable[str]) -> tuple[set[str], set[str]]:
    """The FlowFiles and events shown once *opened* FlowFiles are expanded."""
    events: set[str] = set()
    flowfiles: set[str] = set()
    for uuid in opened:
        if uuid not in graph:
            continue
        flowfiles.add(uuid)
        for node in (*graph.predecessors(uuid), *graph.successors(uuid)):
            if graph.nodes[node].get("kind") == "event":
                events.add(node)
    for event in events:
        flowfiles.update(graph.predecessors(event))
        flowfiles.update(graph.successors(event))
    return flowfiles, events


def _positions(graph: nx.DiGraph, nodes: list[str]) -> dict[str, tuple[float, float]]:
    """Node centres in px (y down) as ``dot`` places them; a column without Graphviz."""
    names = {node: f"n{index}" for index, node in enumerate(nodes)}
    dot = graphviz.Digraph(
        graph_attr={"rankdir": "TB", "nodesep": "0.35", "ranksep": "0.35"},
        node_attr={"fixedsize": "true"},
    )
    for node in nodes:
        if graph.nodes[node].get("kind") == "event":
            dot.node(names[node], shape="box", width=str(_EVENT[0]), height=str(_EVENT[1]))
        else:
            dot.node(names[node], shape="circle", width=str(_FLOWFILE), height=str(_FLOWFILE))
    shown = set(nodes)
    for source, target in graph.edges():
        if source in shown and target in shown:
            dot.edge(names[source], names[target])
    try:
        plain = dot.pipe(format="plain", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        return {node: (200.0, 60.0 + 70.0 * index) for index, node in enumerate(nodes)}
    back = {name: node for node, name in names.items()}
    height, found = 0.0, {}
    for line in plain.splitlines():
        fields = line.split()
        if fields and fields[0] == "graph":
            height = float(fields[3])
        elif fields and fields[0] == "node":
            x, y = float(fields[2]), float(fields[3])
            found[back[fields[1]]] = (x * _POINTS + 20, (height - y) * _POINTS + 20)
    return found


def lineage_document(graph: nx.DiGraph, uuid: str, expand: Iterable[str] = ()) -> dict[str, Any]:
    """The lineage around *uuid* with the FlowFiles in *expand* opened too.

    Returns:
        ``{"uuid", "nodes", "edges", "width", "height"}``: each node with its ``id``, ``kind``
        (``flowfile`` or ``event``), centre ``x``/``y`` in px, and for an event its
        ``event_id``, ``event_type``, ``time`` and ``component``; for a FlowFile whether it
        has events not shown (``more``) and whether it is the one asked about (``marked``).
    """
    opened = [uuid, *[u for u in expand if u != uuid]]
    flowfiles, events = _visible(graph, opened)
    ordered = sorted(events, key=lambda e: (graph.nodes[e].get("time") or 0, e))
    nodes = [*sorted(flowfiles), *ordered]
    placed = _positions(graph, nodes)
    documents = []
    for node in nodes:
        data = graph.nodes[node]
        x, y = placed.get(node, (0.0, 0.0))
        if data.get("kind") == "event":
            documents.append(
                {
                    "id": node,
                    "kind": "event",
                    "event_id": int(node.split(":", 1)[1]),
                    "event_type": data.get("event_type"),
                    "time": data.get("time"),
                    "component": data.get("component"),
                    "x": x,
                    "y": y,
                }
            )
        else:
            linked = {
                n
                for n in (*graph.predecessors(node), *graph.successors(node))
                if graph.nodes[n].get("kind") == "event"
            }
            documents.append(
                {
                    "id": node,
                    "kind": "flowfile",
                    "marked": node == uuid,
                    "more": bool(linked - events),
                    "x": x,
                    "y": y,
                }
            )
    shown = set(nodes)
    edges = [{"source": s, "target": t} for s, t in graph.edges() if s in shown and t in shown]
    width = max((d["x"] for d in documents), default=0.0) + 160
    height = max((d["y"] for d in documents), default=0.0) + 60
    return {"uuid": uuid, "nodes": documents, "edges": edges, "width": width, "height": height}
