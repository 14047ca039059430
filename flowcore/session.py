"""ProcessSession: NiFi's unit of work over FlowFiles.

A processor gets FlowFiles from its input queues, creates, clones, modifies, transfers and removes
them, and the session commits all of it at once or rolls all of it back. The session enforces
NiFi's contract (reference ``nifi-framework.md`` §1): every FlowFile touched must be transferred or
removed before commit; ``uuid``, ``filename`` and ``path`` cannot be removed; content is
copy-on-write; provenance events are generated at commit in NiFi's order.

The session never decides where FlowFiles go: its :class:`SessionHost` (the test harness, or a
task of the engine) answers how many connections a relationship has, supplies input, and receives
the :class:`SessionCommit`. The host makes the commit durable; in a Spark task that happens later,
in the driver's write-ahead log transaction.

Rules inherited from NiFi:

* Methods that take a FlowFile resolve it by ``id`` to its newest version in the session, so an
  older reference still works. An unknown, already transferred or already removed FlowFile rolls
  the whole session back and raises :class:`~flowcore.errors.FlowFileHandlingError`.
* Transferring to a relationship the processor does not declare raises
  :class:`~flowcore.errors.RelationshipError` at once ("Relationship 'x' is not known").
"""

from __future__ import annotations

import enum
import io
import os
import re
import shutil
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

import attrs

from flowcore.errors import (
    FlowFileAccessError,
    FlowFileHandlingError,
    RelationshipError,
)
from flowcore.flowfile import CORE_ATTRIBUTES, ContentClaim, FlowFile, ResourceClaim, new_uuid
from flowcore.provenance import ProvenanceEvent, ProvenanceEventType
from flowcore.relationship import Relationship

if TYPE_CHECKING:
    from collections.abc import Iterator

    from repositories.protocols import ContentOutputStream, ContentRepository, ContentWriter

__all__ = [
    "SELF",
    "ComponentInfo",
    "FlowFileFilterResult",
    "ProcessSession",
    "ProvenanceReporter",
    "QueuedFlowFile",
    "SessionCommit",
    "SessionHost",
    "SessionOutput",
    "SessionSpill",
    "StateMap",
]

#: The pseudo-relationship that sends a FlowFile back to the queue it came from.
SELF = "__self__"

# Attributes a child created from a parent does not inherit (NiFi's create(parent)).
_NOT_INHERITED = frozenset({"uuid", "alternate.identifier", "discard.reason"})
_READ_CHUNK = 64 * 1024
# Event types that already explain a new FlowFile's existence (no CREATE is added).
_ORIGIN_TYPES = frozenset(
    {
        ProvenanceEventType.CREATE,
        ProvenanceEventType.FORK,
        ProvenanceEventType.CLONE,
        ProvenanceEventType.JOIN,
        ProvenanceEventType.RECEIVE,
        ProvenanceEventType.FETCH,
    }
)
# Event types that keep the attributes and content as they were when reported.
_SNAPSHOT_TYPES = frozenset(
    {ProvenanceEventType.SEND, ProvenanceEventType.UPLOAD, ProvenanceEventType.CLONE}
)


@attrs.frozen
class ComponentInfo:
    """Identifies the processor a session works for (in provenance and errors)."""

    id: str
    type: str
    name: str = ""


@attrs.frozen
class QueuedFlowFile:
    """A FlowFile as taken from an input queue."""

    flowfile: FlowFile
    queue_id: str


@attrs.frozen
class StateMap:
    """A component's state and its version (NiFi's ``StateMap``); version -1 means never set."""

    version: int = -1
    values: Mapping[str, str] = attrs.field(factory=dict, converter=dict)

    def get(self, key: str, default: str | None = None) -> str | None:
        """Return a value by key."""
        return self.values.get(key, default)


class FlowFileFilterResult(enum.Enum):
    """What a ``session.get(filter)`` filter decides for each queued FlowFile."""

    ACCEPT_AND_CONTINUE = (True, True)
    ACCEPT_AND_TERMINATE = (True, False)
    REJECT_AND_CONTINUE = (False, True)
    REJECT_AND_TERMINATE = (False, False)

    @property
    def accept(self) -> bool:
        """Whether the FlowFile is taken."""
        return self.value[0]

    @property
    def proceed(self) -> bool:
        """Whether to look at further FlowFiles."""
        return self.value[1]


FlowFileFilter = Callable[[FlowFile], FlowFileFilterResult]


@attrs.frozen
class SessionOutput:
    """One FlowFile leaving the session.

    Attributes:
        flowfile: the FlowFile as committed.
        relationship: the relationship name (``SELF`` when returned to its queue).
        connection_index: which of the relationship's connections gets it (fan-out).
        queue_id: for ``SELF``, the queue it returns to.
    """

    flowfile: FlowFile
    relationship: str
    connection_index: int = 0
    queue_id: str | None = None


@attrs.frozen
class SessionSpill:
    """Finished FlowFiles handed to the host before commit (see :meth:`ProcessSession.spill`).

    Attributes:
        outputs: FlowFiles to enqueue when the session commits.
        removed: FlowFiles that ended here (auto-terminated).
        events: their provenance events.
    """

    outputs: tuple[SessionOutput, ...]
    removed: tuple[FlowFile, ...]
    events: tuple[ProvenanceEvent, ...]


@attrs.frozen
class SessionCommit:
    """Everything one session commit changes, handed to the host to make durable.

    Attributes:
        consumed: FlowFiles taken from queues that are now acknowledged (dequeued for good).
        outputs: FlowFiles to enqueue, in transfer order (fan-out clones included).
        removed: FlowFiles that ended here (removed or auto-terminated).
        events: provenance events, in NiFi's order.
        state: the component's new state values, or ``None`` when unchanged.
        counters: counter deltas.
        transient_claims: claims written in the session whose resource claim no output uses.
        delete_on_commit: source files to delete once the commit is durable.
    """

    consumed: tuple[QueuedFlowFile, ...]
    outputs: tuple[SessionOutput, ...]
    removed: tuple[FlowFile, ...]
    events: tuple[ProvenanceEvent, ...]
    state: Mapping[str, str] | None
    counters: Mapping[str, int]
    transient_claims: tuple[ContentClaim, ...]
    delete_on_commit: tuple[str, ...]


