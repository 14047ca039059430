"""Queue segments: immutable files of FlowFile records, like NiFi's swap files.

A task writes the FlowFiles it sends to a queue as a segment (at most
:data:`~repositories.records.MAX_SEGMENT_RECORDS` records, or a whole
:class:`~flowcore.flowfile_batch.FlowFileBatch` as one), with a summary in its header: count,
bytes, the resource claims referenced, min and max FlowFile id. The driver keeps only summaries in
memory and names segments in write-ahead log transactions; a segment no transaction names is an
orphan of a failed or duplicate task attempt. Files are written under a ``.part`` name, fsynced
and renamed, so a segment file is whole or absent.
"""

from __future__ import annotations

import os
import struct
import uuid
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flowcore.errors import RepositoryError, WalCorruptionError
from flowcore.flowfile import Attributes, Content, ContentClaim, FlowFile, ResourceClaim, Rope
from flowcore.flowfile_batch import FlowFileBatch
from repositories._files import FileFormat, file_stem, read_header, write_atomically
from repositories._wal_codec import pack, unpack
from repositories.records import MAX_SEGMENT_RECORDS, SegmentSummary

__all__ = [
    "SEGMENT_SUFFIX",
    "batch_from_wire",
    "batch_to_wire",
    "decode_records",
    "encode_records",
    "read_segment",
    "read_segment_range",
    "read_segment_whole",
    "read_summary",
    "segment_path",
    "summary_from_wire",
    "summary_to_wire",
    "write_segment",
]

SEGMENT_MAGIC = b"FLOWCORE-SEG"
#: 2: columnar records with a claim table (ropes: index -2, pieces flat); 3: or a batch of alike
#: FlowFiles; 4: or a columnar FlowFile batch (arrays and attribute columns)
SEGMENT_VERSION = 4
_ROPE = -2  # the claim index of a record whose content is a rope
SEGMENT_SUFFIX = ".seg"
_HEAD = struct.Struct(">HII")  # version, header length, crc32 of header+records
_FORMAT = FileFormat("segment", SEGMENT_MAGIC, _HEAD, SEGMENT_VERSION, frozenset({2, 3}))


def claim_to_wire(claim: ResourceClaim) -> list[Any]:
    """A resource claim as a msgpack-friendly list."""
    return [claim.container, claim.section, claim.id]


def encode_records(flowfiles: Sequence[FlowFile]) -> tuple[list[Any], dict[ResourceClaim, int]]:
    """A segment body, column by column, and how many records reference each claim.

    Columns pack faster than one list per record (one comprehension per field instead of a
    list per FlowFile) and name each resource claim once, in a table the records index.
    """
    claims: dict[ResourceClaim, int] = {}  # claim -> its index in the table
    tally: list[int] = []  # references per claim, by index
    index, offsets, lengths = [], [], []
    last, position = None, -1
    for flowfile in flowfiles:
        content = flowfile.content
        if content is None:
            index.append(-1)
            offsets.append(0)
            lengths.append(0)
            continue
        if isinstance(content, Rope):
            # A rope: index _ROPE, and its pieces as one flat (claim, offset, length) list.
            flat = []
            for piece in content.pieces:
                found = claims.get(piece.resource_claim)
                if found is None:
                    found = claims[piece.resource_claim] = len(claims)
                    tally.append(0)
                tally[found] += 1
                flat.extend((found, piece.offset, piece.length))
            index.append(_ROPE)
            offsets.append(flat)
            lengths.append(content.length)
            continue
        rc = content.resource_claim
        if rc is not last:  # neighbours usually share a claim: skip hashing them
            found = claims.get(rc)
            if found is None:
                found = claims[rc] = len(claims)
                tally.append(0)
            last, position = rc, found
        tally[position] += 1
        index.append(position)
        offsets.append(content.offset)
        lengths.append(content.length)
    counts = dict(zip(claims, tally, strict=True))
    body = [
        [claim_to_wire(rc) for rc in claims],
        index,
        offsets,
        lengths,
        [f.id for f in flowfiles],
        [f.uuid for f in flowfiles],
        [f.attributes._data for f in flowfiles],  # the immutable maps' own dicts, not copies
        [f.size for f in flowfiles],
        [f.entry_date for f in flowfiles],
        [f.lineage_start_date for f in flowfiles],
        [f.lineage_start_index for f in flowfiles],
        [f.queue_date for f in flowfiles],
        [f.queue_date_index for f in flowfiles],
        [f.penalty_expiration for f in flowfiles],
    ]
    return body, counts


