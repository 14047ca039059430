"""Tests for choosing a renderer and for the JSON form."""

from __future__ import annotations

import json

import pytest

from flowcore.errors import DrawingError
from flowcore.pictures.model import Cluster, Edge, Node, NodeKind, Picture
from flowcore.pictures.render import FORMATS, render

PICTURE = Picture(
    "t",
    (Node("a", "A", NodeKind.FLOWFILE, data={"uuid": "a"}), Node("e", "E", NodeKind.EVENT)),
    (Edge("a", "e", data={"flowfiles": 3}),),
    (Cluster("s", "stage", ("a",)),),
)


def test_json_keeps_the_facts_behind_the_drawing() -> None:
    """Nodes and edges carry their data; clusters list node ids."""
    document = json.loads(render(PICTURE, "json"))
    assert document["nodes"][0] == {"id": "a", "kind": "flowfile", "label": ["A"], "uuid": "a"}
    assert document["edges"] == [{"source": "a", "target": "e", "kind": "lineage", "flowfiles": 3}]
    assert document["clusters"] == [{"id": "s", "label": "stage", "nodes": ["a"]}]


def test_every_text_format_renders_and_an_unknown_one_is_refused() -> None:
    """text, dot, mermaid and json need no program; a misspelt format names the known ones."""
    for name in ("text", "dot", "mermaid", "json"):
        assert render(PICTURE, name)
    assert set(FORMATS) == {"text", "dot", "svg", "mermaid", "json"}
    with pytest.raises(DrawingError, match="use one of text, dot, svg, mermaid, json"):
        render(PICTURE, "png")
