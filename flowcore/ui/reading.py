"""What the UI reads from a repository: queues, queued FlowFiles, content and provenance.

Everything is opened read-only and no lock is taken, so the UI works beside a run that holds
the repository (another process) and after it ended, as ``flowcore status`` and ``flowcore
provenance`` do. The FlowFile log is recovered read-only (:class:`WriteAheadFlowFileRepository`
with ``read_only=True`` changes nothing on disk) and kept until its files change; a queue listing
reads only the segments its page falls in, found from the segment summaries' counts, and makes
FlowFiles of the page's records alone. A segment
the run consumes between the log read and the segment read is missing: the log is read again
once and the page retried.

Avro and Parquet content is shown as records (:meth:`RepositoryView.records`): the first
:data:`MAX_RECORDS` read with flowcore's own readers, as a table whose header names NiFi's record
types and as the JSON NiFi's content viewer formats Avro into. What those records decode to is
bounded before it is decoded, and their strings are cut to a cell (:mod:`flowcore.ui.record_bounds`,
with the bounds defined here).
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import attrs
import pyarrow as pa

from flowcore.clock import now_ms
from flowcore.errors import ContentNotFoundError, FlowcoreError, RecordError, RepositoryError
from flowcore.flowfile import FlowFile
from flowcore.provenance_events import ProvenanceEvent
from flowcore.records.json_writer import OUTPUT_ONELINE, JsonWriterOptions, write_json
from flowcore.records.schema import (
    ArrayType,
    ChoiceType,
    DataType,
    DecimalType,
    MapType,
    RecordSchema,
)
from flowcore.ui.decoded_size import TooBigToShowError
from flowcore.ui.record_bounds import FirstRecords, cut_strings, first_records, one_line
from repositories.content import FileContentRepository
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.provenance import SqlProvenanceRepository
from repositories.repository_set import live_run, read_bulletins, read_status
from repositories.segments import read_segment_range, segment_path

__all__ = [
    "QueuePage",
    "QueuedFlowFile",
    "RecordColumn",
    "RecordView",
    "RepositoryView",
    "UnknownItemError",
    "read_records",
    "record_format",
    "type_label",
]

#: FlowFiles a queue listing returns at most per page (NiFi lists the first 100).
MAX_PAGE = 1_000
#: uuid -> (queue, segment) entries kept from listings, for the FlowFile dialog.
MAX_REMEMBERED = 100_000
#: Queued FlowFiles a lookup by uuid reads at most when no listing has shown it (20 segments).
MAX_SCANNED = 200_000
#: Records the content viewer shows at most (its CSV table shows 1,000 rows too).
MAX_RECORDS = 1_000
#: JSON text of the records shown at most (NiFi's viewer stops formatting Avro past 2 MB).
MAX_RECORD_JSON = 2 * 1024 * 1024
#: Parquet content the viewer reads at most: the footer that says where the rows are is at the
#: end, so the whole file is read; a bigger one is offered for download.
MAX_PARQUET = 32 * 1024 * 1024
#: Decoded bytes the viewer reads at most to show its records: a few KB of compressed content
#: can hold gigabytes (one 200 MB string deflates to 200 KB), so Avro blocks' and Parquet row
#: groups' decompressed sizes are checked before they are decompressed.
MAX_DECODED = 64 * 1024 * 1024
#: Values (array items, map entries, record fields) the viewer decodes at most to show its
#: records: an Avro array of nulls costs no byte per item, so 10 bytes can declare 10^9 of them
#: (each a Python object, ~80 bytes with the table and JSON built from it). A million is ~1,000
#: per record shown.
MAX_VALUES = 1_000_000
#: Characters of one table cell shown at most (a longer value is cut, and the message says so).
MAX_CELL = 4 * 1024
#: ``mime.type`` values naming Avro (NiFi's content viewer's, and flowcore's AvroRecordSetWriter's).
AVRO_TYPES = frozenset(
    {"avro/binary", "application/avro-binary", "application/avro+binary", "application/avro"}
)
#: ``mime.type`` values naming Parquet (ParquetRecordSetWriter writes ``application/parquet``).
PARQUET_TYPES = frozenset(
    {"application/parquet", "application/vnd.apache.parquet", "application/x-parquet"}
)
_GONE = "the content is gone from the content repository and its archive"
_AVRO_MAGIC = b"Obj\x01"
_PARQUET_MAGIC = b"PAR1"
#: How the viewer writes dates, times and timestamps (NiFi's default formats), not epoch millis,
#: and NaN and infinities: Jackson's strings ("NaN"), where NiFi's writer would fail the FlowFile.
_VIEWER_JSON: dict[str, Any] = {
    "date_format": "yyyy-MM-dd",
    "time_format": "HH:mm:ss",
    "timestamp_format": "yyyy-MM-dd HH:mm:ss.SSS",
    "quote_non_finite": True,
}


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


@attrs.frozen
class RecordColumn:
    """A column of the record table: a field's name and its NiFi record type (``LONG``...)."""

    name: str
    type: str


