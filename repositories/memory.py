"""In-memory content and provenance repositories for the processor test harness and unit tests.

They honour the same contracts as the durable ones (claim packing, claimant counts, event ids)
so tests exercise real behaviour, but nothing survives the process. They are not the product: a
flow run uses the durable repositories. There is no in-memory FlowFile repository: the engine
runs only on the write-ahead log, so queues are always tested on the real one.
"""

from __future__ import annotations

import io
import itertools
import os
import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, BinaryIO

import attrs

from flowcore.errors import ContentNotFoundError, FlowFileAccessError
from flowcore.flowfile import Content, ContentClaim, ResourceClaim, Rope
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from flowcore.session.external_files import matches, open_external
from repositories.records import Finding

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "DEFAULT_MAX_APPENDABLE_SIZE",
    "MAX_LINEAGE_NODES",
    "MemoryContentRepository",
    "MemoryProvenanceRepository",
]

DEFAULT_MAX_APPENDABLE_SIZE = 50 * 1024  # bytes; NiFi's nifi.content.claim.max.appendable.size
SECTIONS_PER_CONTAINER = 1024  # NiFi's sections per content container
MAX_LINEAGE_NODES = 1000  # events per lineage query, as NiFi bounds it


class _MemoryStream:
    """Writes one content claim at the end of a resource claim's buffer."""

    def __init__(self, writer: _MemoryWriter, claim: ResourceClaim, buffer: bytearray) -> None:
        self._writer = writer
        self._claim = claim
        self._buffer = buffer
        self._offset = len(buffer)
        self._closed = False

    @property
    def bytes_written(self) -> int:
        return len(self._buffer) - self._offset

    def write(self, data: bytes | memoryview) -> int:
        if self._closed:
            msg = f"cannot write to a closed content stream on {self._claim}"
            raise FlowFileAccessError(msg)
        self._buffer += data
        return len(data)

    def close(self) -> ContentClaim | None:
        if self._closed:
            msg = f"content stream on {self._claim} was already closed"
            raise FlowFileAccessError(msg)
        self._closed = True
        self._writer._stream_closed(self._claim, self._buffer)
        if self.bytes_written == 0:
            return None
        return ContentClaim(self._claim, self._offset, self.bytes_written)


class _MemoryWriter:
    """Packs consecutive small claims into one resource claim up to the appendable size."""

    def __init__(self, repo: MemoryContentRepository) -> None:
        self._repo = repo
        self._appendable: ResourceClaim | None = None
        self._open: set[ResourceClaim] = set()

    def open_stream(self) -> _MemoryStream:
        claim = self._appendable
        if claim is None or claim in self._open:
            claim = self._repo._new_claim()
            self._appendable = claim
        self._open.add(claim)
        return _MemoryStream(self, claim, self._repo._data[claim])

    def open_named_stream(self, name: str) -> _MemoryStream:
        """Start a claim of its own named *name* (see the file repository's writer)."""
        claim = self._repo.named_claim(name)
        self._repo._data[claim] = bytearray()
        self._open.add(claim)
        return _MemoryStream(self, claim, self._repo._data[claim])

    def _stream_closed(self, claim: ResourceClaim, buffer: bytearray) -> None:
        self._open.discard(claim)
        if len(buffer) >= self._repo.max_appendable_size and self._appendable == claim:
            self._appendable = None  # frozen: never appended again

    def close(self) -> None:
        self._appendable = None