class SessionHost(Protocol):
    """What a session needs from whoever runs it: input, routing facts, time and a commit sink."""

    component: ComponentInfo
    content: ContentRepository
    penalization_ms: int

    def now(self) -> int:
        """The current time in epoch milliseconds."""
        ...

    def next_flowfile_id(self) -> int:
        """A new FlowFile id, unique in the repository."""
        ...

    def poll(self, max_count: int, flowfile_filter: FlowFileFilter | None) -> list[QueuedFlowFile]:
        """Take up to *max_count* FlowFiles (that pass *flowfile_filter*) from the input queues."""
        ...

    def relationships(self) -> Collection[str]:
        """The names of the relationships the processor declares."""
        ...

    def destinations(self, relationship: str) -> int:
        """How many connections leave on *relationship* (0 when none)."""
        ...

    def is_auto_terminated(self, relationship: str) -> bool:
        """Whether FlowFiles sent to *relationship* are dropped."""
        ...

    def get_state(self) -> StateMap:
        """The component's committed state."""
        ...

    def apply_commit(self, commit: SessionCommit) -> None:
        """Make *commit* effective (durable, for a durable host)."""
        ...

    def restore(self, flowfiles: Sequence[QueuedFlowFile]) -> None:
        """Put FlowFiles back on their queues after a rollback."""
        ...

    # Optional, for bounded memory: ``spill_threshold`` (int or None), ``spill(batch)`` storing a
    # SessionSpill uncommitted until ``apply_commit``, and ``discard_spilled()`` on rollback.


@attrs.define
class _Record:
    """The session's knowledge of one FlowFile."""

    current: FlowFile
    original: FlowFile | None = None
    queue_id: str | None = None
    relationship: str | None = None
    removed: bool = False
    created_without_lineage: bool = False
    start_ms: int = 0
    reported_relationship: str | None = None

    @property
    def created(self) -> bool:
        return self.original is None


@attrs.define
class _PendingEvent:
    """An event whose FlowFile fields are filled in at commit (NiFi's enrichment)."""

    event_type: ProvenanceEventType
    flowfile_uuid: str
    time: int
    fields: dict[str, Any] = attrs.field(factory=dict)
    snapshot: FlowFile | None = None  # kept as reported (SEND, UPLOAD, CLONE)
    parents: list[str] = attrs.field(factory=list)
    children: list[str] = attrs.field(factory=list)


class _ReadStream:
    """A read-only view of one FlowFile's content that the session can close."""

    def __init__(self, session: ProcessSession, flowfile_id: int, stream: BinaryIO) -> None:
        self._session = session
        self._id = flowfile_id
        self._stream = stream
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        if self.closed:
            msg = "cannot read from a FlowFile stream after it was closed"
            raise FlowFileAccessError(msg)
        return self._stream.read(size)

    def readline(self, size: int = -1) -> bytes:
        if self.closed:
            msg = "cannot read from a FlowFile stream after it was closed"
            raise FlowFileAccessError(msg)
        return self._stream.readline(size)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._stream.close()
            self._session._close_reader(self._id, self)

    def __enter__(self) -> _ReadStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _WriteStream:
    """The output stream given to write callbacks; closing it is ignored (NiFi's rule)."""

    def __init__(self, target: ContentOutputStream) -> None:
        self._target = target

    def write(self, data: bytes | bytearray | memoryview | str) -> int:
        if isinstance(data, str):
            data = data.encode("utf-8")
        return self._target.write(bytes(data))

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readable(self) -> bool:
        return False

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None


ContentSource = (
    bytes | bytearray | memoryview | str | Iterable[bytes] | Callable[[Any], object] | None
)


