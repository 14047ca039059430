"""Tests for runs of provenance events: folding in tasks, unfolding in every query."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Index, MetaData, String, Table, create_engine, func, select

from flowcore.flowfile import UUID_PREFIX_LENGTH, ContentClaim, CountedUuids, ResourceClaim, Rope
from flowcore.flowfile_batch.columns import column_of
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventRun, ProvenanceEventType
from repositories._provenance_rows import (
    BUCKET_BITS,
    FILE_MAGIC,
    ROW_COLUMNS,
    event_record,
    link_ranges,
    uuid_at,
    uuid_position,
    uuids_from_text,
    uuids_text,
)
from repositories._provenance_runs import MAX_RUN, EventFolder
from repositories._provenance_schema import EVENTS, LINKS
from repositories._wal_codec import pack
from repositories.memory import MemoryProvenanceRepository
from repositories.provenance import SqlProvenanceRepository

PREFIXES = ("0123abcd-0000-4000-8000-0000", "fedcba98-1111-4222-9333-4444")
RESOURCES = (ResourceClaim("default", "1", "a"), ResourceClaim("default", "2", "b"))


def canonical(prefix: int, number: int) -> str:
    return f"{PREFIXES[prefix]}{number:08x}"


def created(uuid: str, time: int = 1_000, offset: int = 0, **fields: object) -> ProvenanceEvent:
    """A CREATE as GenerateFlowFile reports it: filename and uuid attributes are the uuid."""
    return ProvenanceEvent(
        event_type=ProvenanceEventType.CREATE,
        flowfile_uuid=uuid,
        component_id="gen-1",
        component_type="GenerateFlowFile",
        event_time=time,
        file_size=100,
        updated_attributes={"filename": uuid, "path": "./", "uuid": uuid},
        content_claim=ContentClaim(RESOURCES[0], offset, 100),
        **fields,  # type: ignore[arg-type]
    )


def joined(parents: list[str]) -> ProvenanceEvent:
    """MergeContent's JOIN of *parents* into a FlowFile of another prefix."""
    return ProvenanceEvent(
        event_type=ProvenanceEventType.JOIN,
        flowfile_uuid=canonical(1, 0),
        component_id="merge-1",
        component_type="MergeContent",
        event_time=2_000,
        parent_uuids=tuple(parents),
        child_uuids=(canonical(1, 0),),
    )


def test_uuid_positions_name_a_bucket_and_a_number() -> None:
    """A canonical uuid's key is its bucket's first uuid; an odd one is its own key."""
    uuid = canonical(0, (3 << BUCKET_BITS) + 5)
    key, number = uuid_position(uuid)
    assert (key, number) == (canonical(0, 3 << BUCKET_BITS), (3 << BUCKET_BITS) + 5)
    assert uuid_at(key, number) == uuid
    assert uuid_position("ff-1") == ("ff-1", -1)
    assert uuid_position(canonical(0, 0xABC).upper()) == (canonical(0, 0xABC).upper(), -1)
    assert uuid_at("ff-1", -1) == "ff-1"


def test_link_ranges_join_neighbours_within_a_bucket() -> None:
    """Consecutive uuids make one range; a bucket edge, a gap or another prefix starts anew."""
    edge = MAX_RUN - 2
    uuids = [canonical(0, n) for n in (edge, edge + 1, edge + 2, edge + 3, edge + 5)]
    uuids += [canonical(1, 7), "odd", "odd"]
    key0, key1 = uuid_position(canonical(0, 0))[0], uuid_position(canonical(0, MAX_RUN))[0]
    assert link_ranges(uuids) == [
        (key0, edge, edge + 1),
        (key1, edge + 2, edge + 3),
        (key1, edge + 5, edge + 5),
        (uuid_position(canonical(1, 7))[0], 7, 7),
        ("odd", -1, -1),
        ("odd", -1, -1),
    ]


