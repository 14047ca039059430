"""Tests for drawing lineage: large fans kept to their first and last few, and counted."""

from __future__ import annotations

import networkx as nx

from flowcore.pictures.lineage_picture import lineage_picture
from flowcore.pictures.model import NodeKind
from flowcore.pictures.text import to_text


def _event(graph: nx.DiGraph, event_id: int, kind: str, time: int, component: str) -> str:
    node = f"event:{event_id}"
    graph.add_node(node, kind="event", event_type=kind, time=time, component=component)
    return node


def split_and_merge(children: int) -> nx.DiGraph:
    """A lineage as the repository gives it: a file RECEIVEd, split into *children* (one
    ATTRIBUTES_MODIFIED each), all merged by one JOIN into ``merged``, which is SENT."""
    graph = nx.DiGraph()
    graph.add_node("file", kind="flowfile")
    graph.add_edge("file", _event(graph, 0, "RECEIVE", 1_000, "get"))
    fork = _event(graph, 1, "FORK", 2_000, "split")
    graph.add_edge("file", fork)
    join = _event(graph, 10_000, "JOIN", 9_000, "merge")
    for n in range(children):
        child = f"child-{n}"
        graph.add_node(child, kind="flowfile")
        graph.add_edge(fork, child)
        graph.add_edge(child, _event(graph, 2 + n, "ATTRIBUTES_MODIFIED", 3_000 + n, "tag"))
        graph.add_edge(child, join)
    graph.add_node("merged", kind="flowfile")
    graph.add_edge(join, "merged")
    graph.add_edge("merged", _event(graph, 10_001, "SEND", 9_500, "put"))
    return graph


def test_a_thousand_children_show_as_the_first_and_last_few_and_a_count() -> None:
    """A FORK of 1,000 keeps 3 + 2 children and the one asked about; one node counts the rest
    and the events they went through."""
    picture = lineage_picture(split_and_merge(1_000), "child-500")
    flowfiles = [n.id for n in picture.nodes if n.kind is NodeKind.FLOWFILE]
    children = [f for f in flowfiles if f.startswith("child-")]
    assert children == ["child-0", "child-1", "child-2", "child-500", "child-998", "child-999"]
    (more,) = [n for n in picture.nodes if n.kind is NodeKind.MORE]
    assert more.data["count"] == 994
    assert more.label == ("994 more FlowFiles", "ATTRIBUTES_MODIFIED x994, JOIN x994")
    assert picture.node("child-500").marked


def test_small_fans_are_drawn_whole() -> None:
    """Up to eight children, every one is shown and nothing is counted away."""
    picture = lineage_picture(split_and_merge(8), "merged")
    assert sum(1 for n in picture.nodes if n.id.startswith("child-")) == 8
    assert not [n for n in picture.nodes if n.kind is NodeKind.MORE]


def test_a_merged_flowfile_does_not_keep_all_its_parents() -> None:
    """Asked about a JOIN's child, only the first and last parents stay (with their FORK)."""
    picture = lineage_picture(split_and_merge(1_000), "merged")
    children = [n.id for n in picture.nodes if n.id.startswith("child-")]
    assert children == ["child-0", "child-1", "child-2", "child-998", "child-999"]
    assert "event:1" in {n.id for n in picture.nodes}  # the FORK that made them


def test_a_grandchild_keeps_the_path_to_its_root() -> None:
    """A FlowFile split from a middle child of a large split keeps that child and the root."""
    graph = split_and_merge(100)
    fork = _event(graph, 20_000, "FORK", 4_000, "split-again")
    graph.add_edge("child-50", fork)
    graph.add_node("grandchild", kind="flowfile")
    graph.add_edge(fork, "grandchild")
    picture = lineage_picture(graph, "grandchild")
    kept = {n.id for n in picture.nodes}
    assert {"file", "event:1", "child-50", "event:20000", "grandchild"} <= kept


def test_text_is_a_short_tree_in_time_order() -> None:
    """The text of a 1,000-way split fits on a screen: root, its events by time, the kept
    children (the asked-about one marked) and the count between them."""
    picture = lineage_picture(split_and_merge(1_000), "child-500", limit=1_000)
    text = to_text(picture)
    lines = text.splitlines()
    assert len(lines) < 40
    assert lines[0] == "lineage of FlowFile child-500: 1,002 FlowFiles, 1,004 events"
    assert lines[1] == "(stopped at 1,000 events, as NiFi bounds lineage)"
    assert lines[3] == "FlowFile file"
    assert lines[4] == "├── 1970-01-01T00:00:01.000Z RECEIVE event 0 (get)"
    assert lines[5] == "└── 1970-01-01T00:00:02.000Z FORK event 1 (split) 1,000 children"
    assert (
        "    ├── ... 994 more FlowFiles (their events: ATTRIBUTES_MODIFIED x994, JOIN x994)"
        in lines
    )
    assert "    ├── FlowFile child-500  <- this FlowFile" in lines
    joins = [line for line in lines if "JOIN event 10000" in line]
    assert joins[0].endswith("(merge) 1,000 parents")
    assert all(line.endswith("(see above)") for line in joins[1:])
