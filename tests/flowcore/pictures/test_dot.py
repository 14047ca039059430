"""Tests for pictures as Graphviz DOT and SVG."""

from __future__ import annotations

import re
import shutil

import pytest

from flowcore.errors import DrawingError
from flowcore.pictures.dot import to_dot, to_svg
from flowcore.pictures.model import Cluster, Edge, EdgeKind, Node, NodeKind, Picture

PICTURE = Picture(
    "flow 'f'",
    (
        Node("GetFile-1", ("get", "GetFile"), NodeKind.SOURCE),
        Node("Put-2", "C:\\out", NodeKind.PROCESSOR, marked=True),
    ),
    (Edge("GetFile-1", "Put-2", "success", EdgeKind.DURABLE, ('say "hi"',)),),
    (Cluster("stage-1", "stage-1", ("GetFile-1",)),),
)


def test_dot_has_clusters_styles_and_escaped_labels() -> None:
    """A stage is a cluster subgraph; ids that DOT would read as ports become n1, n2; quotes
    and backslashes in labels survive."""
    dot = to_dot(PICTURE)
    assert "subgraph cluster_1 {" in dot
    assert 'n1 [label="get\\nGetFile"' in dot
    assert 'n2 [label="C:\\\\out"' in dot
    assert 'label="success\\nsay \\"hi\\""' in dot
    assert "penwidth=2.2" in dot  # the durable queue
    assert "penwidth=2.5" in dot  # the marked node


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_svg_is_laid_out_by_graphviz() -> None:
    """SVG carries every label as text, placed by dot."""
    svg = to_svg(PICTURE)
    assert svg.lstrip().startswith("<?xml")
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert {"get", "GetFile", "C:\\out", "success", "say &quot;hi&quot;", "stage&#45;1"} <= set(
        texts
    )


def test_svg_without_graphviz_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no dot on the PATH, SVG fails with one message naming the install command."""
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(DrawingError, match="apt-get install graphviz") as raised:
        to_svg(PICTURE)
    assert "\n" not in str(raised.value)