@given(
    runs=st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 3 * MAX_RUN), st.integers(0, 2 * MAX_RUN)),
        max_size=4,
    )
)
def test_counted_uuids_give_the_ranges_and_text_of_their_uuids(
    runs: list[tuple[int, int, int]],
) -> None:
    """Runs are cut into link ranges covering every uuid (those of the uuids one by one when
    each run moves by 1), and stored compactly."""
    counted = CountedUuids(
        (canonical(prefix, 0)[:UUID_PREFIX_LENGTH], first, count) for prefix, first, count in runs
    )
    spelled = tuple(counted)
    ranges = link_ranges(counted)
    for text in spelled:
        key, number = uuid_position(text)
        assert any(k == key and lo <= number <= hi for k, lo, hi in ranges)
    if all(step == 1 for *_, step in counted.runs):
        assert ranges == link_ranges(spelled)
    assert uuids_from_text(uuids_text(counted)) == spelled
    assert len(uuids_text(counted)) <= 100 * (len(runs) + 1)
    assert uuids_from_text(uuids_text(spelled)) == spelled


def test_a_join_of_every_eighth_parent_is_found_from_its_parents_only(tmp_path: Path) -> None:
    """A JOIN whose parents are every eighth uuid is stored as a range or two, and lineage
    finds it from each parent but not from a uuid between them."""
    repo = SqlProvenanceRepository(tmp_path / "p.db")
    uuids = [canonical(0, i) for i in range(3, 3 + 8 * 40, 8)]
    prefix = uuids[0][:UUID_PREFIX_LENGTH]
    counted = CountedUuids((prefix, 3 + 8 * i, 1) for i in range(40))
    assert counted.runs == ((prefix, 3, 40, 8),)
    join = attrs.evolve(joined(uuids), parent_uuids=counted)
    (stored,) = repo.register([join])
    assert stored.parent_uuids == tuple(uuids)
    assert uuids[7] in stored.parent_uuids
    assert canonical(0, 4) not in stored.parent_uuids
    assert f"event:{stored.event_id}" in repo.lineage(uuids[7]).nodes
    assert f"event:{stored.event_id}" not in repo.lineage(canonical(0, 12)).nodes
    repo.close()


def test_a_join_of_counted_parents_is_stored_and_found_as_their_uuids(tmp_path: Path) -> None:
    """A JOIN whose parents are runs reads back equal to one naming each parent."""
    repo = SqlProvenanceRepository(tmp_path / "p.db")
    uuids = [canonical(0, i) for i in range(MAX_RUN - 5, MAX_RUN + 5)]
    prefix = uuids[0][:UUID_PREFIX_LENGTH]
    join = attrs.evolve(joined(uuids), parent_uuids=CountedUuids([(prefix, MAX_RUN - 5, 10)]))
    (stored,) = repo.register([join])
    assert stored.parent_uuids == tuple(uuids)
    assert repo.get(stored.event_id) == stored
    assert repo.search(flowfile_uuid=stored.flowfile_uuid) == [stored]
    assert set(uuids) <= set(repo.lineage(uuids[3]).nodes)  # found through the link ranges
    repo.close()


