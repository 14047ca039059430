"""FileSplitter: large files as blocks read in parallel, zero-copy, with exactly-once listing.

Modelled on Apex Malhar's FileSplitter and BlockReader, in NiFi's terms: a source whose driver
side lists files and cuts them into nominal blocks without opening them, and whose task side
turns one block into a FlowFile. With the ``Lines`` record reader the task reads a few bytes at
each end of its block to move the ends to line boundaries (Hadoop's rule, in
:mod:`processors._blocks`), so every line is in exactly one block. With a Header Line Count
(CSV files), every block's content starts with the file's header lines, zero-copy, so each block
parses on its own.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs

from flowcore.errors import ContentNotFoundError
from flowcore.expression import contains_expression
from flowcore.flowfile import ContentClaim
from flowcore.flowfile_batch import BatchMaker, FlowFileBatch
from flowcore.patterns import compile_pattern
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import PendingWork, SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDependency, PropertyDescriptor
from flowcore.session.external_files import fingerprint_of, range_claim
from flowcore.session.process_session import ProcessSession
from flowcore.units import parse_data_size
from flowcore.validators import (
    BOOLEAN_VALIDATOR,
    DATA_SIZE_VALIDATOR,
    NON_EMPTY_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    POSITIVE_INTEGER_VALIDATOR,
    REGULAR_EXPRESSION_VALIDATOR,
    TIME_PERIOD_VALIDATOR,
    ValidationResult,
    missing_directory,
)
from processors._blocks import (
    RecordReader,
    aligned_range,
    block_count,
    header_end,
    nominal_block,
    split_header,
)
from processors._file_attributes import (
    file_attributes,
    key_path,
    path_key,
    readable,
    text_of,
    walk_files,
)

__all__ = ["FileSplitter"]

_COPY_CHUNK = 1 << 20
_NEXT_BLOCK_ID = "#next.block.id"  # the state key of the block id counter
_FRAGMENT_NAMESPACE = uuid.UUID("7d1f8a52-54f4-4a57-9d0e-2f8a6c3b9e11")

FILES = Relationship("files", "One FlowFile per file listed, without content: its metadata")
BLOCKS = Relationship(
    "blocks",
    "One FlowFile per block; its content is the block's byte range of the file, after the "
    "file's header lines when Header Line Count is set (zero-copy unless Copy Into Repository "
    "is true)",
)
FAILURE = Relationship(
    "failure",
    "Blocks whose file changed or disappeared between listing and reading, without content; "
    "block.failure.reason says why",
)


class FileSplitter(SourceProcessor):
    """Splits files into blocks without reading them, for parallel reading downstream.

    The driver scans the input every Scan Interval for new files and files whose size,
    modification time or inode changed, cuts each into Block Size blocks and emits up to Blocks
    Threshold blocks per micro-batch. Each file gives one FlowFile to ``files`` (its metadata)
    and one per block to ``blocks``, carrying ``fragment.*`` attributes so MergeContent's
    Defragment strategy reassembles the file. What was listed and emitted is processor state,
    committed with the FlowFiles: a restart neither skips nor repeats a block.

    A block's content is a range of the original file (an external claim guarded by the file's
    size, mtime and inode), read lazily by whoever processes it. A block whose file changed
    before it was split goes to ``failure``; one whose file changes later fails when read.
    Copy Into Repository copies each block into the content repository instead.
    """

    identifies_work: ClassVar[bool] = True

    DIRECTORY = PropertyDescriptor(
        "Input Directory",
        description="Comma-separated directories or files to split; directories are scanned "
        "for files whose names match the File Filter",
        required=True,
        validators=(NON_EMPTY_VALIDATOR,),
        el_scope=ExpressionLanguageScope.ENVIRONMENT,
    )
    RECURSIVE = PropertyDescriptor(
        "Recursive",
        description="Whether sub-directories of the input directories are scanned too",
        required=True,
        default="true",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    FILE_FILTER = PropertyDescriptor(
        "File Filter",
        description="Only files whose names match this regular expression are split (hidden "
        "files are skipped by the default)",
        required=True,
        default=r"[^\.].*",
        validators=(REGULAR_EXPRESSION_VALIDATOR,),
    )
    SCAN_INTERVAL = PropertyDescriptor(
        "Scan Interval",
        description="How long to wait between scans of the input for new or changed files",
        required=True,
        default="5 sec",
        validators=(TIME_PERIOD_VALIDATOR,),
    )
    BLOCK_SIZE = PropertyDescriptor(
        "Block Size",
        description="The nominal size of a block; the record reader moves its ends to record "
        "boundaries",
        required=True,
        default="64 MB",
        validators=(DATA_SIZE_VALIDATOR,),
    )
    BLOCKS_THRESHOLD = PropertyDescriptor(
        "Blocks Threshold",
        description="The most blocks emitted per micro-batch, which throttles the work "
        "downstream (16 blocks of 64 MB make 1 GB, the engine's default batch size)",
        required=True,
        default="16",
        validators=(POSITIVE_INTEGER_VALIDATOR,),
    )
    RECORD_READER = PropertyDescriptor(
        "Record Reader",
        description="How block ends move to record boundaries: Lines (each line in exactly one "
        "block, Hadoop's rule), Fixed Length (records of Record Length bytes) or None (raw "
        "byte blocks)",
        required=True,
        default=RecordReader.LINES.value,
        allowable_values=tuple(r.value for r in RecordReader),
    )
    RECORD_LENGTH = PropertyDescriptor(
        "Record Length",
        description="The size of one record, for the Fixed Length record reader",
        required=True,
        validators=(DATA_SIZE_VALIDATOR,),
        dependencies=(PropertyDependency("Record Reader", (RecordReader.FIXED_LENGTH.value,)),),
    )
    HEADER_LINE_COUNT = PropertyDescriptor(
        "Header Line Count",
        description="The number of lines at the start of each file that are its header (a CSV "
        "file's column names: 1); every block's content starts with them, so each block parses "
        "alone, and they are no block's records. SplitText's property of the same name",
        required=True,
        default="0",
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
        dependencies=(PropertyDependency("Record Reader", (RecordReader.LINES.value,)),),
    )
    COPY = PropertyDescriptor(
        "Copy Into Repository",
        description="Copy each block into the content repository instead of pointing at the "
        "original file; use it for files that may change or disappear before the flow has "
        "processed them",
        required=True,
        default="false",
        allowable_values=("true", "false"),
        validators=(BOOLEAN_VALIDATOR,),
    )
    property_descriptors: ClassVar = (
        DIRECTORY,
        RECURSIVE,
        FILE_FILTER,
        SCAN_INTERVAL,
        BLOCK_SIZE,
        BLOCKS_THRESHOLD,
        RECORD_READER,
        RECORD_LENGTH,
        HEADER_LINE_COUNT,
        COPY,
    )
    relationships: ClassVar = (FILES, BLOCKS, FAILURE)
    tags: ClassVar = ("files", "split", "block", "large", "parallel", "ingest", "source")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "filename": "The file's name",
        "path": "The file's directory relative to the input directory it was found in",
        "absolute.path": "The absolute path of the file's directory",
        "file.path": "The file's absolute path",
        "file.size": "The file's size in bytes",
        "file.lastModifiedTime": "When the file was last modified",
        "block.count": "(files) How many blocks the file was cut into",
        "block.ids": "(files) The ids of the file's blocks, comma-separated",
        "block.id": "(blocks) The block's id, unique in this processor's state",
        "block.offset": "(blocks) Where the block's bytes start in the file",
        "block.length": "(blocks) How many bytes of the file the block holds (its header not "
        "counted)",
        "block.header.length": "(blocks, with Header Line Count) How many bytes of header lines "
        "come before the block's own bytes in its content (0 for the first block, which holds "
        "them, and for a block with no line of its own)",
        "fragment.identifier": "The same for the file and all its blocks (one per file version)",
        "fragment.index": "(blocks) The block's position in the file, from 1",
        "fragment.count": "(blocks) How many blocks the file has",
        "segment.original.filename": "(blocks) The file's name, for MergeContent Defragment",
        "block.failure.reason": "(failure) Why the block could not be split",
    }

    def __init__(self, **properties: object) -> None:
        super().__init__(**properties)
        self._last_scan_ms: int | None = None

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["_last_scan_ms"] = None  # the scanner's schedule lives on the driver
        return state

    # --- validation -------------------------------------------------------------------------

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """Every input must exist; Block Size and Record Length must be at least one byte."""
        problems = self._missing_inputs(values.get(self.DIRECTORY.name))
        for descriptor in (self.BLOCK_SIZE, self.RECORD_LENGTH):
            text = values.get(descriptor.name)
            if not text or not DATA_SIZE_VALIDATOR(descriptor.display_name, text).valid:
                continue  # unset, or already reported by the property's own validator
            if parse_data_size(text, "B") < 1:
                problems.append(
                    ValidationResult(
                        descriptor.display_name,
                        text,
                        False,
                        f"{descriptor.display_name} must be at least 1 B; give a size such as "
                        f"{descriptor.default or '100 B'}",
                    )
                )
        return problems

    def _missing_inputs(self, text: str | None) -> list[ValidationResult]:
        """Each comma-separated input that is neither a file nor a directory.

        NiFi's rule for a directory a source reads: it must exist, unless Expression Language
        names it.
        """
        if not text or contains_expression(text):
            return []
        problems = []
        for part in (p.strip() for p in text.split(",")):
            if not part or os.path.isfile(part):
                continue
            why = missing_directory(part)
            if why is not None:
                name = self.DIRECTORY.display_name
                problems.append(ValidationResult(name, text, False, why))
        return problems

    # --- the driver: scanning and listing ---------------------------------------------------

    def _inputs(self, context: ProcessContext) -> list[Path]:
        text = context.get_property(self.DIRECTORY).evaluate_attribute_expressions().value or ""
        return [Path(part.strip()).resolve() for part in text.split(",") if part.strip()]

    def _scan(self, context: ProcessContext) -> Iterator[tuple[Path, Path, os.stat_result]]:
        """``(root, path, stat)`` of every file to split, in a stable order."""
        file_filter = compile_pattern(context.get_property(self.FILE_FILTER).value or ".*")
        recursive = context.get_property(self.RECURSIVE).as_boolean()
        for entry in self._inputs(context):
            if entry.is_file():
                yield entry.parent, entry, entry.stat()
                continue
            if not entry.is_dir():
                context.logger.warning("Input %s is neither a file nor a directory", entry)
                continue
            for path, info in walk_files(entry, recursive=recursive, name_filter=file_filter):
                if readable(path, context.logger):
                    yield entry, path, info

    def _rescan(
        self, context: ProcessContext, files: dict[str, dict[str, Any]], next_id: int
    ) -> int:
        """Track new and changed files; forget the ones that are gone. Returns the next id."""
        block_size = int(context.get_property(self.BLOCK_SIZE).as_data_size("B") or 1)
        seen: set[str] = set()
        for root, path, info in self._scan(context):
            key = path_key(path)
            seen.add(key)
            fingerprint = fingerprint_of(info)
            known = files.get(key)
            if known is not None and known["fp"] == fingerprint:
                continue
            count = block_count(info.st_size, block_size)
            files[key] = {
                "fp": fingerprint,
                "root": str(root),
                "block_size": block_size,
                "count": count,
                "first": next_id,
                "next": 0,
                "id": str(uuid.uuid5(_FRAGMENT_NAMESPACE, f"{key}\0{fingerprint}")),
            }
            next_id += count
        for key in [k for k in files if k not in seen]:
            del files[key]
        return next_id

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """Scan when the Scan Interval has passed, then list up to Blocks Threshold blocks."""
        files = {k: json.loads(v) for k, v in state.items() if k != _NEXT_BLOCK_ID}
        next_id = int(state.get(_NEXT_BLOCK_ID, "0"))
        now = context.now()
        interval = context.get_property(self.SCAN_INTERVAL).as_time_period("ms") or 0
        if self._last_scan_ms is None or now - self._last_scan_ms >= interval:
            self._last_scan_ms = now
            next_id = self._rescan(context, files, next_id)
        budget = context.get_property(self.BLOCKS_THRESHOLD).as_integer() or 1
        items: list[WorkItem] = []
        for key, entry in sorted(files.items(), key=lambda kv: kv[1]["first"]):
            retry = entry.get("retry", [])
            while retry and len(items) < budget:  # blocks whose read failed, first
                index = retry.pop(0)
                job = {k: v for k, v in entry.items() if k != "retry"}
                items.append(WorkItem(f"{key}#{index + 1}", {"path": key, "index": index, **job}))
            if not retry:
                entry.pop("retry", None)
            while entry["next"] < entry["count"] and len(items) < budget:
                index = entry["next"]
                items.append(WorkItem(f"{key}#{index + 1}", {"path": key, "index": index, **entry}))
                entry["next"] = index + 1
            if len(items) >= budget:
                break
        new_state = {k: json.dumps(v, sort_keys=True) for k, v in files.items()}
        new_state[_NEXT_BLOCK_ID] = str(next_id)
        return WorkListing(tuple(items), new_state)

    def pending_work(self, context: ProcessContext, state: Mapping[str, str]) -> PendingWork | None:
        """The blocks of scanned files not listed yet (failed ones included); None before a scan.

        Only their count is known: a block's bytes are found when it is read (lines cross its
        ends).
        """
        del context
        if self._last_scan_ms is None:
            return None
        blocks = 0
        for key, text in state.items():
            if key != _NEXT_BLOCK_ID:
                entry = json.loads(text)
                blocks += entry["count"] - entry["next"] + len(entry.get("retry", ()))
        return PendingWork(blocks)

    def requeue_work(
        self,
        state: Mapping[str, str],
        items: Sequence[WorkItem],
        committed: Mapping[str, str],
    ) -> Mapping[str, str]:
        """Blocks whose read failed are listed again, before the file's next blocks."""
        del committed
        restored = dict(state)
        for item in items:
            path, index = item.payload["path"], int(item.payload["index"])
            text = restored.get(path)
            if text is None:  # the file is gone from the listing: nothing to read again
                continue
            entry = json.loads(text)
            if entry["fp"] != item.payload["fp"]:
                continue  # it changed since: the new version is split from the start
            entry["retry"] = sorted({*entry.get("retry", []), index})
            restored[path] = json.dumps(entry, sort_keys=True)
        return restored

    # --- the task: blocks -------------------------------------------------------------------

    def _reading(self, context: ProcessContext) -> tuple[RecordReader, int]:
        """The Record Reader and its record length (1 unless Fixed Length)."""
        reader = RecordReader(context.get_property(self.RECORD_READER).value)
        record_length = 1
        if reader is RecordReader.FIXED_LENGTH:
            record_length = int(context.get_property(self.RECORD_LENGTH).as_data_size("B") or 1)
        return reader, record_length

    def _header_lines(self, context: ProcessContext) -> int:
        """Header Line Count, which only the Lines reader reads by (0 otherwise)."""
        if RecordReader(context.get_property(self.RECORD_READER).value) is not RecordReader.LINES:
            return 0
        return context.get_property(self.HEADER_LINE_COUNT).as_integer() or 0

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """Emit the block (and, for a file's first block, the file's FlowFile).

        With header lines, a block other than the first reads as the header followed by its own
        lines: a rope of two ranges of the file (zero-copy), or both copied.
        """
        job, path, index, count, first, identity = _block_job(item)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            _fail(session, identity, _gone(path))
            return
        try:
            info = os.fstat(fd)
            if fingerprint_of(info) != job["fp"]:
                _fail(session, identity, _changed(path, job["fp"], info))
                return
            described = _described(job, path, info)
            if index == 0:
                _emit_file(session, described, count, first)
            started = time.monotonic()
            start, end = self._aligned(context, fd, job, info)
            headers = self._header_lines(context)
            header = 0
            if headers:
                found = header_end(fd, headers, info.st_size)
                header, start, end = split_header(start, end, found)
            block = session.create()
            if context.get_property(self.COPY).as_boolean():
                block = session.write(block, _range_copier(fd, ((0, header), (start, end))))
            elif header:
                pieces = [
                    range_claim(path, 0, header, job["fp"]),
                    range_claim(path, start, end - start, job["fp"]),
                ]
                block = session.merge_contents(pieces, block, zero_copy=True)
            else:
                block = session.import_by_reference(
                    path, block, offset=start, length=end - start, fingerprint=job["fp"]
                )
        finally:
            os.close(fd)
        attributes = _block_attributes(described, identity, start, end)
        if headers:
            attributes["block.header.length"] = str(header)
        block = session.put_all_attributes(block, attributes)
        elapsed_ms = int((time.monotonic() - started) * 1000)
        session.provenance.receive(
            block, path.as_uri(), details=_details(index, count, start, end), duration_ms=elapsed_ms
        )
        session.transfer(block, BLOCKS)

    def _aligned(
        self, context: ProcessContext, fd: int, job: Mapping[str, Any], info: os.stat_result
    ) -> tuple[int, int]:
        """The block's byte range, its ends moved to record boundaries."""
        offset, length = nominal_block(info.st_size, int(job["block_size"]), int(job["index"]))
        reader, record_length = self._reading(context)
        return aligned_range(
            fd, offset, length, info.st_size, reader=reader, record_length=record_length
        )

    def read_work_batches(
        self, context: ProcessContext, items: Sequence[WorkItem], maker: BatchMaker
    ) -> list[tuple[str, FlowFileBatch]]:
        """A task's blocks as batches: :meth:`read_work`'s FlowFiles, without a session each.

        Blocks (zero-copy ranges, or copied into the task's appendable claims with Copy Into
        Repository) with a RECEIVE event each, the FlowFiles of files whose first block is
        among them, and blocks that failed, each as :meth:`read_work` makes them. A block whose
        read raises is listed again, with its file's FlowFile, as one by one. Declined with
        header lines: a batch's FlowFiles point into one claim range each, not a rope.
        """
        if self._header_lines(context):
            return None
        copy = bool(context.get_property(self.COPY).as_boolean())
        blocks: list[_Block] = []
        files: list[dict[str, str]] = []
        failures: list[dict[str, str]] = []
        for item in items:
            try:
                read = self._read_block(context, item, maker, copy=copy)
            except Exception as error:  # a rolled-back session's item: listed again
                maker.unread(item, error)
                continue
            if isinstance(read, dict):
                failures.append(read)
                continue
            if read.file is not None:
                files.append(read.file)
            blocks.append(read)
        # Made in read_work's order, file before its first block, so that a block read alone
        # gets its session's uuids; returned block batches first, in its events' order.
        made_files = maker.create_rows([None] * len(files), files)
        made = maker.create_rows([b.content for b in blocks], [b.attributes for b in blocks])
        at = 0
        for batch in made:
            part = blocks[at : at + batch.count]
            maker.report_receive(
                batch,
                [b.uri for b in part],
                details=[b.details for b in part],
                durations_ms=[b.duration_ms for b in part],
            )
            at += batch.count
        made_failures = maker.create_rows([None] * len(failures), failures)
        return [
            *((BLOCKS.name, batch) for batch in made),
            *((FILES.name, batch) for batch in made_files),
            *((FAILURE.name, batch) for batch in made_failures),
        ]

    def _read_block(
        self, context: ProcessContext, item: WorkItem, maker: BatchMaker, *, copy: bool
    ) -> _Block | dict[str, str]:
        """One block as :meth:`read_work` reads it; a failed block's attributes instead."""
        job, path, index, count, first, identity = _block_job(item)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return {**identity, "block.failure.reason": _gone(path)}
        try:
            info = os.fstat(fd)
            if fingerprint_of(info) != job["fp"]:
                return {**identity, "block.failure.reason": _changed(path, job["fp"], info)}
            described = _described(job, path, info)
            started = time.monotonic()
            start, end = self._aligned(context, fd, job, info)
            if copy:
                content = maker.write(_range_copier(fd, ((start, end),)))
            else:
                content = maker.reference(path, start, end - start, job["fp"])
        finally:
            os.close(fd)
        return _Block(
            file=_file_flowfile_attributes(described, count, first) if index == 0 else None,
            content=content,
            attributes=_block_attributes(described, identity, start, end),
            uri=path.as_uri(),
            details=_details(index, count, start, end),
            duration_ms=int((time.monotonic() - started) * 1000),
        )