class MemoryContentRepository:
    """Content in memory: resource claims are byte buffers shared by many content claims."""

    def __init__(self, max_appendable_size: int = DEFAULT_MAX_APPENDABLE_SIZE) -> None:
        self.max_appendable_size = max_appendable_size
        self._data: dict[ResourceClaim, bytearray] = {}
        self._counts: dict[ResourceClaim, int] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def _new_claim(self) -> ResourceClaim:
        with self._lock:
            n = next(self._ids)
            claim = ResourceClaim("memory", str(n % SECTIONS_PER_CONTAINER), f"claim-{n}")
            self._data[claim] = bytearray()
        return claim

    def named_claim(self, name: str) -> ResourceClaim:
        """The resource claim named *name* (its section follows from the name)."""
        section = zlib.crc32(name.encode()) % SECTIONS_PER_CONTAINER
        return ResourceClaim("memory", str(section), name)

    def writer(self, owner: str = "") -> _MemoryWriter:
        """Return a writer; *owner* is ignored in memory."""
        del owner
        return _MemoryWriter(self)

    def write_bytes(self, data: bytes) -> ContentClaim | None:
        """Write *data* as a new claim in a resource claim of its own (a test convenience)."""
        stream = self.writer().open_stream()
        stream.write(data)
        return stream.close()

    def _buffer(self, claim: ContentClaim) -> bytearray:
        buffer = self._data.get(claim.resource_claim)
        if buffer is None:
            msg = f"content {claim} is no longer in the content repository"
            raise ContentNotFoundError(msg)
        if claim.offset + claim.length > len(buffer):
            msg = f"content {claim} extends past the end of its resource claim"
            raise ContentNotFoundError(msg)
        return buffer

    def open(self, claim: Content) -> BinaryIO:
        """Open a stream over the claim's bytes."""
        return io.BytesIO(self.read(claim))

    def export(self, claim: Content, out: BinaryIO) -> int:
        """Copy the claim's bytes into *out*."""
        return out.write(self.read(claim)) or 0

    def read(self, claim: Content) -> bytes:
        """Return the claim's bytes (an external claim's from its file, checked)."""
        if isinstance(claim, Rope):
            return b"".join(self.read(piece) for piece in claim.pieces)
        if claim.resource_claim.is_external:
            fd = open_external(claim.resource_claim)
            try:
                return os.pread(fd, claim.length, claim.offset)
            finally:
                os.close(fd)
        buffer = self._buffer(claim)
        return bytes(buffer[claim.offset : claim.offset + claim.length])

    def size_of(self, resource_claim: ResourceClaim) -> int | None:
        """The bytes in a resource claim (None when it is gone), for the rope policy."""
        if resource_claim.is_external:
            return int(resource_claim.section.split(":", 1)[0])
        buffer = self._data.get(resource_claim)
        return None if buffer is None else len(buffer)

    def exists(self, resource_claim: ResourceClaim) -> bool:
        """Whether the resource claim is stored (an external file: unchanged)."""
        if resource_claim.is_external:
            return matches(resource_claim)
        return resource_claim in self._data

    def increment_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        """Add claimants."""
        with self._lock:
            self._counts[resource_claim] = self._counts.get(resource_claim, 0) + delta
            return self._counts[resource_claim]

    def decrement_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        """Remove claimants, never below zero."""
        with self._lock:
            count = max(0, self._counts.get(resource_claim, 0) - delta)
            self._counts[resource_claim] = count
            return count

    def claimant_count(self, resource_claim: ResourceClaim) -> int:
        """Current claimant count."""
        return self._counts.get(resource_claim, 0)

    def remove(self, resource_claim: ResourceClaim) -> bool:
        """Destroy an unclaimed resource claim."""
        with self._lock:
            if self._counts.get(resource_claim, 0) > 0 or resource_claim not in self._data:
                return False
            del self._data[resource_claim]
            self._counts.pop(resource_claim, None)
            return True

    def resource_claims(self) -> Iterable[ResourceClaim]:
        """Every stored resource claim."""
        return tuple(self._data)

    def check(self, *, fix: bool = False) -> list[Finding]:
        """Report claimant counts for claims that no longer exist."""
        findings = []
        for claim, count in list(self._counts.items()):
            if count > 0 and not self.exists(claim):
                if fix:
                    self._counts.pop(claim)
                findings.append(
                    Finding("content", str(claim), f"{count} claimants but no data", fixed=fix)
                )
        return findings