def test_alike_events_of_neighbouring_flowfiles_fold_into_runs_within_a_bucket() -> None:
    """10,000 CREATEs of consecutive uuids are one record per bucket they touch."""
    folder = EventFolder()
    start = MAX_RUN - 100
    folder.add(created(canonical(0, start + i), 1_000 + i // 7, 100 * i) for i in range(10_000))
    assert len(folder) == 10_000
    records = folder.finish()
    assert len(records) == 2
    assert len(folder) == 0


@pytest.mark.parametrize(
    "second",
    [
        created(canonical(0, 2)),  # a gap in the uuids
        created(canonical(1, 1)),  # another prefix
        attrs.evolve(created(canonical(0, 1)), component_id="gen-2"),
        attrs.evolve(created(canonical(0, 1)), updated_attributes={"filename": "x.txt"}),
        attrs.evolve(created(canonical(0, 1)), content_claim=ContentClaim(RESOURCES[1], 0, 1)),
        attrs.evolve(created(canonical(0, 1)), child_uuids=("c",)),
        attrs.evolve(
            created(canonical(0, 1)),
            content_claim=Rope(
                [ContentClaim(RESOURCES[0], 0, 1), ContentClaim(RESOURCES[1], 0, 1)]
            ),
        ),
    ],
    ids=["gap", "prefix", "component", "attributes", "resource", "children", "rope"],
)
def test_anything_unlike_starts_a_new_record(second: ProvenanceEvent) -> None:
    """Folding stops at the first difference it could not unfold exactly."""
    folder = EventFolder()
    folder.add([created(canonical(0, 0)), second])
    assert len(folder.finish()) == 2


# --- the repository unfolds exactly what was folded --------------------------------------------

_TYPES = st.sampled_from(
    [ProvenanceEventType.CREATE, ProvenanceEventType.DROP, ProvenanceEventType.ATTRIBUTES_MODIFIED]
)


@st.composite
def event_runs(draw: st.DrawFn) -> list[ProvenanceEvent]:
    """Events as sessions report them: stretches of neighbouring FlowFiles, and links."""
    events: list[ProvenanceEvent] = []
    for _ in range(draw(st.integers(1, 6))):
        prefix = draw(st.integers(0, 1))
        start = draw(st.sampled_from([0, 3, MAX_RUN - 4, 2 * MAX_RUN - 1]))
        kind = draw(_TYPES)
        component = draw(st.sampled_from(["gen-1", "tag-1"]))
        named = draw(st.sampled_from([("filename", "uuid"), ("uuid",)]))
        extra = draw(st.sampled_from([{}, {"k": "v"}, {"k": "w", "source": "bench"}]))
        resource = draw(st.sampled_from([None, *RESOURCES]))
        for i in range(draw(st.integers(1, 12))):
            number = start + i + (1 if draw(st.integers(0, 9)) == 0 else 0)
            uuid = canonical(prefix, number)
            attributes = {**dict.fromkeys(named, uuid), **extra}
            if "filename" not in named:
                attributes["filename"] = draw(st.sampled_from(["a.log", "b.log"]))
            claim = None if resource is None else ContentClaim(resource, 100 * i, 100)
            events.append(
                ProvenanceEvent(
                    event_type=kind,
                    flowfile_uuid=uuid,
                    component_id=component,
                    component_type="T",
                    event_time=1_000 + draw(st.integers(0, 3)) + i,
                    file_size=draw(st.sampled_from([100, 7])),
                    event_duration=draw(st.integers(0, 2)),
                    previous_attributes=attributes
                    if kind is not ProvenanceEventType.CREATE
                    else {},
                    updated_attributes=(
                        attributes if kind is ProvenanceEventType.CREATE else {"x": "1"}
                    ),
                    content_claim=claim,
                    previous_content_claim=claim
                    if kind is not ProvenanceEventType.CREATE
                    else None,
                    previous_file_size=None if kind is ProvenanceEventType.CREATE else 100,
                )
            )
        if draw(st.booleans()):  # a JOIN of what came so far, or a FORK of the last one
            subjects = [e.flowfile_uuid for e in events[-20:]]
            child = canonical(prefix, 3 * MAX_RUN + len(events))
            join = draw(st.booleans())
            events.append(
                ProvenanceEvent(
                    event_type=ProvenanceEventType.JOIN if join else ProvenanceEventType.FORK,
                    flowfile_uuid=child if join else subjects[-1],
                    component_id="merge-1",
                    component_type="MergeContent",
                    event_time=2_000,
                    parent_uuids=tuple(dict.fromkeys(subjects)) if join else (subjects[-1],),
                    child_uuids=(child, "odd-child") if not join else (child,),
                )
            )
    return events


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=event_runs(), data=st.data())
def test_runs_unfold_into_the_very_events_that_were_folded(
    tmp_path_factory: pytest.TempPathFactory, events: list[ProvenanceEvent], data: st.DataObject
) -> None:
    """Indexed through event files, every query answers as if each event had its own row."""
    root = tmp_path_factory.mktemp("runs")
    repo = SqlProvenanceRepository(root / "p.db")
    memory = MemoryProvenanceRepository()
    expected = memory.register(events)
    writer = repo.writer("t")
    writer.append(events)
    name = writer.close(sync=False)
    assert name is not None
    assert repo.index_files([name]) == len(events)
    assert repo.count() == len(events)
    assert [repo.get(e.event_id) for e in expected] == expected
    assert repo.search(limit=10_000) == expected
    probe = data.draw(st.sampled_from(expected))
    for query in (
        {"flowfile_uuid": probe.flowfile_uuid},
        {"filename": probe.filename},
        {"start": probe.event_time, "end": probe.event_time + 1},
        {"event_type": probe.event_type, "component_id": probe.component_id},
        {"attributes": {"k": "v"}},
        {"flowfile_uuid": probe.flowfile_uuid, "limit": 1},
    ):
        assert repo.search(**query) == memory.search(**query), query  # type: ignore[arg-type]
    sql_graph, memory_graph = repo.lineage(probe.flowfile_uuid), memory.lineage(probe.flowfile_uuid)
    assert set(sql_graph.nodes) == set(memory_graph.nodes)
    assert set(sql_graph.edges) == set(memory_graph.edges)
    repo.close()


def test_a_run_is_one_row_and_its_links_are_ranges(tmp_path: Path) -> None:
    """10,000 CREATEs and the JOIN of them take a few rows, not 20,000."""
    repo = SqlProvenanceRepository(tmp_path / "p.db")
    uuids = [canonical(0, i) for i in range(10_000)]
    join = joined(uuids)
    stored = repo.register([*(created(u, 1_000, 100 * i) for i, u in enumerate(uuids)), join])
    with repo.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(EVENTS)).scalar() == 2
        assert conn.execute(select(func.count()).select_from(LINKS)).scalar() == 2
    assert repo.get(7_777) == stored[7_777]
    assert repo.get(7_777).content_claim == ContentClaim(RESOURCES[0], 777_700, 100)
    assert repo.search(filename=uuids[42]) == [stored[42]]
    assert repo.search(flowfile_uuid=uuids[42]) == [stored[42]]
    lineage = repo.lineage(uuids[0])  # the JOIN names all 10,001; events stop at 1,000
    assert len(lineage.nodes) == 10_001 + 1_000
    repo.close()