@attrs.frozen
class _Block:
    """One block read by the batch form: its FlowFile's makings, and its file's when first."""

    file: dict[str, str] | None
    content: ContentClaim | None
    attributes: dict[str, str]
    uri: str
    details: str
    duration_ms: int


def _block_job(item: WorkItem) -> tuple[Mapping[str, Any], Path, int, int, int, dict[str, str]]:
    """What a block's work item names, where both of its readers start.

    Its job, file, index, block count, first block, and the file's identifying attributes.
    """
    job = item.payload
    path = key_path(job["path"])
    index, count, first = int(job["index"]), int(job["count"]), int(job["first"])
    return job, path, index, count, first, _identity(job, path)


def _identity(job: Mapping[str, Any], path: Path) -> dict[str, str]:
    """The attributes naming a block: on it, and on its failure FlowFile."""
    index, count, first = int(job["index"]), int(job["count"]), int(job["first"])
    return {
        "filename": text_of(path.name),
        "file.path": text_of(str(path)),
        "fragment.identifier": job["id"],
        "block.id": str(first + index),
        "fragment.index": str(index + 1),
        "fragment.count": str(count),
    }


def _described(job: Mapping[str, Any], path: Path, info: os.stat_result) -> dict[str, str]:
    """The file's attributes, on its FlowFile and on each of its blocks."""
    return {
        **file_attributes(path, Path(job["root"]), info),
        "file.path": text_of(str(path)),
        "fragment.identifier": job["id"],
    }


