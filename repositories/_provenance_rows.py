"""Provenance events as SQL-ready rows, and the event file format that carries them.

Tasks turn each event into a row of column values (JSON attribute maps, claim text, the indexed
attribute pairs) while they run, in parallel on the executors; the driver then only assigns ids
and hands the rows to the database. An event file is::

    b"FLOWCORE-PROV" | version (2 bytes) | CRC-32 of the payload (4) | payload (msgpack records)

so a damaged, foreign or newer file is refused with its name instead of half-indexed.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from flowcore.errors import WalCorruptionError
from flowcore.flowfile import (
    UUID_PREFIX_LENGTH,
    Content,
    ContentClaim,
    CountedUuids,
    ResourceClaim,
    Rope,
    sequence_uuid,
    uuid_in_sequence,
)
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from repositories._files import FileFormat, read_header
from repositories._wal_codec import pack, unpack

__all__ = [
    "BUCKET_BITS",
    "ROW_COLUMNS",
    "ROW_OVERHEAD",
    "decode_event_file",
    "encode_event_file",
    "event_from_row",
    "event_record",
    "json_text",
    "link_ranges",
    "uuid_at",
    "uuid_position",
]

#: Columns of ``provenance_event`` a record carries, in order (the driver adds ``event_id``).
#: Spelled out rather than read from the SQL schema, so tasks never import SQLAlchemy; a test
#: checks it against ``provenance_event``.
ROW_COLUMNS = (
    "event_time",
    "event_type",
    "flowfile_uuid",
    "component_id",
    "component_type",
    "component_name",
    "file_size",
    "previous_file_size",
    "event_duration",
    "entry_date",
    "lineage_start_date",
    "relationship",
    "details",
    "transit_uri",
    "source_system_flowfile_identifier",
    "alternate_identifier_uri",
    "source_queue_identifier",
    "filename",
    "content_claim",
    "previous_content_claim",
    "parent_uuids",
    "child_uuids",
    "previous_attributes",
    "updated_attributes",
    "size_bytes",
    "uuid_key",
    "uuid_first",
    "uuid_last",
    "run_count",
    "last_event_time",
    "run_data",
    "event_group",
)
FILE_MAGIC = b"FLOWCORE-PROV"
FILE_VERSION = 3  # 2: rows may be runs, links are uuid ranges; 3: rows may interleave
_HEADER = struct.Struct(">HI")  # version, crc32
_FORMAT = FileFormat("provenance event file", FILE_MAGIC, _HEADER, FILE_VERSION, frozenset({1, 2}))


#: A run and a link range stay within 2**BUCKET_BITS neighbouring uuids (one key).
BUCKET_BITS = 14
_BUCKET_MASK = (1 << BUCKET_BITS) - 1


def uuid_position(text: str) -> tuple[str, int]:
    """``(key, number)`` of a uuid: its bucket's first uuid and its counted digits as a number.

    A uuid not in canonical lowercase form is its own key, number -1 (it has no neighbours).
    """
    position = uuid_in_sequence(text)
    if position is None:
        return text, -1
    prefix, number = position
    return sequence_uuid(prefix, number & ~_BUCKET_MASK), number


def uuid_at(key: str, number: int) -> str:
    """The uuid at *number* in the bucket *key* (the inverse of :func:`uuid_position`)."""
    if number < 0:
        return key
    return sequence_uuid(key[:UUID_PREFIX_LENGTH], number)


def link_ranges(uuids: Iterable[str]) -> list[tuple[str, int, int]]:
    """The uuids as ``(key, first, last)`` ranges, in order, each within one bucket.

    Consecutive uuids make exact ranges. A run of :class:`CountedUuids` moving by a step (every
    eighth split) makes one range per bucket that also covers the uuids between them, so a
    10,000-parent JOIN is a few rows: a range says "may name", the event's own uuids decide.
    """
    ranges: list[tuple[str, int, int]] = []
    if isinstance(uuids, CountedUuids):  # runs already: cut them at bucket edges
        keys: dict[tuple[str, int], str] = {}  # a bucket's key, made once
        for prefix, start, count, step in uuids.runs:
            number, last = sorted((start, start + (count - 1) * step))
            if (last >> BUCKET_BITS) - (number >> BUCKET_BITS) >= count:  # sparse: one each
                for each in range(start, start + count * step, step):
                    key = keys.setdefault(
                        (prefix, each & ~_BUCKET_MASK), sequence_uuid(prefix, each & ~_BUCKET_MASK)
                    )
                    ranges.append((key, each, each))
                continue
            while number <= last:
                bucket_last = number | _BUCKET_MASK
                bucket = (prefix, number & ~_BUCKET_MASK)
                key = keys.get(bucket)
                if key is None:
                    key = keys[bucket] = sequence_uuid(*bucket)
                ranges.append((key, number, min(last, bucket_last)))
                number = bucket_last + 1
        return ranges
    for text in uuids:
        key, number = uuid_position(text)
        if ranges:
            last_key, first, last = ranges[-1]
            if last_key == key and number == last + 1:
                ranges[-1] = (key, first, number)
                continue
        ranges.append((key, number, number))
    return ranges


def uuids_text(uuids: Sequence[str]) -> str:
    """Parent or child uuids for their JSON column: a list, or ``{"runs": ...}`` for runs."""
    if isinstance(uuids, CountedUuids):
        return json_text({"runs": uuids.runs})
    return json_text(uuids)


def uuids_from_text(text: str) -> Sequence[str]:
    """The inverse of :func:`uuids_text`."""
    value = json.loads(text)
    if isinstance(value, dict):
        return CountedUuids(tuple(run) for run in value["runs"])
    return tuple(value)


def json_text(value: Any) -> str:
    """Compact JSON text with non-ASCII kept, as ``json`` writes it with ``ensure_ascii=False``.

    orjson: with the standard encoder these four per event took over half of building a row.
    """
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # text with lone surrogates (file-name bytes that are not UTF-8)
        return orjson.dumps(_valid_text(value)).decode()


def _valid_text(value: Any) -> Any:
    """*value* with every string made valid UTF-8 (invalid bytes as U+FFFD), for SQL and JSON.

    Provenance shows such names as text; the exact bytes travel in the FlowFile's own
    attributes (``filename.bytes``), not here.
    """
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_valid_text(k): _valid_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_valid_text(v) for v in value]
    return value


#: Bytes counted per event beyond its attribute maps as JSON text: an event's size for
#: retention, the same whether it is stored alone or in a run.
ROW_OVERHEAD = 200


def _piece_text(claim: ContentClaim) -> str:
    rc = claim.resource_claim
    return f"{rc.container}/{rc.section}/{rc.id}:{claim.offset}:{claim.length}"


def _piece_from_text(text: str) -> ContentClaim:
    path, offset, length = text.rsplit(":", 2)
    container, section, claim_id = path.split("/", 2)
    return ContentClaim(ResourceClaim(container, section, claim_id), int(offset), int(length))


def claim_text(claim: Content | None) -> str | None:
    """``container/section/id:offset:length``, the form claims take in SQL.

    A rope is a JSON list of its pieces in that form (a container name never starts with
    ``[``), so provenance keeps every range of a zero-copy merge.
    """
    if claim is None:
        return None
    if isinstance(claim, Rope):
        return json_text([_piece_text(p) for p in claim.pieces])
    return _valid_text(_piece_text(claim))


def claim_from_text(text: str | None) -> Content | None:
    """The inverse of :func:`claim_text`."""
    if not text:
        return None
    if text.startswith("["):
        return Rope(_piece_from_text(piece) for piece in json.loads(text))
    return _piece_from_text(text)


def event_record(event: ProvenanceEvent, indexed_attributes: Collection[str]) -> list[Any]:
    """``[row in ROW_COLUMNS order, parent ranges, child ranges, indexed (name, value) pairs]``.

    Parents and children are :func:`link_ranges`; the row is a run of one event.
    """
    before, changed = event.previous_attributes._data, event.updated_attributes._data
    previous = json_text(before)
    updated = json_text(changed)
    key, number = uuid_position(event.flowfile_uuid)
    row = (
        event.event_time,
        event.event_type.value,
        event.flowfile_uuid,
        event.component_id,
        event.component_type,
        event.component_name,
        event.file_size,
        event.previous_file_size,
        event.event_duration,
        event.entry_date,
        event.lineage_start_date,
        event.relationship,
        _valid_text(event.details),
        _valid_text(event.transit_uri),
        event.source_system_flowfile_identifier,
        event.alternate_identifier_uri,
        event.source_queue_identifier,
        changed.get("filename", before.get("filename")),
        claim_text(event.content_claim),
        claim_text(event.previous_content_claim),
        uuids_text(event.parent_uuids),
        uuids_text(event.child_uuids),
        previous,
        updated,
        ROW_OVERHEAD + len(previous) + len(updated),
        key,  # uuid_key
        number,  # uuid_first
        number,  # uuid_last
        1,  # run_count
        event.event_time,  # last_event_time
        None,  # run_data
        None,  # event_group: its events follow the record before's (see _provenance_ids)
    )
    pairs = [  # the attributes after the event: previous overlaid with updated
        (name, value)
        for name in indexed_attributes
        if (value := changed.get(name, before.get(name))) is not None
    ]
    return [row, link_ranges(event.parent_uuids), link_ranges(event.child_uuids), pairs]


def encode_event_file(records: list[list[Any]]) -> bytes:
    """An event file's bytes."""
    payload = pack(records)
    return FILE_MAGIC + _HEADER.pack(FILE_VERSION, zlib.crc32(payload)) + payload


def decode_event_file(path: Path, data: bytes) -> list[tuple[Any, ...]]:
    """The records of an event file, as tuples.

    Read-only tuples of plain values leave the garbage collector's watch, which matters when a
    driver indexes a million events.

    Raises:
        WalCorruptionError: the bytes are not a whole event file of a known version.
    """
    start = _FORMAT.start
    version, crc = read_header(path, data, _FORMAT)
    payload = data[start:]
    if zlib.crc32(payload) != crc:
        msg = f"{path} fails its checksum; the event file is damaged"
        raise WalCorruptionError(msg)
    try:
        records = unpack(payload, use_list=False)
    except ValueError as ex:
        msg = f"{path} has a valid checksum but cannot be decoded: {ex}"
        raise WalCorruptionError(msg) from None
    if version == 1:  # one row per event, links as uuids: left by a crash before an upgrade
        return [_from_version_1(record) for record in records]
    if version == 2:  # rows without event_group: none interleaves
        return [((*row, None), *rest) for row, *rest in records]
    return records  # type: ignore[no-any-return]


def _from_version_1(record: tuple[Any, ...]) -> tuple[Any, ...]:
    """A version-1 record (a row without run columns, links as uuids) in today's form."""
    row, parents, children, pairs = record
    key, number = uuid_position(row[ROW_COLUMNS.index("flowfile_uuid")])
    event_time = row[ROW_COLUMNS.index("event_time")]
    row = (*row, key, number, number, 1, event_time, None, None)
    return (row, link_ranges(parents), link_ranges(children), pairs)


def event_from_row(m: Mapping[str, Any]) -> ProvenanceEvent:
    """A stored ``provenance_event`` row back as an event."""
    duration = m["event_duration"]
    return ProvenanceEvent(
        event_type=ProvenanceEventType(m["event_type"]),
        flowfile_uuid=m["flowfile_uuid"],
        component_id=m["component_id"],
        component_type=m["component_type"],
        event_time=m["event_time"],
        file_size=m["file_size"],
        component_name=m["component_name"] or "",
        event_id=m["event_id"],
        event_duration=duration if duration is not None else -1,
        entry_date=m["entry_date"] or 0,
        lineage_start_date=m["lineage_start_date"] or 0,
        parent_uuids=uuids_from_text(m["parent_uuids"]),
        child_uuids=uuids_from_text(m["child_uuids"]),
        relationship=m["relationship"],
        details=m["details"],
        transit_uri=m["transit_uri"],
        source_system_flowfile_identifier=m["source_system_flowfile_identifier"],
        alternate_identifier_uri=m["alternate_identifier_uri"],
        source_queue_identifier=m["source_queue_identifier"],
        previous_attributes=json.loads(m["previous_attributes"]),
        updated_attributes=json.loads(m["updated_attributes"]),
        previous_content_claim=claim_from_text(m["previous_content_claim"]),
        content_claim=claim_from_text(m["content_claim"]),
        previous_file_size=m["previous_file_size"],
    )