def _copy(column: Column) -> Column:
    return Column(column.name, column.type, primary_key=column.primary_key)


def test_a_database_from_before_runs_is_upgraded_keeping_every_event(tmp_path: Path) -> None:
    """Rows of the old one-row-per-event schema become runs of one; ids and links stay."""
    run_columns = {"uuid_key", "uuid_first", "uuid_last", "run_count", "last_event_time"}
    old = MetaData()
    Table(
        EVENTS.name,
        old,
        *(_copy(c) for c in EVENTS.columns if c.name not in {*run_columns, "run_data"}),
        Index("ix_provenance_event_uuid", "flowfile_uuid"),
        Index("ix_provenance_event_time", "event_time"),
    )
    Table(
        LINKS.name,
        old,
        *(_copy(c) for c in LINKS.columns if c.name not in run_columns),
        Column("uuid", String(64), nullable=False),
        Index("ix_provenance_link_uuid", "uuid"),
    )
    path = tmp_path / "p.db"
    engine = create_engine(f"sqlite:///{path}")
    old.create_all(engine)
    uuids = [canonical(0, 1), canonical(0, 2)]
    with engine.begin() as conn:
        for event_id, uuid in enumerate([*uuids, canonical(1, 9)]):
            row = {c.name: None for c in old.tables[EVENTS.name].columns}
            row.update(
                event_id=event_id,
                event_time=1_000 + event_id,
                event_type="JOIN" if event_id == 2 else "CREATE",
                flowfile_uuid=uuid,
                filename=uuid,
                component_id="gen-1",
                component_type="GenerateFlowFile",
                file_size=0,
                parent_uuids="[]" if event_id < 2 else f'["{uuids[0]}", "{uuids[1]}"]',
                child_uuids="[]" if event_id < 2 else f'["{uuid}"]',
                previous_attributes="{}",
                updated_attributes=f'{{"filename": "{uuid}"}}',
                size_bytes=200,
            )
            conn.execute(old.tables[EVENTS.name].insert(), row)
        links = [(2, u, "p") for u in uuids] + [(2, canonical(1, 9), "c")]
        conn.execute(
            old.tables[LINKS.name].insert(),
            [{"event_id": e, "uuid": u, "role": r} for e, u, r in links],
        )
    engine.dispose()
    repo = SqlProvenanceRepository(path)
    assert repo.count() == 3
    assert repo.get(2).parent_uuids == tuple(uuids)
    assert [e.event_id for e in repo.search(filename=uuids[1])] == [1]
    assert {n for n in repo.lineage(uuids[0]).nodes if n.startswith("event:")} == {
        "event:0",
        "event:1",
        "event:2",
    }
    stored = repo.register([created(canonical(0, 3))])
    assert stored[0].event_id == 3
    repo.close()


