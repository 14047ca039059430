"""What every picture is made of: nodes, edges and clusters, as frozen values.

The model steps (flows, lineage) decide what is shown and say it in words; the renderers decide
only how it looks. A node's ``data`` and an edge's ``data`` carry the facts behind the words
(uuids, event ids, counts) for the JSON renderer, which scripts read.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["Cluster", "Edge", "EdgeKind", "Node", "NodeKind", "Picture"]


class NodeKind(enum.Enum):
    """What a node stands for; renderers give each its own shape."""

    PROCESSOR = "processor"
    SOURCE = "source"  # a processor that lists its own work (no input)
    FUNNEL = "funnel"
    DROP = "drop"  # where auto-terminated relationships end
    FLOWFILE = "flowfile"
    EVENT = "event"
    MORE = "more"  # FlowFiles left out of a lineage picture, counted


class EdgeKind(enum.Enum):
    """What an edge stands for; renderers give each its own line."""

    PIPELINED = "pipelined"  # FlowFiles pass by reference inside one task
    DURABLE = "durable"  # a queue stored in the FlowFile repository
    DROPPED = "dropped"  # auto-terminated relationships
    LINEAGE = "lineage"  # parent -> event -> child


def _tuple(value: Any) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


@attrs.frozen
class Node:
    """One box, circle or point.

    Attributes:
        id: unique within the picture.
        label: the lines drawn in it (the first names it).
        kind: what it stands for.
        order: where it sorts among siblings (lineage: event time, then id).
        marked: whether it is what the picture was asked about (drawn bold).
        data: facts behind the label, for JSON.
        line: how text shows it on one line (default: the label's lines joined).
    """

    id: str
    label: tuple[str, ...] = attrs.field(converter=_tuple)
    kind: NodeKind
    order: tuple[int, ...] = ()
    marked: bool = False
    data: Mapping[str, Any] = attrs.field(factory=dict)
    line: str = ""

    @property
    def name(self) -> str:
        """The node on one line of text."""
        return self.line or " ".join(self.label)


@attrs.frozen
class Edge:
    """A line from one node to another.

    Attributes:
        source: the node it leaves.
        target: the node it enters.
        label: what it carries (a connection's relationships), drawn on it.
        kind: what it stands for.
        notes: more lines drawn under the label (queue settings, counts).
        data: facts behind the words, for JSON.
    """

    source: str
    target: str
    label: str = ""
    kind: EdgeKind = EdgeKind.LINEAGE
    notes: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    data: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Cluster:
    """Nodes drawn inside one frame (a stage).

    Attributes:
        id: unique within the picture.
        label: the frame's title.
        nodes: the ids of its nodes, in the order they are listed.
        notes: lines the text listing prints under the title (its inputs and outputs).
    """

    id: str
    label: str
    nodes: tuple[str, ...]
    notes: tuple[str, ...] = ()


@attrs.frozen
class Picture:
    """A graph ready to render.

    Attributes:
        title: one line naming what is drawn.
        nodes: every node, in listing order.
        edges: every edge, in listing order.
        clusters: frames around some nodes.
        notes: lines printed under the title (and drawn as the graph's caption).
        tree: whether text shows it as a tree in time order (lineage) rather than a listing
            per cluster (flows).
        direction: how drawings run, Graphviz's ``rankdir``: ``TB`` (top to bottom, flows) or
            ``LR`` (left to right, lineage: a FlowFile's events stack instead of widening it).
    """

    title: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    clusters: tuple[Cluster, ...] = ()
    notes: tuple[str, ...] = ()
    tree: bool = False
    direction: str = attrs.field(default="TB", validator=attrs.validators.in_(("TB", "LR")))

    def node(self, node_id: str) -> Node:
        """A node by id.

        Raises:
            KeyError: no node has that id.
        """
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    def outgoing(self, node_id: str) -> tuple[Edge, ...]:
        """Edges leaving a node, in listing order."""
        return tuple(e for e in self.edges if e.source == node_id)

    def incoming(self, node_id: str) -> tuple[Edge, ...]:
        """Edges entering a node, in listing order."""
        return tuple(e for e in self.edges if e.target == node_id)
