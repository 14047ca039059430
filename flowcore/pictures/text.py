"""Pictures as plain text for terminals: a listing per cluster, or a tree in time order.

A flow is listed stage by stage, each component with every exit it has (so branches and
auto-terminated relationships show), notes indented under the exit they belong to. Lineage is a
tree: each FlowFile with its events in time order, each event with the FlowFiles it made under
it; a FlowFile or event reached a second time (a JOIN's child under its other parents) says
``(see above)`` instead of repeating its subtree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from flowcore.pictures.model import Edge, Node, NodeKind, Picture

__all__ = ["to_text"]

_INDENT = "  "


def _component(node: Node) -> str:
    """A component as explain names it: ``GetFile 'get'`` (a name alone when it is the type)."""
    if len(node.label) > 1:
        return f"{node.label[1]} '{node.label[0]}'"
    return node.label[0]


def _exit(picture: Picture, edge: Edge) -> Iterator[str]:
    if picture.node(edge.target).kind is NodeKind.DROP:
        yield f"{_INDENT * 2}{edge.label}: auto-terminated"
        notes = edge.notes[1:]  # the first says it again
    else:
        yield f"{_INDENT * 2}{edge.label} -> {_component(picture.node(edge.target))}"
        notes = edge.notes
    yield from (f"{_INDENT * 3}{note}" for note in notes)


def _listing(picture: Picture) -> Iterator[str]:
    yield picture.title
    yield from picture.notes
    for cluster in picture.clusters:
        yield f"{cluster.label}:"
        yield from (f"{_INDENT}{note}" for note in cluster.notes)
        for node_id in cluster.nodes:
            node = picture.node(node_id)
            if node.kind is NodeKind.DROP:
                continue
            yield f"{_INDENT}{_component(node)}"
            for edge in picture.outgoing(node_id):
                yield from _exit(picture, edge)


def _tree(picture: Picture) -> Iterator[str]:
    """Roots first (in time order), then depth first; children sorted by their order."""
    yield picture.title
    yield from picture.notes
    children: dict[str, list[Node]] = {n.id: [] for n in picture.nodes}
    has_parent: set[str] = set()
    for edge in picture.edges:
        children[edge.source].append(picture.node(edge.target))
        has_parent.add(edge.target)
    for kids in children.values():
        kids.sort(key=lambda n: n.order)
    roots = sorted((n for n in picture.nodes if n.id not in has_parent), key=_first_order(children))
    shown: set[str] = set()

    def walk(node: Node, prefix: str, last: bool, top: bool) -> Iterator[str]:
        branch = "" if top else ("└── " if last else "├── ")
        again = node.id in shown and bool(children[node.id])
        yield f"{prefix}{branch}{node.name}{' (see above)' if again else ''}"
        if again:
            return
        shown.add(node.id)
        inner = prefix + ("" if top else ("    " if last else "│   "))
        kids = children[node.id]
        for position, kid in enumerate(kids):
            yield from walk(kid, inner, position == len(kids) - 1, top=False)

    for root in roots:
        yield from walk(root, "", last=True, top=True)


def _first_order(children: dict[str, list[Node]]) -> Callable[[Node], tuple[int, ...]]:
    """A root's sort key: its own order, else its first child's (a FlowFile's first event)."""

    def key(node: Node) -> tuple[int, ...]:
        if node.order:
            return node.order
        kids = children[node.id]
        return kids[0].order if kids else ()

    return key


def to_text(picture: Picture) -> str:
    """The picture as lines of text (a tree when ``picture.tree``, else a listing)."""
    lines = _tree(picture) if picture.tree else _listing(picture)
    return "\n".join(lines)