@pytest.mark.parametrize("start", [0, MAX_RUN - 3])
def test_a_batch_run_is_stored_as_it_is_and_unfolds_into_each_flowfile_event(
    tmp_path: Path, start: int
) -> None:
    """A batch's events need no folding: a record per bucket, the same events back."""
    first = created(canonical(0, start), 1_000, 500)
    first = attrs.evolve(first, previous_content_claim=ContentClaim(RESOURCES[1], 40, 100))
    steps = np.arange(7)
    run = ProvenanceEventRun(
        first,
        start + steps,
        uuid_named=((), ("filename", "uuid")),
        offsets=500 + 100 * steps,
        sizes=np.full(7, 100),
        previous_offsets=40 + 100 * steps,
        previous_sizes=np.full(7, 100),
        resource=first.content_claim.resource_claim,  # type: ignore[union-attr]
        previous_resource=RESOURCES[1],
    )
    events = run.events()
    assert [e.content_claim.offset for e in events] == [500 + 100 * i for i in range(7)]  # type: ignore[union-attr]
    assert events[3].filename == canonical(0, start + 3)
    repo = SqlProvenanceRepository(tmp_path / "p.db")
    writer = repo.writer("t")
    writer.append([created("odd"), run])
    name = writer.close(sync=False)
    assert name is not None
    assert repo.index_files([name]) == 8
    expected = [attrs.evolve(e, event_id=i) for i, e in enumerate([created("odd"), *events])]
    assert repo.search() == expected
    with repo.engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(EVENTS)).scalar()
    assert rows == (2 if start == 0 else 3)
    repo.close()


def test_an_event_file_of_version_1_left_by_a_crash_is_still_indexed(tmp_path: Path) -> None:
    """Event files written before runs (a row per event, links as uuids) index as before."""
    join = joined([canonical(0, 1), canonical(0, 2)])
    old_columns = ROW_COLUMNS.index("uuid_key")  # the columns before runs
    records = [
        [event_record(e, ())[0][:old_columns], list(e.parent_uuids), list(e.child_uuids), []]
        for e in (created(canonical(0, 1)), join)
    ]
    payload = pack(records)
    events = tmp_path / "events"
    events.mkdir()
    (events / "old.events").write_bytes(
        FILE_MAGIC + struct.pack(">HI", 1, zlib.crc32(payload)) + payload
    )
    repo = SqlProvenanceRepository(tmp_path / "p.db", event_directory=events)
    assert repo.index_files(["old.events"]) == 2
    assert repo.get(1).parent_uuids == join.parent_uuids
    assert {n for n in repo.lineage(canonical(0, 1)).nodes if n.startswith("event:")} == {
        "event:0",
        "event:1",
    }
    repo.close()


