"""Tests for interleaved runs in the provenance repository: each run a run, each event its id.

A group of runs (:class:`~flowcore.provenance_events.InterleavedRuns`) indexed from an event
file must answer every query (get, search, limits, lineage, count) and every retention as its
events registered one at a time in the group's order do, in a few rows.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select, text

from flowcore.flowfile import ContentClaim, ResourceClaim
from flowcore.flowfile_batch.columns import column_of
from flowcore.provenance_events import (
    InterleavedRuns,
    ProvenanceEvent,
    ProvenanceEventRun,
    ProvenanceEventType,
)
from repositories._provenance_ids import pack_ids, placed_records, relative_ids
from repositories._provenance_rows import FILE_MAGIC, ROW_COLUMNS, event_record
from repositories._provenance_runs import MAX_RUN, EventFolder
from repositories._provenance_schema import EVENTS
from repositories._wal_codec import pack
from repositories.provenance import SqlProvenanceRepository

PREFIX = "0123abcd-0000-4000-8000-0000"
RESOURCE = ResourceClaim("default", "1", "a")
KINDS = (ProvenanceEventType.SEND, ProvenanceEventType.ROUTE, ProvenanceEventType.DROP)


def _uuid(number: int) -> str:
    return f"{PREFIX}{number:08x}"


def _run(kind: int, numbers: np.ndarray, *, time: int, names: bool) -> ProvenanceEventRun:
    """A run of events of the FlowFiles *numbers*; *names*: each its own filename (stored
    event by event, as a row holds one filename)."""
    first = ProvenanceEvent(
        event_type=KINDS[kind],
        flowfile_uuid=_uuid(int(numbers[0])),
        component_id="step-1",
        component_type="Step",
        event_time=time,
        file_size=10,
        previous_attributes={"filename": "a.log", "uuid": _uuid(int(numbers[0]))},
        content_claim=ContentClaim(RESOURCE, int(numbers[0]) * 10, 10),
        source_queue_identifier="q",
        relationship="r" if KINDS[kind] is ProvenanceEventType.ROUTE else None,
    )
    updated = {"filename": column_of([f"f{n}" for n in numbers.tolist()])} if names else {}
    return ProvenanceEventRun(
        first,
        numbers,
        uuid_named=(("uuid",), ()),
        offsets=numbers * 10,
        sizes=np.full(len(numbers), 10),
        resource=RESOURCE,
        updated_columns=updated,
    )


@st.composite
def groups(draw: st.DrawFn) -> InterleavedRuns:
    """Runs over subsets of FlowFiles (some across a uuid bucket's edge), interleaved."""
    start = draw(st.sampled_from([0, MAX_RUN - 5]))
    flowfiles = draw(st.integers(2, 30))
    runs, labels = [], []
    for index in range(draw(st.integers(2, 4))):
        held = draw(st.lists(st.booleans(), min_size=flowfiles, max_size=flowfiles))
        rows = np.flatnonzero(held)
        if not rows.size:
            continue
        kind = draw(st.integers(0, 2))
        names = draw(st.booleans()) and index == 0
        runs.append(_run(kind, start + rows, time=1_000 + 100 * index, names=names))
        labels += [len(runs) - 1] * rows.size
    if len(runs) < 2:
        runs.append(_run(2, np.array([start + flowfiles]), time=1_000, names=False))
        labels.append(len(runs) - 1)
    order = np.array(draw(st.permutations(labels)))
    positions = tuple(np.flatnonzero(order == i) for i in range(len(runs)))
    return InterleavedRuns(tuple(runs), positions)


def _single(number: int) -> ProvenanceEvent:
    return ProvenanceEvent(
        ProvenanceEventType.CREATE, _uuid(number), "gen-1", "Gen", event_time=900 + number
    )


def _twins(root: Path, group: InterleavedRuns, **limits: str) -> tuple:
    """The group between two events, indexed from an event file and registered one by one."""
    before, after = _single(9_000_000), _single(9_000_001)
    grouped = SqlProvenanceRepository(root / "grouped.db", **limits)  # type: ignore[arg-type]
    writer = grouped.writer("t")
    writer.append([before, group, after])
    name = writer.close(sync=False)
    assert name is not None
    grouped.index_files([name])
    alone = SqlProvenanceRepository(root / "alone.db", **limits)  # type: ignore[arg-type]
    for event in [before, *group.events(), after]:
        alone.register([event])
    return grouped, alone


def _assert_alike(grouped: SqlProvenanceRepository, alone: SqlProvenanceRepository) -> None:
    """The same events with the same ids, found the same way."""
    survivors = alone.search(limit=100_000)
    assert grouped.search(limit=100_000) == survivors
    assert grouped.count() == alone.count() == len(survivors)
    for limit in (1, 3, len(survivors) // 2 + 1):
        assert grouped.search(limit=limit) == survivors[:limit]
    for kind in KINDS:
        assert grouped.search(event_type=kind, limit=2) == alone.search(event_type=kind, limit=2)
    for probe in survivors:
        assert grouped.get(probe.event_id) == probe
        for query in ({"flowfile_uuid": probe.flowfile_uuid}, {"filename": probe.filename}):
            assert grouped.search(**query) == alone.search(**query), query  # type: ignore[arg-type]
    for probe in survivors[:: max(1, len(survivors) // 4)]:
        mine, theirs = grouped.lineage(probe.flowfile_uuid), alone.lineage(probe.flowfile_uuid)
        assert set(mine.edges) == set(theirs.edges)
        assert dict(mine.nodes(data=True)) == dict(theirs.nodes(data=True))
    gone = set(range(alone.max_event_id() + 2)) - {e.event_id for e in survivors}
    for missing in sorted(gone)[:5]:  # expired, or never given
        with pytest.raises(KeyError, match=f"no provenance event with id {missing}"):
            grouped.get(missing)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(group=groups())
def test_interleaved_runs_answer_every_query_as_their_events_stored_alone(
    tmp_path_factory: pytest.TempPathFactory, group: InterleavedRuns
) -> None:
    """Ids in the group's order, get, search with limits, by uuid and filename, and lineage;
    each run a row per uuid bucket (or an event a row, where filenames differ)."""
    grouped, alone = _twins(tmp_path_factory.mktemp("group"), group)
    _assert_alike(grouped, alone)
    with grouped.engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(EVENTS)).scalar()
    named = sum(r.count for r in group.runs if r.updated_columns)
    assert rows <= 2 + named + 2 * len(group.runs)  # the two events, then runs
    grouped.close()
    alone.close()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(group=groups(), share=st.floats(0, 1))
def test_retention_by_size_expires_the_oldest_events_across_the_group(
    tmp_path_factory: pytest.TempPathFactory, group: InterleavedRuns, share: float
) -> None:
    """Oldest first means by id: the group's runs each lose their events older than the cut,
    wherever it falls among them, as events stored alone would."""
    every = [_single(9_000_000), *group.events(), _single(9_000_001)]
    limit = int(share * sum(event_record(e, ())[0][ROW_COLUMNS.index("size_bytes")] for e in every))
    grouped, alone = _twins(tmp_path_factory.mktemp("size"), group, max_storage_size=f"{limit} B")
    removed = alone.purge(now=0)
    assert grouped.purge(now=0) == removed
    _assert_alike(grouped, alone)
    grouped.close()
    alone.close()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(group=groups(), data=st.data())
def test_retention_by_age_keeps_the_younger_events_under_their_ids(
    tmp_path_factory: pytest.TempPathFactory, group: InterleavedRuns, data: st.DataObject
) -> None:
    """Runs of the group older than the cutoff go, younger ones stay, their ids kept."""
    times = sorted({r.first.event_time for r in group.runs})
    cutoff = data.draw(st.sampled_from([*times, times[-1] + 1]))
    grouped, alone = _twins(tmp_path_factory.mktemp("age"), group, max_storage_time="1 sec")
    removed = alone.purge(now=cutoff + 1_000)
    assert grouped.purge(now=cutoff + 1_000) == removed
    _assert_alike(grouped, alone)
    grouped.close()
    alone.close()


@settings(max_examples=200, deadline=None)
@given(
    count=st.integers(1, 60),
    shape=st.sampled_from(["consecutive", "strided", "sessions", "numbers", "any"]),
    data=st.data(),
)
def test_id_offsets_pack_small_and_unpack_exactly(
    count: int, shape: str, data: st.DataObject
) -> None:
    """Every rising offsets unpack to themselves; the usual shapes pack to a few numbers."""
    numbers = np.cumsum(data.draw(st.lists(st.integers(1, 3), min_size=count, max_size=count)))
    if shape == "consecutive":
        relative = np.arange(count)
    elif shape == "strided":
        relative = data.draw(st.integers(2, 5)) * np.arange(count)
    elif shape == "sessions":  # a session's run of 20, then the other parts' 20 events
        relative = np.arange(count) + 20 * (np.arange(count) // 20)
    elif shape == "numbers":
        relative = numbers - numbers[0]
    else:
        relative = np.cumsum(
            [0, *data.draw(st.lists(st.integers(1, 9), min_size=count - 1, max_size=count - 1))]
        )
    relative = np.asarray(relative, dtype=np.int64)
    packed = pack_ids(relative, numbers)
    assert relative_ids(packed, count, lambda: numbers).tolist() == relative.tolist()
    if shape == "consecutive":
        assert packed is None
    elif count > 16 and shape != "any":
        assert not isinstance(packed, bytes)


def test_a_groups_records_take_their_places_and_the_ids_after_them() -> None:
    """Records outside a group take the next ids; a group's take its first id plus their
    place, and that first id as their event_group."""
    group_column = ROW_COLUMNS.index("event_group")
    count_column = ROW_COLUMNS.index("run_count")

    def record(count: int, place: int | None) -> list:
        row = [None] * len(ROW_COLUMNS)
        row[count_column], row[group_column] = count, place
        return [tuple(row), [], [], []]

    records = [
        record(1, None),
        record(3, 0),
        record(2, 1),
        record(1, None),
        record(2, 0),
        record(2, 1),
    ]
    placed, next_id = placed_records(records, 10)
    assert [event_id for event_id, _ in placed] == [10, 11, 12, 16, 17, 18]
    assert [r[0][group_column] for _, r in placed] == [None, 11, 11, None, 17, 17]
    assert next_id == 21


def test_a_database_from_before_interleaved_runs_gets_the_column_and_reads_as_before(
    tmp_path: Path,
) -> None:
    """Rows of consecutive ids, stored before event_group existed, read back unchanged."""
    repo = SqlProvenanceRepository(tmp_path / "p.db")
    folder = EventFolder()
    folder.add([_run(1, np.arange(5, 12), time=1_000, names=False), _single(1)])
    stored = repo.register(_run(1, np.arange(5, 12), time=1_000, names=False).events())
    repo.close()
    engine = SqlProvenanceRepository(tmp_path / "p.db").engine
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE provenance_event DROP COLUMN event_group"))
    engine.dispose()
    repo = SqlProvenanceRepository(tmp_path / "p.db")
    assert repo.search() == stored
    assert [repo.get(e.event_id) for e in stored] == stored
    repo.close()


def test_an_event_file_of_version_2_is_still_indexed(tmp_path: Path) -> None:
    """Records without event_group (written before groups) index as consecutive ids."""
    run = _run(0, np.arange(3, 9), time=1_000, names=False)
    folder = EventFolder()
    folder.add([_single(1), run])
    records = [[record[0][:-1], *record[1:]] for record in folder.finish()]
    payload = pack(records)
    events = tmp_path / "events"
    events.mkdir()
    (events / "old.events").write_bytes(
        FILE_MAGIC + struct.pack(">HI", 2, zlib.crc32(payload)) + payload
    )
    repo = SqlProvenanceRepository(tmp_path / "p.db", event_directory=events)
    assert repo.index_files(["old.events"]) == 7
    assert [e.event_id for e in repo.search()] == list(range(7))
    assert repo.get(4).flowfile_uuid == _uuid(6)
    repo.close()
