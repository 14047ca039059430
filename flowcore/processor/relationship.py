"""Relationships: the named exits of a processor."""

from __future__ import annotations

import attrs

__all__ = ["FAILURE", "ORIGINAL", "SUCCESS", "Relationship"]


@attrs.frozen
class Relationship:
    """A named exit of a processor, matched by name as in NiFi.

    Attributes:
        name: the relationship's name (``success``, ``splits``, ``set state fail`` ...).
        description: what a FlowFile routed here means, shown by ``flowcore processors``.
        auto_terminated: whether it is auto-terminated unless the flow connects it.
    """

    name: str
    description: str = attrs.field(default="", eq=False)
    auto_terminated: bool = attrs.field(default=False, eq=False)

    def __str__(self) -> str:
        return self.name


SUCCESS = Relationship("success", "FlowFiles that were processed successfully")
FAILURE = Relationship("failure", "FlowFiles that could not be processed")
ORIGINAL = Relationship("original", "The input FlowFile, once processed")