def test_a_sparse_strided_run_links_each_uuid_on_its_own() -> None:
    """Parents far apart (two uuids millions apart) make a row each, not a row per bucket
    between them."""
    prefix = canonical(0, 0)[:UUID_PREFIX_LENGTH]
    counted = CountedUuids([(prefix, 5, 1), (prefix, 9_000_000, 1)])
    assert link_ranges(counted) == link_ranges(tuple(counted))
    assert len(link_ranges(counted)) == 2


@pytest.mark.parametrize("start", [0, MAX_RUN - 3])
def test_a_run_naming_a_transit_uri_per_event_gives_each_event_its_own(
    tmp_path: Path, start: int
) -> None:
    """SENDs to one file each (PutFile's) stay one run; search, get and lineage find each
    event with its own transit URI, as the events were reported one by one."""
    first = ProvenanceEvent(
        event_type=ProvenanceEventType.SEND,
        flowfile_uuid=canonical(0, start),
        component_id="put-1",
        component_type="PutFile",
        event_time=1_000,
        file_size=100,
        previous_attributes={"filename": "same", "uuid": canonical(0, start)},
        transit_uri="file:///out/0/same",
        content_claim=ContentClaim(RESOURCES[0], 0, 100),
    )
    steps = np.arange(6)
    uris = [f"file:///out/{i % 4}/same" for i in range(6)]
    run = ProvenanceEventRun(
        first,
        start + steps,
        uuid_named=(("uuid",), ()),
        offsets=100 * steps,
        sizes=np.full(6, 100),
        resource=RESOURCES[0],
        transit_uris=column_of(uris),
    )
    events = run.events()
    assert [e.transit_uri for e in events] == uris
    assert [e.transit_uri for e in run.cut(2, 5).events()] == uris[2:5]
    repo = SqlProvenanceRepository(tmp_path / "p.db")
    writer = repo.writer("t")
    writer.append([run])
    name = writer.close(sync=False)
    assert name is not None
    assert repo.index_files([name]) == 6
    expected = [attrs.evolve(e, event_id=i) for i, e in enumerate(events)]
    assert repo.search() == expected
    assert repo.get(4) == expected[4]
    assert repo.search(flowfile_uuid=canonical(0, start + 3)) == [expected[3]]
    with repo.engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(EVENTS)).scalar()
    assert rows == (1 if start == 0 else 2)  # runs, not a row per event
    repo.close()


# --- retention: runs expire event by event, as if each event had its own row ----------------


def _folded_and_alone(root: Path, events: list, **limits: str) -> tuple:
    """The events in a repository that folds them into runs and in one storing each alone."""
    folded = SqlProvenanceRepository(root / "folded.db", **limits)  # type: ignore[arg-type]
    writer = folded.writer("t")
    writer.append(events)
    name = writer.close(sync=False)
    assert name is not None
    folded.index_files([name])
    alone = SqlProvenanceRepository(root / "alone.db", **limits)  # type: ignore[arg-type]
    for each in events:
        for single in each.events() if isinstance(each, ProvenanceEventRun) else [each]:
            alone.register([single])
    return folded, alone


