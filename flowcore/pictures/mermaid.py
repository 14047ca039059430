"""Pictures as Mermaid flowcharts, which GitHub and most Markdown viewers draw in place.

Clusters become subgraphs; durable queues thick arrows (``==>``), auto-terminated exits dotted
ones (``-.->``). Node ids become ``n1``, ``n2`` .. and labels are quoted, with ``"`` written as
Mermaid's ``#quot;`` and lines joined with ``<br/>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping

from flowcore.pictures.model import Edge, EdgeKind, Node, NodeKind, Picture

__all__ = ["to_mermaid"]

_ARROWS: Mapping[EdgeKind, str] = {
    EdgeKind.PIPELINED: "-->",
    EdgeKind.DURABLE: "==>",
    EdgeKind.DROPPED: "-.->",
    EdgeKind.LINEAGE: "-->",
}
_SHAPES: Mapping[NodeKind, tuple[str, str]] = {
    NodeKind.PROCESSOR: ("(", ")"),
    NodeKind.SOURCE: ("([", "])"),
    NodeKind.FUNNEL: ("((", "))"),
    NodeKind.DROP: ("((", "))"),
    NodeKind.FLOWFILE: ("([", "])"),
    NodeKind.EVENT: ("[", "]"),
    NodeKind.MORE: ("[/", "/]"),
}


def _text(lines: Iterable[str]) -> str:
    escaped = (line.replace('"', "#quot;").replace("<", "#lt;") for line in lines)
    return '"' + "<br/>".join(escaped) + '"'


def _node(ids: Mapping[str, str], node: Node) -> str:
    start, end = _SHAPES[node.kind]
    label = ["x"] if node.kind is NodeKind.DROP else node.label
    return f"{ids[node.id]}{start}{_text(label)}{end}"


def _edge(ids: Mapping[str, str], edge: Edge) -> str:
    lines = [edge.label, *edge.notes] if edge.label else list(edge.notes)
    arrow = _ARROWS[edge.kind]
    label = f"|{_text(lines)}|" if lines else ""
    return f"{ids[edge.source]} {arrow}{label} {ids[edge.target]}"


def _lines(picture: Picture) -> Iterator[str]:
    ids = {node.id: f"n{number}" for number, node in enumerate(picture.nodes, 1)}
    yield "---"
    yield f"title: {json.dumps(picture.title)}"  # a YAML string
    yield "---"
    yield f"flowchart {picture.direction}"
    clustered = set()
    for number, cluster in enumerate(picture.clusters, 1):
        yield f"  subgraph c{number}[{_text([cluster.label])}]"
        for node_id in cluster.nodes:
            clustered.add(node_id)
            yield f"    {_node(ids, picture.node(node_id))}"
        yield "  end"
    for node in picture.nodes:
        if node.id not in clustered:
            yield f"  {_node(ids, node)}"
    for edge in picture.edges:
        yield f"  {_edge(ids, edge)}"
    marked = [ids[n.id] for n in picture.nodes if n.marked]
    if marked:
        yield "  classDef marked stroke-width:3px"
        yield f"  class {','.join(marked)} marked"


def to_mermaid(picture: Picture) -> str:
    """The picture as a Mermaid flowchart (paste it into a ```` ```mermaid ```` block)."""
    return "\n".join(_lines(picture))
