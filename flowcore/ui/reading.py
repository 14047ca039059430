"""What the UI reads from a repository: queues, queued FlowFiles, content and provenance.

Everything is opened read-only and no lock is taken, so the UI works beside a run that holds
the repository (another process) and after it ended, as ``flowcore status`` and ``flowcore
provenance`` do. The FlowFile log is recovered read-only (:class:`WriteAheadFlowFileRepository`
with ``read_only=True`` changes nothing on disk) and kept until its files change; a queue listing
reads only the segments its page falls in, found from the segment summaries' counts, and makes
FlowFiles of the page's records alone. A segment
the run consumes between the log read and the segment read is missing: the log is read again
once and the page retried.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from flowcore.clock import now_ms
from flowcore.errors import ContentNotFoundError, FlowcoreError, RepositoryError
from flowcore.flowfile import FlowFile
from flowcore.provenance_events import ProvenanceEvent
from repositories.content import FileContentRepository
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.provenance import SqlProvenanceRepository
from repositories.repository_set import live_run, read_bulletins, read_status
from repositories.segments import read_segment_range, segment_path

__all__ = ["QueuePage", "QueuedFlowFile", "RepositoryView", "UnknownItemError"]

#: FlowFiles a queue listing returns at most per page (NiFi lists the first 100).
MAX_PAGE = 1_000
#: uuid -> (queue, segment) entries kept from listings, for the FlowFile dialog.
MAX_REMEMBERED = 100_000
#: Queued FlowFiles a lookup by uuid reads at most when no listing has shown it (20 segments).
MAX_SCANNED = 200_000


class UnknownItemError(FlowcoreError, KeyError):
    """The UI was asked for a connection, FlowFile or event the repository does not hold."""


@attrs.frozen
class QueuedFlowFile:
    """One row of a queue listing (NiFi's "List queue" columns)."""

    position: int
    uuid: str
    filename: str
    size: int
    queued_duration_ms: int
    lineage_duration_ms: int
    penalized: bool
    segment_id: str


@attrs.frozen
class QueuePage:
    """A page of a queue listing and the queue's totals."""

    queue_id: str
    total_flowfiles: int
    total_bytes: int
    offset: int
    flowfiles: tuple[QueuedFlowFile, ...]


def _log_stamp(directory: Path) -> tuple[Any, ...]:
    """What changes whenever the FlowFile log does: its files' names, sizes and mtimes."""
    stamp: list[Any] = []
    for path in (directory / "checkpoint", directory / "checkpoint.partial"):
        try:
            info = path.stat()
            stamp.append((path.name, info.st_size, info.st_mtime_ns))
        except FileNotFoundError:
            stamp.append((path.name, None))
    journals = directory / "journals"
    if journals.is_dir():
        for path in sorted(journals.iterdir()):
            info = path.stat()
            stamp.append((path.name, info.st_size, info.st_mtime_ns))
    return tuple(stamp)


class RepositoryView:
    """A repository read for the UI: never locked, never changed.

    Args:
        directory: the repository directory.
        indexed_attributes: attribute names the provenance index searches by value.
    """

    def __init__(self, directory: str | Path, indexed_attributes: tuple[str, ...] = ()) -> None:
        self.directory = Path(directory).resolve()
        self._indexed = indexed_attributes
        self._lock = threading.Lock()
        self._log: WriteAheadFlowFileRepository | None = None
        self._stamp: tuple[Any, ...] = ()
        self._where: dict[str, tuple[str, str]] = {}  # uuid -> (queue id, segment id)
        self._content: FileContentRepository | None = None
        self._provenance: SqlProvenanceRepository | None = None

    # --- the run -----------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """``status.json`` (empty before any run) with whether a run is live now."""
        status = read_status(self.directory) or {}
        holder = live_run(self.directory)
        live = holder is not None and holder in (0, (status.get("run") or {}).get("pid"))
        return {**status, "live": live, "holder": holder}

    def bulletins(self, limit: int = 100) -> list[dict[str, Any]]:
        """The last *limit* bulletins, oldest first."""
        return [attrs.asdict(b) for b in read_bulletins(self.directory)[-limit:]]

    # --- queues ------------------------------------------------------------------------------

    def _flowfile_log(self, *, fresh: bool = False) -> WriteAheadFlowFileRepository:
        directory = self.directory / "flowfile"
        stamp = _log_stamp(directory)
        with self._lock:
            if self._log is None or fresh or stamp != self._stamp:
                self._log = WriteAheadFlowFileRepository(directory, read_only=True)
                self._stamp = stamp
            return self._log

    def queue_size(self, queue_id: str) -> tuple[int, int]:
        """FlowFiles and bytes queued in *queue_id* as the log records them."""
        return self._flowfile_log().queue_size(queue_id)

    def list_queue(self, queue_id: str, offset: int = 0, limit: int = 100) -> QueuePage:
        """The FlowFiles of *queue_id* from *offset* (queue order), at most *limit*.

        Only the segments the page falls in are read: whole segments before it are skipped by
        their summaries' counts.
        """
        offset, limit = max(0, offset), max(0, min(limit, MAX_PAGE))
        try:
            return self._list(self._flowfile_log(), queue_id, offset, limit)
        except RepositoryError:  # a segment consumed by the live run since the log was read
            return self._list(self._flowfile_log(fresh=True), queue_id, offset, limit)

    def _list(
        self, log: WriteAheadFlowFileRepository, queue_id: str, offset: int, limit: int
    ) -> QueuePage:
        segments = log.segments(queue_id)
        total = sum(s.count for s in segments), sum(s.bytes for s in segments)
        now = now_ms()
        rows: list[QueuedFlowFile] = []
        skipped = 0
        for summary in segments:
            if len(rows) >= limit:
                break
            if skipped + summary.count <= offset:
                skipped += summary.count
                continue
            start = max(0, offset - skipped)
            stop = start + limit - len(rows)
            path = segment_path(log.segment_dir, summary.segment_id)
            for index, flowfile in enumerate(read_segment_range(path, start, stop), start):
                rows.append(_row(flowfile, skipped + index + 1, summary.segment_id, now))
                self._remember(flowfile.uuid, queue_id, summary.segment_id)
            skipped += summary.count
        return QueuePage(queue_id, total[0], total[1], offset, tuple(rows))

    def _remember(self, uuid: str, queue_id: str, segment_id: str) -> None:
        if len(self._where) >= MAX_REMEMBERED:
            self._where.clear()
        self._where[uuid] = (queue_id, segment_id)

    def flowfile(self, uuid: str) -> tuple[str, FlowFile]:
        """The queued FlowFile *uuid* and its queue id.

        Looked up where a listing saw it; otherwise the queues are read, segment by segment,
        up to :data:`MAX_SCANNED` FlowFiles.

        Raises:
            UnknownItemError: no queue holds it (now), or none of the FlowFiles read.
        """
        log = self._flowfile_log()
        known = self._where.get(uuid)
        if known is not None and any(s.segment_id == known[1] for s in log.segments(known[0])):
            for flowfile in self._segment(log, known[1]):
                if flowfile.uuid == uuid:
                    return known[0], flowfile
        scanned = 0
        for queue_id in log.queue_ids():
            for summary in log.segments(queue_id):
                if scanned >= MAX_SCANNED:
                    msg = (
                        f"FlowFile {uuid} is not among the first {MAX_SCANNED:,} queued "
                        "FlowFiles; list its queue first (the UI then knows where it is)"
                    )
                    raise UnknownItemError(msg)
                scanned += summary.count
                for flowfile in self._segment(log, summary.segment_id):
                    if flowfile.uuid == uuid:
                        return queue_id, flowfile
        msg = f"no queue holds FlowFile {uuid} now (processed since it was listed?)"
        raise UnknownItemError(msg)

    @staticmethod
    def _segment(log: WriteAheadFlowFileRepository, segment_id: str) -> list[FlowFile]:
        try:
            return log.read_segment(segment_id)
        except RepositoryError:
            return []  # consumed by the live run meanwhile

    # --- content -----------------------------------------------------------------------------

    @property
    def content(self) -> FileContentRepository:
        """The content repository, for reads only."""
        if self._content is None:
            self._content = FileContentRepository(self.directory / "content")
        return self._content

    def open_content(self, claim: Any) -> BinaryIO:
        """A stream over a claim's bytes.

        Raises:
            UnknownItemError: the content is gone from the repository and its archive.
        """
        gone = "the content is gone from the content repository and its archive"
        if not all(self.content.exists(c) for c in claim.resource_claims):
            raise UnknownItemError(gone)
        try:
            return self.content.open(claim)
        except ContentNotFoundError:
            raise UnknownItemError(gone) from None

    # --- provenance --------------------------------------------------------------------------

    @property
    def provenance(self) -> SqlProvenanceRepository:
        """The provenance index, read-only.

        Raises:
            UnknownItemError: the repository has no provenance database yet.
        """
        if self._provenance is None:
            database = self.directory / "provenance" / "provenance.db"
            if not database.is_file():
                msg = f"{self.directory} has no provenance yet (no run has indexed events)"
                raise UnknownItemError(msg)
            self._provenance = SqlProvenanceRepository(
                database,
                event_directory=self.directory / "provenance" / "events",
                indexed_attributes=self._indexed,
                read_only=True,
            )
        return self._provenance

    def event(self, event_id: int) -> ProvenanceEvent:
        """One event.

        Raises:
            UnknownItemError: no stored event has that id.
        """
        try:
            return self.provenance.get(event_id)
        except KeyError:
            msg = f"no provenance event with id {event_id} (or retention has removed it)"
            raise UnknownItemError(msg) from None

    def events(self, **query: Any) -> Iterator[ProvenanceEvent]:
        """Events matching *query* (``search``'s fields; ``component`` by id or name)."""
        component = query.pop("component", None)
        limit = query.get("limit", 100)
        ids = self.provenance.component_ids(component) if component else [None]
        found: list[ProvenanceEvent] = []
        for component_id in ids:
            found += self.provenance.search(component_id=component_id, **query)
        found.sort(key=lambda e: e.event_id)
        return iter(found[:limit])

    def close(self) -> None:
        """Release database connections and open files."""
        if self._provenance is not None:
            self._provenance.close()
        if self._content is not None:
            self._content.close()


def _row(flowfile: FlowFile, position: int, segment_id: str, now: int) -> QueuedFlowFile:
    return QueuedFlowFile(
        position=position,
        uuid=flowfile.uuid,
        filename=flowfile.attributes.get("filename", ""),
        size=flowfile.size,
        queued_duration_ms=max(0, now - flowfile.queue_date) if flowfile.queue_date else 0,
        lineage_duration_ms=max(0, now - flowfile.lineage_start_date),
        penalized=flowfile.penalty_expiration > now,
        segment_id=segment_id,
    )