@attrs.frozen
class RecordView:
    """Avro or Parquet content as the viewer shows it: a table, and the records as NiFi's JSON.

    Attributes:
        format: ``avro``, ``parquet``, or None when the content is neither.
        columns: the record schema's fields, in order.
        rows: one tuple per record shown: each field's value as text (a string as it is,
            anything else as its JSON), None for null.
        json: the records shown as a pretty-printed JSON array (NiFi's JsonRecordSetWriter).
        total: the records the content holds, when known (Parquet's footer says; Avro's
            blocks must be read to tell).
        complete: every record of the content is shown.
        message: one line for the viewer when not all is shown, or the content is unreadable.
    """

    format: str | None
    columns: tuple[RecordColumn, ...] = ()
    rows: tuple[tuple[str | None, ...], ...] = ()
    json: str = ""
    total: int | None = None
    complete: bool = False
    message: str | None = None


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
        if not all(self.content.exists(c) for c in claim.resource_claims):
            raise UnknownItemError(_GONE)
        try:
            return self.content.open(claim)
        except ContentNotFoundError:
            raise UnknownItemError(_GONE) from None

    def records(self, claim: Any, attributes: Mapping[str, str], window: int) -> RecordView:
        """The records of Avro or Parquet content, for the viewer.

        Avro is read from the first *window* bytes (the viewer's); Parquet whole, when it is at
        most :data:`MAX_PARQUET` (its footer is at its end). Bare Avro datums (no ``Obj``
        header: AvroRecordSetWriter's "Schema Write Strategy" other than embedded) are read
        by the FlowFile's ``avro.schema`` attribute. Content of another format, damaged (its
        claim file cut short or overwritten), too big to decode, or holding values the viewer
        cannot write gives a view with a one-line ``message`` rather than an error.

        Raises:
            UnknownItemError: the content is gone from the repository and its archive (its
                claim file was removed, before or while it was read): the API answers 404, as
                for the content itself.
        """
        if claim is None:
            return RecordView(None, total=0, complete=True, message="the content is empty")
        size = claim.length
        stream = None
        try:
            stream = self.open_content(claim)
            head = stream.read(4)
            mime = attributes.get("mime.type")
            kind = record_format(head, mime)
            if kind is None:
                return RecordView(None, message=_not_records(mime))
            if kind == "parquet" and size > MAX_PARQUET:
                msg = (
                    f"this Parquet file is {size:,} bytes; the viewer reads Parquet up to "
                    f"{MAX_PARQUET:,} bytes (its footer is at the end): download it to see its "
                    "records"
                )
                return RecordView(kind, message=msg)
            limit = size if kind == "parquet" else min(size, window)
            data = head + stream.read(max(0, limit - len(head)))
        except UnknownItemError:
            raise
        except ContentNotFoundError:  # removed since open_content looked
            raise UnknownItemError(_GONE) from None
        except FlowcoreError as exc:  # damaged content: the repository names the claim file
            return RecordView(None, message=f"the content cannot be read: {one_line(exc)}")
        finally:
            if stream is not None:
                stream.close()
        schema = attributes.get("avro.schema") if kind == "avro" else None
        return read_records(data, kind, whole=len(data) >= size, avro_schema=schema)

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


