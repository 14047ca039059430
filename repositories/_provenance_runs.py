"""Runs of alike provenance events: many FlowFiles' events stored as one row, found by range.

A task that creates 10,000 FlowFiles reports 10,000 CREATE events that differ only in the
FlowFile's uuid (and filename, which defaults to it), a content offset and a few timestamps.
Indexed a row each, with five indexes, they cost more than everything else the task did. The
FlowFiles a process creates get consecutive uuids (:func:`flowcore.flowfile.new_uuid`), so such
events fold into a *run*: one row holding the first event, the uuid range and the values that
vary, packed. Search, get and lineage unfold runs back into the very same events.

A uuid is located by its *position*: a key (the uuid with its low :data:`BUCKET_BITS` bits
zeroed, so a key names a bucket of 16,384 neighbouring uuids) and its number (the last 8 hex
digits). Runs never cross a bucket, so "which rows mention this uuid" is an equality lookup on
the key plus a range check; parent and child links are stored as the same ranges. A uuid not in
the canonical form is its own key.

Only events without parents or children fold (FORK, JOIN and CLONE stay single rows, their links
as ranges), and only while everything else about them matches, including which attributes equal
the uuid, so unfolding is exact.
"""

from __future__ import annotations

import heapq
import itertools
import operator
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from flowcore.flowfile import (
    UUID_PREFIX_LENGTH,
    Attributes,
    ContentClaim,
    ResourceClaim,
    sequence_uuid,
)
from flowcore.flowfile_batch.columns import Column, IntColumn, apply_row, column_from_wire
from flowcore.provenance_events import (
    TEXT_FIELDS,
    InterleavedRuns,
    ProvenanceEvent,
    ProvenanceEventRun,
)
from repositories._provenance_caps import MAX_ATTRIBUTE_LENGTH, capped
from repositories._provenance_ids import GROUP, IDS, pack_ids, relative_ids, row_ids, with_ids
from repositories._provenance_rows import (
    BUCKET_BITS,
    ROW_COLUMNS,
    ROW_OVERHEAD,
    event_from_row,
    event_record,
    json_text,
    uuid_at,
    uuid_position,
)
from repositories._wal_codec import pack, unpack

__all__ = [
    "MAX_RUN",
    "EventFolder",
    "events_by_id",
    "kept_records",
    "row_events",
    "run_positions",
    "single_sizes",
    "unfold",
]

#: Events folded into one run at most (a bucket's worth).
MAX_RUN = 1 << BUCKET_BITS
_BUCKET_MASK = MAX_RUN - 1


# --- folding events into runs (in tasks) -------------------------------------------------------

#: Fields every event of a run shares, read straight off the event.
_SHARED = ("event_type", *TEXT_FIELDS)
_shared_of = operator.attrgetter(*_SHARED)
#: Numeric fields each event of a run has its own value of.
_VARYING = (
    "event_time",
    "file_size",
    "previous_file_size",
    "event_duration",
    "entry_date",
    "lineage_start_date",
)
_varying_of = operator.attrgetter(*_VARYING)


def _uuid_split(attributes: Attributes, flowfile_uuid: str) -> tuple[tuple[str, ...], dict]:
    """The names whose value is the uuid itself, and every other pair."""
    named = []
    others = {}
    for name, value in attributes.items():
        if value == flowfile_uuid:
            named.append(name)
        else:
            others[name] = value
    return tuple(named), others


def _claim_shape(claim: Any) -> tuple[ResourceClaim | None, int, int] | None:
    """``(resource claim, offset, length)``; None for a rope (never folded)."""
    if claim is None:
        return (None, 0, 0)
    if isinstance(claim, ContentClaim):
        return (claim.resource_claim, claim.offset, claim.length)
    return None


def _pairs(event: ProvenanceEvent, indexed: Collection[str]) -> list[tuple[str, str]]:
    before, changed = event.previous_attributes._data, event.updated_attributes._data
    return [
        (name, value)
        for name in indexed
        if (value := changed.get(name, before.get(name))) is not None
    ]


