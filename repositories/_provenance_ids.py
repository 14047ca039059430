"""Event ids of stored rows whose events interleave with other rows' events.

Every event has an id of its own, given in the order events were recorded. A row holding a run
of events usually holds consecutive ids: ``event_id`` to ``event_id + run_count - 1``. A member
that handled a batch whole records a run per kind of event, though, where one by one recorded
the kinds FlowFile by FlowFile (:class:`~flowcore.provenance_events.InterleavedRuns`: SEND,
DROP, SEND, DROP ...). Its runs stay runs, one row per uuid bucket each, and their events get
the ids one by one's events would have: the rows of such a *group* share a block of
consecutive ids, each row holding some of them.

Such a row says so in two places: the ``event_group`` column holds the first id of its group's
block (NULL for a row of consecutive ids), and its packed ``run_data`` holds ``ids``, its
events' ids as offsets from its first one, when they are not consecutive. The offsets are
packed as small as they allow: ``{"start", "step"}`` (every other id, every third ...),
``{"steps": [step, repeat, ...]}`` (consecutive within each session of 1,000 FlowFiles, a jump
between sessions), the same ``"plus": "numbers"`` (ids that follow the FlowFiles' uuid numbers,
as a route's FlowFiles among their batch), or the raw array.

In an event file a group's records come together, ordered by their first event, each with its
first event's place in the group in ``event_group`` (0 for the first record);
:func:`placed_records` gives them their ids when the driver indexes the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from repositories._provenance_rows import ROW_COLUMNS
from repositories._wal_codec import pack, unpack

__all__ = ["GROUP", "IDS", "pack_ids", "placed_records", "relative_ids", "row_ids", "with_ids"]

#: The key of a row's id offsets in its packed ``run_data``.
IDS = "ids"
#: Where ``event_group`` is in a record's row (the last column).
GROUP = ROW_COLUMNS.index("event_group")
_RUN_COUNT = ROW_COLUMNS.index("run_count")
_RUN_DATA = ROW_COLUMNS.index("run_data")
assert len(ROW_COLUMNS) - 1 == GROUP, "placed_records appends the group's first id"


def _step_pairs(steps: np.ndarray) -> list[int]:
    """*steps* as ``[step, repeat, step, repeat ...]``: equal neighbours counted once."""
    if not steps.size:
        return []
    edges = np.flatnonzero(steps[1:] != steps[:-1]) + 1
    starts = np.concatenate(([0], edges))
    repeats = np.diff(np.concatenate((starts, [steps.size])))
    pairs = np.empty(2 * starts.size, dtype=np.int64)
    pairs[0::2] = steps[starts]
    pairs[1::2] = repeats
    return pairs.tolist()  # type: ignore[no-any-return]


def pack_ids(relative: np.ndarray, numbers: np.ndarray) -> Any:
    """Rising id offsets from a row's first event, packed; None when they are consecutive.

    *numbers* are the events' uuid numbers (offsets that follow them pack small).
    """
    count = len(relative)
    if count < 2 or int(relative[-1]) == count - 1:  # rising: consecutive iff they end there
        return None
    steps = np.diff(relative)
    if (steps == steps[0]).all():
        return {"start": 0, "step": int(steps[0])}
    most = max(2, count // 2)  # numbers worth packing instead of 8 bytes an id
    pairs = _step_pairs(steps)
    if len(pairs) <= most:
        return {"steps": pairs}
    numbers = np.asarray(numbers, dtype=np.int64)
    along = _step_pairs(steps - np.diff(numbers))
    if len(along) <= most:
        return {"steps": along, "plus": "numbers"}
    return np.ascontiguousarray(relative, dtype="<i8").tobytes()


def relative_ids(packed: Any, count: int, numbers: Any) -> np.ndarray:
    """The id offsets :func:`pack_ids` packed, for *count* events of uuid *numbers*.

    *numbers* is called for the uuid numbers only when the offsets follow them.
    """
    if packed is None:
        return np.arange(count, dtype=np.int64)
    if isinstance(packed, bytes):
        return np.frombuffer(packed, dtype="<i8").astype(np.int64)
    if "step" in packed:
        return packed["start"] + packed["step"] * np.arange(count, dtype=np.int64)
    pairs = np.asarray(packed["steps"], dtype=np.int64)
    steps = np.repeat(pairs[0::2], pairs[1::2])
    relative = np.zeros(count, dtype=np.int64)
    np.cumsum(steps, out=relative[1:])
    if packed.get("plus") == "numbers":
        held = np.asarray(numbers(), dtype=np.int64)
        relative += held - held[0]
    return relative


def row_ids(row: Mapping[str, Any], numbers: Any = None) -> np.ndarray:
    """The ids of every event of a stored row, in the row's order.

    *numbers* gives the row's uuid numbers when its ids follow them (read from its run data
    when not given).
    """
    first, count = row["event_id"], row["run_count"]
    if count == 1 or row.get("event_group") is None:
        return first + np.arange(count, dtype=np.int64)
    columns = unpack(row["run_data"])
    packed = columns.get(IDS)
    if numbers is None:
        numbers = lambda: _numbers(columns, row["uuid_first"], count)  # noqa: E731
    return first + relative_ids(packed, count, numbers)


def _numbers(columns: Mapping[str, Any], first: int, count: int) -> np.ndarray:
    """A run's uuid numbers from its run data (consecutive from *first* when not stored)."""
    held = columns.get("numbers")
    if held is None:
        return first + np.arange(count, dtype=np.int64)
    if isinstance(held, dict):
        return held["start"] + held["step"] * np.arange(count, dtype=np.int64)
    return np.frombuffer(held, dtype="<i8")


def with_ids(record: Sequence[Any], relative: np.ndarray, group: int | None) -> list[Any]:
    """*record* holding events of id offsets *relative* in a group (*group*: see below).

    *group* is what its ``event_group`` holds: in an event file its first event's place in its
    group, in the database the group's first id. A record of one event, or of consecutive ids,
    needs no offsets.
    """
    row = list(record[0])
    row[GROUP] = group
    if row[_RUN_COUNT] > 1:
        columns = unpack(row[_RUN_DATA])
        numbers = _numbers(columns, row[ROW_COLUMNS.index("uuid_first")], row[_RUN_COUNT])
        packed = pack_ids(relative, numbers)
        if packed is not None:
            columns[IDS] = packed
            row[_RUN_DATA] = pack(columns)
    return [tuple(row), *record[1:]]


def placed_records(
    records: Sequence[Sequence[Any]], first: int
) -> tuple[list[tuple[int, Sequence[Any]]], int]:
    """Each record of an event file with the id of its first event; and the id after the last.

    A record outside a group takes the next ids. A group's records each take the group's
    first id plus their place in it, and get that first id as their ``event_group``; the
    group takes as many ids as its records hold events.
    """
    placed: list[tuple[int, Sequence[Any]]] = []
    next_id = first
    base = held = 0
    for record in records:
        row = record[0]
        offset = row[GROUP]
        if offset is None:
            placed.append((next_id, record))
            next_id += row[_RUN_COUNT]
            continue
        if offset == 0:  # a group starts
            base, held = next_id, 0
        held += row[_RUN_COUNT]
        placed.append((base + offset, [(*row[:GROUP], base), *record[1:]]))
        next_id = base + held
    return placed, next_id