def batch_to_wire(batch: FlowFileBatch) -> dict[str, Any]:
    """A FlowFile batch as a segment body: one record for all of its FlowFiles."""
    return {"columns": batch.to_wire()}


def batch_from_wire(body: dict[str, Any]) -> FlowFileBatch:
    """The inverse of :func:`batch_to_wire`; format 3's batches of alike FlowFiles read too."""
    if "columns" in body:
        return FlowFileBatch.from_wire(body["columns"])
    count, first_id, key, first, attributes, named, rc, *rest = body["batch"]
    offset, stride, size, entry, lineage, queued, queue_index = rest
    return FlowFileBatch.alike(
        count=count,
        first_id=first_id,
        uuid_key=key,
        uuid_first=first,
        attributes=Attributes(attributes),
        uuid_named=tuple(named),
        resource_claim=ResourceClaim(*rc) if rc is not None else None,
        offset=offset,
        stride=stride,
        size=size,
        entry_date=entry,
        lineage_start_date=lineage,
        queue_date=queued,
        queue_date_index=queue_index,
    )


def decode_records(body: list[Any] | dict[str, Any]) -> list[FlowFile]:
    """The inverse of :func:`encode_records` (a batch's body is materialized)."""
    if isinstance(body, dict):
        return batch_from_wire(body).flowfiles()
    table, index, offsets, lengths, *columns = body
    claims = [ResourceClaim(*wire) for wire in table]
    flowfiles = []
    for position, offset, length, fid, uid, attributes, *dates in zip(
        index, offsets, lengths, *columns, strict=True
    ):
        size, entry, lineage, lineage_index, queued, queue_index, penalty = dates
        content: Content | None = None
        if position >= 0:
            content = ContentClaim(claims[position], offset, length)
        elif position == _ROPE:
            content = Rope(
                ContentClaim(claims[offset[i]], offset[i + 1], offset[i + 2])
                for i in range(0, len(offset), 3)
            )
        flowfiles.append(
            FlowFile(
                id=fid,
                uuid=uid,
                attributes=Attributes(attributes),
                content=content,
                size=size,
                entry_date=entry,
                lineage_start_date=lineage,
                lineage_start_index=lineage_index,
                queue_date=queued,
                queue_date_index=queue_index,
                penalty_expiration=penalty,
            )
        )
    return flowfiles


def summary_to_wire(summary: SegmentSummary) -> list[Any]:
    """A segment summary as a msgpack-friendly list (in transactions and checkpoints).

    ``batched`` is written only when set, so logs of plain segments read as before.
    """
    claims = [[*claim_to_wire(c), n] for c, n in summary.claim_counts]
    wire = [
        summary.segment_id,
        summary.queue_id,
        summary.count,
        summary.bytes,
        claims,
        summary.min_id,
        summary.max_id,
    ]
    return [*wire, True] if summary.batched else wire


def summary_from_wire(wire: list[Any]) -> SegmentSummary:
    """The inverse of :func:`summary_to_wire`."""
    segment_id, queue_id, count, size, claims, min_id, max_id, *rest = wire
    return SegmentSummary(
        segment_id,
        queue_id,
        count,
        size,
        [(ResourceClaim(c[0], c[1], c[2]), c[3]) for c in claims],
        min_id,
        max_id,
        batched=bool(rest and rest[0]),
    )


def segment_path(directory: str | os.PathLike[str], segment_id: str) -> Path:
    """Where segment *segment_id* lives in *directory*."""
    return Path(directory) / (segment_id + SEGMENT_SUFFIX)


def new_segment_id(owner: str) -> str:
    """A unique segment id naming its writer (a task attempt)."""
    return f"{file_stem(owner, 'segment')}-{uuid.uuid4().hex}"


