"""Private pieces of the ProcessSession: its records, pending events and content streams."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

import attrs

from flowcore.errors import FlowFileAccessError
from flowcore.flowfile import FlowFile
from flowcore.provenance_events import ProvenanceEventType

if TYPE_CHECKING:
    from flowcore.session.streams import WriteStream

# Attributes a child created from a parent does not inherit (NiFi's create(parent)).
NOT_INHERITED = frozenset({"uuid", "alternate.identifier", "discard.reason"})
READ_CHUNK = 64 * 1024
# Event types that already explain a new FlowFile's existence (no CREATE is added).
ORIGIN_TYPES = frozenset(
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
SNAPSHOT_TYPES = frozenset(
    {ProvenanceEventType.SEND, ProvenanceEventType.UPLOAD, ProvenanceEventType.CLONE}
)


@attrs.define
class Record:
    """The session's knowledge of one FlowFile."""

    current: FlowFile
    original: FlowFile | None = None
    queue_id: str | None = None
    relationship: str | None = None
    removed: bool = False
    start_ms: int = 0
    retried: bool = False  # sent back to its queue by the processor's relationship retry

    @property
    def created(self) -> bool:
        return self.original is None

    def become(self, flowfile: FlowFile) -> FlowFile:
        """Make *flowfile* the newest version, and return it."""
        self.current = flowfile
        return flowfile


@attrs.define
class PendingEvent:
    """An event whose FlowFile fields are filled in at commit (NiFi's enrichment)."""

    event_type: ProvenanceEventType
    flowfile_uuid: str
    time: int
    fields: dict[str, Any] = attrs.field(factory=dict)
    snapshot: FlowFile | None = None  # kept as reported (SEND, UPLOAD, CLONE)
    parents: Sequence[str] = attrs.field(factory=list)  # a list, or CountedUuids
    children: list[str] = attrs.field(factory=list)

    @classmethod
    def clone(cls, source: FlowFile, clone_uuid: str, now: int) -> PendingEvent:
        """The CLONE event of *source* copied as *clone_uuid*, with the source as it was."""
        return cls(
            ProvenanceEventType.CLONE,
            source.uuid,
            now,
            parents=[source.uuid],
            children=[clone_uuid],
            snapshot=source,
        )


class Resolve(Protocol):
    """The session's check of a FlowFile a processor names: its record, or the session rolls back.

    NiFi's ``validateRecordState``: only provenance reporting and ``migrate`` may name a
    FlowFile already transferred (*allow_transferred*); one being read may be read again or
    cloned (*reading*), never changed.
    """

    def __call__(
        self, flowfile: FlowFile, *, allow_transferred: bool = False, reading: bool = False
    ) -> Record: ...


class ReadStream:
    """A read-only view of one FlowFile's content that the session can close."""

    def __init__(
        self, flowfile_id: int, stream: BinaryIO, on_close: Callable[[int, ReadStream], None]
    ) -> None:
        self._id = flowfile_id
        self._stream = stream
        self._on_close = on_close
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
            self._on_close(self._id, self)

    def __enter__(self) -> ReadStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


ContentSource = (
    bytes | bytearray | memoryview | str | Iterable[bytes] | Callable[[Any], object] | None
)


def emit(out: WriteStream, content: ContentSource) -> None:
    if content is None:
        return
    if isinstance(content, bytes | bytearray | memoryview | str):
        out.write(content)
    elif callable(content):
        content(out)
    else:
        for chunk in content:
            out.write(chunk)