class ProcessSession:
    """A unit of work over FlowFiles with NiFi's commit and rollback semantics.

    A session is not thread-safe, like NiFi's. After ``commit()`` or ``rollback()`` it can be used
    again for a new unit of work.
    """

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        self._relationships = frozenset(host.relationships())
        self._records: dict[int, _Record] = {}
        self._readers: dict[int, list[_ReadStream]] = {}  # shared: reads may overlap
        self._writers: dict[int, ContentOutputStream] = {}  # exclusive
        self._spilled = False
        self._spilled_claims: set[ResourceClaim] = set()  # resource claims spilled outputs use
        self._finished = 0  # FlowFiles created and transferred since the last spill
        self._forks: dict[str, _PendingEvent] = {}
        self._generated: list[_PendingEvent] = []  # JOIN, CLONE, DROP
        self._reported: list[_PendingEvent] = []
        self._written: list[ContentClaim] = []
        self._state: Mapping[str, str] | None = None
        self._counters: dict[str, int] = {}
        self._delete_on_commit: list[str] = []
        self._writer: ContentWriter | None = None
        # Resource claims shared with another session through migrate(): never destroyed on
        # rollback here, since the other session's FlowFiles may point into them.
        self._shared_claims: set[object] = set()
        self._start_ms = host.now()
        self.provenance = ProvenanceReporter(self)

    # --- bookkeeping ------------------------------------------------------------------------

    @property
    def component(self) -> ComponentInfo:
        """The processor this session works for."""
        return self._host.component

    def _now(self) -> int:
        return self._host.now()

    def _record(
        self, flowfile: FlowFile, *, allow_transferred: bool = False, reading: bool = False
    ) -> _Record:
        """Resolve *flowfile* to its record, enforcing NiFi's ``validateRecordState``.

        Only provenance reporting and ``migrate`` may name a FlowFile already transferred. A
        FlowFile being read may be read again or cloned (*reading*), never changed; one being
        written may not be touched at all.
        """
        if not isinstance(flowfile, FlowFile):
            msg = f"expected a FlowFile but got {type(flowfile).__name__} {flowfile!r}"
            raise TypeError(msg)
        if flowfile.id in self._writers or (flowfile.id in self._readers and not reading):
            msg = (
                f"{flowfile} is being read or written by an open stream; close it "
                "(leave its 'with' block) before changing the FlowFile"
            )
            raise FlowFileAccessError(msg, flowfile_uuid=flowfile.uuid)
        record = self._records.get(flowfile.id)
        problem = None
        if record is None:
            problem = f"{flowfile} is not known in this session ({self.component.type})"
        elif record.removed:
            problem = f"{record.current} has already been marked for removal"
        elif record.relationship is not None and not allow_transferred:
            problem = f"{record.current} is already marked for transfer"
        if problem:
            self.rollback()
            raise FlowFileHandlingError(problem, flowfile_uuid=flowfile.uuid)
        assert record is not None
        return record

    def _close_reader(self, flowfile_id: int, stream: _ReadStream) -> None:
        streams = self._readers.get(flowfile_id, [])
        if stream in streams:
            streams.remove(stream)
        if not streams:
            self._readers.pop(flowfile_id, None)

    def _writer_for_session(self) -> ContentWriter:
        if self._writer is None:
            self._writer = self._host.content.writer(self.component.id)
        return self._writer

    def _new_flowfile(
        self, attributes: Mapping[str, str], *, lineage_from: FlowFile | None = None
    ) -> FlowFile:
        now = self._now()
        flowfile_id = self._host.next_flowfile_id()
        flowfile = FlowFile.create(flowfile_id, now, attributes)
        if lineage_from is not None:
            flowfile = flowfile.replace(
                lineage_start_date=lineage_from.lineage_start_date,
                lineage_start_index=lineage_from.lineage_start_index,
            )
        return flowfile

    # --- getting FlowFiles ------------------------------------------------------------------

    def get(self, max_results: int | FlowFileFilter | None = None) -> Any:
        """Take FlowFiles from the input queues.

        ``get()`` returns one FlowFile or ``None``; ``get(n)`` returns a list of up to *n*;
        ``get(filter)`` returns the list a :class:`FlowFileFilterResult` filter accepts.
        """
        if max_results is None:
            taken = self._host.poll(1, None)
            return self._register_polled(taken)[0] if taken else None
        if callable(max_results):
            return self._register_polled(self._host.poll(2**31, max_results))
        if max_results < 1:
            return []
        return self._register_polled(self._host.poll(max_results, None))

    def _register_polled(self, taken: Sequence[QueuedFlowFile]) -> list[FlowFile]:
        now = self._now()
        for item in taken:
            self._records[item.flowfile.id] = _Record(
                current=item.flowfile, original=item.flowfile, queue_id=item.queue_id, start_ms=now
            )
        return [item.flowfile for item in taken]

    # --- creating FlowFiles -----------------------------------------------------------------

    def create(self, parent: FlowFile | Sequence[FlowFile] | None = None) -> FlowFile:
        """Create a FlowFile: from nothing, as a child of *parent* (FORK), or of several (JOIN).

        A child copies its parent's attributes except ``uuid``, ``alternate.identifier`` and
        ``discard.reason`` and keeps its lineage. A child of several parents gets the
        attributes every parent shares with equal values and the earliest lineage.
        """
        if parent is None:
            flowfile = self._new_flowfile({})
            self._records[flowfile.id] = _Record(
                flowfile, created_without_lineage=True, start_ms=self._now()
            )
            return flowfile
        if isinstance(parent, FlowFile):
            parent_record = self._record(parent, reading=True)
            source = parent_record.current
            inherited = {k: v for k, v in source.attributes.items() if k not in _NOT_INHERITED}
            child = self._new_flowfile(inherited, lineage_from=source)
            self._records[child.id] = _Record(child, start_ms=self._now())
            self._fork_builder(source).children.append(child.uuid)
            return child
        parents = [self._record(p, reading=True).current for p in parent]
        if not parents:
            return self.create()
        common = dict(parents[0].attributes)
        for other in parents[1:]:
            common = {k: v for k, v in common.items() if other.attributes.get(k) == v}
        for key in _NOT_INHERITED:
            common.pop(key, None)
        oldest = min(parents, key=lambda f: (f.lineage_start_date, f.lineage_start_index))
        child = self._new_flowfile(common, lineage_from=oldest)
        self._records[child.id] = _Record(child, start_ms=self._now())
        self._generated.append(
            _PendingEvent(
                ProvenanceEventType.JOIN,
                child.uuid,
                self._now(),
                parents=[p.uuid for p in parents],
                children=[child.uuid],
            )
        )
        return child

    def _fork_builder(self, parent: FlowFile) -> _PendingEvent:
        builder = self._forks.get(parent.uuid)
        if builder is None:
            builder = _PendingEvent(
                ProvenanceEventType.FORK, parent.uuid, self._now(), parents=[parent.uuid]
            )
            self._forks[parent.uuid] = builder
        return builder

    def clone(
        self, flowfile: FlowFile, offset: int | None = None, size: int | None = None
    ) -> FlowFile:
        """Copy a FlowFile, sharing its content; with *offset*/*size* a zero-copy slice (FORK).

        A full clone emits CLONE; a partial clone emits FORK, as NiFi.

        Raises:
            FlowFileHandlingError: the range does not fit inside the FlowFile's content.
        """
        record = self._record(flowfile, reading=True)
        source = record.current
        partial = offset is not None or size is not None
        start = offset or 0
        length = source.size - start if size is None else size
        if start < 0 or length < 0 or start + length > source.size:
            msg = (
                f"cannot clone {length} bytes at offset {start} of {source}: the range must lie "
                f"inside its {source.size} bytes"
            )
            raise FlowFileHandlingError(msg, flowfile_uuid=source.uuid)
        claim = None
        if source.content is not None and length > 0:
            claim = source.content.slice(start, length)
        now = self._now()
        new_id = self._host.next_flowfile_id()
        clone_uuid = new_uuid()
        clone = source.replace(
            id=new_id,
            uuid=clone_uuid,
            attributes=source.attributes.updated({"uuid": clone_uuid}),
            content=claim,
            size=length if claim is not None else 0,
            entry_date=now,
            queue_date=now,
            penalty_expiration=0,
        )
        self._records[new_id] = _Record(clone, start_ms=now)
        if partial:
            self._fork_builder(source).children.append(clone_uuid)
        else:
            self._generated.append(
                _PendingEvent(
                    ProvenanceEventType.CLONE,
                    source.uuid,
                    now,
                    parents=[source.uuid],
                    children=[clone_uuid],
                    snapshot=source,
                )
            )
        return clone

    # --- attributes -------------------------------------------------------------------------

    def _update(self, record: _Record, flowfile: FlowFile) -> FlowFile:
        record.current = flowfile
        return flowfile

    def put_attribute(self, flowfile: FlowFile, key: str, value: str) -> FlowFile:
        """Set one attribute; setting ``uuid`` is ignored (NiFi's rule). Returns the new version."""
        return self.put_all_attributes(flowfile, {key: value})

    def put_all_attributes(self, flowfile: FlowFile, attributes: Mapping[str, str]) -> FlowFile:
        """Set several attributes; ``uuid`` is ignored. Returns the new version."""
        record = self._record(flowfile)
        changes = {}
        for key, value in attributes.items():
            if key == "uuid":
                continue
            if not isinstance(value, str):
                msg = (
                    f"attribute {key!r} must be a str, got {type(value).__name__} {value!r}; "
                    "convert it with str() first"
                )
                raise TypeError(msg)
            changes[key] = value
        if not changes:
            return record.current
        return self._update(record, record.current.with_attributes(changes))

    def remove_attribute(self, flowfile: FlowFile, key: str) -> FlowFile:
        """Remove one attribute; ``uuid``, ``filename`` and ``path`` are kept (NiFi's rule)."""
        return self.remove_all_attributes(flowfile, [key])

    def remove_all_attributes(
        self, flowfile: FlowFile, keys: Iterable[str] | re.Pattern[str] | str
    ) -> FlowFile:
        """Remove attributes by name, or every attribute whose name fully matches a regex."""
        record = self._record(flowfile)
        current = record.current
        if isinstance(keys, re.Pattern | str):
            pattern = re.compile(keys) if isinstance(keys, str) else keys
            names = [k for k in current.attributes if pattern.fullmatch(k)]
        else:
            names = list(keys)
        names = [k for k in names if k not in CORE_ATTRIBUTES and k in current.attributes]
        if not names:
            return current
        return self._update(record, current.without_attributes(*names))

    # --- content ----------------------------------------------------------------------------

    @contextmanager
    def read(
        self, flowfile: FlowFile, offset: int = 0, length: int | None = None
    ) -> Iterator[_ReadStream]:
        """Open the FlowFile's content for reading: ``with session.read(ff) as stream: ...``.

        The stream covers exactly the FlowFile's bytes, or the *length* bytes at *offset* when
        given (how a processor copies part of its input without reading the rest). While it is
        open the FlowFile cannot be modified, transferred or read again.

        Raises:
            FlowFileHandlingError: the range does not lie inside the content.
        """
        record = self._record(flowfile, reading=True)
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
            raw = self._host.content.open(current.content.slice(offset, size))
        stream = _ReadStream(self, current.id, raw)
        self._readers.setdefault(current.id, []).append(stream)
        try:
            yield stream
        finally:
            stream.close()

    def read_bytes(self, flowfile: FlowFile) -> bytes:
        """Return the whole content (for small content; stream large content with ``read``)."""
        record = self._record(flowfile, reading=True)
        if record.current.content is None:
            return b""
        return self._host.content.read(record.current.content)

    def read_text(self, flowfile: FlowFile, encoding: str = "utf-8") -> str:
        """Return the whole content decoded (UTF-8 by default)."""
        return self.read_bytes(flowfile).decode(encoding)

    def _write_new_claim(
        self, flowfile_id: int, produce: Callable[[_WriteStream], object]
    ) -> ContentClaim | None:
        target = self._writer_for_session().open_stream()
        self._writers[flowfile_id] = target
        try:
            produce(_WriteStream(target))
        except BaseException:
            claim = target.close()
            if claim is not None:
                self._written.append(claim)
            raise
        finally:
            self._writers.pop(flowfile_id, None)
        claim = target.close()
        if claim is not None:
            self._written.append(claim)
        return claim

    def write(self, flowfile: FlowFile, content: ContentSource) -> FlowFile:
        """Replace the content; always a new claim (copy on write). Returns the new version.

        *content* may be bytes, a str (UTF-8), an iterable of byte chunks, or a callback that
        receives an output stream (NiFi's ``OutputStreamCallback``). Writing nothing makes the
        content empty.
        """
        record = self._record(flowfile)

        def produce(out: _WriteStream) -> None:
            _emit(out, content)

        claim = self._write_new_claim(record.current.id, produce)
        return self._update(record, record.current.with_content(claim))

    def rewrite(self, flowfile: FlowFile, callback: Callable[[Any, Any], object]) -> FlowFile:
        """Stream old content to new (NiFi's ``StreamCallback``): ``callback(input, output)``."""
        record = self._record(flowfile)
        current = record.current

        def produce(out: _WriteStream) -> None:
            if current.content is None:
                callback(io.BytesIO(b""), out)
                return
            with self._host.content.open(current.content) as source:
                callback(source, out)

        claim = self._write_new_claim(current.id, produce)
        return self._update(record, current.with_content(claim))

    def append(self, flowfile: FlowFile, content: ContentSource) -> FlowFile:
        """Add to the end of the content; copy on write like every content change."""
        record = self._record(flowfile)
        current = record.current

        def produce(out: _WriteStream) -> None:
            if current.content is not None:
                self._copy_claim(current.content, out)
            _emit(out, content)

        claim = self._write_new_claim(current.id, produce)
        return self._update(record, current.with_content(claim))

    def _copy_claim(self, claim: ContentClaim, out: _WriteStream) -> None:
        with self._host.content.open(claim) as source:
            while chunk := source.read(_READ_CHUNK):
                out.write(chunk)

    def merge(
        self,
        sources: Sequence[FlowFile],
        destination: FlowFile,
        header: bytes | None = None,
        footer: bytes | None = None,
        demarcator: bytes | None = None,
    ) -> FlowFile:
        """Write ``header + c1 + demarcator + c2 ... + footer`` into *destination*, streaming."""
        record = self._record(destination)
        contents = [self._record(s, reading=True).current.content for s in sources]

        def produce(out: _WriteStream) -> None:
            if header:
                out.write(header)
            for index, claim in enumerate(contents):
                if index and demarcator:
                    out.write(demarcator)
                if claim is not None:
                    self._copy_claim(claim, out)
            if footer:
                out.write(footer)

        claim = self._write_new_claim(record.current.id, produce)
        return self._update(record, record.current.with_content(claim))

    def import_from(
        self, path: str | os.PathLike[str], flowfile: FlowFile, *, keep_source: bool = True
    ) -> FlowFile:
        """Copy a file's bytes into the FlowFile.

        Without *keep_source* the file is deleted once the commit is durable, never before.
        """
        record = self._record(flowfile)

        def produce(out: _WriteStream) -> None:
            with open(path, "rb") as source:
                while chunk := source.read(_READ_CHUNK):
                    out.write(chunk)

        claim = self._write_new_claim(record.current.id, produce)
        if not keep_source:
            self._delete_on_commit.append(os.fspath(path))
        return self._update(record, record.current.with_content(claim))

    def export_to(
        self, flowfile: FlowFile, path: str | os.PathLike[str], *, append: bool = False
    ) -> None:
        """Write the FlowFile's content to a file (appending when *append*)."""
        with self.read(flowfile) as stream, open(path, "ab" if append else "wb") as target:
            shutil.copyfileobj(stream, target, _READ_CHUNK)  # type: ignore[misc]

    # --- routing ----------------------------------------------------------------------------

    def _relationship_name(self, relationship: Relationship | str) -> str:
        name = relationship.name if isinstance(relationship, Relationship) else relationship
        if name != SELF and name not in self._relationships:
            known = sorted(self._relationships)
            msg = (
                f"Relationship '{name}' is not known to {self.component.type}; it declares "
                f"{known!r}"
            )
            raise RelationshipError(msg)
        return name

    def transfer(
        self,
        flowfiles: FlowFile | Iterable[FlowFile],
        relationship: Relationship | str | None = None,
    ) -> None:
        """Route FlowFiles to *relationship*; with none, back to the queue they came from.

        Raises:
            RelationshipError: the processor does not declare *relationship*.
            FlowFileHandlingError: a FlowFile created in this session is sent back to itself.
        """
        name = SELF if relationship is None else self._relationship_name(relationship)
        batch = [flowfiles] if isinstance(flowfiles, FlowFile) else list(flowfiles)
        for flowfile in batch:
            record = self._record(flowfile)
            if name == SELF and record.queue_id is None:
                msg = (
                    "Cannot transfer FlowFiles that are created in this Session back to self "
                    f"({record.current})"
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=flowfile.uuid)
            record.relationship = name
            if record.created and name != SELF:
                self._finished += 1
        self._maybe_spill()

    def remove(self, flowfiles: FlowFile | Iterable[FlowFile]) -> None:
        """End FlowFiles here.

        A dequeued FlowFile gets a DROP event; one created in this session disappears without a
        trace (its FORK slot and reported events go too).
        """
        batch = [flowfiles] if isinstance(flowfiles, FlowFile) else list(flowfiles)
        for flowfile in batch:
            record = self._record(flowfile)
            record.removed = True
            current = record.current
            if record.created:
                self._forget_created(current.uuid)
            else:
                self._generated.append(
                    _PendingEvent(
                        ProvenanceEventType.DROP,
                        current.uuid,
                        self._now(),
                        fields={"details": current.attributes.get("discard.reason")},
                    )
                )

    def _forget_created(self, uuid: str) -> None:
        for builder in self._forks.values():
            if uuid in builder.children:
                builder.children.remove(uuid)
        kept = []
        for event in self._generated:
            if uuid in event.children:
                event.children.remove(uuid)
            if event.flowfile_uuid == uuid or (
                event.event_type in (ProvenanceEventType.CLONE, ProvenanceEventType.JOIN)
                and not event.children
            ):
                continue
            kept.append(event)
        self._generated = kept
        self._reported = [e for e in self._reported if e.flowfile_uuid != uuid]

    def penalize(self, flowfile: FlowFile) -> FlowFile:
        """Keep the FlowFile from being processed again for the processor's penalty duration."""
        record = self._record(flowfile)
        expiry = self._now() + self._host.penalization_ms
        return self._update(record, record.current.replace(penalty_expiration=expiry))

    # --- state and counters -------------------------------------------------------------------

    def get_state(self) -> StateMap:
        """The component's state, including changes staged in this session."""
        committed = self._host.get_state()
        if self._state is None:
            return committed
        return StateMap(committed.version + 1, self._state)

    def set_state(self, values: Mapping[str, str]) -> None:
        """Stage new state; it is written with the commit and discarded on rollback."""
        self._state = dict(values)

    def replace_state(self, old: StateMap, values: Mapping[str, str]) -> bool:
        """Stage *values* only if the state is still *old* (by version); return whether it was."""
        if self.get_state().version != old.version:
            return False
        self._state = dict(values)
        return True

    def clear_state(self) -> None:
        """Stage an empty state."""
        self._state = {}

    def adjust_counter(self, name: str, delta: int) -> None:
        """Add *delta* to a named counter when the session commits."""
        self._counters[name] = self._counters.get(name, 0) + delta

    # --- moving FlowFiles between sessions ---------------------------------------------------

    def migrate(self, other: ProcessSession, flowfiles: Iterable[FlowFile]) -> None:
        """Hand FlowFiles, with their pending events, over to *other* (NiFi's ``migrate``).

        Binning processors use it to keep each bin's FlowFiles in a session of their own until
        the bin is merged; rolling that session back returns them to the queue.

        Raises:
            FlowFileHandlingError: a forked parent would be separated from its children.
        """
        if other is self:
            return
        records = [self._record(f, allow_transferred=True) for f in flowfiles]
        moving = {r.current.uuid for r in records}
        for builder in self._forks.values():
            family = {builder.flowfile_uuid, *builder.children}
            if family & moving and not family <= moving:
                msg = (
                    f"cannot migrate part of the family of {builder.flowfile_uuid}: If any "
                    "FlowFile is forked, the parent and all children must be migrated at the "
                    "same time."
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=builder.flowfile_uuid)
        for record in records:
            del self._records[record.current.id]
            other._records[record.current.id] = record
        for uuid in [u for u in self._forks if u in moving]:
            other._forks[uuid] = self._forks.pop(uuid)
        for name in ("_generated", "_reported"):
            mine: list[_PendingEvent] = getattr(self, name)
            theirs: list[_PendingEvent] = getattr(other, name)
            theirs.extend(e for e in mine if e.flowfile_uuid in moving)
            setattr(self, name, [e for e in mine if e.flowfile_uuid not in moving])
        claims = {r.current.content.resource_claim for r in records if r.current.content}
        moved = [c for c in self._written if c.resource_claim in claims]
        other._written.extend(moved)
        self._shared_claims.update(claims)
        other._shared_claims.update(claims)
        if self._writer is not None:
            # Later writes here must not append to a resource claim the other session now uses.
            self._writer.close()
            self._writer = None

    # --- commit and rollback -----------------------------------------------------------------

    def _check_commit(self) -> None:
        if self._readers or self._writers:
            msg = "Cannot commit session while a FlowFile stream is open; close it first"
            raise FlowFileAccessError(msg)
        for record in self._records.values():
            if record.removed:
                continue
            if record.relationship is None:
                created = "was created" if record.created else "was not created"
                msg = (
                    f"{record.current} transfer relationship not specified. This FlowFile "
                    f"{created} in this session and was not transferred to any Relationship "
                    "via ProcessSession.transfer()"
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=record.current.uuid)
            name = record.relationship
            if (
                name != SELF
                and self._host.destinations(name) == 0
                and not self._host.is_auto_terminated(name)
            ):
                msg = (
                    f"Relationship '{name}' does not have any destinations for "
                    f"{self.component.type}; connect it or auto-terminate it"
                )
                raise FlowFileHandlingError(msg, flowfile_uuid=record.current.uuid)

    def commit(self) -> SessionCommit:
        """Commit every change at once; the host makes it effective.

        Raises:
            FlowFileHandlingError: a FlowFile was neither transferred nor removed, or went to a
                relationship without destinations; the session was rolled back.
        """
        try:
            self._check_commit()
        except Exception:
            self.rollback()
            raise
        now = self._now()
        outputs, removed, auto_drops, fan_out_clones = self._route(self._records.values(), now)
        events = self._build_events(now, auto_drops, fan_out_clones)
        referenced = {
            o.flowfile.content.resource_claim for o in outputs if o.flowfile.content is not None
        }
        referenced |= self._spilled_claims
        result = SessionCommit(
            consumed=tuple(
                QueuedFlowFile(r.original, r.queue_id)
                for r in self._records.values()
                if r.original is not None and r.queue_id is not None
            ),
            outputs=tuple(outputs),
            removed=tuple(removed),
            events=tuple(events),
            state=self._state,
            counters=dict(self._counters),
            transient_claims=tuple(c for c in self._written if c.resource_claim not in referenced),
            delete_on_commit=tuple(self._delete_on_commit),
        )
        self._host.apply_commit(result)
        self._reset()
        return result

    def _route(
        self, records: Iterable[_Record], now: int
    ) -> tuple[list[SessionOutput], list[FlowFile], list[_PendingEvent], list[_PendingEvent]]:
        """Where each record goes: outputs (with fan-out clones), removals, and their events."""
        outputs: list[SessionOutput] = []
        removed: list[FlowFile] = []
        auto_drops: list[_PendingEvent] = []
        fan_out_clones: list[_PendingEvent] = []
        for record in records:
            current = record.current
            if record.removed:
                removed.append(current)
                continue
            name = record.relationship
            assert name is not None
            if name == SELF:
                outputs.append(SessionOutput(current, SELF, 0, record.queue_id))
                continue
            if self._host.destinations(name) == 0 and self._host.is_auto_terminated(name):
                removed.append(current)
                auto_drops.append(
                    _PendingEvent(
                        ProvenanceEventType.DROP,
                        current.uuid,
                        now,
                        fields={"details": f"Auto-Terminated by {name} Relationship"},
                    )
                )
                continue
            count = self._host.destinations(name)
            for index in range(count - 1):
                clone_id = self._host.next_flowfile_id()
                clone_uuid = new_uuid()
                clone = current.replace(
                    id=clone_id,
                    uuid=clone_uuid,
                    attributes=current.attributes.updated({"uuid": clone_uuid}),
                )
                outputs.append(SessionOutput(clone, name, index))
                fan_out_clones.append(
                    _PendingEvent(
                        ProvenanceEventType.CLONE,
                        current.uuid,
                        now,
                        parents=[current.uuid],
                        children=[clone_uuid],
                        snapshot=current,
                    )
                )
            outputs.append(SessionOutput(current, name, count - 1))
        return outputs, removed, auto_drops, fan_out_clones

    # --- spilling: bounded memory for processors that create millions of FlowFiles ----------

    def _maybe_spill(self) -> None:
        threshold = getattr(self._host, "spill_threshold", None)
        if threshold and self._finished >= threshold:
            self.spill()

    def spill(self) -> None:
        """Hand finished FlowFiles to the host now, keeping the session's memory bounded.

        A FlowFile is finished when it was created in this session and transferred (not back to
        itself) and no pending event still needs it (it is not a parent of a fork or join).
        The host stores the batch uncommitted; it becomes part of the commit, or is discarded on
        rollback. Splitters call this through ``transfer`` automatically once the host's
        ``spill_threshold`` FlowFiles are finished; hosts without one never spill.
        """
        if not hasattr(self._host, "spill"):
            return
        parents = set(self._forks) | {
            p
            for e in self._generated
            if e.event_type is ProvenanceEventType.JOIN
            for p in e.parents
        }
        busy = set(self._readers) | set(self._writers)
        finished = [
            r
            for r in self._records.values()
            if r.created
            and not r.removed
            and r.relationship not in (None, SELF)
            and r.current.uuid not in parents
            and r.current.id not in busy
        ]
        if not finished:
            return
        now = self._now()
        by_uuid = {r.current.uuid: r for r in self._records.values()}
        uuids = {r.current.uuid for r in finished}
        outputs, removed, auto_drops, fan_out = self._route(finished, now)
        pending: list[_PendingEvent] = []
        for builder in self._forks.values():
            children = [c for c in builder.children if c in uuids]
            if children:
                pending.append(
                    _PendingEvent(
                        ProvenanceEventType.FORK,
                        builder.flowfile_uuid,
                        builder.time,
                        parents=list(builder.parents),
                        children=children,
                    )
                )
                builder.children = [c for c in builder.children if c not in uuids]
        moved = [
            e
            for e in self._generated
            if e.flowfile_uuid in uuids or (e.children and set(e.children) <= uuids)
        ]
        self._generated = [e for e in self._generated if e not in moved]
        reported = [e for e in self._reported if e.flowfile_uuid in uuids]
        self._reported = [e for e in self._reported if e.flowfile_uuid not in uuids]
        pending.extend(moved)
        pending.extend(reported)
        pending.extend(fan_out)
        explained = {u for e in pending for u in (e.flowfile_uuid, *e.children)}
        for record in finished:
            if record.current.uuid not in explained:
                pending.append(_PendingEvent(ProvenanceEventType.CREATE, record.current.uuid, now))
        pending.extend(auto_drops)
        events = [self._enrich(e, by_uuid, now) for e in pending]
        self._host.spill(SessionSpill(tuple(outputs), tuple(removed), tuple(events)))
        for record in finished:
            del self._records[record.current.id]
        self._spilled_claims.update(
            o.flowfile.content.resource_claim for o in outputs if o.flowfile.content is not None
        )
        self._spilled = True
        self._finished = 0

    def rollback(self, *, penalize: bool = False) -> None:
        """Undo everything.

        Inputs go back to their queues (penalized if asked); created FlowFiles and written
        content are discarded; staged state, counters and events are dropped.
        """
        for streams in list(self._readers.values()):
            for reader in list(streams):
                reader.close()
        for target in list(self._writers.values()):
            claim = target.close()
            if claim is not None:
                self._written.append(claim)
        self._readers.clear()
        self._writers.clear()
        if self._spilled:
            self._host.discard_spilled()
        now = self._now()
        restored = []
        for record in self._records.values():
            if record.original is None or record.queue_id is None:
                continue
            original = record.original
            if penalize:
                original = original.replace(penalty_expiration=now + self._host.penalization_ms)
            restored.append(QueuedFlowFile(original, record.queue_id))
        written = list(self._written)
        shared = set(self._shared_claims)
        self._reset()
        content = self._host.content
        for claim in written:
            resource = claim.resource_claim
            if resource not in shared and content.claimant_count(resource) == 0:
                content.remove(resource)
        if restored:
            self._host.restore(restored)

    def _reset(self) -> None:
        self._records.clear()
        self._readers.clear()
        self._writers.clear()
        self._spilled = False
        self._spilled_claims.clear()
        self._finished = 0
        self._forks.clear()
        self._generated.clear()
        self._reported.clear()
        self._written.clear()
        self._state = None
        self._counters.clear()
        self._delete_on_commit.clear()
        self._shared_claims.clear()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._start_ms = self._now()

    # --- provenance at commit (NiFi's updateProvenanceRepo order) ------------------------------

    def _build_events(
        self, now: int, auto_drops: list[_PendingEvent], fan_out: list[_PendingEvent]
    ) -> list[ProvenanceEvent]:
        by_uuid = {r.current.uuid: r for r in self._records.values()}
        reported_types: dict[str, set[ProvenanceEventType]] = {}
        for event in self._reported:
            reported_types.setdefault(event.flowfile_uuid, set()).add(event.event_type)
        pending: list[_PendingEvent] = []
        # 1. FORK, one per parent, unless spurious (no children left) or already reported.
        for builder in self._forks.values():
            if not builder.children:
                continue
            if ProvenanceEventType.FORK in reported_types.get(builder.flowfile_uuid, set()):
                continue
            pending.append(builder)
        # 2. JOIN; 3. processor-reported; 4. CLONE and DROP generated by the framework.
        pending.extend(e for e in self._generated if e.event_type is ProvenanceEventType.JOIN)
        pending.extend(self._reported)
        pending.extend(e for e in self._generated if e.event_type is not ProvenanceEventType.JOIN)
        pending.extend(fan_out)
        # 5. Per record: CONTENT_MODIFIED, CREATE, ATTRIBUTES_MODIFIED.
        mentioned: dict[str, set[ProvenanceEventType]] = {}
        for event in pending:
            for uuid in {event.flowfile_uuid, *event.children}:
                mentioned.setdefault(uuid, set()).add(event.event_type)
        for record in self._records.values():
            if record.removed:
                continue
            current = record.current
            types = mentioned.get(current.uuid, set())
            original = record.original
            if original is not None and original.content != current.content:
                pending.append(
                    _PendingEvent(ProvenanceEventType.CONTENT_MODIFIED, current.uuid, now)
                )
                types = types | {ProvenanceEventType.CONTENT_MODIFIED}
            if record.created and not types & _ORIGIN_TYPES:
                pending.append(_PendingEvent(ProvenanceEventType.CREATE, current.uuid, now))
                continue
            if not types and self._attributes_changed(record):
                pending.append(
                    _PendingEvent(ProvenanceEventType.ATTRIBUTES_MODIFIED, current.uuid, now)
                )
        # 6. DROP for auto-terminated relationships, last.
        pending.extend(auto_drops)
        return [self._enrich(event, by_uuid, now) for event in pending]

    @staticmethod
    def _attributes_changed(record: _Record) -> bool:
        before = record.original.attributes if record.original is not None else {}
        return dict(before) != dict(record.current.attributes)

    def _enrich(
        self, pending: _PendingEvent, by_uuid: Mapping[str, _Record], now: int
    ) -> ProvenanceEvent:
        record = by_uuid.get(pending.flowfile_uuid)
        component = self.component
        if pending.snapshot is not None:
            flowfile = pending.snapshot
        elif record is not None:
            flowfile = record.current
        else:
            flowfile = None
        original = record.original if record is not None else None
        previous = original.attributes if original is not None else {}
        current_attrs = flowfile.attributes if flowfile is not None else {}
        if pending.snapshot is not None:
            updated = {}
            previous = current_attrs
        else:
            updated = {k: v for k, v in current_attrs.items() if previous.get(k) != v}
        creating = pending.event_type in (
            ProvenanceEventType.CREATE,
            ProvenanceEventType.RECEIVE,
            ProvenanceEventType.FORK,
            ProvenanceEventType.JOIN,
            ProvenanceEventType.CLONE,
        )
        fields = dict(pending.fields)
        start = record.start_ms if record is not None else self._start_ms
        fields.setdefault("event_duration", max(0, now - start))
        return ProvenanceEvent(
            event_type=pending.event_type,
            flowfile_uuid=pending.flowfile_uuid,
            component_id=component.id,
            component_type=component.type,
            component_name=component.name,
            event_time=pending.time,
            file_size=flowfile.size if flowfile is not None else 0,
            entry_date=flowfile.entry_date if flowfile is not None else 0,
            lineage_start_date=flowfile.lineage_start_date if flowfile is not None else 0,
            parent_uuids=tuple(pending.parents),
            child_uuids=tuple(pending.children),
            source_queue_identifier=None if creating or record is None else record.queue_id,
            previous_attributes=previous,
            updated_attributes=updated,
            previous_content_claim=original.content if original is not None else None,
            content_claim=flowfile.content if flowfile is not None else None,
            previous_file_size=original.size if original is not None else None,
            **fields,
        )

    def _report(
        self,
        event_type: ProvenanceEventType,
        flowfile: FlowFile,
        *,
        parents: Sequence[str] = (),
        children: Sequence[str] = (),
        **fields: Any,
    ) -> None:
        record = self._record(flowfile, allow_transferred=True)
        current = record.current
        snapshot = current if event_type in _SNAPSHOT_TYPES else None
        clean = {k: v for k, v in fields.items() if v is not None}
        self._reported.append(
            _PendingEvent(
                event_type,
                current.uuid,
                self._now(),
                fields=clean,
                snapshot=snapshot,
                parents=list(parents),
                children=list(children),
            )
        )


