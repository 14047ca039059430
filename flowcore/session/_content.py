"""The ProcessSession's content operations: read, write, append, merge, import and export.

Content is copy-on-write: every change writes a new claim through the session's content writer,
never touching the old bytes. Reads are shared (a FlowFile being read may be read again or
cloned); a write is exclusive.

A read that finds the content damaged (a checksum mismatch, a claim file cut short, an outside
file changed) raises as usual, and the session remembers which FlowFiles the damage hits: a
processor that catches the error and transfers such a FlowFile to ``failure`` itself leaves it
with ``content.failure.reason`` all the same, as when the engine routes it (:func:`damage_of`).
"""

from __future__ import annotations

import io
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO

import attrs

from flowcore.errors import ContentCorruptionError, ContentNotFoundError, FlowFileHandlingError
from flowcore.flowfile import Content, ContentClaim, FlowFile, ResourceClaim, Rope, content_of
from flowcore.ropes import DEFAULT_ROPE_POLICY
from flowcore.session import external_files
from flowcore.session._ranges import GATHER_WINDOW, RangeReader
from flowcore.session._support import (
    READ_CHUNK,
    ContentSource,
    ReadStream,
    emit,
)
from flowcore.session.block_views import BlockReadingHost, BlockView
from flowcore.session.streams import WriteStream

if TYPE_CHECKING:
    from flowcore.session._ledger import Ledger
    from flowcore.session._support import Resolve
    from flowcore.session.host import SessionHost
    from repositories.protocols import ContentWriter

__all__ = ["CONTENT_FAILURE_REASON", "Damage", "RangeGather", "SessionContent", "damage_of"]

#: Set on a FlowFile routed to ``failure`` because its content cannot be read as it was
#: written: a damaged claim file, or a zero-copy source file that is gone or changed.
CONTENT_FAILURE_REASON = "content.failure.reason"


@attrs.frozen
class Damage:
    """Content that can never be read as written: bytes of one resource claim.

    Attributes:
        claim: the resource claim.
        offset: where the damaged bytes start in its file; None when none of it can be trusted.
        length: how many bytes; None to the end of the file.
        reason: what is wrong, for ``content.failure.reason``.
    """

    claim: ResourceClaim
    offset: int | None
    length: int | None
    reason: str

    def hits(self, content: Content | None) -> bool:
        """Whether any byte of *content* lies in the damaged bytes."""
        if content is None:
            return False
        for piece in content.pieces:
            if piece.resource_claim != self.claim:
                continue
            if self.offset is None:
                return True
            end = None if self.length is None else self.offset + self.length
            if piece.offset + piece.length > self.offset and (end is None or piece.offset < end):
                return True
        return False


def damage_of(error: BaseException) -> Damage | None:
    """The damaged content behind *error* (or what caused it), if that is what failed.

    A repository claim file that is merely gone is not damage: it may be a path an executor
    cannot reach, so its FlowFiles are retried rather than failed.
    """
    seen: BaseException | None = error
    for _ in range(16):  # a chain of causes, never a cycle
        if seen is None:
            break
        if isinstance(seen, ContentCorruptionError):
            return Damage(seen.claim, seen.offset, seen.length, seen.reason)
        if isinstance(seen, ContentNotFoundError) and seen.external is not None:
            return Damage(seen.external, None, None, str(seen))
        seen = seen.__cause__ or seen.__context__
    return None


class _WatchedStream:
    """A content stream that tells its session when a read finds the content damaged."""

    def __init__(self, inner: BinaryIO, on_damage: Callable[[BaseException], None]) -> None:
        self._inner = inner
        self._on_damage = on_damage

    def read(self, size: int = -1) -> bytes:
        try:
            return self._inner.read(size)
        except (ContentCorruptionError, ContentNotFoundError) as error:
            self._on_damage(error)
            raise

    def readline(self, size: int = -1) -> bytes:
        try:
            return self._inner.readline(size)
        except (ContentCorruptionError, ContentNotFoundError) as error:
            self._on_damage(error)
            raise

    def close(self) -> None:
        self._inner.close()


