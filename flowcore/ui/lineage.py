"""``/api/lineage/{uuid}``: the part of a FlowFile's lineage the user has opened, laid out.

NiFi's lineage graph starts at one FlowFile and grows as the user expands an event's parents or
children. Here the provenance repository's lineage graph (FlowFile and event nodes, edges
parent -> event -> child) is cut to the events of the FlowFiles opened so far (the first one,
and each one the user expanded) and the FlowFiles those events link; Graphviz's ``dot`` places
them top to bottom, as NiFi draws lineage. A FlowFile whose events are not all shown says so
(``more``), which the page draws as a FlowFile to expand. ``dot`` runs with a time limit
(:data:`DOT_TIMEOUT`): a lineage too large to lay out in time is refused with one line rather
than holding the request.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from typing import Any

import graphviz
import networkx as nx

from flowcore.errors import FlowcoreError
from flowcore.nifi.layout import parse_plain

__all__ = ["DOT_TIMEOUT", "LineageTooLargeError", "lineage_document"]

#: Seconds ``dot`` may take to lay out a lineage before the request is refused.
DOT_TIMEOUT = 10.0
_MARGIN = 20.0  # px around the drawing
_EVENT = (1.9, 0.45)  # inches: an event box
_FLOWFILE = 0.3  # inches: a FlowFile circle


class LineageTooLargeError(FlowcoreError, RuntimeError):
    """``dot`` did not lay the lineage out within :data:`DOT_TIMEOUT` seconds."""


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
    """Node centres in px (y down) as ``dot`` places them; a column without Graphviz.

    Raises:
        LineageTooLargeError: ``dot`` took longer than :data:`DOT_TIMEOUT` (it is killed).
    """
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
    executable = shutil.which("dot")
    if executable is None:
        return {node: (200.0, 60.0 + 70.0 * index) for index, node in enumerate(nodes)}
    try:
        done = subprocess.run(
            [executable, "-Tplain"],
            input=dot.source,
            capture_output=True,
            text=True,
            timeout=DOT_TIMEOUT,
            check=True,
        )
    except subprocess.TimeoutExpired:
        msg = (
            f"the lineage of {len(nodes):,} FlowFiles and events is too large to lay out in "
            f"{DOT_TIMEOUT:g} s: expand fewer FlowFiles, or search provenance for the events"
        )
        raise LineageTooLargeError(msg) from None
    except subprocess.CalledProcessError as error:
        msg = f"Graphviz's dot could not lay out the lineage: {error.stderr.strip()[:200]}"
        raise LineageTooLargeError(msg) from None
    centres = parse_plain(done.stdout, {name: node for node, name in names.items()})
    return {node: (x + _MARGIN, y + _MARGIN) for node, (x, y) in centres.items()}


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