def _emit(out: _WriteStream, content: ContentSource) -> None:
    if content is None:
        return
    if isinstance(content, bytes | bytearray | memoryview | str):
        out.write(content)
    elif callable(content):
        content(out)
    else:
        for chunk in content:
            out.write(chunk)


class ProvenanceReporter:
    """Processor-reported provenance events (NiFi's ``ProvenanceReporter``).

    ROUTE, SEND, RECEIVE and FETCH are never automatic: a processor that talks to the outside
    world or routes must report them here. Events are emitted at commit and dropped on rollback.
    """

    def __init__(self, session: ProcessSession) -> None:
        self._session = session

    def receive(
        self,
        flowfile: FlowFile,
        transit_uri: str,
        *,
        source_system_flowfile_identifier: str | None = None,
        details: str | None = None,
        duration_ms: int | None = None,
    ) -> None:
        """Report that *flowfile* was received from *transit_uri*."""
        self._session._report(
            ProvenanceEventType.RECEIVE,
            flowfile,
            transit_uri=transit_uri,
            source_system_flowfile_identifier=source_system_flowfile_identifier,
            details=details,
            event_duration=duration_ms,
        )

    def fetch(
        self,
        flowfile: FlowFile,
        transit_uri: str,
        *,
        details: str | None = None,
        duration_ms: int | None = None,
    ) -> None:
        """Report that *flowfile*'s content was replaced by the resource at *transit_uri*."""
        self._session._report(
            ProvenanceEventType.FETCH,
            flowfile,
            transit_uri=transit_uri,
            details=details,
            event_duration=duration_ms,
        )

    def send(
        self,
        flowfile: FlowFile,
        transit_uri: str,
        *,
        details: str | None = None,
        duration_ms: int | None = None,
    ) -> None:
        """Report that *flowfile* was sent to *transit_uri* (attributes kept as now)."""
        self._session._report(
            ProvenanceEventType.SEND,
            flowfile,
            transit_uri=transit_uri,
            details=details,
            event_duration=duration_ms,
        )

    def upload(self, flowfile: FlowFile, transit_uri: str, *, details: str | None = None) -> None:
        """Report that a file was uploaded to *transit_uri*."""
        self._session._report(
            ProvenanceEventType.UPLOAD, flowfile, transit_uri=transit_uri, details=details
        )

    def invoke_remote_process(
        self, flowfile: FlowFile, transit_uri: str, *, details: str | None = None
    ) -> None:
        """Report a remote request that transferred no data (e.g. a delete)."""
        self._session._report(
            ProvenanceEventType.REMOTE_INVOCATION,
            flowfile,
            transit_uri=transit_uri,
            details=details,
        )

    def associate(self, flowfile: FlowFile, namespace: str, identifier: str) -> None:
        """Link *flowfile* to an alternate identifier (ADDINFO)."""
        self._session._report(
            ProvenanceEventType.ADDINFO,
            flowfile,
            alternate_identifier_uri=f"{namespace}:{identifier}",
        )

    def route(
        self,
        flowfile: FlowFile,
        relationship: Relationship | str,
        *,
        details: str | None = None,
        duration_ms: int | None = None,
    ) -> None:
        """Report that *flowfile* was routed to *relationship* (ROUTE)."""
        name = relationship.name if isinstance(relationship, Relationship) else relationship
        self._session._report(
            ProvenanceEventType.ROUTE,
            flowfile,
            relationship=name,
            details=details,
            event_duration=duration_ms,
        )

    def modify_content(
        self, flowfile: FlowFile, *, details: str | None = None, duration_ms: int | None = None
    ) -> None:
        """Report a content change explicitly (normally automatic)."""
        self._session._report(
            ProvenanceEventType.CONTENT_MODIFIED,
            flowfile,
            details=details,
            event_duration=duration_ms,
        )

    def modify_attributes(self, flowfile: FlowFile, *, details: str | None = None) -> None:
        """Report an attribute change explicitly (normally automatic)."""
        self._session._report(ProvenanceEventType.ATTRIBUTES_MODIFIED, flowfile, details=details)

    def create(self, flowfile: FlowFile, *, details: str | None = None) -> None:
        """Report that *flowfile* was generated here (CREATE)."""
        self._session._report(ProvenanceEventType.CREATE, flowfile, details=details)

    def fork(
        self, parent: FlowFile, children: Sequence[FlowFile], *, details: str | None = None
    ) -> None:
        """Report children derived from *parent* (replaces the automatic FORK)."""
        self._session._report(
            ProvenanceEventType.FORK,
            parent,
            parents=[parent.uuid],
            children=[c.uuid for c in children],
            details=details,
        )

    def join(
        self, parents: Sequence[FlowFile], child: FlowFile, *, details: str | None = None
    ) -> None:
        """Report *child* derived from several *parents*."""
        self._session._report(
            ProvenanceEventType.JOIN,
            child,
            parents=[p.uuid for p in parents],
            children=[child.uuid],
            details=details,
        )

    def clone(self, parent: FlowFile, child: FlowFile) -> None:
        """Report an exact copy."""
        self._session._report(
            ProvenanceEventType.CLONE, parent, parents=[parent.uuid], children=[child.uuid]
        )
