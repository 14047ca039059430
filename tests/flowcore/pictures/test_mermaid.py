"""Tests for pictures as Mermaid flowcharts."""

from __future__ import annotations

from flowcore.pictures.mermaid import to_mermaid
from flowcore.pictures.model import Cluster, Edge, EdgeKind, Node, NodeKind, Picture


def test_clusters_arrows_and_quotes() -> None:
    """Stages become subgraphs; durable queues thick arrows, dropped exits dotted ones; quotes
    and line breaks are written Mermaid's way."""
    picture = Picture(
        'flow "x"',
        (
            Node("GetFile-1", ("get", "GetFile"), NodeKind.SOURCE),
            Node("Merge-2", 'say "hi"', NodeKind.PROCESSOR),
            Node("Merge-2:auto-terminated", "dropped", NodeKind.DROP),
        ),
        (
            Edge("GetFile-1", "Merge-2", "success", EdgeKind.DURABLE, ("durable: x",)),
            Edge("Merge-2", "Merge-2:auto-terminated", "failure", EdgeKind.DROPPED),
        ),
        (Cluster("stage-1", "stage-1", ("GetFile-1",)),),
    )
    assert to_mermaid(picture).splitlines() == [
        "---",
        'title: "flow \\"x\\""',
        "---",
        "flowchart TB",
        '  subgraph c1["stage-1"]',
        '    n1(["get<br/>GetFile"])',
        "  end",
        '  n2("say #quot;hi#quot;")',
        '  n3(("x"))',
        '  n1 ==>|"success<br/>durable: x"| n2',
        '  n2 -.->|"failure"| n3',
    ]