def write_segment(
    directory: Path,
    queue_id: str,
    flowfiles: Sequence[FlowFile] | FlowFileBatch,
    *,
    owner: str = "",
    sync: bool = True,
) -> SegmentSummary:
    """Write *flowfiles* (or a batch of them, as one record) as a segment; return its summary.

    Raises:
        RepositoryError: more records than a segment holds.
    """
    if len(flowfiles) > MAX_SEGMENT_RECORDS:
        msg = (
            f"a segment holds at most {MAX_SEGMENT_RECORDS} FlowFiles, got {len(flowfiles)}; "
            "split the batch"
        )
        raise RepositoryError(msg)
    records: Any
    if isinstance(flowfiles, FlowFileBatch):
        records, counts = batch_to_wire(flowfiles), flowfiles.claim_counts()
        ids = flowfiles.ids
        size = flowfiles.bytes
        low, high = (int(ids.min()), int(ids.max())) if len(ids) else (0, 0)
    else:
        records, counts = encode_records(flowfiles)
        ids = records[4] or [0]
        size, low, high = sum(records[7]), min(ids), max(ids)
    summary = SegmentSummary(
        segment_id=new_segment_id(owner),
        queue_id=queue_id,
        count=len(flowfiles),
        bytes=size,
        claim_counts=counts,
        min_id=low,
        max_id=high,
        batched=isinstance(flowfiles, FlowFileBatch),
    )
    header = pack(summary_to_wire(summary))
    body = pack(records)
    crc = zlib.crc32(body, zlib.crc32(header))
    data = SEGMENT_MAGIC + _HEAD.pack(SEGMENT_VERSION, len(header), crc) + header + body
    directory.mkdir(exist_ok=True)  # never its parents: a moved repository is not made again
    write_atomically(segment_path(directory, summary.segment_id), data, sync=sync)
    return summary


def _parse(path: Path) -> tuple[SegmentSummary, bytes, bytes]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        msg = f"segment file {path} is missing"
        raise RepositoryError(msg) from None
    head = _FORMAT.start
    _, header_length, crc = read_header(path, data, _FORMAT)
    header = data[head : head + header_length]
    body = data[head + header_length :]
    if zlib.crc32(body, zlib.crc32(header)) != crc:
        msg = f"{path} is corrupt at offset {head}: its records fail their checksum"
        raise WalCorruptionError(msg)
    return summary_from_wire(unpack(header)), header, body


def read_summary(path: Path) -> SegmentSummary:
    """A segment file's summary (the whole file is verified)."""
    return _parse(path)[0]


def read_segment(path: Path) -> list[FlowFile]:
    """A segment file's FlowFiles, in order.

    Raises:
        RepositoryError: the file is missing.
        WalCorruptionError: the file is damaged.
    """
    read = read_segment_whole(path)
    return read.flowfiles() if isinstance(read, FlowFileBatch) else read


def read_segment_range(path: Path, start: int, stop: int) -> list[FlowFile]:
    """The FlowFiles at positions *start* to *stop* (exclusive) of a segment, in order.

    Only those records become FlowFiles (a queue listing's page of a 10,000-record segment);
    the file is read and verified whole, as :func:`read_segment` does.

    Raises:
        RepositoryError: the file is missing.
        WalCorruptionError: the file is damaged.
    """
    _, _, body = _parse(path)
    records = unpack(body)
    if isinstance(records, dict):
        batch = batch_from_wire(records)
        return batch.take(range(max(0, start), min(stop, len(batch)))).flowfiles()
    table, *columns = records
    return decode_records([table, *(column[start:stop] for column in columns)])


def read_segment_whole(path: Path) -> FlowFileBatch | list[FlowFile]:
    """A segment's FlowFile batch as the one value it was written as, or its FlowFiles.

    Raises:
        RepositoryError: the file is missing.
        WalCorruptionError: the file is damaged.
    """
    _, _, body = _parse(path)
    records = unpack(body)
    if isinstance(records, dict):
        return batch_from_wire(records)
    return decode_records(records)
