"""Queue segments: immutable files of FlowFile records, like NiFi's swap files.

A task writes the FlowFiles it sends to a queue as a segment (at most
:data:`~repositories.records.MAX_SEGMENT_RECORDS` records), with a summary in its header: count,
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
from flowcore.flowfile import Attributes, ContentClaim, FlowFile, ResourceClaim
from repositories._wal_codec import pack, unpack
from repositories.records import MAX_SEGMENT_RECORDS, SegmentSummary, claim_counts_of

__all__ = [
    "SEGMENT_SUFFIX",
    "decode_flowfile",
    "encode_flowfile",
    "read_segment",
    "read_summary",
    "summary_from_wire",
    "summary_to_wire",
    "write_segment",
]

SEGMENT_MAGIC = b"FLOWCORE-SEG"
SEGMENT_VERSION = 1
SEGMENT_SUFFIX = ".seg"
_HEAD = struct.Struct(">HII")  # version, header length, crc32 of header+records


def claim_to_wire(claim: ResourceClaim) -> list[Any]:
    """A resource claim as a msgpack-friendly list."""
    return [claim.container, claim.section, claim.id]


def encode_flowfile(flowfile: FlowFile) -> list[Any]:
    """A FlowFile as a compact list (the segment record)."""
    content = flowfile.content
    if content is None:
        wire_claim = None
    else:
        rc = content.resource_claim
        wire_claim = [rc.container, rc.section, rc.id, content.offset, content.length]
    return [
        flowfile.id,
        flowfile.uuid,
        flowfile.attributes._data,  # the immutable mapping's own dict: packed, never copied
        wire_claim,
        flowfile.size,
        flowfile.entry_date,
        flowfile.lineage_start_date,
        flowfile.lineage_start_index,
        flowfile.queue_date,
        flowfile.queue_date_index,
        flowfile.penalty_expiration,
    ]


def decode_flowfile(record: list[Any]) -> FlowFile:
    """The inverse of :func:`encode_flowfile`."""
    (
        fid,
        uid,
        attributes,
        wire_claim,
        size,
        entry,
        lineage,
        lineage_index,
        queued,
        queue_index,
        penalty,
    ) = record
    content = None
    if wire_claim is not None:
        container, section, claim_id, offset, length = wire_claim
        content = ContentClaim(ResourceClaim(container, section, claim_id), offset, length)
    return FlowFile(
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


def summary_to_wire(summary: SegmentSummary) -> list[Any]:
    """A segment summary as a msgpack-friendly list (in transactions and checkpoints)."""
    claims = [[*claim_to_wire(c), n] for c, n in summary.claim_counts]
    return [
        summary.segment_id,
        summary.queue_id,
        summary.count,
        summary.bytes,
        claims,
        summary.min_id,
        summary.max_id,
    ]


def summary_from_wire(wire: list[Any]) -> SegmentSummary:
    """The inverse of :func:`summary_to_wire`."""
    segment_id, queue_id, count, size, claims, min_id, max_id = wire
    return SegmentSummary(
        segment_id,
        queue_id,
        count,
        size,
        [(ResourceClaim(c[0], c[1], c[2]), c[3]) for c in claims],
        min_id,
        max_id,
    )


def new_segment_id(owner: str) -> str:
    """A unique segment id naming its writer (a task attempt)."""
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in owner) or "segment"
    return f"{stem}-{uuid.uuid4().hex}"


def write_segment(
    directory: Path,
    queue_id: str,
    flowfiles: Sequence[FlowFile],
    *,
    owner: str = "",
    sync: bool = True,
) -> SegmentSummary:
    """Write *flowfiles* as one segment file and return its summary.

    Raises:
        RepositoryError: more records than a segment holds.
    """
    if len(flowfiles) > MAX_SEGMENT_RECORDS:
        msg = (
            f"a segment holds at most {MAX_SEGMENT_RECORDS} FlowFiles, got {len(flowfiles)}; "
            "split the batch"
        )
        raise RepositoryError(msg)
    ids = [f.id for f in flowfiles] or [0]
    summary = SegmentSummary(
        segment_id=new_segment_id(owner),
        queue_id=queue_id,
        count=len(flowfiles),
        bytes=sum(f.size for f in flowfiles),
        claim_counts=claim_counts_of(flowfiles),
        min_id=min(ids),
        max_id=max(ids),
    )
    header = pack(summary_to_wire(summary))
    body = pack([encode_flowfile(f) for f in flowfiles])
    crc = zlib.crc32(body, zlib.crc32(header))
    data = SEGMENT_MAGIC + _HEAD.pack(SEGMENT_VERSION, len(header), crc) + header + body
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / (summary.segment_id + SEGMENT_SUFFIX)
    partial = final.with_name(final.name + ".part")
    with open(partial, "wb") as out:
        out.write(data)
        out.flush()
        if sync:
            os.fsync(out.fileno())
    os.replace(partial, final)
    return summary


def _parse(path: Path) -> tuple[SegmentSummary, bytes, bytes]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        msg = f"segment file {path} is missing"
        raise RepositoryError(msg) from None
    head = len(SEGMENT_MAGIC) + _HEAD.size
    if not data.startswith(SEGMENT_MAGIC) or len(data) < head:
        msg = f"{path} is not a flowcore segment (bad header at offset 0)"
        raise WalCorruptionError(msg)
    version, header_length, crc = _HEAD.unpack_from(data, len(SEGMENT_MAGIC))
    if version != SEGMENT_VERSION:
        msg = (
            f"{path} has segment format version {version}; "
            f"this flowcore reads version {SEGMENT_VERSION}"
        )
        raise WalCorruptionError(msg)
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
    _, _, body = _parse(path)
    return [decode_flowfile(r) for r in unpack(body)]