def _block_attributes(
    described: Mapping[str, str], identity: Mapping[str, str], start: int, end: int
) -> dict[str, str]:
    """A block FlowFile's attributes."""
    return {
        **described,
        **identity,
        "block.offset": str(start),
        "block.length": str(end - start),
        "segment.original.filename": identity["filename"],
    }


def _details(index: int, count: int, start: int, end: int) -> str:
    """A block's RECEIVE details."""
    return f"block {index + 1} of {count}: bytes {start}-{end}"


def _gone(path: Path) -> str:
    return f"{path} disappeared before it was split"


def _changed(path: Path, listed: str, info: os.stat_result) -> str:
    return (
        f"{path} changed after it was listed (size:mtime_ns:inode was {listed}, "
        f"is {fingerprint_of(info)}); the new version is split again"
    )


def _file_flowfile_attributes(
    attributes: Mapping[str, str], count: int, first: int
) -> dict[str, str]:
    """The file's own FlowFile's attributes: its metadata and its block ids."""
    ids = ",".join(str(i) for i in range(first, first + count))
    return {**attributes, "block.count": str(count), "block.ids": ids}


def _emit_file(
    session: ProcessSession, attributes: Mapping[str, str], count: int, first: int
) -> None:
    """The file's own FlowFile: its metadata and its block ids, no content."""
    metadata = session.put_all_attributes(
        session.create(), _file_flowfile_attributes(attributes, count, first)
    )
    session.transfer(metadata, FILES)


def _fail(session: ProcessSession, identity: Mapping[str, str], reason: str) -> None:
    """Send a block that could not be split to failure, without content, saying why."""
    failed = session.put_all_attributes(
        session.create(), {**identity, "block.failure.reason": reason}
    )
    session.transfer(failed, FAILURE)


def _range_copier(fd: int, ranges: Sequence[tuple[int, int]]) -> Any:
    """A write callback copying each ``[start, end)`` of *fd* in turn, in chunks."""

    def copy(out: Any) -> None:
        for start, end in ranges:
            at = start
            while at < end:
                chunk = os.pread(fd, min(_COPY_CHUNK, end - at), at)
                if not chunk:
                    msg = f"the file ended at byte {at}, before the block's end at {end}"
                    raise ContentNotFoundError(msg)
                out.write(chunk)
                at += len(chunk)

    return copy