class _Run:
    """Events being folded: the first one, what they share, and what varies, column by column."""

    def __init__(self, event: ProvenanceEvent, number: int, indexed: Collection[str]) -> None:
        self.first = event
        self.prefix = event.flowfile_uuid[:UUID_PREFIX_LENGTH]
        self.start = self.last = number
        self.indexed = indexed
        self.shared = _shared_of(event)
        self.previous = _uuid_split(event.previous_attributes, event.flowfile_uuid)
        self.updated = _uuid_split(event.updated_attributes, event.flowfile_uuid)
        self.pairs = _pairs(event, indexed)
        content = _claim_shape(event.content_claim)
        previous = _claim_shape(event.previous_content_claim)
        assert content is not None
        assert previous is not None
        self.resources = (content[0], previous[0])
        self.columns: dict[str, list[Any]] = {name: [getattr(event, name)] for name in _VARYING}
        self.varying = [self.columns[name] for name in _VARYING]
        self.columns["offset"] = [content[1]]
        self.columns["length"] = [content[2]]
        self.columns["previous_offset"] = [previous[1]]
        self.columns["previous_length"] = [previous[2]]

    @property
    def count(self) -> int:
        """Events folded so far."""
        return self.last - self.start + 1

    @staticmethod
    def foldable(event: ProvenanceEvent) -> int | None:
        """The uuid number of an event that can start a run; None if it must stay single."""
        if event.parent_uuids or event.child_uuids:
            return None
        if _claim_shape(event.content_claim) is None:
            return None
        if _claim_shape(event.previous_content_claim) is None:
            return None
        number = uuid_position(event.flowfile_uuid)[1]
        return None if number < 0 else number

    def extend(self, event: ProvenanceEvent) -> bool:
        """Fold *event* in if it is the next uuid's and alike in everything else."""
        number = self.last + 1
        flowfile_uuid = event.flowfile_uuid
        if (
            number & _BUCKET_MASK == 0
            or flowfile_uuid != sequence_uuid(self.prefix, number)
            or event.parent_uuids
            or event.child_uuids
        ):
            return False
        if _shared_of(event) != self.shared:
            return False
        content = _claim_shape(event.content_claim)
        previous = _claim_shape(event.previous_content_claim)
        if (
            content is None
            or previous is None
            or (content[0], previous[0]) != self.resources
            or _uuid_split(event.previous_attributes, flowfile_uuid) != self.previous
            or _uuid_split(event.updated_attributes, flowfile_uuid) != self.updated
            or (self.indexed and _pairs(event, self.indexed) != self.pairs)
        ):
            return False
        columns = self.columns
        for values, value in zip(self.varying, _varying_of(event), strict=True):
            values.append(value)
        columns["offset"].append(content[1])
        columns["length"].append(content[2])
        columns["previous_offset"].append(previous[1])
        columns["previous_length"].append(previous[2])
        self.last = number
        return True

    def record(self) -> list[Any]:
        """The run as one record: the first event's row with the run's range and columns."""
        record = event_record(self.first, self.indexed)
        count = self.count
        if count == 1:
            return record
        varying: dict[str, Any] = {}
        for name, values in self.columns.items():
            if any(v != values[0] for v in values):
                varying[name] = _packed_column(values)
        varying["uuid_named"] = [list(self.previous[0]), list(self.updated[0])]
        times = self.columns["event_time"]
        # the events differ only in uuids of one length: each is the first one's size
        size = count * record[0][_SIZE]
        return _as_run(record, varying, count, (min(times), max(times)), size)


def _packed_column(values: list[Any]) -> Any:
    """A column as stored: ``{"start", "step"}`` when it moves by equal steps, else the list."""
    first = values[0]
    if isinstance(first, int) and len(values) > 1:
        step = values[1] - first
        if all(v == first + i * step for i, v in enumerate(values)):
            return {"start": first, "step": step}
    return values


_SIZE = ROW_COLUMNS.index("size_bytes")


def _as_run(
    record: list[Any], varying: dict[str, Any], count: int, times: tuple[int, int], size: int
) -> list[Any]:
    """A one-event record turned into a run's: its range, times, packed columns and size.

    The size is its events' as each would be stored alone (:func:`single_sizes`), so
    retention by size expires the same events however they were folded.
    """
    row = list(record[0])
    row[ROW_COLUMNS.index("event_time")], row[ROW_COLUMNS.index("last_event_time")] = times
    row[ROW_COLUMNS.index("uuid_last")] = row[ROW_COLUMNS.index("uuid_first")] + count - 1
    row[ROW_COLUMNS.index("run_count")] = count
    row[ROW_COLUMNS.index("run_data")] = pack(varying)
    row[_SIZE] = size
    record[0] = tuple(row)
    return record