class SessionContent:
    """The content half of a session's API, and what it wrote.

    Args:
        host: the session's host (its content repository).
        ledger: what the session holds (open streams are recorded there).
        resolve: the session's check of a FlowFile it is given (see
            ``ProcessSession._resolve``).
    """

    def __init__(
        self,
        host: SessionHost,
        ledger: Ledger,
        resolve: Resolve,
        delete_after_commit: Callable[[str], None],
    ) -> None:
        self._host = host
        self._ledger = ledger
        self._resolve = resolve
        self._writer: ContentWriter | None = None
        #: claims written in this unit of work
        self.written: list[ContentClaim] = []
        #: stages a source file's deletion once the commit is durable (``import_from``)
        self._delete_after_commit = delete_after_commit
        #: FlowFile id -> content.failure.reason, for FlowFiles a read found damaged
        self.damaged: dict[int, str] = {}
        #: reads merges' ranges in windows, into one buffer kept for the session's life
        self._gatherer: RangeReader | None = None

    def clear(self) -> None:
        """A new unit of work: nothing written, no content writer open."""
        self.written.clear()
        self.damaged.clear()
        self.close_writer()

    def close_writer(self) -> None:
        """Close the content writer: later writes start a new resource claim.

        ``migrate`` needs this, so no later write appends to a claim another session now uses.
        """
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _session_writer(self) -> ContentWriter:
        if self._writer is None:
            self._writer = self._host.content.writer(self._host.component.id)
        return self._writer

    def _note_damage(self, error: BaseException, flowfiles: Iterable[FlowFile]) -> None:
        """Remember which of *flowfiles* the damage behind *error* hits."""
        damage = damage_of(error)
        if damage is None:
            return
        for flowfile in flowfiles:
            if damage.hits(flowfile.content):
                self.damaged[flowfile.id] = damage.reason

    @contextmanager
    def _watching(self, flowfiles: Iterable[FlowFile]) -> Iterator[None]:
        """Note damaged content that a read of *flowfiles* runs into, and let the error go on."""
        try:
            yield
        except (ContentCorruptionError, ContentNotFoundError) as error:
            self._note_damage(error, flowfiles)
            raise

    @contextmanager
    def read(
        self, flowfile: FlowFile, offset: int = 0, length: int | None = None
    ) -> Iterator[ReadStream]:
        """Open the FlowFile's content for reading: ``with session.read(ff) as stream: ...``.

        The stream covers exactly the FlowFile's bytes, or the *length* bytes at *offset* when
        given (how a processor copies part of its input without reading the rest). While it is
        open the FlowFile cannot be modified, transferred or read again.

        Raises:
            FlowFileHandlingError: the range does not lie inside the content.
        """
        record = self._resolve(flowfile, reading=True)
        current = record.current
        size = current.size - offset if length is None else length
        if offset < 0 or size < 0 or offset + size > current.size:
            msg = (
                f"cannot read {size} bytes at offset {offset} of {current}: the range must lie "
                f"inside its {current.size} bytes"
            )
            raise FlowFileHandlingError(msg, flowfile_uuid=current.uuid)
        if current.content is None or size == 0:
            raw: BinaryIO = io.BytesIO(b"")
        else:
            with self._watching([current]):
                opened = self._host.content.open(current.content.slice(offset, size))
            raw = _WatchedStream(opened, lambda e: self._note_damage(e, [current]))  # type: ignore[assignment]
        stream = ReadStream(current.id, raw, self._ledger.close_reader)
        self._ledger.readers.setdefault(current.id, []).append(stream)
        try:
            yield stream
        finally:
            stream.close()

    def read_bytes(self, flowfile: FlowFile) -> bytes:
        """Return the whole content (for small content; stream large content with ``read``)."""
        record = self._resolve(flowfile, reading=True)
        if record.current.content is None:
            return b""
        with self._watching([record.current]):
            return self._host.content.read(record.current.content)

    def read_text(self, flowfile: FlowFile, encoding: str = "utf-8") -> str:
        """Return the whole content decoded (UTF-8 by default)."""
        return self.read_bytes(flowfile).decode(encoding)

    def _write_new_claim(
        self, flowfile_id: int, produce: Callable[[WriteStream], object]
    ) -> ContentClaim | None:
        target = self._session_writer().open_stream()
        self._ledger.writers[flowfile_id] = target
        try:
            produce(WriteStream(target))
        except BaseException:
            claim = target.close()
            if claim is not None:
                self.written.append(claim)
            raise
        finally:
            self._ledger.writers.pop(flowfile_id, None)
        claim = target.close()
        if claim is not None:
            self.written.append(claim)
        return claim

    def write(self, flowfile: FlowFile, content: ContentSource) -> FlowFile:
        """Replace the content; always a new claim (copy on write). Returns the new version.

        *content* may be bytes, a str (UTF-8), an iterable of byte chunks, or a callback that
        receives an output stream (NiFi's ``OutputStreamCallback``). Writing nothing makes the
        content empty.
        """
        record = self._resolve(flowfile)

        def produce(out: WriteStream) -> None:
            emit(out, content)

        claim = self._write_new_claim(record.current.id, produce)
        return record.become(record.current.with_content(claim))

    def rewrite(self, flowfile: FlowFile, callback: Callable[[Any, Any], object]) -> FlowFile:
        """Stream old content to new (NiFi's ``StreamCallback``): ``callback(input, output)``."""
        record = self._resolve(flowfile)
        current = record.current

        def produce(out: WriteStream) -> None:
            if current.content is None:
                callback(io.BytesIO(b""), out)
                return
            with self._watching([current]), self._host.content.open(current.content) as source:
                callback(_WatchedStream(source, lambda e: self._note_damage(e, [current])), out)

        claim = self._write_new_claim(current.id, produce)
        return record.become(current.with_content(claim))

    def append(self, flowfile: FlowFile, content: ContentSource) -> FlowFile:
        """Add to the end of the content; copy on write like every content change."""
        record = self._resolve(flowfile)
        current = record.current

        def produce(out: WriteStream) -> None:
            if current.content is not None:
                with self._watching([current]):
                    self._copy_claim(current.content, out)
            emit(out, content)

        claim = self._write_new_claim(current.id, produce)
        return record.become(current.with_content(claim))

    def keep_range(self, flowfile: FlowFile, offset: int, length: int) -> FlowFile:
        """Keep only *length* bytes at *offset* of the content, without copying (zero-copy).

        The FlowFile points at a slice of the claim it already has, so no byte is written; the
        content changed all the same (CONTENT_MODIFIED at commit, as for a write).

        Raises:
            FlowFileHandlingError: the range does not lie inside the content.
        """
        record = self._resolve(flowfile)
        current = record.current
        if offset < 0 or length < 0 or offset + length > current.size:
            msg = (
                f"cannot keep {length} bytes at offset {offset} of {current}: the range must "
                f"lie inside its {current.size} bytes"
            )
            raise FlowFileHandlingError(msg, flowfile_uuid=current.uuid)
        claim = None
        if current.content is not None and length > 0:
            claim = current.content.slice(offset, length)
        return record.become(current.with_content(claim))

    def _copy_claim(self, claim: ContentClaim, out: WriteStream) -> None:
        with self._host.content.open(claim) as source:
            while chunk := source.read(READ_CHUNK):
                out.write(chunk)

    def _copy_pieces(self, pieces: Sequence[ContentClaim], out: WriteStream) -> None:
        """Copy *pieces* in order; runs of increasing ranges of one claim as a :class:`RangeGather`.

        A merge of split lines copies ten thousand ranges of a few dozen bytes: opening the
        claim for each costs a hundred times the bytes, so :meth:`_gather` reads them in windows.
        """
        import numpy as np  # noqa: PLC0415 - only merges of many ranges need it

        index, count = 0, len(pieces)
        while index < count:
            first = pieces[index]
            end, stop = first.offset + first.length, index + 1
            while stop < count:
                piece = pieces[stop]
                if piece.resource_claim != first.resource_claim or piece.offset < end:
                    break
                end, stop = piece.offset + piece.length, stop + 1
            if stop - index == 1:
                self._copy_claim(first, out)
            else:
                run = pieces[index:stop]
                offsets = np.array([p.offset for p in run], dtype=np.int64)
                sizes = np.array([p.length for p in run], dtype=np.int64)
                self._gather(RangeGather(first.resource_claim, offsets, sizes), out)
            index = stop

    def _gather(self, gather: RangeGather, out: WriteStream) -> None:
        """Copy a gather's ranges, its demarcator between them.

        The claim is read in windows, each into the same buffer (a merge of a large bin
        touches no new memory per window), and written out as views of it or, for small
        ranges, joined in pieces: :meth:`RangeReader.joined`.
        """
        if self._gatherer is None:
            self._gatherer = RangeReader(self._host.content, GATHER_WINDOW, reuse=True)
        for piece in self._gatherer.joined(
            gather.resource_claim, gather.offsets, gather.sizes, gather.demarcator
        ):
            out.write(piece)

    def merge(
        self,
        sources: Sequence[FlowFile],
        destination: FlowFile,
        header: bytes | None = None,
        footer: bytes | None = None,
        demarcator: bytes | None = None,
        *,
        zero_copy: bool = False,
    ) -> FlowFile:
        """Write ``header + c1 + demarcator + c2 ... + footer`` into *destination*.

        The contents are copied, streaming, unless *zero_copy*: then *destination* becomes a
        rope of the sources' ranges with each delimiter written once as a small claim, and it
        reads identically. A rope the policy would not keep (too many pieces, or pinning mostly
        dead repository bytes: :mod:`flowcore.ropes`) is copied instead.
        """
        currents = [self._resolve(s, reading=True).current for s in sources]
        with self._watching(currents):
            return self.merge_contents(
                [c.content for c in currents],
                destination,
                header,
                footer,
                demarcator,
                zero_copy=zero_copy,
            )

    def merge_contents(
        self,
        contents: Sequence[Content | RangeGather | None],
        destination: FlowFile,
        header: bytes | None = None,
        footer: bytes | None = None,
        demarcator: bytes | None = None,
        *,
        zero_copy: bool = False,
    ) -> FlowFile:
        """:meth:`merge` of contents given as claims (of FlowFiles this session does not hold).

        A :class:`RangeGather` stands for the contents of many FlowFiles of a batch.

        A batch merge (:meth:`~processors.merge_content.MergeContent.merge_batches`) passes
        one claim per run of FlowFiles whose contents lie back to back.
        """
        record = self._resolve(destination)
        parts = _merge_parts(contents, header, footer, demarcator)
        if zero_copy:
            kept, joined = self._rope_of(record.current.id, parts)
            if kept:
                return record.become(record.current.with_content(joined))

        def produce(out: WriteStream) -> None:
            # Runs of ranges written one after another (one source's appends) are read as one.
            for kind, run in itertools.groupby(parts, key=_part_kind):
                if kind == "bytes":
                    for data in run:
                        out.write(data)  # type: ignore[arg-type]
                    continue
                if kind == "gather":
                    for gather in run:
                        self._gather(gather, out)  # type: ignore[arg-type]
                    continue
                joined = content_of(run)  # type: ignore[arg-type]
                self._copy_pieces(joined.pieces if joined is not None else (), out)

        claim = self._write_new_claim(record.current.id, produce)
        return record.become(record.current.with_content(claim))

    def _rope_of(
        self, flowfile_id: int, parts: Sequence[bytes | ContentClaim]
    ) -> tuple[bool, Content | None]:
        """``(True, the merged content as a rope or claim)``, or ``(False, None)`` to copy.

        Each distinct delimiter is written once, as a small claim every occurrence points at.
        """
        small: dict[bytes, ContentClaim | None] = {}
        pieces: list[ContentClaim] = []
        for part in parts:
            if isinstance(part, RangeGather):
                if part.demarcator:
                    return False, None  # kept as a copy: a rope of interleaved delimiters
                pieces.extend(part.claims())
                continue
            if not isinstance(part, bytes):
                pieces.append(part)
                continue
            if part not in small:
                small[part] = self._write_new_claim(flowfile_id, lambda out, d=part: out.write(d))
            if (claim := small[part]) is not None:
                pieces.append(claim)
        joined = content_of(pieces)
        if isinstance(joined, Rope) and not DEFAULT_ROPE_POLICY.keeps(
            joined, self._host.content.size_of
        ):
            return False, None
        return True, joined

    def import_from(
        self, path: str | os.PathLike[str], flowfile: FlowFile, *, keep_source: bool = True
    ) -> FlowFile:
        """Copy a file's bytes into the FlowFile.

        Without *keep_source* the file is deleted once the commit is durable, never before.
        """
        record = self._resolve(flowfile)

        def produce(out: WriteStream) -> None:
            emit(out, external_files.file_chunks(path, READ_CHUNK))

        claim = self._write_new_claim(record.current.id, produce)
        if not keep_source:
            self._delete_after_commit(os.fspath(path))
        return record.become(record.current.with_content(claim))

    def import_block(
        self, flowfile: FlowFile, view: BlockView, chunks: Iterable[bytes]
    ) -> FlowFile:
        """Make *flowfile* the one every block's task makes of a file read in parallel blocks.

        This task's block (*chunks*, exactly ``view.end - view.start`` bytes) goes into its
        own claim, named as :meth:`BlockView.rope` names it; the FlowFile's content is the
        whole file, that rope, the same in every block's task. Only this block's range of it
        may be read here (the other claims are being written by other tasks).

        Raises:
            FlowFileHandlingError: the session's host does not read blocks (the test
                harness), or *chunks* are not the block's length (the file changed).
        """
        host = self._host
        if not isinstance(host, BlockReadingHost):
            msg = "a file can be read as parallel blocks only in an engine task"
            raise FlowFileHandlingError(msg, flowfile_uuid=flowfile.uuid)
        record = self._resolve(flowfile)
        target = self._session_writer().open_named_stream(view.piece_name(view.index))
        try:
            emit(WriteStream(target), chunks)
        finally:
            claim = target.close()
            if claim is not None:
                self.written.append(claim)
        written = claim.length if claim is not None else 0
        if written != view.end - view.start:
            msg = (
                f"block {view.index} of {flowfile} holds {written} bytes, not the "
                f"{view.end - view.start} it was cut with: the file changed while it was read"
            )
            raise FlowFileHandlingError(msg, flowfile_uuid=flowfile.uuid)
        host.block_views.register(record.current.uuid, view)
        return record.become(record.current.with_content(view.rope(host.content)))

    def block_view(self, flowfile: FlowFile) -> BlockView | None:
        """The block of a larger file *flowfile* stands for in this task, or None (whole).

        A splitter given such a FlowFile splits only the block's range of its content
        (:mod:`flowcore.session.block_views`).
        """
        host = self._host
        if not isinstance(host, BlockReadingHost):
            return None
        return host.block_views.view_of(flowfile.uuid)

    def import_by_reference(
        self,
        path: str | os.PathLike[str],
        flowfile: FlowFile,
        *,
        offset: int = 0,
        length: int | None = None,
        fingerprint: str | None = None,
    ) -> FlowFile:
        """Point the FlowFile at a byte range of a file, without copying it (zero-copy).

        The content stays in the file: it must stay where it is, unchanged, until the flow has
        processed the FlowFile. Reading it after the file changed fails with
        :class:`~flowcore.errors.ContentChangedError`.

        Args:
            path: the file; made absolute, since every executor reads it by that path.
            flowfile: the FlowFile to update.
            offset: where the range starts.
            length: how many bytes (default: to the end of the file).
            fingerprint: ``size:mtime_ns:inode`` when the file was listed; taken now when
                omitted. Passing the listing's fingerprint makes a change since then an error.
        """
        record = self._resolve(flowfile)
        claim = external_files.range_claim(path, offset, length, fingerprint)
        return record.become(record.current.with_content(claim))

    def export_to(
        self,
        flowfile: FlowFile,
        target: str | os.PathLike[str] | BinaryIO,
        *,
        append: bool = False,
    ) -> int:
        """Write the FlowFile's content to a file (NiFi's ``exportTo``); returns the bytes.

        *target* is a path (replaced, or appended to when *append*) or a binary file open for
        writing. The repository copies verified claim ranges in the kernel, so a sink writing
        large contents out (PutFile) never reads them into Python.
        """
        if isinstance(target, str | os.PathLike):
            with open(target, "ab" if append else "wb") as out:
                return self.export_to(flowfile, out)
        record = self._resolve(flowfile, reading=True)
        current = record.current
        if current.content is None:
            return 0
        with self._watching([current]):
            return self._host.content.export(current.content, target)