# --- records -----------------------------------------------------------------------------------


def record_format(head: bytes, mime: str | None) -> str | None:
    r"""``avro`` or ``parquet`` when content starting with *head* is one, by its magic or *mime*.

    The magic wins: an Avro object container file starts with ``Obj\x01`` and a Parquet file
    with ``PAR1``; without it the ``mime.type`` decides (bare Avro datums cannot be read without
    their schema, and the reader then says so).
    """
    if head.startswith(_AVRO_MAGIC):
        return "avro"
    if head.startswith(_PARQUET_MAGIC):
        return "parquet"
    media = (mime or "").split(";")[0].strip().lower()
    if media in AVRO_TYPES:
        return "avro"
    if media in PARQUET_TYPES:
        return "parquet"
    return None


def read_records(
    data: bytes, kind: str, *, whole: bool = True, avro_schema: str | None = None
) -> RecordView:
    """The first :data:`MAX_RECORDS` records of Avro or Parquet *data*, read by flowcore's readers.

    Args:
        data: the content, or (``whole`` False) its first bytes only: Avro blocks past them
            are not shown and that is no error.
        kind: ``avro`` or ``parquet``.
        whole: *data* is all of the content.
        avro_schema: the Avro schema's JSON text, to read bare datums by (an ``Obj`` data
            file carries its own and is read by it).
    """
    name = "Avro" if kind == "avro" else "Parquet"
    try:
        schema = None
        if avro_schema and not data.startswith(_AVRO_MAGIC):
            schema = _schema_of(avro_schema)
        first = first_records(
            data,
            kind,
            whole=whole,
            schema=schema,
            count=MAX_RECORDS,
            max_decoded=MAX_DECODED,
            max_values=MAX_VALUES,
        )
    except TooBigToShowError as exc:
        return RecordView(kind, message=str(exc))
    except Exception as exc:  # fastavro and pyarrow raise many kinds on bad bytes
        if not whole:  # the viewer's window ends inside the Avro header
            first = FirstRecords(None)
        else:
            reason = one_line(exc)
            return RecordView(kind, message=f"this is not readable {name} content: {reason}")
    batch, total, damage = first.batch, first.total, first.damage
    if batch is None:
        if damage is None and not whole:
            damage = (
                f"the first {len(data):,} bytes the viewer reads hold no whole {name} block; "
                "download the content to see its records"
            )
        message = damage or f"this {name} content holds no records"
        return RecordView(kind, total=total, complete=damage is None, message=message)
    try:
        return _view(batch, kind, size=len(data), whole=whole, total=total, damage=damage)
    except Exception as exc:  # values the JSON writer cannot write: durations, far timestamps...
        reason = one_line(exc)
        return RecordView(kind, total=total, message=f"these records cannot be shown: {reason}")


def _view(
    batch: pa.RecordBatch,
    kind: str,
    *,
    size: int,
    whole: bool,
    total: int | None,
    damage: str | None,
) -> RecordView:
    """The view of records read: cells and JSON cut to their bounds, the message saying so."""
    batch, cut = cut_strings(batch, MAX_CELL)
    shown, json_text, json_cut = _as_json(batch)
    schema = RecordSchema.from_arrow(batch.schema)
    columns = tuple(RecordColumn(f.name, type_label(f.type)) for f in schema.fields)
    rows = tuple(tuple(_cell(record.get(c.name)) for c in columns) for record in shown)
    cut = cut or any(c is not None and len(c) > MAX_CELL for row in rows for c in row)
    if cut:
        rows = tuple(tuple(_clip(c) for c in row) for row in rows)
    complete = damage is None and whole and total is not None and len(shown) == total
    complete = complete and not cut and not json_cut
    message = damage
    if message is None and (len(shown) != total or not whole):
        of = f" of {total:,}" if total is not None else ""
        where = "" if whole else f" in the first {size:,} bytes"
        message = f"the first {len(shown):,}{of} records{where}; download the content for all"
    notes = [message] if message else []
    if cut:
        notes.append(f"values longer than {MAX_CELL:,} characters are cut")
    if json_cut:
        notes.append(f"the JSON is cut at {MAX_RECORD_JSON:,} characters")
    return RecordView(kind, columns, rows, json_text, total, complete, "; ".join(notes) or None)