def _assert_alike(folded: SqlProvenanceRepository, alone: SqlProvenanceRepository) -> None:
    """The same events, found the same way by uuid, filename and lineage."""
    survivors = alone.search(limit=100_000)
    assert folded.search(limit=100_000) == survivors
    assert folded.count() == alone.count() == len(survivors)
    for probe in survivors[:: max(1, len(survivors) // 5)]:
        assert folded.get(probe.event_id) == probe
        for query in ({"flowfile_uuid": probe.flowfile_uuid}, {"filename": probe.filename}):
            assert folded.search(**query) == alone.search(**query), query  # type: ignore[arg-type]
        assert set(folded.lineage(probe.flowfile_uuid).edges) == set(
            alone.lineage(probe.flowfile_uuid).edges
        )


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=event_runs(), data=st.data())
def test_retention_by_age_expires_the_old_events_of_a_run_that_straddles_the_cutoff(
    tmp_path_factory: pytest.TempPathFactory, events: list[ProvenanceEvent], data: st.DataObject
) -> None:
    """A run whose events are older and younger than the cutoff loses the older ones only:
    the survivors, their ids and every query over them are those of events stored alone."""
    times = sorted({e.event_time for e in events})
    cutoff = data.draw(st.sampled_from([times[0] - 1, *times, times[-1] + 1]))
    folded, alone = _folded_and_alone(
        tmp_path_factory.mktemp("age"), events, max_storage_time="1 sec"
    )
    removed = alone.purge(now=cutoff + 1_000)
    assert folded.purge(now=cutoff + 1_000) == removed
    assert all(e.event_time >= cutoff for e in alone.search(limit=100_000))
    _assert_alike(folded, alone)
    folded.close()
    alone.close()


def _size_of(event: ProvenanceEvent) -> int:
    return int(event_record(event, ())[0][ROW_COLUMNS.index("size_bytes")])


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=event_runs(), share=st.floats(0, 1))
def test_retention_by_size_counts_each_event_of_a_run_as_stored_alone(
    tmp_path_factory: pytest.TempPathFactory, events: list[ProvenanceEvent], share: float
) -> None:
    """The oldest events go while the store is over its size, each counted as if stored alone:
    a run loses just its oldest events, and the same events survive as stored one a row."""
    limit = int(share * sum(_size_of(e) for e in events))
    folded, alone = _folded_and_alone(
        tmp_path_factory.mktemp("size"), events, max_storage_size=f"{limit} B"
    )
    removed = alone.purge(now=0)
    assert folded.purge(now=0) == removed
    _assert_alike(folded, alone)
    folded.close()
    alone.close()


@pytest.mark.parametrize("start", [0, MAX_RUN - 3])
def test_a_batch_run_counts_the_size_of_each_event_and_expires_by_size_event_by_event(
    tmp_path: Path, start: int
) -> None:
    """A batch's run, its attributes varying by column (a number, a text, one absent), is
    counted as its events stored alone, and retention by size cuts it where they would."""
    steps = np.arange(9)
    first = ProvenanceEvent(
        event_type=ProvenanceEventType.ATTRIBUTES_MODIFIED,
        flowfile_uuid=canonical(0, start),
        component_id="tag-1",
        component_type="UpdateAttribute",
        event_time=1_000,
        file_size=100,
        previous_attributes={"filename": "a.log", "uuid": canonical(0, start), "n": "0"},
        updated_attributes={"group": "x", "note": "é\n"},
        content_claim=ContentClaim(RESOURCES[0], 0, 100),
    )
    run = ProvenanceEventRun(
        first,
        start + 2 * steps,
        uuid_named=(("uuid",), ()),
        offsets=100 * steps,
        sizes=np.full(9, 100),
        resource=RESOURCES[0],
        previous_columns={"n": column_of([str(10**i) for i in range(9)])},
        updated_columns={
            "group": column_of(["x", "yy", "x", "zzz"] * 2 + ["x"]),
            "note": column_of(["é\n", None, '"q"'] * 3),
        },
    )
    sizes = [_size_of(e) for e in run.events()]
    folded, alone = _folded_and_alone(tmp_path, [run])
    with folded.engine.connect() as conn:
        stored = conn.execute(select(func.sum(EVENTS.c.size_bytes))).scalar()
    assert stored == sum(sizes)
    folded.close()
    alone.close()
    for keep in (1, 4, 8):
        limit = sum(sizes[-keep:])
        folded, alone = _folded_and_alone(
            tmp_path / str(keep), [run], max_storage_size=f"{limit} B"
        )
        assert folded.purge(now=0) == alone.purge(now=0) == 9 - keep
        _assert_alike(folded, alone)
        folded.close()
        alone.close()


@given(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=1, max_size=50))
def test_decimal_lengths_are_the_lengths_of_the_numbers_text(numbers: list[int]) -> None:
    """The sizes of a whole-number column are counted without writing its values."""
    from repositories._provenance_runs import _decimal_lengths

    got = _decimal_lengths(np.array(numbers, dtype=np.int64))
    assert got.tolist() == [len(str(n)) for n in numbers]
