"""Tests for flowcore.nifi.layout: where exported components sit on NiFi's canvas."""

from __future__ import annotations

import pytest

from flowcore.builder import Flow
from flowcore.nifi.layout import FUNNEL_SIZE, PROCESSOR_SIZE, Position, layout
from processors import LogAttribute, RouteOnAttribute, SplitText, UpdateAttribute


def branching() -> Flow:
    """split -> tag -> route -> (a, b) -> funnel -> log, with a loop back into tag."""
    flow = Flow("layout")
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(UpdateAttribute(), name="tag")
    route = flow.add(RouteOnAttribute(a="${x:equals('a')}"), name="route")
    a = flow.add(LogAttribute(), name="a")
    b = flow.add(LogAttribute(), name="b")
    funnel = flow.funnel("join")
    log = flow.add(LogAttribute(), name="log")
    flow.connect(split, tag, "splits")
    flow.connect(tag, route)
    flow.connect(route, a, "a")
    flow.connect(route, b, "unmatched")
    flow.connect(a, funnel)
    flow.connect(b, funnel)
    flow.connect(funnel, log)
    flow.connect(log, tag)  # a cycle
    return flow


def boxes(
    flow: Flow, positions: dict[str, Position]
) -> dict[str, tuple[float, float, float, float]]:
    """Each component's box (left, top, right, bottom) by name."""
    found = {}
    for component in flow.components:
        width, height = FUNNEL_SIZE if component.processor is None else PROCESSOR_SIZE
        at = positions[component.id]
        found[component.name] = (at.x, at.y, at.x + width, at.y + height)
    return found


@pytest.mark.parametrize("use_graphviz", [True, False], ids=["graphviz", "layered"])
def test_flow_reads_top_to_bottom_without_overlaps(use_graphviz: bool) -> None:
    """Each step sits below the one feeding it; no two boxes overlap."""
    flow = branching()
    placed = boxes(flow, layout(flow, use_graphviz=use_graphviz))
    for upper, lower in [("split", "tag"), ("tag", "route"), ("route", "a"), ("a", "join")]:
        assert placed[upper][3] <= placed[lower][1], (upper, lower)
    assert placed["a"][1] == placed["b"][1]  # siblings side by side
    items = list(placed.values())
    for n, (left, top, right, bottom) in enumerate(items):
        for other in items[n + 1 :]:
            apart = right <= other[0] or other[2] <= left or bottom <= other[1] or other[3] <= top
            assert apart


@pytest.mark.parametrize("use_graphviz", [True, False], ids=["graphviz", "layered"])
def test_layout_is_deterministic(use_graphviz: bool) -> None:
    """The same flow gets the same positions every time."""
    assert layout(branching(), use_graphviz=use_graphviz) == layout(
        branching(), use_graphviz=use_graphviz
    )


def test_layout_without_graphviz_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Graphviz's dot on the PATH the layered layout is used."""
    monkeypatch.setenv("PATH", "/nonexistent")
    flow = branching()
    assert layout(flow) == layout(flow, use_graphviz=False)
