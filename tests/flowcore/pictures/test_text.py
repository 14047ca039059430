"""Tests for pictures as text: a flow's listing per stage, lineage's tree."""

from __future__ import annotations

from flowcore.builder import Flow
from flowcore.pictures.model import Edge, Node, NodeKind, Picture
from flowcore.pictures.text import to_text
from processors import GenerateFlowFile, LogAttribute, MergeContent, RouteOnAttribute


def test_a_flow_lists_every_exit_of_every_component_stage_by_stage() -> None:
    """Branches show as two exits of one component, auto-terminated relationships are named,
    and the durable queue says why with its settings."""
    flow = Flow("branches")
    gen = flow.add(GenerateFlowFile(), name="gen")
    route = flow.add(RouteOnAttribute(big="${size:gt(10)}"), name="route")
    log = flow.add(LogAttribute(), name="log")
    merge = flow.add(MergeContent(), name="merge")
    flow.connect(gen, route)
    flow.connect(route, log, "unmatched")
    flow.connect(route, merge, "big", flowfile_expiration="1 hour")
    flow.auto_terminate(log, "success")
    flow.auto_terminate(merge, ["merged", "original", "failure"])
    assert flow.explain() == "\n".join(
        [
            "flow 'branches': 4 processor(s), 3 connection(s), 2 stage(s)",
            "stage-1:",
            "  input: source work",
            "  output: route -[big]-> merge",
            "  GenerateFlowFile 'gen'",
            "    success -> RouteOnAttribute 'route'",
            "  RouteOnAttribute 'route'",
            "    unmatched -> LogAttribute 'log'",
            "    big -> MergeContent 'merge'",
            "      durable: feeds a binning processor, has queue settings",
            "      back pressure: 10,000 FlowFiles / 1 GB",
            "      expires after 1 hour",
            "  LogAttribute 'log'",
            "    success: auto-terminated",
            "stage-2:",
            "  input: route -[big]-> merge",
            "  in the driver: runs taking at most 20,000 queued FlowFiles / 16 MB (a Spark job's "
            "scheduling costs more than they do; settings driver_run_max_flowfiles, "
            "driver_run_max_size)",
            "  MergeContent 'merge'",
            "    original, merged, failure: auto-terminated",
        ]
    )


def test_a_tree_says_see_above_for_what_it_already_showed() -> None:
    """A node reached twice (a JOIN under its second parent) is not repeated below."""
    nodes = (
        Node("a", "FlowFile a", NodeKind.FLOWFILE),
        Node("b", "FlowFile b", NodeKind.FLOWFILE),
        Node("join", "JOIN", NodeKind.EVENT, (5, 1)),
        Node("c", "FlowFile c", NodeKind.FLOWFILE, (5, 1, 0)),
    )
    edges = (Edge("a", "join"), Edge("b", "join"), Edge("join", "c"))
    text = to_text(Picture("lineage", nodes, edges, tree=True))
    assert text.splitlines() == [
        "lineage",
        "FlowFile a",
        "└── JOIN",
        "    └── FlowFile c",
        "FlowFile b",
        "└── JOIN (see above)",
    ]
