"""The order of a member's batch events: the order its one-by-one sessions would record them in.

A member handling a batch whole records a run per kind of event (:mod:`flowcore.engine._batches`:
a SEND run, a ROUTE run per route, an ATTRIBUTES_MODIFIED run, a DROP run). One by one, a
session records at its commit the events it reported (SEND, ROUTE ...), then each FlowFile's
CONTENT_MODIFIED or ATTRIBUTES_MODIFIED, then the DROPs of auto-terminated relationships, each
part in the order it came to hold its FlowFiles (:mod:`flowcore.session._provenance`). A
processor that supports NiFi's run-duration batching has up to ``BATCH_TRIGGERS`` (1,000)
FlowFiles in a session; any other one a session per FlowFile, so SEND, DROP, SEND, DROP ...

:class:`SessionOrder` places every event of the runs a member recorded in one drain where that
order puts it: the member's FlowFiles in the order they came (batch after batch), cut into
sessions as the one-by-one path would cut them, and inside a session by part, FlowFile and the
order the runs were recorded in. Runs whose events end up interleaved become one
:class:`~flowcore.provenance_events.InterleavedRuns`, which the provenance repository gives
consecutive ids in that order while keeping each run a run; a run whose events stay together is
passed on as it is.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np

from flowcore.flowfile_batch import FlowFileBatch
from flowcore.provenance_events import InterleavedRuns, ProvenanceEventRun

__all__ = ["DROPPED", "RECORDED", "REPORTED", "SessionOrder"]

#: The parts of a session's commit, in order: events the processor reported (SEND, ROUTE, a
#: CONTENT_MODIFIED it reported), events the session records per FlowFile (CONTENT_MODIFIED,
#: ATTRIBUTES_MODIFIED), and the DROPs of auto-terminated relationships.
REPORTED, RECORDED, DROPPED = 0, 1, 2
_PARTS = 3


class SessionOrder:
    """Collects the runs a member records in one drain of its batches, then orders them.

    Args:
        per_session: FlowFiles in one session of the one-by-one path (1, or the run-duration
            batching's trigger count).
        filled: FlowFiles of the session the previous drain left open (its sessions go on).
    """

    def __init__(self, per_session: int, filled: int = 0) -> None:
        self.per_session = max(1, per_session)
        self.filled = filled % self.per_session
        self._rows = 0  # FlowFiles of the batches started so far
        self._batch: FlowFileBatch | None = None
        self._index: _RowIndex | None = None
        self._entries: list[tuple[ProvenanceEventRun, np.ndarray, int]] = []

    def start(self, batch: FlowFileBatch) -> None:
        """The runs added next are of *batch*'s FlowFiles, which follow the earlier batches'."""
        if self._batch is not None:
            self._rows += self._batch.count
        self._batch = batch
        self._index = None

    def add(self, runs: Iterable[ProvenanceEventRun | None], part: int) -> None:
        """Runs of the current batch's FlowFiles, of one *part* of a commit, in their order."""
        for run in runs:
            if run is None or not run.count:
                continue
            if self._index is None:
                assert self._batch is not None, "start a batch first"
                self._index = _RowIndex(self._batch)
            self._entries.append((run, self._rows + self._index.rows(run), part))

    def close(self) -> tuple[list[ProvenanceEventRun | InterleavedRuns], int]:
        """The runs in the one-by-one order, and the FlowFiles of the session left open."""
        rows = self._rows + (self._batch.count if self._batch is not None else 0)
        filled = (self.filled + rows) % self.per_session
        entries = self._entries
        if len(entries) < 2:
            return [run for run, _, _ in entries], filled
        placed = _placed(entries, rows, self.filled, self.per_session)
        return _grouped(placed), filled


class _RowIndex:
    """Where in a batch each FlowFile of a run of its events is, by uuid number."""

    def __init__(self, batch: FlowFileBatch) -> None:
        numbers = batch.uuid_numbers
        self.count = len(numbers)
        self.first = int(numbers[0]) if self.count else 0
        steps = np.diff(numbers)
        self.consecutive = bool(steps.size == 0 or (steps == 1).all())
        self.order: np.ndarray | None = None
        self.sorted: np.ndarray | None = None
        if not self.consecutive:
            self.order = np.argsort(numbers, kind="stable")
            self.sorted = numbers[self.order]

    def rows(self, run: ProvenanceEventRun) -> np.ndarray:
        numbers = run.uuid_numbers
        if self.consecutive:
            return numbers - self.first
        assert self.order is not None
        assert self.sorted is not None
        return self.order[np.searchsorted(self.sorted, numbers)]


def _placed(
    entries: list[tuple[ProvenanceEventRun, np.ndarray, int]],
    rows: int,
    filled: int,
    per_session: int,
) -> list[tuple[ProvenanceEventRun, np.ndarray]]:
    """Each run with the place of each of its events among all of them.

    FlowFile *q* (in the order the member took them) is in session ``(q + filled) //
    per_session``. An event's place is: the events of earlier sessions, then those of earlier
    parts of its session, then those of its part for earlier FlowFiles of the session, then
    those of earlier runs of its part for its own FlowFile.
    """
    used = sorted({part for _, _, part in entries})
    if _each_once(entries, rows, used):
        return _placed_once(entries, rows, filled, per_session, used)
    counts = np.zeros((_PARTS, rows), dtype=np.int64)
    for _, flowfiles, part in entries:
        counts[part, flowfiles] += 1
    before = np.zeros((_PARTS, rows + 1), dtype=np.int64)  # events of FlowFiles before q
    np.cumsum(counts, axis=1, out=before[:, 1:])
    everything = before.sum(axis=0)
    seen = np.zeros((_PARTS, rows), dtype=np.int64)  # earlier runs' events of q, per part
    placed = []
    for run, flowfiles, part in entries:
        session_start = (flowfiles + filled) // per_session * per_session - filled
        start = np.maximum(session_start, 0)
        stop = np.minimum(session_start + per_session, rows)
        place = everything[start]
        for earlier in range(part):
            place = place + before[earlier, stop] - before[earlier, start]
        place = place + before[part, flowfiles] - before[part, start] + seen[part, flowfiles]
        seen[part, flowfiles] += 1
        placed.extend(_rising(run, place))
    return placed


def _each_once(
    entries: list[tuple[ProvenanceEventRun, np.ndarray, int]], rows: int, used: list[int]
) -> bool:
    """Whether each part's runs hold one event of every FlowFile.

    PutFile's SENDs and DROPs, a ROUTE run per route: the common case, placed without counting.
    """
    for part in used:
        runs = [flowfiles for _, flowfiles, each in entries if each == part]
        if sum(len(f) for f in runs) != rows:
            return False
        if len(runs) > 1:  # together exactly once each (a run names a FlowFile once)
            seen = np.zeros(rows, dtype=bool)
            for flowfiles in runs:
                if seen[flowfiles].any():
                    return False
                seen[flowfiles] = True
    return True


def _placed_once(
    entries: list[tuple[ProvenanceEventRun, np.ndarray, int]],
    rows: int,
    filled: int,
    per_session: int,
    used: list[int],
) -> list[tuple[ProvenanceEventRun, np.ndarray]]:
    """:func:`_placed` when each part has one event per FlowFile.

    A session of *n* FlowFiles then holds *n* events of each part, in turn.
    """
    width = len(used)
    placed = []
    for run, flowfiles, part in entries:
        before = used.index(part)
        if per_session == 1:
            place = flowfiles * width + before
        else:
            session_start = (flowfiles + filled) // per_session * per_session - filled
            start = np.maximum(session_start, 0)
            stop = np.minimum(session_start + per_session, rows)
            place = start * width + before * (stop - start) + (flowfiles - start)
        placed.extend(_rising(run, place))
    return placed


def _rising(
    run: ProvenanceEventRun, places: np.ndarray
) -> list[tuple[ProvenanceEventRun, np.ndarray]]:
    """*run* cut where its places fall back, so each piece's events rise (ids rise in a row)."""
    falls = np.flatnonzero(np.diff(places) < 0) + 1
    if not falls.size:
        return [(run, places)]
    edges = [0, *falls.tolist(), run.count]
    return [(run.cut(a, b), places[a:b]) for a, b in itertools.pairwise(edges)]


def _grouped(
    placed: list[tuple[ProvenanceEventRun, np.ndarray]],
) -> list[ProvenanceEventRun | InterleavedRuns]:
    """The runs in the order of their first events, those whose events interleave as groups.

    Runs whose places span overlapping stretches form a group, its places counted from its
    first event; a run alone in its stretch is passed on as it is (its events are consecutive).
    """
    placed = sorted(placed, key=lambda item: int(item[1][0]))
    made: list[ProvenanceEventRun | InterleavedRuns] = []
    group: list[tuple[ProvenanceEventRun, np.ndarray]] = []
    reach = -1
    for run, places in placed:
        first = int(places[0])
        if group and first > reach:
            made.append(_group(group))
            group = []
        group.append((run, places))
        reach = max(reach, int(places[-1]))
    if group:
        made.append(_group(group))
    return made


def _group(
    members: list[tuple[ProvenanceEventRun, np.ndarray]],
) -> ProvenanceEventRun | InterleavedRuns:
    if len(members) == 1:
        return members[0][0]
    base = int(members[0][1][0])
    return InterleavedRuns(
        tuple(run for run, _ in members), tuple(places - base for _, places in members)
    )