def type_label(dtype: DataType | None) -> str:
    """A NiFi record type as the viewer's header names it: ``LONG``, ``DECIMAL(10,2)``..."""
    if isinstance(dtype, DecimalType):
        return f"DECIMAL({dtype.precision},{dtype.scale})"
    if isinstance(dtype, ArrayType):
        return f"ARRAY[{type_label(dtype.element)}]"
    if isinstance(dtype, MapType):
        return f"MAP<{type_label(dtype.value)}>"
    if isinstance(dtype, ChoiceType):
        return f"CHOICE[{', '.join(type_label(o) for o in dtype.options)}]"
    return "NONE" if dtype is None else dtype.name.upper()  # STRING, RECORD, ENUM...


def _schema_of(text: str) -> dict[str, Any]:
    try:
        return json.loads(text)
    except ValueError as exc:
        msg = f"its avro.schema attribute is not JSON ({exc})"
        raise RecordError(msg) from None


class _Number(str):
    """A JSON number's text, kept as written (a long past 2**53, a decimal's scale)."""

    __slots__ = ()


def _as_json(batch: pa.RecordBatch) -> tuple[list[dict[str, Any]], str, bool]:
    """The records shown (MAX_RECORDS, MAX_RECORD_JSON of JSON at most), their JSON, and a cut.

    The one-line JSON is written a few records at a time and stops at the bound, so records past
    it are never written; the pretty JSON of those kept is cut at MAX_RECORD_JSON too, and the
    third value says whether it was.
    """
    options = JsonWriterOptions(output_grouping=OUTPUT_ONELINE, **_VIEWER_JSON)
    records: list[dict[str, Any]] = []
    length, start, step, full = 0, 0, 8, False
    while not full and start < min(batch.num_rows, MAX_RECORDS):
        lines = io.BytesIO()
        write_json([batch.slice(start, min(step, MAX_RECORDS - start))], lines, options)
        start, step = start + step, step * 2
        for line in lines.getvalue().decode().split("\n"):  # control characters come escaped
            if not line:
                continue
            length += len(line)
            if records and length > MAX_RECORD_JSON:
                full = True
                break
            records.append(json.loads(line, parse_int=_Number, parse_float=_Number))
    pretty = io.BytesIO()
    write_json(
        [batch.slice(0, len(records))], pretty, JsonWriterOptions(pretty_print=True, **_VIEWER_JSON)
    )
    text = pretty.getvalue().decode()
    if len(text) > MAX_RECORD_JSON:
        return records, text[:MAX_RECORD_JSON], True
    return records, text, False


def _clip(text: str | None) -> str | None:
    """*text* cut to :data:`MAX_CELL` characters, an ellipsis marking the cut."""
    if text is None or len(text) <= MAX_CELL:
        return text
    return text[:MAX_CELL] + "…"


def _cell(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and not isinstance(value, _Number):
        return value
    return _compact(value)


def _compact(value: Any) -> str:
    """*value* as compact JSON, numbers as the writer wrote them."""
    if isinstance(value, _Number):
        return str(value)
    if isinstance(value, dict):
        items = ",".join(f"{_compact(str(k))}:{_compact(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ",".join(_compact(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _not_records(mime: str | None) -> str:
    said = f" and its mime.type is {mime!r}" if mime else ""
    return (
        "this content is neither Avro (an 'Obj' header) nor Parquet ('PAR1')"
        f"{said}; view it as text or hex"
    )
