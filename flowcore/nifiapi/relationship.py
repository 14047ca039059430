"""NiFi's ``nifiapi.relationship``: a named exit a Python processor declares."""

from __future__ import annotations

__all__ = ["Relationship"]


class Relationship:
    """A relationship, as NiFi's Python API declares it.

    Attributes:
        name: the relationship's name, what flows connect.
        description: what a FlowFile routed here means.
        auto_terminated: whether it is auto-terminated unless the flow connects it.
    """

    def __init__(self, name: str, description: str, auto_terminated: bool = False) -> None:
        self.name = name
        self.description = description
        self.auto_terminated = auto_terminated

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Relationship) and (
            (self.name, self.description, self.auto_terminated)
            == (other.name, other.description, other.auto_terminated)
        )

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"Relationship({self.name!r})"
