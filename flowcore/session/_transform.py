"""What per-FlowFile code sees of a FlowFile, and its decisions made batch routes.

:class:`FlowFileView` is the FlowFile a transform gets, its content read on demand through a
session or, in a batch form, its :class:`~flowcore.session.batch_context.BatchContext`.

A batch form that calls per-FlowFile code (``FlowFileTransform.transform_batch``) gets one
decision per FlowFile: a relationship, attributes to set or remove, maybe new contents. Here
they become what the engine takes whole: one :class:`~flowcore.processor.BatchRoute` per
relationship for the FlowFiles whose content stays, and the parts
:meth:`~flowcore.session.batch_context.BatchContext.write_contents` makes for those given new
contents, each FlowFile changed exactly as a session would change it one by one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from flowcore.flowfile import CORE_ATTRIBUTES
from flowcore.flowfile_batch.columns import Column, column_of
from flowcore.session._content import damage_of
from flowcore.session.batch_context import BatchRoute

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from flowcore.flowfile_batch import FlowFileBatch
    from flowcore.session.batch_context import BatchContext
    from flowcore.session.process_session import ProcessSession

__all__ = [
    "Decided",
    "FlowFileView",
    "damage_reason",
    "decided_routes",
    "decision_problem",
    "plainly_valid",
]


class FlowFileView:
    """The FlowFile as a transform sees it: attributes at hand, content read on demand.

    Wherever the engine's API takes a FlowFile's attributes (``evaluate_attribute_expressions``
    of a property value), it takes the view too.

    Attributes:
        flowfile: the FlowFile value.
    """

    def __init__(self, flowfile: FlowFile, session: ProcessSession | BatchContext) -> None:
        self.flowfile = flowfile
        self._session = session

    @property
    def attributes(self) -> Mapping[str, str]:
        """The FlowFile's attributes."""
        return self.flowfile.attributes

    @property
    def size(self) -> int:
        """The content size in bytes."""
        return self.flowfile.size

    def get_attribute(self, name: str) -> str | None:
        """One attribute, or ``None``."""
        return self.flowfile.attributes.get(name)

    def read(self) -> bytes:
        """The whole content."""
        return self._session.read_bytes(self.flowfile)

    def text(self, encoding: str = "utf-8") -> str:
        """The whole content, decoded."""
        return self.read().decode(encoding)

    def open(self) -> Any:
        """A stream over the content: ``with view.open() as stream: ...``."""
        return self._session.read(self.flowfile)

    def __repr__(self) -> str:
        return f"FlowFileView({self.flowfile})"


def damage_reason(error: BaseException, flowfile: FlowFile) -> str | None:
    """``content.failure.reason`` for *flowfile* when *error* is damage to its content."""
    damage = damage_of(error)
    if damage is None or not damage.hits(flowfile.content):
        return None
    return damage.reason


class Decided(Protocol):
    """What happens to one FlowFile of a batch (a ``TransformResult`` is one).

    Attributes:
        relationship: where it goes.
        attributes: attributes to set (``uuid`` ignored), or None.
        remove_attributes: attributes to remove (core attributes are kept).
        contents: its new content (str as UTF-8), or None to keep it.
    """

    @property
    def relationship(self) -> str: ...

    @property
    def attributes(self) -> Mapping[str, str] | None: ...

    @property
    def remove_attributes(self) -> tuple[str, ...]: ...

    @property
    def contents(self) -> bytes | str | None: ...


def decided_routes(
    context: BatchContext, batch: FlowFileBatch, decided: Sequence[Decided]
) -> list[BatchRoute]:
    """The routes that carry out *decided* (one per FlowFile of *batch*, in order)."""
    groups: dict[tuple[str, bool], list[int]] = {}
    for index, one in enumerate(decided):
        groups.setdefault((one.relationship, one.contents is not None), []).append(index)
    routes: list[BatchRoute] = []
    for (relationship, writes), rows in groups.items():
        part = batch.take(rows)
        part = part.with_columns(_changed_columns(part, rows, decided))
        if writes:
            contents = [_as_bytes(decided[row].contents) for row in rows]  # type: ignore[arg-type]
            written = context.write_contents(part, contents)
            routes.extend(written.routes(relationship, rows))
        else:
            routes.append(BatchRoute(relationship, rows, part))
    return routes


def _as_bytes(contents: bytes | str) -> bytes:
    return contents.encode("utf-8") if isinstance(contents, str) else contents


def _changed_columns(
    part: FlowFileBatch, rows: Sequence[int], decided: Sequence[Decided]
) -> dict[str, Column]:
    """The attributes *decided* sets or removes at *rows*, as columns of *part* (those rows)."""
    touched = {n for i in rows for n in (decided[i].attributes or {})} | {
        n for i in rows for n in decided[i].remove_attributes if n not in CORE_ATTRIBUTES
    }
    columns = {}
    for name in touched - {"uuid"}:
        current = part.column(name)
        values = []
        for position, row in enumerate(rows):
            one = decided[row]
            if one.attributes and name in one.attributes:
                values.append(one.attributes[name])
            elif name in one.remove_attributes:
                values.append(None)
            else:
                values.append(None if current is None else current.value(position))
        columns[name] = column_of(values)
    return columns


def plainly_valid(result: Decided, relationships: Collection[str]) -> bool:
    """Whether *result* keeps the contract, checked cheaply (a batch checks each FlowFile's).

    False sends it to the full check (:func:`decision_problem`), which names what is wrong.
    """
    if result.relationship not in relationships:
        return False
    contents = result.contents
    if contents is not None and type(contents) is not bytes and type(contents) is not str:
        return False
    attributes = result.attributes
    if attributes:
        for key, value in attributes.items():
            if type(value) is not str or type(key) is not str:
                return False
    return True


def decision_problem(result: Decided, relationships: Collection[str]) -> str | None:
    """What is wrong with one result of ``transform`` (a decision), or None."""
    if result.relationship not in relationships:
        return (
            f"a result names relationship {result.relationship!r}, which is not declared "
            f"(declared: {sorted(relationships)!r})"
        )
    if result.contents is not None and not isinstance(result.contents, bytes | str):
        kind = type(result.contents).__name__
        return f"a result's contents must be bytes or str, not {kind}"
    for key, value in (result.attributes or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            return (
                f"attribute {key!r} must be a str, got {type(value).__name__} {value!r}; "
                "convert it with str() first"
            )
    return None
