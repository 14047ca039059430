"""SplitText: split text into FlowFiles of at most N lines and/or N bytes, as NiFi does."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar, NamedTuple

import attrs
import numpy as np

from flowcore.errors import ProcessException
from flowcore.flowfile import ContentClaim, FlowFile
from flowcore.flowfile_batch.columns import IntColumn
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.session.block_views import BlockView
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    ValidationResult,
)
from processors._blocks import line_start_after
from processors._lines import (
    LineGroup,
    LineSpan,
    LineSplits,
    iter_line_groups,
    iter_lines,
    iter_split_lines,
)

__all__ = ["BlockPlan", "SplitText", "block_read_refusal", "plan_block_reads"]

#: The largest header a file read in parallel blocks may have (each block's task gets a copy).
_HEADER_MAX = 64 * 1024
#: Splits kept from the counting pass (about 100 bytes each) instead of reading again.
_REMEMBERED_SPLITS = 100_000
#: Splits per FlowFile batch made at once: bounds memory whatever the input's line count.
BATCH_SPLITS = 65_536

SPLIT_LINE_COUNT = "text.line.count"
FRAGMENT_SIZE = "fragment.size"
FRAGMENT_ID = "fragment.identifier"
FRAGMENT_INDEX = "fragment.index"
FRAGMENT_COUNT = "fragment.count"
SEGMENT_ORIGINAL_FILENAME = "segment.original.filename"

REL_ORIGINAL = Relationship(
    "original",
    "The original input file will be routed to this destination when it has been successfully "
    "split into 1 or more files",
)
REL_SPLITS = Relationship(
    "splits",
    "The split files will be routed to this destination when an input file is successfully "
    "split into 1 or more split files",
)
REL_FAILURE = Relationship(
    "failure",
    "If a file cannot be split for some reason, the original file will be routed to this "
    "destination and nothing will be routed elsewhere",
)


class _HeaderError(Exception):
    """The header cannot be read as configured; the input goes to failure."""


@attrs.frozen
class _Header:
    length: int = 0  # bytes of all header lines
    trimmed_length: int = 0  # minus the last header line's terminator
    lines: int = 0


class _Split(NamedTuple):
    start: int
    length: int
    trimmed: int
    line_count: int


class SplitText(Processor):
    r"""Splits a text file into files of at most N lines and/or N bytes (NiFi's SplitText).

    Follows NiFi's algorithm exactly, quirks included where the reference says so: lines end in
    ``\\n``, ``\\r\\n`` or a lone ``\\r``; the header (by count or by marker) is copied into every
    split and counts toward Maximum Fragment Size; a line too big for the limit becomes a split
    of its own; with Remove Trailing Newlines a split holding only empty lines is not emitted
    (with a header, the header alone is). One deliberate difference: when a Header Line Marker is
    set but the first line does not match, NiFi drops that line; flowcore keeps it.

    Content is streamed, never read whole. A split without a header is a zero-copy slice of the
    input's content claim (a partial clone, FORK); a split with a header is written as the header
    bytes followed by a range copied from the input.
    """

    LINE_SPLIT_COUNT = PropertyDescriptor(
        "Line Split Count",
        description="The number of lines that will be added to each split file, excluding header "
        "lines. A value of zero requires Maximum Fragment Size to be set, and line count will not "
        "be considered in determining splits.",
        required=True,
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    )
    FRAGMENT_MAX_SIZE = PropertyDescriptor(
        "Maximum Fragment Size",
        description="The maximum size of each split file, including header lines. NOTE: in the "
        "case where a single line exceeds this property (including headers, if applicable), that "
        "line will be output in a split of its own which exceeds this Maximum Fragment Size "
        "setting.",
        required=False,
        validators=(DATA_SIZE_VALIDATOR,),
    )
    HEADER_LINE_COUNT = PropertyDescriptor(
        "Header Line Count",
        description="The number of lines that should be considered part of the header; the "
        "header lines will be duplicated to all split files",
        required=True,
        default="0",
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    )
    HEADER_MARKER = PropertyDescriptor(
        "Header Line Marker Characters",
        description="The first character(s) on the line of the datafile which signifies a header "
        "line. This value is ignored when Header Line Count is non-zero. The first line not "
        "containing the Header Line Marker Characters and all subsequent lines are considered non "
        "header",
        required=False,
        validators=(NON_EMPTY_VALIDATOR,),
    )
    REMOVE_TRAILING_NEWLINES = PropertyDescriptor(
        "Remove Trailing Newlines",
        description="Whether to remove newlines at the end of each split file. This should be "
        "false if you intend to merge the split files later. If this is set to 'true' and a "
        "FlowFile is generated that contains only 'empty lines' (i.e., consists only of \\r and "
        "\\n characters), the FlowFile will not be emitted. Note, however, that if header lines "
        "are specified, the resultant FlowFile will never be empty as it will consist of the "
        "header lines, so a FlowFile may be emitted that contains only the header lines.",
        required=True,
        default="true",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        LINE_SPLIT_COUNT,
        FRAGMENT_MAX_SIZE,
        HEADER_LINE_COUNT,
        HEADER_MARKER,
        REMOVE_TRAILING_NEWLINES,
    )
    relationships: ClassVar = (REL_ORIGINAL, REL_SPLITS, REL_FAILURE)
    tags: ClassVar = ("split", "text")
    reads_attributes: ClassVar[Mapping[str, str]] = {
        "filename": "Becomes each split's segment.original.filename"
    }
    writes_attributes: ClassVar[Mapping[str, str]] = {
        SPLIT_LINE_COUNT: "The number of lines of text from the original FlowFile in this split",
        FRAGMENT_SIZE: "The number of bytes from the original FlowFile in this split",
        FRAGMENT_ID: "All splits from the same parent FlowFile share this identifier (a uuid)",
        FRAGMENT_INDEX: "A one-up number giving the split's position among the splits",
        FRAGMENT_COUNT: "The number of split FlowFiles generated from the parent FlowFile",
        SEGMENT_ORIGINAL_FILENAME: "The filename of the parent FlowFile",
    }

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Line Split Count 0 needs Maximum Fragment Size."""
        count = values.get(self.LINE_SPLIT_COUNT.name)
        if (
            count is not None
            and count.strip() == "0"
            and values.get(self.FRAGMENT_MAX_SIZE.name) is None
        ):
            return [
                ValidationResult(
                    self.FRAGMENT_MAX_SIZE.display_name,
                    None,
                    False,
                    "Property must be specified when Line Split Count is 0",
                )
            ]
        return []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Split one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        line_split_count = context.get_property(self.LINE_SPLIT_COUNT).as_integer() or 0
        max_size_value = context.get_property(self.FRAGMENT_MAX_SIZE).as_data_size("B")
        max_size = int(max_size_value) if max_size_value is not None else None
        header_count = context.get_property(self.HEADER_LINE_COUNT).as_integer() or 0
        marker_text = context.get_property(self.HEADER_MARKER).value
        marker = marker_text.encode("utf-8") if marker_text and header_count == 0 else None
        remove_trailing = bool(context.get_property(self.REMOVE_TRAILING_NEWLINES).as_boolean())

        # A view of one block of a larger file, read by parallel tasks (block_views): its
        # splits are numbered after the blocks before it and counted over the whole file.
        view = session.block_view(flowfile)

        def plan(stream: object) -> tuple[_Header, Iterator[_Split]]:
            if not header_count and not marker and max_size is None and line_split_count > 0:
                # The common case (no header, no size limit): lines counted in bulk.
                groups = iter_line_groups(stream, line_split_count)  # type: ignore[arg-type]
                return _Header(), _splits_of_groups(groups)
            lines = iter_lines(stream, prefix_size=len(marker) if marker else 0)  # type: ignore[arg-type]
            if view is not None and not view.first and header_count:
                # a later block: the header is the file's first lines, in the first block
                header = _Header(len(view.header), view.header_trimmed, header_count)
                return header, _iter_splits(lines, None, header, line_split_count, None, first=0)
            header, remainder, lines = _read_header(lines, header_count, marker, max_size)
            return header, _iter_splits(lines, remainder, header, line_split_count, max_size)

        # the range of the content split here: the block's, or all of it
        base, length = (view.start, view.end - view.start) if view is not None else (0, None)
        if (
            not header_count
            and not marker
            and max_size is None
            and line_split_count > 0
            and session.takes_batches(REL_SPLITS.name)
            and self._split_as_batch(session, flowfile, line_split_count, remove_trailing, view)
        ):
            return
        # fragment.count is on every split, so the splits are counted before any is emitted.
        # Up to _REMEMBERED_SPLITS of them are kept from that pass, so the usual input is read
        # once; beyond that a second streaming pass finds them again, keeping memory flat.
        remembered: list[_Split] | None = []
        count = 0
        try:
            with session.read(flowfile, base, length) as stream:
                header, splits = plan(stream)
                for split in splits:
                    if remembered is not None:
                        remembered.append(split)
                        if len(remembered) > _REMEMBERED_SPLITS:
                            remembered = None
                    if header.lines or (split.trimmed if remove_trailing else split.length) > 0:
                        count += 1
                if header.lines:
                    count = count or 1
        except _HeaderError as ex:
            context.logger.error("Unable to split %s due to %s; routing to failure", flowfile, ex)
            session.transfer(flowfile, REL_FAILURE)
            return
        emitted = 0
        if view is not None:
            count, emitted = view.count, view.before
            # children with a header are made (create), the others cut (clone)
            session.skip_children(flowfile, emitted, "fork" if header.lines else "clone")
        fragment_id = session.identifier_for(flowfile, FRAGMENT_ID)
        filename = flowfile.attributes.get("filename", "")
        header_bytes = b""
        if header.lines and view is not None:
            header_bytes = view.header
        elif header.lines:
            with session.read(flowfile, 0, header.length) as stream:
                header_bytes = stream.read()
        with contextlib.ExitStack() as reading:
            if remembered is None:
                header, splits = plan(reading.enter_context(session.read(flowfile, base, length)))
            else:
                splits = iter(remembered)
            for piece in splits:
                size = piece.trimmed if remove_trailing else piece.length
                if header.lines:
                    child = session.create(flowfile)
                    if size > 0:
                        start = base + piece.start
                        body = _HeaderAndRange(session, flowfile, header_bytes, start, size)
                        child = session.write(child, body)
                    else:
                        child = session.write(child, header_bytes[: header.trimmed_length])
                elif size > 0:
                    child = session.clone(flowfile, base + piece.start, size)
                else:
                    continue
                emitted += 1
                attributes = {
                    SPLIT_LINE_COUNT: str(piece.line_count),
                    FRAGMENT_SIZE: str(child.size),
                    FRAGMENT_ID: fragment_id,
                    FRAGMENT_INDEX: str(emitted),
                    FRAGMENT_COUNT: str(count),
                    SEGMENT_ORIGINAL_FILENAME: filename,
                }
                session.transfer(session.put_all_attributes(child, attributes), REL_SPLITS)
        if emitted == 0 and header.lines:
            # Only header lines: one split holding the header, without fragment.count.
            child = session.write(session.create(flowfile), header_bytes[: header.trimmed_length])
            attributes = {
                SPLIT_LINE_COUNT: "0",
                FRAGMENT_SIZE: str(child.size),
                FRAGMENT_ID: fragment_id,
                FRAGMENT_INDEX: "1",
                SEGMENT_ORIGINAL_FILENAME: filename,
            }
            session.transfer(session.put_all_attributes(child, attributes), REL_SPLITS)
        original = session.put_all_attributes(
            flowfile, {FRAGMENT_ID: fragment_id, FRAGMENT_COUNT: str(count)}
        )
        session.transfer(original, REL_ORIGINAL)

    @staticmethod
    def _split_as_batch(
        session: ProcessSession,
        flowfile: FlowFile,
        line_split_count: int,
        remove_trailing: bool,
        view: BlockView | None = None,
    ) -> bool:
        r"""Make the splits as FlowFile batches (no header, no size limit, ``\n`` lines).

        The same splits, attributes and events as the per-split path, as arrays: offsets into
        the input's content, ``fragment.index`` and ``text.line.count`` as columns. Batches of
        at most :data:`BATCH_SPLITS` splits, so memory is bounded whatever the line count: the
        splits are counted first (``fragment.count`` is on every one), then found again part
        by part. False (nothing done) when the content holds a ``\r`` or is not one claim range.
        """
        base, length = (view.start, view.end - view.start) if view is not None else (0, None)
        if (
            view is None
            and flowfile.content is not None
            and not isinstance(flowfile.content, ContentClaim)
        ):
            return False
        count, emitted = 0, 0
        parts: list[LineSplits] | None = []  # None: too many to hold, found again below
        if view is not None and not view.lf_only:
            return False  # a '\r' somewhere in the file: the exact per-line path
        if view is not None:  # one block of a file: numbered after, and counted with, the rest
            # the driver counted them (a block is read once, below)
            count, emitted, parts = view.count, view.before, None
            session.skip_children(flowfile, emitted)
        else:
            with session.read(flowfile, base, length) as stream:
                for part in iter_split_lines(stream, line_split_count, max_splits=BATCH_SPLITS):
                    if part is None:
                        return False
                    count += int(np.count_nonzero(_sizes(part, remove_trailing)))
                    if parts is not None:
                        parts.append(part)
                        if len(parts) > 1:
                            parts = None
        fragment_id = session.identifier_for(flowfile, FRAGMENT_ID)
        # the original's attributes first: its FORK may be recorded as soon as its first
        # children go on (a large input's), and the children carry these values anyway
        flowfile = session.put_all_attributes(
            flowfile, {FRAGMENT_ID: fragment_id, FRAGMENT_COUNT: str(count)}
        )
        if count:
            shared = {
                FRAGMENT_ID: fragment_id,
                FRAGMENT_COUNT: str(count),
                SEGMENT_ORIGINAL_FILENAME: flowfile.attributes.get("filename", ""),
            }
            with contextlib.ExitStack() as reading:
                found: Iterable[LineSplits | None] = parts or ()
                if parts is None:
                    stream = reading.enter_context(session.read(flowfile, base, length))
                    found = iter_split_lines(stream, line_split_count, max_splits=BATCH_SPLITS)
                for part in found:
                    if part is None:
                        msg = f"the content of {flowfile} changed while it was split"
                        raise ProcessException(msg)
                    sizes = _sizes(part, remove_trailing)
                    kept = np.flatnonzero(sizes > 0)
                    if not len(kept):
                        continue
                    chosen = sizes[kept]
                    splits = session.fork_batch(
                        flowfile,
                        part.starts[kept] + base,
                        chosen,
                        shared,
                        {
                            SPLIT_LINE_COUNT: IntColumn(part.line_counts[kept]),
                            FRAGMENT_SIZE: IntColumn(chosen),
                            FRAGMENT_INDEX: IntColumn(np.arange(1, len(kept) + 1) + emitted),
                        },
                    )
                    emitted += len(kept)
                    session.transfer_batch(splits, REL_SPLITS)
        session.transfer(flowfile, REL_ORIGINAL)
        return True


def _sizes(part: LineSplits, remove_trailing: bool) -> np.ndarray:
    """The sizes of a part's splits as emitted (0: none is emitted)."""
    return part.trimmed if remove_trailing else part.lengths


@attrs.frozen
class _HeaderAndRange:
    """Writes the header, then copies a byte range of the input (a split with a header)."""

    session: ProcessSession
    source: FlowFile
    header: bytes
    start: int
    size: int

    def __call__(self, out: object) -> None:
        write = out.write  # type: ignore[attr-defined]
        write(self.header)
        with self.session.read(self.source, self.start, self.size) as stream:
            while chunk := stream.read(1 << 20):
                write(chunk)


def _read_header(
    lines: Iterator[LineSpan], header_count: int, marker: bytes | None, max_size: int | None
) -> tuple[_Header, LineSpan | None, Iterator[LineSpan]]:
    """Read the header lines (reference §1.4 step 2).

    Returns the header, the line read past a marker header (carried over into the first split,
    as NiFi does), and the lines still to split.
    """
    limit = max_size if max_size is not None else float("inf")
    length = 0
    last_crlf = 0
    read = 0
    if header_count > 0:
        for line in lines:
            if length + line.length > limit:
                msg = f"the header exceeds the Maximum Fragment Size of {max_size} bytes"
                raise _HeaderError(msg)
            length += line.length
            last_crlf = line.crlf
            read += 1
            if read == header_count:
                break
        if 0 < read < header_count:
            msg = f"the header needs {header_count} lines but the content has only {read}"
            raise _HeaderError(msg)
        return _Header(length, length - last_crlf, read), None, lines
    if marker:
        for line in lines:
            if not line.prefix.startswith(marker):
                if read == 0:
                    # NiFi drops this line and shifts every split; flowcore splits it normally.
                    return _Header(), None, itertools.chain([line], lines)
                return _Header(length, length - last_crlf, read), line, lines
            if length + line.length > limit:
                msg = f"the header exceeds the Maximum Fragment Size of {max_size} bytes"
                raise _HeaderError(msg)
            length += line.length
            last_crlf = line.crlf
            read += 1
    return _Header(length, length - last_crlf, read), None, lines


def _splits_of_groups(groups: Iterator[LineGroup]) -> Iterator[_Split]:
    """Splits of whole line groups: :func:`_iter_splits` without a header or a size limit."""
    for group in groups:
        trailing = group.trailing_crlf
        if group.length - trailing >= group.last_crlf:
            trailing += group.last_crlf
        yield _Split(group.offset, group.length, group.length - trailing, group.count - group.empty)


def _iter_splits(
    lines: Iterator[LineSpan],
    remainder: LineSpan | None,
    header: _Header,
    line_split_count: int,
    max_size: int | None,
    *,
    first: int | None = None,
) -> Iterator[_Split]:
    """Yield every split (reference §1.4 step 3), keeping NiFi's counting quirks.

    The first split starts after the header, or at *first* (a block after the header's).
    """
    limit = max_size if max_size is not None else float("inf")
    position = header.length if first is None else first
    while True:
        length = count = trailing_crlf = empty_lines = last_crlf = 0
        new_remainder = None
        start = remainder.offset if remainder is not None else position
        if remainder is not None:
            length += remainder.length  # a carried-over line is not checked for emptiness
            count += 1
        for line in lines:
            position = line.offset + line.length
            last_crlf = line.crlf  # set even for a line that gets deferred (NiFi's quirk)
            if length + line.length + header.length > limit:
                if length == 0:
                    length += line.length  # an oversize line becomes a split of its own
                    count += 1
                else:
                    new_remainder = line
                break
            if line.length == line.crlf:
                trailing_crlf += line.crlf
                empty_lines += 1
            elif line.length > line.crlf:
                trailing_crlf = 0
            length += line.length
            count += 1
            if 0 < line_split_count <= count:
                break
        if count == 0:
            return
        if length - trailing_crlf >= last_crlf:
            trailing_crlf += last_crlf
        yield _Split(start, length, length - trailing_crlf, count - empty_lines)
        remainder = new_remainder


def block_read_refusal(splitter: Processor | None, dropped: frozenset[str]) -> str | None:
    """Why a file feeding *splitter* cannot be read as blocks by parallel tasks (None: it can).

    Args:
        splitter: the processor the file's FlowFile goes to, in the same stage.
        dropped: its auto-terminated relationships without a connection.
    """
    if not isinstance(splitter, SplitText):
        return "it does not feed SplitText"
    values = splitter.effective_values()
    if values.get(SplitText.HEADER_MARKER.name) and not int(
        values.get(SplitText.HEADER_LINE_COUNT.name) or 0
    ):
        return "SplitText finds its header by Header Line Marker Characters"
    if values.get(SplitText.FRAGMENT_MAX_SIZE.name):
        return "SplitText has a Maximum Fragment Size"
    if REL_ORIGINAL.name not in dropped:
        return "SplitText's original relationship is connected (it needs the whole file)"
    return None


@attrs.frozen
class BlockPlan:
    r"""A file cut into blocks at split boundaries, for parallel SplitText tasks.

    Attributes:
        blocks: ``(start, end, splits before)`` of each block, in order.
        count: the splits of the whole file (``fragment.count``).
        lf_only: whether every line ends in ``\n`` alone (no ``\r``): the splits of each
            block can be found in bulk, without counting them first.
        header: the header lines' bytes (Header Line Count), which every split begins with.
        header_trimmed: their length without the last line's terminator (a split of an
            empty body holds only that much of the header).
    """

    blocks: tuple[tuple[int, int, int], ...]
    count: int
    lf_only: bool
    header: bytes = b""
    header_trimmed: int = 0


def plan_block_reads(path: str, size: int, parts: int, splitter: SplitText) -> BlockPlan | None:
    r"""Cut a file into at most *parts* blocks at split boundaries, for parallel SplitText tasks.

    Each nominal cut (``size * i / parts``) moves, as Hadoop's line rule moves a block's start,
    to the first line start after it, then on to the next split boundary (every Line Split
    Count lines), so no split spans two blocks. The file is scanned once (numpy for ``\n``
    lines, the exact per-line path when a ``\r`` appears) to count the splits before each
    block: ``fragment.index`` is a prefix sum of those counts.

    Returns:
        The blocks, or None when fewer than two remain.
    """
    values = splitter.effective_values()
    line_split_count = int(values.get(SplitText.LINE_SPLIT_COUNT.name) or 0)
    remove_trailing = str(values.get(SplitText.REMOVE_TRAILING_NEWLINES.name)).lower() == "true"
    header_count = int(values.get(SplitText.HEADER_LINE_COUNT.name) or 0)
    if line_split_count <= 0 or parts < 2:
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        cuts = {line_start_after(fd, size * i // parts, size) for i in range(1, parts)}
    finally:
        os.close(fd)
    targets = sorted(cuts - {0, size})
    if not targets:
        return None
    header = _Header()
    if header_count:
        with open(path, "rb") as stream:
            lines = iter_lines(stream)
            try:
                header, _, lines = _read_header(lines, header_count, None, None)
            except _HeaderError:
                return None  # the one-task split routes it to failure
            if header.length > _HEADER_MAX:
                return None
            splits = _iter_splits(lines, None, header, line_split_count, None)
            # with a header every split is emitted, an empty body too
            scanned = _boundaries(targets, _exact_parts(splits, remove_trailing, every=True))
        with open(path, "rb") as stream:
            header_bytes = stream.read(header.length)
        lf_only = False
    else:
        with open(path, "rb") as stream:
            scanned = _boundaries(targets, _numpy_parts(stream, line_split_count, remove_trailing))
        lf_only = scanned is not None
        if scanned is None:  # a '\r': the exact per-line path
            with open(path, "rb") as stream:
                splits = _splits_of_groups(iter_line_groups(stream, line_split_count))
                scanned = _boundaries(targets, _exact_parts(splits, remove_trailing))
        header_bytes = b""
    assert scanned is not None
    found, emitted = scanned
    found = [(b, n) for b, n in found if header.length < b < size]  # each block with splits
    if not found:
        return None
    bounds = [(0, 0), *found]
    blocks = tuple(
        (start, (bounds[i + 1][0] if i + 1 < len(bounds) else size), before)
        for i, (start, before) in enumerate(bounds)
    )
    return BlockPlan(blocks, emitted, lf_only, header_bytes, header.trimmed_length)


def _boundaries(
    targets: list[int], parts: Iterable[tuple[np.ndarray, np.ndarray] | None]
) -> tuple[list[tuple[int, int]], int] | None:
    r"""The first split start at or after each target, with the splits emitted before it.

    Also the splits emitted in all. None when *parts* gives up (a ``\r`` on the numpy path).
    """
    found: list[tuple[int, int]] = []
    emitted = 0
    pending = list(targets)
    for part in parts:
        if part is None:
            return None
        starts, sizes = part
        while pending and len(starts) and pending[0] <= starts[-1]:
            at = int(np.searchsorted(starts, pending[0], side="left"))
            boundary = int(starts[at])
            if not found or found[-1][0] != boundary:
                found.append((boundary, emitted + int(np.count_nonzero(sizes[:at]))))
            pending = [t for t in pending if t > boundary]
        emitted += int(np.count_nonzero(sizes))
    return found, emitted


def _numpy_parts(
    stream: object, line_split_count: int, remove_trailing: bool
) -> Iterator[tuple[np.ndarray, np.ndarray] | None]:
    r"""Each part's split starts and emitted sizes (0: not emitted), ``\n`` lines only."""
    for part in iter_split_lines(stream, line_split_count, max_splits=BATCH_SPLITS):  # type: ignore[arg-type]
        yield None if part is None else (part.starts, _sizes(part, remove_trailing))


def _exact_parts(
    splits: Iterator[_Split], remove_trailing: bool, *, every: bool = False
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    r""":func:`_numpy_parts` from the exact per-line splits (any line terminator).

    *every*: each split is emitted (a header makes an empty body a split).
    """
    while chunk := list(itertools.islice(splits, BATCH_SPLITS)):
        starts = np.fromiter((s.start for s in chunk), np.int64, len(chunk))
        if every:
            yield starts, np.ones(len(chunk), np.int64)
            continue
        kept = (s.trimmed if remove_trailing else s.length for s in chunk)
        yield starts, np.fromiter(kept, np.int64, len(chunk))
