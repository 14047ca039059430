"""How components and connections are known in a repository: ids from what users name.

Identity is data (DESIGN §9c): a repository keeps queues under connection ids and state under
component ids, so ids come from names and endpoints, never from the order of calls. This module
holds the rules both the definition (:mod:`flowcore.definition.flow`) and the repository's record of
it (:mod:`flowcore.driver.identity`) follow.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["connection_id", "ends_key", "ends_of", "reserved_id"]


def connection_id(
    source: str, relationships: Iterable[str], destination: str, *, copy: int = 1
) -> str:
    """A connection's derived id: its source, relationships (sorted) and destination.

    ``connection_id("get", ["success"], "split")`` is ``"get:success->split"``. A connection's
    identity is what it joins, so reordering ``connect()`` calls, or the relationships in one,
    keeps every queue where it was; changing what it joins makes it another connection. A
    second connection joining the same ends the same way (*copy* 2) is ``...#2``.
    """
    derived = f"{source}:{','.join(sorted(set(relationships)))}->{destination}"
    return derived if copy == 1 else f"{derived}#{copy}"


def ends_key(source: str, relationships: Iterable[str], destination: str) -> tuple[Any, ...]:
    """What a connection joins, as a key: two connections with one key are parallel copies."""
    return (source, tuple(sorted(set(relationships))), destination)


def ends_of(connection: Any) -> tuple[Any, ...]:
    """:func:`ends_key` of a :class:`~flowcore.definition.flow.Connection`."""
    return ends_key(connection.source, connection.relationships, connection.destination)


#: Prefixes of the repository's own state and queue keys, which share the ids' namespace.
_RESERVED_PREFIXES = ("$", "service:", "park:")


def reserved_id(identifier: str) -> str | None:
    """Why *identifier* cannot be an id (it would be taken for the repository's own keys)."""
    if "\x00" in identifier:
        return "holds a NUL character"
    if identifier == "park" or identifier.startswith(_RESERVED_PREFIXES):
        return "is kept for flowcore's own keys ('$...', 'service:...', 'park', 'park:...')"
    return None
