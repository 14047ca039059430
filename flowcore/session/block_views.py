"""Block reads: one large file read as line-aligned blocks by parallel tasks, seen as one FlowFile.

When GetFile feeds SplitText in one stage and a listed file is large, the driver cuts the file
at split boundaries and hands each block to a task of its own (see GetFile's ``block_reads``).
Every such task makes *the same* GetFile FlowFile: the same uuid (derived from the work item
without its block), the same attributes, and the same content, the whole file as a rope of one
claim per block. The claims are named before any is written (:meth:`BlockView.rope`), so every
task knows them all; each task writes only its own block's claim. SplitText splits only the
task's block (:meth:`BlockView.start` to :meth:`BlockView.end`), numbering its splits from the
splits before the block (``fragment.index`` a prefix sum over the blocks) and giving every one
the whole file's ``fragment.count``; the children's uuids continue the sequence the one-task
split would have reached. So the FlowFiles, and the content every event names, are exactly the
one-task ones.

The FlowFile's own events are recorded once, as one task would record them: its RECEIVE in the
first block's task, its DROP (SplitText's ``original``, auto-terminated) in the last block's;
each task records the FORK of its own splits. :class:`BlockViews` is a task's record of the
views it made, which tells it which events and counts to leave to the other blocks' tasks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

from flowcore.flowfile import ContentClaim, Rope
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType

if TYPE_CHECKING:
    from repositories.protocols import ContentRepository

__all__ = ["ORIGINAL", "PAYLOAD_KEY", "BlockReadingHost", "BlockView", "BlockViews"]

#: The payload key of a work item that reads one block of a file (a :class:`BlockView`).
PAYLOAD_KEY = "block"
#: The relationship the reader routes a view to (SplitText's ``original``, auto-terminated).
ORIGINAL = "original"


@attrs.frozen
class BlockView:
    r"""One block of a file being split by parallel tasks.

    Attributes:
        index: the block's position among the file's blocks (0 first).
        bounds: every block's first byte in the file, then the file's size (all split
            boundaries).
        before: the splits emitted from the blocks before this one.
        count: the splits emitted from the whole file (``fragment.count``).
        name: the stem of the blocks' claim names: the creation time in epoch milliseconds,
            then what makes it unique (the same in every block's task).
        attributes: the FlowFile's attributes as the source took them once, on the driver
            (a file's access time moves as tasks read it: each task would see its own).
        lf_only: whether every line of the file ends in ``\n`` alone (no ``\r``), so a
            splitter can find the block's lines in bulk.
        header: the file's header lines (SplitText's Header Line Count), which a later
            block's task cannot read (they are in the first block).
        header_trimmed: the header's length without its last line's terminator.
    """

    index: int
    bounds: tuple[int, ...] = attrs.field(converter=tuple)
    before: int
    count: int
    name: str
    attributes: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=tuple)
    lf_only: bool = False
    header: bytes = b""
    header_trimmed: int = 0

    @property
    def blocks(self) -> int:
        """How many blocks the file was cut into."""
        return len(self.bounds) - 1

    @property
    def start(self) -> int:
        """The block's first byte in the file (a split boundary)."""
        return self.bounds[self.index]

    @property
    def end(self) -> int:
        """The byte after the block's last (a split boundary, or the file's size)."""
        return self.bounds[self.index + 1]

    @property
    def size(self) -> int:
        """The whole file's size."""
        return self.bounds[-1]

    @property
    def first(self) -> bool:
        """Whether this is the file's first block (its task records the RECEIVE)."""
        return self.index == 0

    @property
    def last(self) -> bool:
        """Whether this is the file's last block (its task records the original's DROP)."""
        return self.index == self.blocks - 1

    def piece_name(self, index: int) -> str:
        """The claim name of block *index*'s bytes."""
        return f"{self.name}-b{index}"

    def rope(self, content: ContentRepository) -> Rope:
        """The whole file's content: one named claim per block, in order."""
        return Rope(
            ContentClaim(content.named_claim(self.piece_name(i)), 0, end - start)
            for i, (start, end) in enumerate(zip(self.bounds, self.bounds[1:], strict=False))
        )

    def as_payload(self) -> tuple[object, ...]:
        """The view as a work item's payload value (plain values: it crosses the Spark wire)."""
        return (
            self.index,
            self.bounds,
            self.before,
            self.count,
            self.name,
            self.attributes,
            self.lf_only,
            self.header,
            self.header_trimmed,
        )

    @classmethod
    def of_payload(cls, value: object) -> BlockView | None:
        """The view a work item's payload value names, or None (a whole-file item)."""
        if value is None:
            return None
        index, bounds, before, count, name, attributes, lf_only, header, trimmed = value  # type: ignore[misc]
        return cls(
            int(index),
            tuple(int(b) for b in bounds),
            int(before),
            int(count),
            str(name),
            tuple((str(k), str(v)) for k, v in attributes),
            bool(lf_only),
            bytes(header),
            int(trimmed),
        )


@runtime_checkable
class BlockReadingHost(Protocol):
    """A host whose sessions can make block views (an engine task; not the test harness)."""

    block_views: BlockViews


@attrs.define
class BlockViews:
    """The block views one task made, by FlowFile uuid (a task runs one block of a file)."""

    views: dict[str, BlockView] = attrs.field(factory=dict)

    def register(self, uuid: str, view: BlockView) -> None:
        """The FlowFile *uuid* made in this task is *view* of its file."""
        self.views[uuid] = view

    def view_of(self, uuid: str) -> BlockView | None:
        """The block the FlowFile *uuid* stands for here (None: it is whole here)."""
        return self.views.get(uuid)

    def later(self) -> list[BlockView]:
        """The views of this task that are not their file's first block (counted by another)."""
        return [view for view in self.views.values() if not view.first]

    def recorded(self, event: ProvenanceEvent) -> ProvenanceEvent | None:
        """*event* as this task records it: None when it is a view's left to another block's task.

        A view's RECEIVE (CREATE) is recorded by the first block's task, its DROP by the last
        block's. A block without splits records an ATTRIBUTES_MODIFIED of the original where a
        one-task split records its FORK: kept only when the whole file has no splits.
        """
        view = self.views.get(event.flowfile_uuid)
        if view is None:
            return event
        kind = event.event_type
        if kind in (ProvenanceEventType.RECEIVE, ProvenanceEventType.CREATE):
            keep = view.first
        elif kind is ProvenanceEventType.DROP:
            keep = view.last
        elif kind is ProvenanceEventType.ATTRIBUTES_MODIFIED:
            keep = view.last and view.count == 0
        else:
            return event
        return event if keep else None
