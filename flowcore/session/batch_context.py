"""The context a batch form runs with: a processor's context, plus what a sink needs of a session.

A sink's batch form (``transform_batch`` of LogAttribute and PutFile, ``write_batches`` of a
two-phase sink) does per FlowFile what its ``on_trigger`` does through a session, for a whole
:class:`~flowcore.flowfile_batch.FlowFileBatch` without a FlowFile object or a session each. So
its context offers the session's external effects, staged exactly as a session stages them
(:class:`~flowcore.session._effects.StagedEffects`: hidden temporaries and deferred log lines,
carried out by the host only once the batch's output is durable), the SEND events a session's
provenance reporter records, as one run per report, and the batch's content, read in windows of
its one claim (:class:`~flowcore.session._ranges.RangeReader`). A batch form that changes
content writes the new bytes through it too (:meth:`BatchContext.write_contents`), into claims
as a session writes them.

The host (an engine task, or the test harness) makes one per batch form call: when the batch
goes whole it takes the effects and reports (:meth:`BatchContext.take`) and records them with
the batch's output; when the batch form declines or fails it discards them
(:meth:`BatchContext.discard`: the temporaries are deleted, the lines and events forgotten) and
the FlowFiles go one by one, which stage their effects again.

What a batch form gives back is here too: :class:`BatchRoute` (a part of the batch and its
relationship) and :class:`WrittenBatch` (what ``write_contents`` made), so that the Processor
API (:mod:`flowcore.processor`, whose ``transform_batch`` takes a :class:`BatchContext`)
imports this module and not the other way round.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from flowcore.processor.context import ProcessContext
from flowcore.session._effects import StagedEffects
from flowcore.session._ranges import RangeReader

if TYPE_CHECKING:
    from flowcore.flowfile import ContentClaim, FlowFile
    from flowcore.flowfile_batch import FlowFileBatch
    from flowcore.session.host import LogLine, Publication, SessionHost

__all__ = [
    "HELD_CONTENT_MAX",
    "BatchContext",
    "BatchEffects",
    "BatchRoute",
    "SentRows",
    "WrittenBatch",
]

#: The largest content a batch form that holds its batch's contents in memory takes
#: (ReplaceText, CompressContent): batch forms are for many small FlowFiles; a batch holding a
#: larger one goes one by one, which streams it in bounded memory.
HELD_CONTENT_MAX = 1 << 20

#: Bytes of small contents gathered before one write to the claim writer.
_WRITE_CHUNK = 1 << 20


@attrs.frozen
class BatchRoute:
    """Part of a batch that a processor's batch form sends to one relationship.

    Attributes:
        relationship: where the part goes.
        rows: which FlowFiles of the input batch it holds, in order (as given to
            :meth:`FlowFileBatch.take`); None for all of them.
        batch: those FlowFiles, attributes changed as the processor changes them.
        reported: whether the processor reports a ROUTE event for each (as
            ``session.provenance.route`` does), which stands for ATTRIBUTES_MODIFIED.
        content_modified: whether the processor reports a CONTENT_MODIFIED event for each
            (as ``session.provenance.modify_content`` does: ReplaceText for a FlowFile it
            leaves as it was), which also stands for ATTRIBUTES_MODIFIED. A FlowFile whose
            content the batch form changed (:class:`WrittenBatch`) gets its CONTENT_MODIFIED
            from the engine either way, as from a session.
        attributes_modified: whether the processor reports an ATTRIBUTES_MODIFIED event for
            each (as ``session.provenance.modify_attributes`` does: UpdateAttribute for every
            FlowFile it sends on, its attributes changed or not), the one such event each gets.
    """

    relationship: str
    rows: Any
    batch: FlowFileBatch
    reported: bool = False
    content_modified: bool = False
    attributes_modified: bool = False


@attrs.frozen
class WrittenBatch:
    """A batch's FlowFiles with the new contents a batch form wrote for them.

    ``BatchContext.write_contents`` writes the bytes into content claims as a session writes
    them, one claim per part: the parts are consecutive cuts of the batch given, in order, each
    holding its FlowFiles' contents back to back in one claim of at most about the content
    repository's maximum appendable size (a small batch is one part). Route them with
    :meth:`routes`; the engine records a CONTENT_MODIFIED event for each FlowFile whose content
    changed, as a session's commit does.

    Attributes:
        parts: the FlowFiles with their new contents, attributes as given.
    """

    parts: tuple[FlowFileBatch, ...]

    @property
    def count(self) -> int:
        """How many FlowFiles."""
        return sum(part.count for part in self.parts)

    def routes(
        self, relationship: str, rows: Any = None, *, content_modified: bool = False
    ) -> list[BatchRoute]:
        """One :class:`BatchRoute` per part, all to *relationship*.

        Args:
            relationship: where they go.
            rows: the rows of the batch form's input that the FlowFiles written stand at, in
                order (the rows given to ``batch.take`` before writing); None when the batch
                written is the input itself.
            content_modified: as :attr:`BatchRoute.content_modified`.
        """
        picked = np.arange(self.count) if rows is None else np.asarray(rows, dtype=np.int64)
        if len(picked) != self.count:
            msg = f"{len(picked)} rows for the {self.count} FlowFiles written"
            raise ValueError(msg)
        routes, start = [], 0
        for part in self.parts:
            stop = start + part.count
            routes.append(
                BatchRoute(
                    relationship, picked[start:stop], part, content_modified=content_modified
                )
            )
            start = stop
        return routes


@attrs.frozen(eq=False)
class SentRows:
    """FlowFiles of a batch a batch form reports as sent (a SEND event each).

    Attributes:
        batch: the batch, as the batch form was given it.
        rows: which of its FlowFiles, in order (None: all of them).
        transit_uris: one URI for all of them, or one per FlowFile of *rows*.
        details: the events' details.
        as_sent: the whole batch as the batch form had changed it when it sent (None:
            unchanged), so each event says what changed, as a session's SEND does.
    """

    batch: FlowFileBatch
    rows: np.ndarray | None
    transit_uris: str | tuple[str, ...]
    details: str | None = None
    as_sent: FlowFileBatch | None = None


@attrs.frozen
class BatchEffects:
    """What a batch form staged and reported, taken when its batch goes whole."""

    publications: tuple[Publication, ...] = ()
    logs: tuple[LogLine, ...] = ()
    sends: tuple[SentRows, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.publications or self.logs or self.sends)


class BatchContext(ProcessContext):
    """A processor's context for a batch form: properties and state, plus staged effects.

    Args:
        context: the processor's context (its properties, clock, state and relationships).
        host: the session host whose effects these become (its staging and content).
        set_state: where ``set_state`` hands the state the batch leaves (None: refused).
    """

    def __init__(
        self,
        context: ProcessContext,
        host: SessionHost,
        set_state: Callable[[Mapping[str, str]], None] | None = None,
    ) -> None:
        processor = context.processor
        super().__init__(
            processor,
            component=context.component,
            clock=context.now,
            state=context.get_state,
            set_state=set_state,
            auto_terminated=[
                r for r in processor.relationship_names() if context.is_auto_terminated(r)
            ],
            has_incoming_connection=context.has_incoming_connection(),
            has_non_loop_connection=context.has_non_loop_connection(),
            resumed_bins=context.resumed_bins,
        )
        self.bin_sink = context.bin_sink
        self._effects = StagedEffects(host)
        self._reader = RangeReader(host.content)
        self._sends: list[SentRows] = []
        self._host = host
        #: the parts write_contents made, by (first id, count): routes may carry them on
        self._written: dict[tuple[int, int], FlowFileBatch] = {}
        self._parent = context
        #: (FlowFiles, outcomes) user code decided in this batch (see carry_outcomes)
        self._outcomes: list[tuple[Sequence[FlowFile], Sequence[object]]] = []

    def controller_service(self, name: str) -> object:
        """The enabled controller service *name*, as the session's (through the host)."""
        return self._host.controller_service(name)

    # --- external effects, as a session stages them ------------------------------------------

    def stage_file(self, target: str | os.PathLike[str], *, replace: bool = True) -> Path:
        """A hidden temporary that becomes *target* once the batch's output is durable.

        As a session's ``stage_file``; discarded (deleted) if the batch then goes one by one.

        Raises:
            FileExistsError: *replace* is false and another task of this stage run staged
                *target*.
        """
        return self._effects.stage_file(target, replace=replace)

    def cancel_staged(self, temporary: str | os.PathLike[str]) -> None:
        """Give up a staged file (writing it failed): deleted, never published."""
        self._effects.cancel_staged(temporary)

    def is_staged(self, target: str | os.PathLike[str]) -> bool:
        """Whether *target* is staged by this batch form or earlier in this task."""
        return self._effects.is_staged(target)

    def will_log(self, logger: str, level: int) -> bool:
        """Whether a line at *level* on *logger* would be emitted once the output is durable."""
        return self._effects.will_log(logger, level)

    def log_after_commit(self, logger: str, level: int, message: str) -> None:
        """Log *message* once the batch's output is durable (never for a batch that declines)."""
        self._effects.log_after_commit(logger, level, message)

    # --- provenance ---------------------------------------------------------------------------

    def report_send(
        self,
        batch: FlowFileBatch,
        transit_uri: str | Sequence[str],
        *,
        rows: np.ndarray | Sequence[int] | None = None,
        details: str | None = None,
        as_sent: FlowFileBatch | None = None,
    ) -> None:
        """Report that FlowFiles of *batch* were sent: ``session.provenance.send`` for each.

        Args:
            batch: the batch as the batch form was given it.
            transit_uri: where they went: one URI, or one per FlowFile of *rows* (PutFile's
                file URIs), kept as a column of the event run.
            rows: which FlowFiles (None: all), in order.
            details: the events' details.
            as_sent: *batch* as the batch form changed it before sending (PublishKafka's
                ``msg.count``), row for row: the events carry those changes.
        """
        picked = None if rows is None else np.asarray(rows, dtype=np.int64)
        count = batch.count if picked is None else len(picked)
        uris = transit_uri if isinstance(transit_uri, str) else tuple(transit_uri)
        if not isinstance(uris, str) and len(uris) != count:
            msg = f"{len(uris)} transit URIs for {count} FlowFiles sent"
            raise ValueError(msg)
        if count:
            self._sends.append(SentRows(batch, picked, uris, details, as_sent))

    # --- content ------------------------------------------------------------------------------

    def contents(
        self, batch: FlowFileBatch
    ) -> Iterator[Sequence[bytes | memoryview] | Iterator[bytes]]:
        """Each FlowFile's content, in order, as pieces to write one after the other.

        The batch's claim is read in windows, not opened per FlowFile; a piece read from a
        window is valid until the next FlowFile's is asked for (copy it to keep it).

        Raises:
            ContentCorruptionError: a FlowFile's content is damaged (the batch form then
                declines, and the FlowFile fails one by one).
        """
        return self._reader.each(batch.resource_claim, batch.offsets, batch.sizes)

    def read_bytes(self, flowfile: FlowFile) -> bytes:
        """One FlowFile's whole content, as ``session.read_bytes`` gives it.

        For per-FlowFile code a batch form calls (a ``FlowFileTransform``'s view of its
        FlowFile); a batch form's own reads go through :meth:`contents` in windows.
        """
        if flowfile.content is None:
            return b""
        return self._host.content.read(flowfile.content)

    @contextlib.contextmanager
    def read(self, flowfile: FlowFile) -> Iterator[io.BytesIO]:
        """A stream over one FlowFile's content: ``with context.read(flowfile) as stream``."""
        with io.BytesIO(self.read_bytes(flowfile)) as stream:
            yield stream

    def joined_contents(
        self, batch: FlowFileBatch, demarcator: bytes = b""
    ) -> Iterator[bytes | memoryview]:
        """The FlowFiles' contents one after the other, *demarcator* between two, in pieces.

        At most about a window of the claim is in memory at once, whatever the batch.
        """
        return self._reader.joined(batch.resource_claim, batch.offsets, batch.sizes, demarcator)

    def write_contents(
        self, batch: FlowFileBatch, contents: Iterable[bytes | bytearray | memoryview]
    ) -> WrittenBatch:
        """Give the FlowFiles of *batch* new contents: ``session.write`` for each, as one.

        The bytes are written into content claims through the host's claim writer, as a
        session writes them (checksummed, sealed when full), back to back: a new claim part
        once a part holds the content repository's maximum appendable size, so no claim file
        holds far more than one by one would put in it. Route the result
        (:meth:`WrittenBatch.routes`); the engine records each changed FlowFile's
        CONTENT_MODIFIED event (its previous content the one it had in *batch*, for replay) as
        one run. If the batch form then declines, the bytes are never referenced and go with
        the task's other unreferenced claims.

        Args:
            batch: the FlowFiles, as the batch form was given them or a part of them
                (``batch.take(rows)``), attributes changed as the processor changes them.
            contents: each FlowFile's new bytes, in order (an empty one: no content).

        Raises:
            ValueError: not one content per FlowFile.
        """
        content = self._host.content
        writer = content.writer(self._host.component.id)
        limit = content.max_appendable_size
        sizes = np.zeros(batch.count, dtype=np.int64)
        parts: list[FlowFileBatch] = []
        stream, start, written = None, 0, 0
        pending: list[bytes | bytearray | memoryview] = []  # small contents, written together
        held = in_part = 0
        try:
            for data in contents:
                if written == batch.count:
                    msg = f"more than {batch.count} contents for the {batch.count} FlowFiles"
                    raise ValueError(msg)
                if stream is None:
                    stream, start, in_part = writer.open_stream(), written, 0
                size = len(data)
                if size:
                    pending.append(data)
                    held += size
                    in_part += size
                    if held >= _WRITE_CHUNK:
                        stream.write(b"".join(pending))
                        pending, held = [], 0
                sizes[written] = size
                written += 1
                if in_part >= limit:
                    if pending:
                        stream.write(b"".join(pending))
                        pending, held = [], 0
                    parts.append(self._part(batch, start, written, sizes, stream.close()))
                    stream = None
            if stream is not None and pending:
                stream.write(b"".join(pending))
        except BaseException:  # the claim file is sealed all the same; nothing references it
            if stream is not None:
                stream.close()
            raise
        if stream is not None:
            parts.append(self._part(batch, start, written, sizes, stream.close()))
        if written != batch.count:
            msg = f"{written} contents for the {batch.count} FlowFiles of the batch"
            raise ValueError(msg)
        for part in parts:
            self._written[(int(part.ids[0]), part.count)] = part
        return WrittenBatch(tuple(parts))

    @staticmethod
    def _part(
        batch: FlowFileBatch, start: int, stop: int, sizes: np.ndarray, claim: ContentClaim | None
    ) -> FlowFileBatch:
        """FlowFiles ``start .. stop-1`` of *batch*, their contents back to back in *claim*."""
        own = sizes[start:stop]
        offsets = np.zeros(len(own), dtype=np.int64)
        np.cumsum(own[:-1], out=offsets[1:])
        return attrs.evolve(
            batch.cut(start, stop),
            resource_claim=None if claim is None else claim.resource_claim,
            offsets=offsets + (0 if claim is None else claim.offset),
            sizes=own,
        )

    def wrote(self, batch: FlowFileBatch) -> bool:
        """Whether *batch* holds contents :meth:`write_contents` wrote (a part it returned)."""
        if not batch.count:
            return False
        part = self._written.get((int(batch.ids[0]), batch.count))
        return (
            part is not None
            and part.resource_claim == batch.resource_claim
            and np.array_equal(part.ids, batch.ids)
            and np.array_equal(part.offsets, batch.offsets)
            and np.array_equal(part.sizes, batch.sizes)
        )

    # --- user code runs once per FlowFile ------------------------------------------------------

    def carry_outcomes(self, flowfiles: Sequence[FlowFile], outcomes: Sequence[object]) -> None:
        """What per-FlowFile user code decided for *flowfiles*, should the batch not go whole.

        Call it before building the routes, once the code ran: if the batch form then declines
        or raises, or the host takes the one-by-one path after all, :meth:`discard` hands each
        outcome to the processor's context (``carried_outcome``), so the FlowFile's trigger
        applies it instead of running the code again. When the batch goes whole they are
        forgotten (:meth:`take`).
        """
        self._outcomes.append((flowfiles, outcomes))

    # --- the host's side ----------------------------------------------------------------------

    @property
    def holds_effects(self) -> bool:
        """Whether the batch form staged a file or a line, or reported an event."""
        return bool(self._sends) or self._effects.holds_effects

    def take(self) -> BatchEffects:
        """The batch went whole: what it staged and reported, and a clean slate."""
        publications, logs, _ = self._effects.take()  # a batch form stages no disposal
        sends, self._sends = tuple(self._sends), []
        self._written.clear()
        self._outcomes.clear()
        return BatchEffects(publications, logs, sends)

    def discard(self) -> bool:
        """The batch goes one by one: its temporaries deleted, its lines and events forgotten.

        Outcomes of user code (:meth:`carry_outcomes`) go to the processor's context, for the
        FlowFiles' triggers.

        Returns:
            Whether any outcome was carried: the host must then trigger those FlowFiles in
            this attempt (not defer them to a later one, which would run the code again).
        """
        self._effects.discard()
        self._sends = []
        self._written.clear()
        carried = False
        for flowfiles, outcomes in self._outcomes:
            for flowfile, outcome in zip(flowfiles, outcomes, strict=True):
                self._parent.carry_outcome(flowfile, outcome)
                carried = True
        self._outcomes.clear()
        return carried
