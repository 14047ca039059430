"""NiFi's nested process groups, flattened into one graph of components and connections.

flowcore's flows have no groups. Each component of a nested group keeps its name prefixed with
the group path (``Ingest/Split lines``); the ports through which groups pass FlowFiles become
funnels, so every connection keeps its place and the graph its shape. Components are found by
the ends of NiFi's connections, ``{id, groupId}`` (a component's own JSON says
``groupIdentifier``: NiFi's two spellings of the same thing).

Ports and funnels that lead nowhere once the flow runs on its own (the exported group's output
ports, which fed its parent; a port nothing connects to) are taken out by :func:`prune`: FlowFiles
that would have left through them are auto-terminated at the processor they leave, and a note
says so. A port nothing feeds that leads to a processor stays, as a funnel nothing feeds: NiFi
counts its connection as the processor's incoming connection (``hasIncomingConnection()``), so
the processor waits for FlowFiles there, where without it flowcore would run ExecuteSQL or
GenerateTableFetch as a source (their kind depends on their input) and judge an input-requiring
one invalid.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from flowcore.errors import NiFiFormatError

__all__ = ["Edge", "FlatFlow", "Group", "Node", "NodeKind", "flatten", "prune"]

#: Where a component is: (the identifier of its group, its own identifier).
Key = tuple[str, str]


class NodeKind(enum.Enum):
    """What a node of the flattened graph was in NiFi."""

    PROCESSOR = "processor"
    FUNNEL = "funnel"
    INPUT_PORT = "input port"
    OUTPUT_PORT = "output port"
    REMOTE_PORT = "remote process group port"

    @property
    def passes_through(self) -> bool:
        """Whether it becomes a funnel in flowcore (FlowFiles pass it unchanged)."""
        return self in (NodeKind.FUNNEL, NodeKind.INPUT_PORT, NodeKind.OUTPUT_PORT)


@attrs.frozen
class Node:
    """A component of some group: its NiFi JSON and its name with the group path.

    Attributes:
        key: (group identifier, identifier).
        kind: what it was in NiFi.
        name: its name, prefixed by the group path below the top group.
        data: the component's JSON.
        site_to_site: a port that exchanges FlowFiles with other NiFi instances.
    """

    key: Key
    kind: NodeKind
    name: str
    data: Mapping[str, Any]
    site_to_site: bool = False

    @property
    def identifier(self) -> str:
        """NiFi's identifier of the component."""
        return self.key[1]


@attrs.frozen
class Edge:
    """A connection between two nodes, with its JSON and the group path it was drawn in."""

    source: Key
    destination: Key
    data: Mapping[str, Any]
    path: str


@attrs.frozen
class Group:
    """A process group: its JSON and its path (empty for the top group)."""

    path: str
    data: Mapping[str, Any]


@attrs.define
class FlatFlow:
    """The flattened graph, nodes in the order the groups were walked (top group first)."""

    nodes: dict[Key, Node] = attrs.Factory(dict)
    edges: list[Edge] = attrs.Factory(list)
    groups: list[Group] = attrs.Factory(list)
    #: Each group's controller services, with the group path.
    services: list[tuple[str, Mapping[str, Any]]] = attrs.Factory(list)
    #: Remote process groups, with the group path.
    remote_groups: list[tuple[str, Mapping[str, Any]]] = attrs.Factory(list)
    #: Connections whose ends name no component of the flow: (path, connection JSON, why).
    dangling: list[tuple[str, Mapping[str, Any], str]] = attrs.Factory(list)

    def outgoing(self, key: Key) -> list[Edge]:
        """Edges leaving *key*."""
        return [e for e in self.edges if e.source == key]

    def incoming(self, key: Key) -> list[Edge]:
        """Edges entering *key*."""
        return [e for e in self.edges if e.destination == key]


def _objects(group: Mapping[str, Any], field: str, where: str) -> list[Mapping[str, Any]]:
    """The objects in *group*'s list (or set) *field*; none when it is null."""
    value = group.get(field)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        msg = f"{where}: {field} must be a list of objects"
        raise NiFiFormatError(msg)
    return value


