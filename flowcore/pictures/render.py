"""Picking a renderer by format name, and the JSON form scripts read.

``text`` (the default), ``dot``, ``svg``, ``mermaid`` and ``json`` are the formats of both
``flowcore explain`` and ``flowcore provenance lineage``. JSON keeps the facts (ids, uuids,
event types, counts), not the drawing: ``{"title", "notes", "nodes", "edges", "clusters"}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from flowcore.errors import DrawingError
from flowcore.pictures.dot import to_dot, to_svg
from flowcore.pictures.mermaid import to_mermaid
from flowcore.pictures.model import Picture
from flowcore.pictures.text import to_text

__all__ = ["FORMATS", "render", "to_json"]


def to_json(picture: Picture) -> str:
    """The picture's facts as JSON: nodes and edges with their data, clusters by node id."""
    document: dict[str, Any] = {
        "title": picture.title,
        "notes": list(picture.notes),
        "nodes": [
            {"id": n.id, "kind": n.kind.value, "label": list(n.label), **n.data}
            for n in picture.nodes
        ],
        "edges": [
            {"source": e.source, "target": e.target, "kind": e.kind.value, **e.data}
            for e in picture.edges
        ],
        "clusters": [
            {"id": c.id, "label": c.label, "nodes": list(c.nodes)} for c in picture.clusters
        ],
    }
    return json.dumps(document, indent=1)


#: Each format's renderer, by the name ``--format`` takes.
FORMATS: Mapping[str, Callable[[Picture], str]] = {
    "text": to_text,
    "dot": to_dot,
    "svg": to_svg,
    "mermaid": to_mermaid,
    "json": to_json,
}


def render(picture: Picture, format: str = "text") -> str:
    """The picture in *format*.

    Raises:
        DrawingError: an unknown format (the message lists the known ones), or SVG without
            Graphviz's ``dot`` (the message says how to install it).
    """
    renderer = FORMATS.get(format)
    if renderer is None:
        msg = f"unknown picture format {format!r}; use one of {', '.join(FORMATS)}"
        raise DrawingError(msg)
    return renderer(picture)