class MemoryProvenanceRepository:
    """Provenance events in a list, with the same queries as the SQL repository."""

    def __init__(self) -> None:
        self._events: list[ProvenanceEvent] = []
        self._lock = threading.Lock()

    def append(self, events: Sequence[ProvenanceEvent]) -> None:
        """Act as a session's event sink: register the events."""
        self.register(events)

    def register(self, events: Iterable[ProvenanceEvent]) -> list[ProvenanceEvent]:
        """Store events, assigning consecutive ids."""
        stored = []
        with self._lock:
            for event in events:
                stored_event = attrs.evolve(event, event_id=len(self._events))
                self._events.append(stored_event)
                stored.append(stored_event)
        return stored

    def get(self, event_id: int) -> ProvenanceEvent:
        """Return one event by id."""
        if not 0 <= event_id < len(self._events):
            msg = f"no provenance event with id {event_id}"
            raise KeyError(msg)
        return self._events[event_id]

    def events(self) -> list[ProvenanceEvent]:
        """Every event, oldest first."""
        return list(self._events)

    def search(
        self,
        *,
        flowfile_uuid: str | None = None,
        event_type: ProvenanceEventType | str | None = None,
        component_id: str | None = None,
        filename: str | None = None,
        start: int | None = None,
        end: int | None = None,
        attributes: Mapping[str, str] | None = None,
        limit: int = 1000,
    ) -> list[ProvenanceEvent]:
        """Return matching events, oldest first."""
        wanted = ProvenanceEventType(event_type) if isinstance(event_type, str) else event_type
        out = []
        for event in self._events:
            if flowfile_uuid is not None and event.flowfile_uuid != flowfile_uuid:
                continue
            if wanted is not None and event.event_type is not wanted:
                continue
            if component_id is not None and event.component_id != component_id:
                continue
            if filename is not None and event.filename != filename:
                continue
            if start is not None and event.event_time < start:
                continue
            if end is not None and event.event_time > end:
                continue
            if attributes and any(event.attributes.get(k) != v for k, v in attributes.items()):
                continue
            out.append(event)
            if len(out) >= limit:
                break
        return out

    def lineage(self, flowfile_uuid: str) -> nx.DiGraph:
        """The lineage graph around a FlowFile: FlowFile and event nodes, parent->child edges.

        Walks every event naming the FlowFile (as subject, parent or child) and the FlowFiles
        those events link to, bounded to :data:`MAX_LINEAGE_NODES` events as NiFi bounds lineage.
        """
        import networkx as nx  # noqa: PLC0415 - only lineage needs it; workers skip the import

        graph = nx.DiGraph()
        seen_flowfiles: set[str] = set()
        seen_events: set[int] = set()
        frontier = [flowfile_uuid]
        while frontier and len(seen_events) < MAX_LINEAGE_NODES:
            uuid = frontier.pop()
            if uuid in seen_flowfiles:
                continue
            seen_flowfiles.add(uuid)
            graph.add_node(uuid, kind="flowfile")
            for event in self._events:
                named = {event.flowfile_uuid, *event.parent_uuids, *event.child_uuids}
                if uuid not in named or event.event_id in seen_events:
                    continue
                seen_events.add(event.event_id)
                node = f"event:{event.event_id}"
                graph.add_node(
                    node,
                    kind="event",
                    event_type=event.event_type.value,
                    time=event.event_time,
                    component=event.component_name or event.component_id,
                )
                if event.parent_uuids or event.child_uuids:
                    graph.add_edges_from((parent, node) for parent in event.parent_uuids)
                    graph.add_edges_from((node, child) for child in event.child_uuids)
                else:
                    graph.add_edge(event.flowfile_uuid, node)
                frontier.extend(named - seen_flowfiles)
        return graph

    def max_event_id(self) -> int:
        """The largest event id, -1 when empty."""
        return len(self._events) - 1