def _joined(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def _identifier(data: Mapping[str, Any], where: str) -> str:
    identifier = data.get("identifier")
    if not isinstance(identifier, str) or not identifier:
        msg = f"{where}: a component has no identifier: {dict(data)!r:.200}"
        raise NiFiFormatError(msg)
    return identifier


def _default_name(kind: NodeKind) -> str:
    return {NodeKind.FUNNEL: "funnel", NodeKind.PROCESSOR: "processor"}.get(kind, "port")


def _members(
    group: Mapping[str, Any], where: str, site_to_site_ports: bool
) -> Iterator[tuple[NodeKind, Mapping[str, Any], bool]]:
    """The connectable components of *group* itself: processors, funnels, ports."""
    for data in _objects(group, "processors", where):
        yield NodeKind.PROCESSOR, data, False
    for data in _objects(group, "funnels", where):
        yield NodeKind.FUNNEL, data, False
    for field, kind in (("inputPorts", NodeKind.INPUT_PORT), ("outputPorts", NodeKind.OUTPUT_PORT)):
        for data in _objects(group, field, where):
            yield kind, data, site_to_site_ports or bool(data.get("allowRemoteAccess"))


def _walk(flat: FlatFlow, group: Mapping[str, Any], path: str, root_ports_remote: bool) -> None:
    where = f"process group {path or group.get('name') or '(top)'}"
    group_id = str(group.get("identifier") or "")
    flat.groups.append(Group(path, group))
    for kind, data, remote in _members(group, where, root_ports_remote):
        key = (group_id, _identifier(data, where))
        name = _joined(path, str(data.get("name") or _default_name(kind)))
        flat.nodes[key] = Node(key, kind, name, data, site_to_site=remote)
    for data in _objects(group, "remoteProcessGroups", where):
        flat.remote_groups.append((path, data))
        rpg_id = _identifier(data, where)
        for field in ("inputPorts", "outputPorts"):
            for port in _objects(data, field, where):
                key = (rpg_id, _identifier(port, where))
                name = _joined(path, str(port.get("name") or "remote port"))
                flat.nodes[key] = Node(key, NodeKind.REMOTE_PORT, name, port, site_to_site=True)
    flat.services.extend((path, s) for s in _objects(group, "controllerServices", where))
    for data in _objects(group, "connections", where):
        flat.edges.append(Edge(("", ""), ("", ""), data, path))  # ends resolved after the walk
    for child in _objects(group, "processGroups", where):
        _walk(flat, child, _joined(path, str(child.get("name") or "group")), False)


def _resolve(flat: FlatFlow, end: Any, by_id: Mapping[str, list[Key]]) -> Key | str:
    """The key of a connection end, or why it cannot be found."""
    if not isinstance(end, Mapping) or not end.get("id"):
        return "has no source or destination id"
    key = (str(end.get("groupId") or ""), str(end["id"]))
    if key in flat.nodes:
        return key
    found = by_id.get(key[1], [])
    if len(found) == 1:  # a group id written otherwise (older exports); the id is unique
        return found[0]
    name = end.get("name") or end["id"]
    return f"leads to {end.get('type', 'component')} {name!r}, which the flow does not hold"


def flatten(root: Mapping[str, Any], *, root_ports_remote: bool = False) -> FlatFlow:
    """Every component of *root* and its nested groups, and the connections between them.

    Args:
        root: the top process group's JSON.
        root_ports_remote: whether the top group's ports are site-to-site ports (those of an
            instance's root group are, whatever their ``allowRemoteAccess`` says).

    Raises:
        NiFiFormatError: a group's lists are not lists of objects, or a component has no
            identifier.
    """
    flat = FlatFlow()
    _walk(flat, root, "", root_ports_remote)
    by_id: dict[str, list[Key]] = {}
    for key in flat.nodes:
        by_id.setdefault(key[1], []).append(key)
    resolved = []
    for edge in flat.edges:
        source = _resolve(flat, edge.data.get("source"), by_id)
        destination = _resolve(flat, edge.data.get("destination"), by_id)
        if isinstance(source, str) or isinstance(destination, str):
            why = source if isinstance(source, str) else destination
            flat.dangling.append((edge.path, edge.data, str(why)))
            continue
        resolved.append(attrs.evolve(edge, source=source, destination=destination))
    flat.edges = resolved
    return flat


@attrs.frozen
class Pruned:
    """What :func:`prune` took out, and the relationships to auto-terminate instead.

    Attributes:
        notes: (subject, what happened) for each node taken out.
        terminate: relationships to auto-terminate, by processor key (only those no remaining
            connection carries: check before applying).
    """

    notes: tuple[tuple[str, str], ...]
    terminate: Mapping[Key, frozenset[str]]


def _take_out(flat: FlatFlow, node: Node, terminate: dict[Key, set[str]], touched: set[Key]) -> str:
    """Remove *node* and its connections; say what became of the FlowFiles that reached it.

    The nodes at the other ends of its connections are added to *touched*.
    """
    incoming = flat.incoming(node.key)
    touched.update(e.source for e in incoming)
    touched.update(e.destination for e in flat.outgoing(node.key))
    flat.edges = [e for e in flat.edges if node.key not in (e.source, e.destination)]
    del flat.nodes[node.key]
    if not incoming:
        return "receives nothing when the flow runs on its own: left out, with its connections"
    dropped_at = []
    for edge in incoming:
        source = flat.nodes.get(edge.source)
        if source is not None and source.kind is NodeKind.PROCESSOR:
            relationships = edge.data.get("selectedRelationships") or ()
            terminate.setdefault(edge.source, set()).update(map(str, relationships))
            dropped_at.append(source.name)
    where = f" (auto-terminated at {', '.join(map(repr, dropped_at))})" if dropped_at else ""
    return f"leads nowhere when the flow runs on its own: FlowFiles reaching it are dropped{where}"


def fed_processors(flat: FlatFlow, key: Key) -> list[Node]:
    """The processors *key*'s connections lead to, directly or through ports and funnels."""
    found: list[Node] = []
    seen = {key}
    todo = [key]
    while todo:
        for edge in flat.outgoing(todo.pop()):
            node = flat.nodes.get(edge.destination)
            if node is None or node.key in seen:
                continue
            seen.add(node.key)
            if node.kind is NodeKind.PROCESSOR:
                found.append(node)
            elif node.kind.passes_through:
                todo.append(node.key)
    return found


def _kept_note(fed: list[Node]) -> str:
    """Why a port nothing feeds stays: the processors whose incoming connection it is."""
    names = ", ".join(repr(n.name) for n in fed)
    return (
        "receives nothing when the flow runs on its own: kept as a funnel nothing feeds, with "
        f"its connections, which NiFi counts as incoming connections of {names} (a processor "
        "with one waits for FlowFiles: ExecuteSQL or GenerateTableFetch does not run on its own)"
    )


def prune(flat: FlatFlow) -> Pruned:
    """Take out ports with no way in or no way out, and what that leaves without one.

    Repeated, since taking a port out can leave the funnel before it without a way out (that
    funnel goes too). A funnel that had no way in or out in NiFi already stays, as drawn.
    Site-to-site ports stay: what exchanges FlowFiles with another instance is the caller's
    to report. A port with no way in that leads to a processor stays too (:func:`fed_processors`),
    with a note: it is that processor's incoming connection in NiFi, which decides whether the
    processor waits for FlowFiles or runs on its own.
    """
    notes: list[tuple[str, str]] = []
    terminate: dict[Key, set[str]] = {}
    touched: set[Key] = set()
    kept: set[Key] = set()
    changed = True
    while changed:
        changed = False
        for node in list(flat.nodes.values()):
            eligible = node.kind in (NodeKind.INPUT_PORT, NodeKind.OUTPUT_PORT) or (
                node.kind is NodeKind.FUNNEL and node.key in touched
            )
            if not eligible or node.site_to_site or node.key not in flat.nodes:
                continue
            if node.key in kept or (flat.incoming(node.key) and flat.outgoing(node.key)):
                continue
            fed = [] if flat.incoming(node.key) else fed_processors(flat, node.key)
            if fed:
                kept.add(node.key)
                notes.append((f"{node.kind.value} {node.name!r}", _kept_note(fed)))
                continue
            what = _take_out(flat, node, terminate, touched)
            notes.append((f"{node.kind.value} {node.name!r}", what))
            changed = True
    frozen = {key: frozenset(names) for key, names in terminate.items()}
    return Pruned(tuple(notes), frozen)
