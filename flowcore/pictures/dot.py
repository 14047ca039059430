"""Pictures as Graphviz DOT, and as SVG laid out by Graphviz's ``dot`` program.

The ``graphviz`` package writes the DOT text (quoting, clusters) and runs ``dot -Tsvg``; the
layout (Sugiyama-style ranks, splines around clusters, labels placed on edges) is Graphviz's own.
docs/operations.md ("Pictures") has the measurements behind choosing it over a pure-Python
layout. DOT text needs no program; SVG needs ``dot`` on the PATH, and says how to install it
when it is missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import graphviz

from flowcore.errors import DrawingError
from flowcore.pictures.model import Edge, EdgeKind, Node, NodeKind, Picture

__all__ = ["INSTALL_GRAPHVIZ", "to_dot", "to_svg"]

#: How to get Graphviz, for the one-line error when ``dot`` is missing.
INSTALL_GRAPHVIZ = (
    "drawing SVG needs Graphviz's dot program, which is not on the PATH: install it "
    "(apt-get install graphviz, brew install graphviz, or `make setup` as root), "
    "or ask for --format dot"
)

_FONT = "Helvetica,Arial,sans-serif"
_GRAPH = {"fontname": _FONT, "fontsize": "11", "nodesep": "0.3", "ranksep": "0.4"}
_NODES: Mapping[NodeKind, Mapping[str, str]] = {
    NodeKind.PROCESSOR: {"shape": "box", "style": "rounded,filled", "fillcolor": "#eef3fb"},
    NodeKind.SOURCE: {"shape": "box", "style": "rounded,filled", "fillcolor": "#e6f4ea"},
    NodeKind.FUNNEL: {"shape": "circle", "style": "filled", "fillcolor": "#fff4d6"},
    NodeKind.DROP: {"shape": "point", "width": "0.08", "color": "#999999"},
    NodeKind.FLOWFILE: {"shape": "ellipse", "style": "filled", "fillcolor": "#fff8e1"},
    NodeKind.EVENT: {"shape": "box", "style": "rounded,filled", "fillcolor": "#f1f1f1"},
    NodeKind.MORE: {"shape": "note", "style": "filled", "fillcolor": "#fafafa"},
}
_EDGES: Mapping[EdgeKind, Mapping[str, str]] = {
    EdgeKind.PIPELINED: {"color": "#555555"},
    EdgeKind.DURABLE: {"color": "#1f5fbf", "penwidth": "2.2", "fontcolor": "#1f5fbf"},
    EdgeKind.DROPPED: {"color": "#999999", "style": "dashed", "fontcolor": "#777777"},
    EdgeKind.LINEAGE: {"color": "#555555", "arrowsize": "0.7"},
}
_CLUSTER = {"style": "rounded,dashed", "color": "#9aa5b1", "labeljust": "l", "fontsize": "11"}


def _label(lines: Iterable[str], *, left: bool = False) -> str:
    r"""DOT label text: lines joined by DOT's centring ``\n`` (or each ended by ``\l``, left).

    Backslashes in the text are doubled, so DOT keeps them as they are.
    """
    escaped = [line.replace("\\", "\\\\") for line in lines]
    if left:
        return graphviz.nohtml("".join(f"{line}\\l" for line in escaped))
    return graphviz.nohtml("\\n".join(escaped))


def _node_attributes(node: Node) -> dict[str, str]:
    attributes = {"label": _label(node.label), **_NODES[node.kind]}
    if node.kind is NodeKind.DROP:
        attributes["label"] = ""
    if node.marked:
        attributes["penwidth"] = "2.5"
    return attributes


def _edge_attributes(edge: Edge) -> dict[str, str]:
    lines = [edge.label, *edge.notes] if edge.label else list(edge.notes)
    attributes = dict(_EDGES[edge.kind])
    if lines:
        attributes["label"] = _label(lines)
    return attributes


def _graph(picture: Picture) -> graphviz.Digraph:
    """The picture as a graphviz graph.

    Node ids become ``n1``, ``n2`` .. since DOT reads ``a:b`` as node ``a``'s port ``b``.
    """
    ids = {node.id: f"n{number}" for number, node in enumerate(picture.nodes, 1)}
    caption = [picture.title, *picture.notes]
    graph = graphviz.Digraph(
        "picture",
        graph_attr={
            **_GRAPH,
            "rankdir": picture.direction,
            "label": _label(caption, left=True),
            "labelloc": "t",
            "labeljust": "l",
        },
        node_attr={"fontname": _FONT, "fontsize": "10"},
        edge_attr={"fontname": _FONT, "fontsize": "9"},
    )
    clustered = {n for cluster in picture.clusters for n in cluster.nodes}
    for number, cluster in enumerate(picture.clusters, 1):
        with graph.subgraph(name=f"cluster_{number}") as frame:
            frame.attr(label=_label([cluster.label]), **_CLUSTER)
            for node_id in cluster.nodes:
                frame.node(ids[node_id], **_node_attributes(picture.node(node_id)))
    for node in picture.nodes:
        if node.id not in clustered:
            graph.node(ids[node.id], **_node_attributes(node))
    for edge in picture.edges:
        graph.edge(ids[edge.source], ids[edge.target], **_edge_attributes(edge))
    return graph


def to_dot(picture: Picture) -> str:
    """The picture as Graphviz DOT text (no program needed)."""
    return _graph(picture).source


def to_svg(picture: Picture) -> str:
    """The picture as SVG, laid out by Graphviz's ``dot``.

    Raises:
        DrawingError: ``dot`` is not installed (the message says how to install it).
    """
    try:
        return _graph(picture).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise DrawingError(INSTALL_GRAPHVIZ) from None
