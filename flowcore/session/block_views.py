"""Block views: one large file read as line-aligned blocks by parallel tasks, seen as one FlowFile.

When GetFile feeds SplitText in one stage and a listed file is large, the driver cuts the file
at split boundaries and hands each block to a task of its own (see GetFile's ``block_reads``).
Every such task makes *the same* GetFile FlowFile (same uuid and attributes, its uuid derived
from the work item without its block), whose content is only the task's block: a *view* of the
whole file. SplitText splits the view as it would split the whole file's part, numbering its
splits from the splits before the block (``fragment.index`` a prefix sum over the blocks) and
giving every one the whole file's ``fragment.count``; the children's uuids continue the
sequence the one-task split would have reached, so the FlowFiles are exactly the one-task ones.

The view's own events are recorded once, as one task would record them: its RECEIVE in the
first block's task, its DROP (SplitText's ``original``, auto-terminated) in the last block's;
each task records the FORK of its own splits. :func:`recorded` tells the task which events to
leave to the other blocks' tasks.

The registry is per process and holds the views of the task running there (a task runs its
members one after another in one thread); the task clears it when it ends.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import attrs

from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType

if TYPE_CHECKING:
    from flowcore.flowfile import FlowFile
    from flowcore.session.process_session import ProcessSession

__all__ = [
    "ORIGINAL",
    "PAYLOAD_KEY",
    "BlockView",
    "clear",
    "later_views",
    "recorded",
    "register",
    "skip_children",
    "view_of",
]

#: The payload key of a work item that reads one block of a file (a :class:`BlockView`).
PAYLOAD_KEY = "block"
#: The relationship the reader routes a view to (SplitText's ``original``, auto-terminated).
ORIGINAL = "original"


@attrs.frozen
class BlockView:
    """One block of a file being split by parallel tasks.

    Attributes:
        index: the block's position among the file's blocks (0 first).
        blocks: how many blocks the file was cut into.
        start: the block's first byte in the file (a split boundary).
        end: the byte after its last (a split boundary, or the file's size).
        before: the splits emitted from the blocks before this one.
        count: the splits emitted from the whole file (``fragment.count``).
        size: the whole file's size (the view's RECEIVE and DROP events record it).
    """

    index: int
    blocks: int
    start: int
    end: int
    before: int
    count: int
    size: int

    @property
    def first(self) -> bool:
        """Whether this is the file's first block (its task records the RECEIVE)."""
        return self.index == 0

    @property
    def last(self) -> bool:
        """Whether this is the file's last block (its task records the original's DROP)."""
        return self.index == self.blocks - 1

    def as_payload(self) -> tuple[int, ...]:
        """The view as a work item's payload value (plain ints: it crosses the Spark wire)."""
        return attrs.astuple(self)

    @classmethod
    def of_payload(cls, value: object) -> BlockView | None:
        """The view a work item's payload value names, or None (a whole-file item)."""
        if value is None:
            return None
        return cls(*(int(v) for v in value))  # type: ignore[attr-defined]


_local = threading.local()


def _views() -> dict[str, BlockView]:
    views = getattr(_local, "views", None)
    if views is None:
        views = _local.views = {}
    return views


def register(uuid: str, view: BlockView) -> None:
    """The FlowFile *uuid* made in this task is *view* of its file."""
    _views()[uuid] = view


def view_of(flowfile: FlowFile) -> BlockView | None:
    """The block *flowfile* holds, when it is a view of a larger file (None: whole content)."""
    return _views().get(flowfile.uuid)


def later_views() -> int:
    """How many views of this task are not their file's first block (counted by another)."""
    return sum(1 for view in _views().values() if not view.first)


def clear() -> None:
    """Forget this task's views (the task ended)."""
    _views().clear()


def recorded(event: ProvenanceEvent) -> ProvenanceEvent | None:
    """*event* as this task records it: None when it is a view's left to another block's task.

    A view's RECEIVE (first block) and DROP (last block) name the whole file's size and no
    content: the file is held whole nowhere, only as its blocks (and its splits' ranges). A
    block without splits records an ATTRIBUTES_MODIFIED of the original where a one-task split
    records its FORK: kept only when the whole file has no splits.
    """
    view = _views().get(event.flowfile_uuid)
    if view is None:
        return event
    kind = event.event_type
    if kind in (ProvenanceEventType.RECEIVE, ProvenanceEventType.CREATE):
        keep = view.first
    elif kind is ProvenanceEventType.DROP:
        keep = view.last
    elif kind is ProvenanceEventType.ATTRIBUTES_MODIFIED:
        # SplitText's attributes on the original: one task records them only when it forked
        # nothing (a FORK names them otherwise), so only when no block has splits
        keep = view.last and view.count == 0
    else:
        return event
    if not keep:
        return None
    return attrs.evolve(event, file_size=view.size, content_claim=None)


def skip_children(session: ProcessSession, flowfile: FlowFile, count: int) -> None:
    """Skip the uuids of *flowfile*'s first *count* splits (made by the blocks before)."""
    if count:
        session._uuids.run("clone", count, flowfile.uuid)
