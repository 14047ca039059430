"""Tests for the picture model's lookups and checks."""

from __future__ import annotations

import pytest

from flowcore.pictures.model import Edge, Node, NodeKind, Picture


def test_lookups_by_node_id() -> None:
    """A node, its outgoing and incoming edges are found by id; an unknown id is a KeyError."""
    picture = Picture(
        "t",
        (Node("a", "A", NodeKind.PROCESSOR), Node("b", ("B", "type"), NodeKind.PROCESSOR)),
        (Edge("a", "b", "success"),),
    )
    assert picture.node("b").name == "B type"
    assert [e.target for e in picture.outgoing("a")] == ["b"]
    assert [e.source for e in picture.incoming("b")] == ["a"]
    with pytest.raises(KeyError):
        picture.node("c")


def test_direction_is_one_graphviz_knows() -> None:
    """Pictures run top to bottom or left to right; anything else is refused."""
    with pytest.raises(ValueError, match="direction"):
        Picture("t", (), (), direction="up")