@attrs.frozen(eq=False)
class RangeGather:
    """Ranges of one resource claim to copy one after the other: a batch's contents in a merge.

    The ranges increase and do not overlap (a split file's lines in order), so a window of
    the claim read at once holds many of them, and touching ones are written as one piece.
    """

    resource_claim: ResourceClaim
    offsets: Any  # numpy int64
    sizes: Any  # numpy int64
    demarcator: bytes = b""  # written between two ranges

    @property
    def pieces(self) -> tuple[RangeGather]:
        """Itself: a merge part of its own."""
        return (self,)

    def claims(self) -> list[ContentClaim]:
        """Each range as a claim."""
        return [
            ContentClaim(self.resource_claim, offset, size)
            for offset, size in zip(self.offsets.tolist(), self.sizes.tolist(), strict=True)
            if size
        ]


def _part_kind(part: object) -> str:
    if isinstance(part, bytes):
        return "bytes"
    return "gather" if isinstance(part, RangeGather) else "claim"


def _merge_parts(
    contents: Sequence[Content | RangeGather | None],
    header: bytes | None,
    footer: bytes | None,
    demarcator: bytes | None,
) -> list[bytes | ContentClaim]:
    """``header + c1 + demarcator + c2 ... + footer`` as delimiters and claim ranges, in order."""
    parts: list[bytes | ContentClaim] = []
    if header:
        parts.append(header)
    for index, content in enumerate(contents):
        if index and demarcator:
            parts.append(demarcator)
        if content is not None:
            parts.extend(content.pieces)
    if footer:
        parts.append(footer)
    return parts