def _map_sizes(
    first: Mapping[str, str], columns: Mapping[str, Column], named: Collection[str], count: int
) -> np.ndarray:
    """The length of each event's attribute map as JSON text, as :func:`event_record` writes it.

    Counted from the first event's map and the columns, without writing any map:
    ``{"k":"v","k2":"v2"}`` is two braces plus each entry and a comma between entries; the
    uuid-named values are uuids, all of one length.
    """
    varying = {n: c for n, c in columns.items() if n not in named}
    entries = [
        len(json_text(k)) + 2 + len(json_text(v)) for k, v in first.items() if k not in varying
    ]
    lengths = np.full(count, 2 + sum(entries), dtype=np.int64)  # each entry with a comma
    present = np.full(count, len(entries), dtype=np.int64)
    for name, column in varying.items():
        key = len(json_text(name)) + 2  # the quoted name, a colon and a comma
        if isinstance(column, IntColumn):  # "-123": the digits, the sign, two quotes
            lengths += key + 2 + _decimal_lengths(column.numbers)
            present += 1
            continue
        codes, values = column.encoded()
        lengths += np.array(
            [0 if v is None else key + len(json_text(v)) for v in values], dtype=np.int64
        )[codes]
        present += np.array([v is not None for v in values], dtype=np.int64)[codes]
    return lengths - (present > 0)  # n entries have n - 1 commas


def _decimal_lengths(numbers: np.ndarray) -> np.ndarray:
    """The length of each number's decimal text, sign included, without writing any.

    A column of a million distinct numbers (``fragment.index``) would be a million strings.
    """
    negative = numbers < 0
    magnitude = np.where(negative, -(numbers + 1), numbers).astype(np.uint64) + negative
    return 1 + np.searchsorted(_POWERS_OF_TEN, magnitude, side="right") + negative


#: 10 to 10**19: a number has one digit more than the powers it reaches.
_POWERS_OF_TEN = np.array([10**power for power in range(1, 20)], dtype=np.uint64)


def single_sizes(run: ProvenanceEventRun) -> np.ndarray:
    """Each event's size as :func:`event_record` counts it for an event stored alone."""
    previous_named, updated_named = run.uuid_named
    previous = _map_sizes(
        run.first.previous_attributes._data, run.previous_columns, previous_named, run.count
    )
    updated = _map_sizes(
        run.first.updated_attributes._data, run.updated_columns, updated_named, run.count
    )
    return ROW_OVERHEAD + previous + updated


def _packed_array(values: np.ndarray) -> Any:
    """An int array as stored: ``{"start", "step"}`` when it moves by equal steps, else bytes."""
    if len(values) == 1:
        return {"start": int(values[0]), "step": 0}
    step = int(values[1] - values[0])
    if np.array_equal(values, values[0] + step * np.arange(len(values), dtype=np.int64)):
        return {"start": int(values[0]), "step": step}
    return np.ascontiguousarray(values, dtype="<i8").tobytes()


def _varies_where_searched(run: ProvenanceEventRun, indexed: Collection[str]) -> bool:
    """Whether a run's rows could not answer a search for one of its events.

    A row holds one value per indexed attribute (and the filename, always indexed): when one
    differs between the events, they are stored as single events instead.
    """
    searched = {"filename", *indexed}
    return any(name in searched for name in (*run.previous_columns, *run.updated_columns))


def _bucket_pieces(numbers: np.ndarray) -> list[tuple[int, int]]:
    """``(start, stop)`` of the stretches of *numbers* that stay in one uuid bucket."""
    buckets = numbers >> BUCKET_BITS
    breaks = np.flatnonzero(buckets[1:] != buckets[:-1]) + 1
    edges = [0, *breaks.tolist(), len(numbers)]
    return list(itertools.pairwise(edges))


