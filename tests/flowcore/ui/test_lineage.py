"""The lineage the page draws: the opened FlowFiles' events, laid out, growing on expansion."""

from __future__ import annotations

import networkx as nx

from flowcore.ui.lineage import lineage_document


def _graph() -> nx.DiGraph:
    """parent -RECEIVE; parent -FORK-> child1, child2; child1 -DROP."""
    graph = nx.DiGraph()
    for uuid in ("parent", "child1", "child2"):
        graph.add_node(uuid, kind="flowfile")
    for event, kind, time in (
        ("event:1", "RECEIVE", 1),
        ("event:2", "FORK", 2),
        ("event:3", "DROP", 3),
    ):
        graph.add_node(event, kind="event", event_type=kind, time=time, component="c")
    graph.add_edges_from(
        [("parent", "event:1"), ("parent", "event:2"), ("event:2", "child1"),
         ("event:2", "child2"), ("child1", "event:3")]
    )  # fmt: skip
    return graph


def test_a_child_shows_its_fork_and_its_parent_to_expand() -> None:
    """child2's lineage shows the FORK and its parent, marked as having more events."""
    document = lineage_document(_graph(), "child2")
    events = {n["event_type"] for n in document["nodes"] if n["kind"] == "event"}
    assert events == {"FORK"}
    parent = next(n for n in document["nodes"] if n["id"] == "parent")
    assert parent["more"] is True
    assert next(n for n in document["nodes"] if n["id"] == "child2")["marked"] is True
    assert all(n["x"] > 0 and n["y"] > 0 for n in document["nodes"])


def test_expanding_the_parent_and_a_sibling_shows_their_events() -> None:
    """Expanding parent adds RECEIVE; expanding child1 adds its DROP; edges follow."""
    document = lineage_document(_graph(), "child2", ["parent", "child1"])
    events = {n["event_type"] for n in document["nodes"] if n["kind"] == "event"}
    assert events == {"RECEIVE", "FORK", "DROP"}
    assert {"source": "child1", "target": "event:3"} in document["edges"]
    assert not any(n.get("more") for n in document["nodes"])


def test_dot_past_its_time_limit_refuses_the_lineage(monkeypatch) -> None:
    """A layout that outlasts DOT_TIMEOUT ends with one line naming the size and the way out;
    dot is not left running."""
    import pytest

    from flowcore.ui import lineage

    monkeypatch.setattr(lineage, "DOT_TIMEOUT", 1e-6)
    with pytest.raises(lineage.LineageTooLargeError, match="too large to lay out") as raised:
        lineage_document(_graph(), "child2", ["parent", "child1"])
    assert "expand fewer FlowFiles" in str(raised.value)


def test_the_layout_is_graphvizs_plain_output_parsed_once() -> None:
    """The lineage's centres are flowcore.nifi.layout.parse_plain's, 20 px in from the edge."""
    from flowcore.nifi.layout import parse_plain

    plain = "graph 1 2 3\nnode n0 1 1 0.3 0.3 x solid circle black lightgrey\nstop\n"
    assert parse_plain(plain, {"n0": "a"}) == {"a": (72.0, 144.0)}
    document = lineage_document(_graph(), "child2")
    assert min(n["x"] for n in document["nodes"]) >= 20
