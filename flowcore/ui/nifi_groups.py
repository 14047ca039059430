"""A NiFi flow definition's process groups as the canvas draws them: one canvas per group.

flowcore flattens an imported flow's groups (a component's name keeps its group's path:
``Ingest/Split lines``), but NiFi's canvas shows one group at a time: its own processors,
ports and funnels at their positions *within the group*, each child group as one box, and the
connections the group holds (those to a child group's ports drawn to the child's box). This
reads that structure from the NiFi JSON: which group holds each component and connection, the
groups' tree and positions, and every component's position in its group's coordinates, which
is also what a move saves back (NiFi's ``position``).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from flowcore.nifi.layout import Position

__all__ = ["COMPONENT_FIELDS", "GroupLayout", "nifi_groups", "read_nifi_groups"]

#: A group's fields that hold components the canvas draws as boxes.
COMPONENT_FIELDS = ("processors", "funnels", "inputPorts", "outputPorts")


@attrs.frozen
class GroupLayout:
    """Where everything of a NiFi flow sits: groups, memberships, local positions.

    Attributes:
        root: the root group's identifier.
        groups: every group below the root: ``{"id", "name", "parent", "position"}``
            (``position`` in the parent's coordinates, or None).
        group_of: a component's or connection's identifier -> its group's identifier.
        positions: a component's position in its own group's coordinates.
        kinds: a component's NiFi kind (``PROCESSOR``, ``FUNNEL``, ``INPUT_PORT``,
            ``OUTPUT_PORT``).
    """

    root: str
    groups: tuple[Mapping[str, Any], ...]
    group_of: Mapping[str, str]
    positions: Mapping[str, Position]
    kinds: Mapping[str, str]


_KINDS = {
    "processors": "PROCESSOR",
    "funnels": "FUNNEL",
    "inputPorts": "INPUT_PORT",
    "outputPorts": "OUTPUT_PORT",
}


def nifi_groups(root: Mapping[str, Any]) -> GroupLayout:
    """The group structure of a NiFi flow definition's root group (``flowContents``)."""
    root_id = str(root.get("identifier") or "root")
    groups: list[Mapping[str, Any]] = []
    group_of: dict[str, str] = {}
    positions: dict[str, Position] = {}
    kinds: dict[str, str] = {}

    def walk(group: Mapping[str, Any], identifier: str) -> None:
        for field in COMPONENT_FIELDS:
            for item in group.get(field) or ():
                if "identifier" not in item:
                    continue
                component = str(item["identifier"])
                group_of[component] = identifier
                kinds[component] = _KINDS[field]
                where = item.get("position") or {}
                if "x" in where and "y" in where:
                    positions[component] = Position(float(where["x"]), float(where["y"]))
        for connection in group.get("connections") or ():
            if "identifier" in connection:
                group_of[str(connection["identifier"])] = identifier
        for child in group.get("processGroups") or ():
            child_id = str(child.get("identifier") or f"{identifier}/{child.get('name')}")
            where = child.get("position") or {}
            groups.append(
                {
                    "id": child_id,
                    "name": str(child.get("name") or child_id),
                    "parent": identifier,
                    "position": (
                        {"x": float(where["x"]), "y": float(where["y"])}
                        if "x" in where and "y" in where
                        else None
                    ),
                }
            )
            walk(child, child_id)

    walk(root, root_id)
    return GroupLayout(root_id, tuple(groups), group_of, positions, kinds)


def read_nifi_groups(path: str | Path) -> GroupLayout | None:
    """:func:`nifi_groups` of a flow definition file (``.json``, ``.json.gz``); None if unread.

    A 1.x export (``rootGroup``) or a bare group is read as well; a file that cannot be read
    or parsed gives None (the canvas then lays the flattened flow out itself).
    """
    file = Path(path)
    try:
        raw = file.read_bytes()
        if file.name.endswith(".gz"):
            raw = gzip.decompress(raw)
        document = json.loads(raw)
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict):
        return None
    contents = document.get("flowContents") or document.get("rootGroup") or document
    return nifi_groups(contents) if isinstance(contents, dict) else None