def _batch_records(
    run: ProvenanceEventRun, indexed: Collection[str], places: np.ndarray | None = None
) -> list[list[Any]]:
    """A batch's events as run records, one per stretch of uuids within a bucket.

    *places* are the events' places in their group (:mod:`repositories._provenance_ids`):
    each record then holds its events' id offsets and its first event's place.
    """
    if _varies_where_searched(run, indexed):
        folder = EventFolder(indexed)
        folder.add(run.events())
        records = folder.finish()
        if places is None:
            return records
        placed, start = [], 0
        for record in records:
            held = places[start : start + _record_count(record)]
            placed.append(with_ids(record, held - held[0], int(held[0])))
            start += len(held)
        return placed
    records = []
    sizes = single_sizes(run)
    for start, stop in _bucket_pieces(run.uuid_numbers):
        piece = run.cut(start, stop) if start or stop < run.count else run
        record = event_record(piece.first, indexed)
        if places is not None:
            row = list(record[0])
            row[GROUP] = int(places[start])
            record[0] = tuple(row)
        if piece.count > 1:
            numbers = piece.uuid_numbers
            varying: dict[str, Any] = {
                "uuid_named": [list(n) for n in piece.uuid_named],
                "numbers": _packed_array(numbers),
            }
            if places is not None:
                ids = pack_ids(places[start:stop] - places[start], numbers)
                if ids is not None:
                    varying[IDS] = ids
            for name, values, size in (
                ("offset", piece.offsets, None),
                ("length", piece.sizes, "file_size"),
                ("previous_offset", piece.previous_offsets, None),
                ("previous_length", piece.previous_sizes, "previous_file_size"),
            ):
                if values is not None:
                    current = name.removeprefix("previous_")
                    if (
                        current != name
                        and piece.resource == piece.previous_resource
                        and (
                            np.array_equal(
                                values, piece.offsets if current == "offset" else piece.sizes
                            )
                        )
                    ):
                        varying[name] = current  # content unchanged: the same numbers
                    else:
                        varying[name] = _packed_array(values)
                    if size is not None:
                        varying[size] = name  # the same numbers, stored once
            for name, resource in (
                ("resource", piece.resource),
                ("previous_resource", piece.previous_resource),
            ):
                if resource is not None:
                    varying[name] = [resource.container, resource.section, resource.id]
            for name, columns in (
                ("previous_columns", piece.previous_columns),
                ("updated_columns", piece.updated_columns),
            ):
                if columns:
                    varying[name] = {n: c.to_wire() for n, c in columns.items()}
            if piece.transit_uris is not None:
                varying["transit_uri"] = piece.transit_uris.to_wire()
            moment = piece.first.event_time
            stored = int(sizes[start:stop].sum())
            record = _as_run(record, varying, piece.count, (moment, moment), stored)
            row = list(record[0])
            row[ROW_COLUMNS.index("uuid_first")] = int(numbers.min())
            row[ROW_COLUMNS.index("uuid_last")] = int(numbers.max())
            record[0] = tuple(row)
        records.append(record)
    return records


def run_positions(row: Mapping[str, Any], numbers: Sequence[int]) -> list[int]:
    """Where in a stored run the events of the uuid *numbers* are (those it holds)."""
    first, last = row["uuid_first"], row["uuid_last"]
    inside = [n for n in numbers if first <= n <= last]
    if row["run_count"] == 1 or not inside:
        return [0] * len(inside) if row["run_count"] == 1 else []
    held = unpack(row["run_data"]).get("numbers")
    if held is None:
        return [n - first for n in inside]
    if isinstance(held, dict):
        start, step = held["start"], held["step"]
        return [(n - start) // step for n in inside if step and (n - start) % step == 0]
    stored = np.frombuffer(held, dtype="<i8")
    where = {int(n): i for i, n in enumerate(stored.tolist())}
    return [where[n] for n in inside if n in where]


class EventFolder:
    """Turns events into records as they come, folding runs of alike ones.

    Args:
        indexed: attribute names the repository indexes by value.
        max_attribute_length: attribute values longer than this many characters are cut to it
            (:mod:`repositories._provenance_caps`).
    """

    def __init__(
        self, indexed: Collection[str] = (), max_attribute_length: int = MAX_ATTRIBUTE_LENGTH
    ) -> None:
        self._indexed = tuple(indexed)
        self._limit = max_attribute_length
        self._run: _Run | None = None
        self.records: list[list[Any]] = []

    def add(self, events: Iterable[ProvenanceEvent | ProvenanceEventRun | InterleavedRuns]) -> None:
        """Fold *events*, in order.

        A batch's run of events is stored as it is, and so is each run of interleaved ones,
        its records placed in their group.
        """
        for given in events:
            event = capped(given, self._limit)
            if isinstance(event, ProvenanceEventRun | InterleavedRuns):
                if self._run is not None:
                    self.records.append(self._run.record())
                    self._run = None
                if isinstance(event, ProvenanceEventRun):
                    self.records.extend(_batch_records(event, self._indexed))
                else:
                    self.records.extend(_group_records(event, self._indexed))
                continue
            run = self._run
            if run is not None and run.extend(event):
                continue
            if run is not None:
                self.records.append(run.record())
                self._run = None
            number = _Run.foldable(event)
            if number is None:
                self.records.append(event_record(event, self._indexed))
            else:
                self._run = _Run(event, number, self._indexed)

    def finish(self) -> list[list[Any]]:
        """Every record, the open run closed; the folder is then empty."""
        if self._run is not None:
            self.records.append(self._run.record())
            self._run = None
        records, self.records = self.records, []
        return records

    def __len__(self) -> int:
        """How many events it holds."""
        open_run = 0 if self._run is None else self._run.count
        return sum(_record_count(r) for r in self.records) + open_run


def _record_count(record: list[Any]) -> int:
    return int(record[0][ROW_COLUMNS.index("run_count")])


def _group_records(group: InterleavedRuns, indexed: Collection[str]) -> list[list[Any]]:
    """The records of interleaved runs, in the order of their first events (the first: 0)."""
    records = [
        record
        for run, places in zip(group.runs, group.positions, strict=True)
        for record in _batch_records(run, indexed, places)
    ]
    records.sort(key=lambda record: record[0][GROUP])
    return records


# --- unfolding runs (on the driver) -------------------------------------------------------------


def unfold(
    event: ProvenanceEvent,
    data: bytes,
    count: int,
    first_number: int,
    offsets: Sequence[int] | None = None,
) -> list[ProvenanceEvent]:
    """The events of a run, from its first event (as stored) and its packed columns.

    *offsets* picks events by position in the run (all of them when None).
    """
    columns: Mapping[str, Any] = unpack(data)
    previous_named, updated_named = columns["uuid_named"]
    key = event.flowfile_uuid
    content, previous_content = event.content_claim, event.previous_content_claim
    resource = content.resource_claim if isinstance(content, ContentClaim) else None
    previous_resource = (
        previous_content.resource_claim if isinstance(previous_content, ContentClaim) else None
    )
    if "resource" in columns:
        resource = ResourceClaim(*columns["resource"])
    if "previous_resource" in columns:
        previous_resource = ResourceClaim(*columns["previous_resource"])

    def column(name: str, default: Any) -> Any:
        values = columns.get(name)
        if values is None:
            return _Constant(default)
        if isinstance(values, str):  # another column's name: the same numbers
            return column(values, default)
        if isinstance(values, dict):
            return _Steps(values["start"], values["step"])
        if isinstance(values, bytes):
            return np.frombuffer(values, dtype="<i8").tolist()
        return values

    numbers = column("numbers", None)
    if isinstance(numbers, _Constant):
        numbers = _Steps(first_number, 1)
    held = numbers
    ids = (
        _Steps(0, 1)
        if IDS not in columns
        else relative_ids(columns[IDS], count, lambda: [held[i] for i in range(count)])
    )
    previous_columns = {
        n: column_from_wire(c) for n, c in columns.get("previous_columns", {}).items()
    }
    updated_columns = {
        n: column_from_wire(c) for n, c in columns.get("updated_columns", {}).items()
    }

    varying = {name: column(name, getattr(event, name)) for name in _VARYING}
    transit = columns.get("transit_uri")  # a column when each event names its own
    transit_uris = None if transit is None else column_from_wire(transit)
    starts = column("offset", content.offset if resource else 0)
    lengths = column("length", content.length if resource else 0)
    previous_offsets = column(
        "previous_offset", previous_content.offset if previous_resource else 0
    )
    previous_lengths = column(
        "previous_length", previous_content.length if previous_resource else 0
    )
    previous_base = {k: v for k, v in event.previous_attributes.items() if k not in previous_named}
    updated_base = {k: v for k, v in event.updated_attributes.items() if k not in updated_named}
    events = []
    for i in range(count) if offsets is None else offsets:
        flowfile_uuid = uuid_at(key, numbers[i])
        previous = {**previous_base, **dict.fromkeys(previous_named, flowfile_uuid)}
        updated = {**updated_base, **dict.fromkeys(updated_named, flowfile_uuid)}
        apply_row(previous, previous_columns, i)  # type: ignore[arg-type]
        apply_row(updated, updated_columns, i)  # type: ignore[arg-type]
        shared = {name: getattr(event, name) for name in _SHARED}
        if transit_uris is not None:
            shared["transit_uri"] = transit_uris.value(i)
        events.append(
            ProvenanceEvent(
                **shared,
                flowfile_uuid=flowfile_uuid,
                event_id=event.event_id + int(ids[i]),
                **{name: values[i] for name, values in varying.items()},
                previous_attributes=_ordered(previous, event.previous_attributes),
                updated_attributes=_ordered(updated, event.updated_attributes),
                # an empty FlowFile has no claim, as a session's event says (_moved's rule)
                content_claim=(
                    ContentClaim(resource, starts[i], lengths[i])
                    if resource and lengths[i]
                    else None
                ),
                previous_content_claim=(
                    ContentClaim(previous_resource, previous_offsets[i], previous_lengths[i])
                    if previous_resource and previous_lengths[i]
                    else None
                ),
            )
        )
    return events


@attrs.frozen
class _Constant:
    value: Any

    def __getitem__(self, index: int) -> Any:
        return self.value


@attrs.frozen
class _Steps:
    start: int
    step: int

    def __getitem__(self, index: int) -> int:
        return self.start + index * self.step


def _ordered(values: dict[str, str], like: Attributes) -> dict[str, str]:
    """*values* in the key order of *like* (the first event's map): maps keep insertion order."""
    ordered = {name: values[name] for name in like if name in values}
    if len(ordered) < len(values):
        ordered.update(values)
    return ordered


def row_events(
    row: Mapping[str, Any], offsets: Sequence[int] | None = None
) -> list[ProvenanceEvent]:
    """The events a stored ``provenance_event`` row holds: one, or a run unfolded.

    *offsets* picks events of a run by position (all of them when None).
    """
    first = event_from_row(row)
    count = row["run_count"]
    if count == 1:
        return [first]
    return unfold(first, row["run_data"], count, row["uuid_first"], offsets)


def events_by_id(
    rows: Iterable[Any], positions: Callable[[Mapping[str, Any]], Sequence[int] | None]
) -> Iterator[ProvenanceEvent]:
    """The events of stored *rows* (read by first id), by id; *positions* picks each row's.

    Rows whose events interleave (:mod:`repositories._provenance_ids`) hold events with ids
    past the next row's first one: their events wait until no later row can come before them.
    """
    waiting: list[tuple[int, ProvenanceEvent]] = []  # a heap, by id
    for row in rows:
        mapping = row._mapping
        while waiting and waiting[0][0] < mapping["event_id"]:
            yield heapq.heappop(waiting)[1]
        events = row_events(mapping, positions(mapping))
        if mapping["event_group"] is None and not waiting:  # nothing can come between them
            yield from events
            continue
        for event in events:
            heapq.heappush(waiting, (event.event_id, event))
    while waiting:
        yield heapq.heappop(waiting)[1]


def kept_records(
    row: Mapping[str, Any], kept: Sequence[int], indexed: Collection[str]
) -> list[tuple[int, list[Any]]]:
    """What stays of a stored run when only the events at positions *kept* (ascending) do.

    Each stretch of neighbouring positions is folded again, each record as ``(event id of its
    first event, record)``: every event keeps its id, and a row of interleaved events its
    group. Retention uses it to expire part of a run, the events it would expire had each been
    stored alone.
    """
    stretches: list[list[int]] = []
    for position in kept:
        if stretches and stretches[-1][-1] == position - 1:
            stretches[-1].append(position)
        else:
            stretches.append([position])
    ids = row_ids(row)
    group = row.get("event_group")
    placed = []
    for stretch in stretches:
        folder = EventFolder(indexed)
        folder.add(row_events(row, stretch))
        start = stretch[0]
        for record in folder.finish():
            held = ids[start : start + _record_count(record)]
            if group is not None:
                record = with_ids(record, held - held[0], group)  # noqa: PLW2901
            placed.append((int(held[0]), record))
            start += len(held)
    return placed
