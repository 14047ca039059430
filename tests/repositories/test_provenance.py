"""Tests for the SQL provenance repository: exactly-once indexing, queries, replay, retention.

Every test runs against a SQLite file. Set ``FLOWCORE_TEST_PROVENANCE_URL`` to any SQLAlchemy URL
(e.g. ``postgresql+psycopg://flowcore@localhost/flowcore_test``) to run them against that database
as well; its provenance tables are dropped before and after each test.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import attrs
import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.repositories._batch_runs as batch_runs
from flowcore.cli.provenance import replay_queues
from flowcore.errors import ReplayError, RepositoryError, WalCorruptionError
from flowcore.flowfile import ContentClaim, ResourceClaim, Rope
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from repositories._provenance_schema import METADATA
from repositories.content import FileContentRepository
from repositories.flowfile_wal import WriteAheadFlowFileRepository, iter_queue
from repositories.memory import MemoryContentRepository
from repositories.protocols import ProvenanceRepository
from repositories.provenance import EventFileWriter, SqlProvenanceRepository
from repositories.records import Transaction

EXTERNAL_URL = os.environ.get("FLOWCORE_TEST_PROVENANCE_URL")
BACKENDS = ["sqlite"] + (["external"] if EXTERNAL_URL else [])


@pytest.fixture(params=BACKENDS)
def make_repo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    """A factory of repositories on one store (call it again to 'restart')."""
    opened: list[SqlProvenanceRepository] = []

    def make(**options: object) -> SqlProvenanceRepository:
        if request.param == "sqlite":
            repo = SqlProvenanceRepository(tmp_path / "provenance.db", **options)  # type: ignore[arg-type]
        else:
            repo = SqlProvenanceRepository(
                EXTERNAL_URL,  # type: ignore[arg-type]
                event_directory=tmp_path / "events",
                **options,  # type: ignore[arg-type]
            )
        opened.append(repo)
        return repo

    if request.param == "external":
        first = make()
        METADATA.drop_all(first.engine)
        first.close()
        opened.clear()
    yield make
    for repo in opened:
        if request.param == "external":
            METADATA.drop_all(repo.engine)
        repo.close()


def event(
    kind: ProvenanceEventType = ProvenanceEventType.CREATE,
    uuid: str = "ff-1",
    time: int = 1_000,
    **fields: object,
) -> ProvenanceEvent:
    return ProvenanceEvent(
        event_type=kind,
        flowfile_uuid=uuid,
        component_id=str(fields.pop("component_id", "gen-1")),
        component_type="GenerateFlowFile",
        event_time=time,
        file_size=int(fields.pop("file_size", 10)),  # type: ignore[call-overload]
        **fields,  # type: ignore[arg-type]
    )


def test_satisfies_the_protocol(make_repo) -> None:
    """The SQL repository implements the ProvenanceRepository protocol."""
    assert isinstance(make_repo(), ProvenanceRepository)


def test_every_field_and_event_type_round_trips(make_repo) -> None:
    """Each of NiFi's event types is stored with every field intact and gets increasing ids."""
    claim = ContentClaim(ResourceClaim("default", "7", "1-x"), 5, 10)
    previous = ContentClaim(ResourceClaim("default", "8", "2-y"), 0, 3)
    originals = [
        ProvenanceEvent(
            event_type=kind,
            flowfile_uuid=f"ff-{n}",
            component_id="c-1",
            component_type="UpdateAttribute",
            event_time=1_700_000_000_000 + n,
            file_size=10,
            component_name="Tag",
            event_duration=4,
            entry_date=1_600_000_000_000,
            lineage_start_date=1_600_000_000_001,
            parent_uuids=("p-1", "p-2"),
            child_uuids=("c-1",),
            relationship="success",
            details="why",
            transit_uri="file:///in",
            source_system_flowfile_identifier="urn:x",
            alternate_identifier_uri="urn:alt",
            source_queue_identifier="q-1",
            previous_attributes={"filename": "a.txt", "k": "é"},
            updated_attributes={"k": "v2"},
            previous_content_claim=previous,
            content_claim=claim,
            previous_file_size=3,
        )
        for n, kind in enumerate(ProvenanceEventType)
    ]
    repo = make_repo()
    stored = repo.register(originals)
    assert [e.event_id for e in stored] == list(range(len(originals)))
    for original, saved in zip(originals, stored, strict=True):
        assert repo.get(saved.event_id) == saved
        assert {**_fields(repo.get(saved.event_id)), "event_id": -1} == _fields(original)
    assert repo.max_event_id() == len(originals) - 1


def _fields(e: ProvenanceEvent) -> dict:
    return attrs.asdict(e, recurse=False)


def test_ids_continue_after_a_restart(make_repo) -> None:
    """A reopened repository never reuses an event id."""
    make_repo().register([event(), event()])
    again = make_repo()
    assert [e.event_id for e in again.register([event()])] == [2]
    assert again.count() == 3


def test_ids_are_never_reused_after_retention_empties_the_store(make_repo) -> None:
    """Purging every event does not restart the id sequence."""
    repo = make_repo(max_storage_time="1 sec")
    repo.register([event(time=0)])
    assert repo.purge(now=10_000) == 1
    assert [e.event_id for e in make_repo().register([event()])] == [1]


def test_get_of_an_unknown_id_names_it(make_repo) -> None:
    """Asking for a missing (or purged) event is a KeyError naming the id."""
    with pytest.raises(KeyError, match="no provenance event with id 42"):
        make_repo().get(42)


def test_event_files_are_indexed_exactly_once(make_repo) -> None:
    """Indexing the same committed files twice adds their events once."""
    repo = make_repo()
    writer = repo.writer("stage-1-task-0")
    writer.append([event(uuid="a"), event(uuid="b")])
    name = writer.close()
    assert name is not None
    assert name.endswith(".events")
    assert repo.index_files([name]) == 2
    assert repo.index_files([name]) == 0
    assert [e.flowfile_uuid for e in repo.search()] == ["a", "b"]


def test_the_next_event_id_counts_only_committed_indexing(make_repo) -> None:
    """An indexing transaction that fails gives back its ids, and next_event_id (the mark the
    FlowFile log keeps) never runs ahead of what the database committed."""
    repo = make_repo()
    writer = repo.writer("stage-1-task-0")
    writer.append([event(uuid="a"), event(uuid="b")])
    name = writer.close()
    assert name is not None
    with pytest.raises(RepositoryError, match="missing"):
        repo.index_files([name, "gone.events"])  # one transaction: the first file rolls back
    assert repo.next_event_id == 0
    assert repo.index_files([name]) == 2
    assert repo.next_event_id == 2
    assert [e.event_id for e in repo.search()] == [0, 1]


def test_an_empty_writer_writes_no_file(tmp_path: Path) -> None:
    """A task that reported nothing leaves no event file behind."""
    writer = EventFileWriter(tmp_path / "events", "t")
    assert writer.close() is None
    assert not (tmp_path / "events").exists()


def test_a_crash_between_commit_and_indexing_is_finished_at_start_up(
    make_repo, tmp_path: Path
) -> None:
    """Files named by a committed transaction are indexed after a crash, none twice, none lost."""
    wal = WriteAheadFlowFileRepository(tmp_path / "wal")
    repo = make_repo()
    names = []
    for task in range(3):
        writer = repo.writer(f"task-{task}")
        writer.append([event(uuid=f"t{task}-{i}") for i in range(4)])
        names.append(writer.close())
    wal.commit(Transaction(provenance_files=names))
    repo.index_files(names[:2])  # the driver dies here: two indexed, none marked
    repo.close()

    wal = WriteAheadFlowFileRepository(tmp_path / "wal")
    repo = make_repo()
    assert set(wal.pending_provenance) == set(names)
    assert repo.index_files(wal.pending_provenance) == 4
    wal.mark_provenance_indexed(list(wal.pending_provenance))
    repo.remove_indexed_files(names)
    assert repo.count() == 12
    assert len({e.flowfile_uuid for e in repo.search(limit=100)}) == 12
    assert WriteAheadFlowFileRepository(tmp_path / "wal").pending_provenance == ()
    assert repo.check() == []


def test_a_missing_or_damaged_event_file_is_a_clear_error(make_repo) -> None:
    """A committed file that is gone or garbage is named, and nothing is half-indexed."""
    repo = make_repo()
    with pytest.raises(RepositoryError, match="missing"):
        repo.index_files(["nope.events"])
    repo.event_directory.mkdir(parents=True, exist_ok=True)
    (repo.event_directory / "bad.events").write_bytes(b"\x00garbage")
    with pytest.raises(WalCorruptionError, match=r"bad\.events"):
        repo.index_files(["bad.events"])
    assert repo.count() == 0


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda data: data[:13] + b"\x00\x09" + data[15:], "version 9"),
        (lambda data: data[:-1] + bytes([data[-1] ^ 1]), "checksum"),
        (lambda data: b"PK\x03\x04" + data, "bad magic"),
    ],
)
def test_foreign_or_damaged_event_files_are_refused(make_repo, damage, message: str) -> None:
    """A newer version, a flipped bit or a foreign file is named and indexes nothing."""
    repo = make_repo()
    writer = repo.writer("t")
    writer.append([event()])
    name = writer.close()
    path = repo.event_directory / name
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(WalCorruptionError, match=message):
        repo.index_files([name])
    assert repo.count() == 0
    assert path.exists()


@pytest.fixture
def searchable(make_repo) -> SqlProvenanceRepository:
    repo = make_repo(indexed_attributes=["customer"])
    repo.register(
        [
            event(uuid="a", time=100, updated_attributes={"filename": "a.log", "customer": "x"}),
            event(
                ProvenanceEventType.ROUTE,
                uuid="a",
                time=200,
                component_id="route-1",
                relationship="matched",
                previous_attributes={"filename": "a.log", "customer": "x"},
            ),
            event(uuid="b", time=300, updated_attributes={"filename": "b.log", "customer": "y"}),
            event(
                ProvenanceEventType.DROP,
                uuid="b",
                time=400,
                component_id="route-1",
                previous_attributes={"filename": "b.log", "customer": "y", "tier": "gold"},
            ),
        ]
    )
    return repo


def uuids_and_ids(found: list[ProvenanceEvent]) -> list[tuple[str, int]]:
    return [(e.flowfile_uuid, e.event_id) for e in found]


def test_search_by_each_indexed_field(searchable: SqlProvenanceRepository) -> None:
    """FlowFile uuid, event type, component, filename and time range each select events."""
    repo = searchable
    assert uuids_and_ids(repo.search(flowfile_uuid="b")) == [("b", 2), ("b", 3)]
    assert uuids_and_ids(repo.search(event_type=ProvenanceEventType.ROUTE)) == [("a", 1)]
    assert uuids_and_ids(repo.search(event_type="DROP")) == [("b", 3)]
    assert uuids_and_ids(repo.search(component_id="route-1")) == [("a", 1), ("b", 3)]
    assert uuids_and_ids(repo.search(filename="a.log")) == [("a", 0), ("a", 1)]
    assert uuids_and_ids(repo.search(start=200, end=300)) == [("a", 1), ("b", 2)]
    assert uuids_and_ids(repo.search(component_id="route-1", start=300)) == [("b", 3)]
    assert len(repo.search(limit=3)) == 3


def test_search_by_attribute_value(searchable: SqlProvenanceRepository) -> None:
    """Indexed attributes are searched through the index; others on the stored maps."""
    repo = searchable
    assert uuids_and_ids(repo.search(attributes={"customer": "y"})) == [("b", 2), ("b", 3)]
    assert uuids_and_ids(repo.search(attributes={"tier": "gold"})) == [("b", 3)]
    assert repo.search(attributes={"customer": "x", "tier": "gold"}) == []
    assert len(repo.search(attributes={"tier": "gold"}, limit=1)) == 1


def test_an_unknown_event_type_is_refused(searchable: SqlProvenanceRepository) -> None:
    """Searching by a type NiFi does not have is a ValueError, not an empty answer."""
    with pytest.raises(ValueError, match="FORKED"):
        searchable.search(event_type="FORKED")


def test_lineage_follows_forks_and_joins(make_repo) -> None:
    """Lineage links parents to children through FORK and JOIN events, in both directions."""
    repo = make_repo()
    repo.register(
        [
            event(uuid="root"),
            event(
                ProvenanceEventType.FORK,
                uuid="root",
                parent_uuids=("root",),
                child_uuids=("k1", "k2"),
            ),
            event(ProvenanceEventType.CONTENT_MODIFIED, uuid="k1"),
            event(
                ProvenanceEventType.JOIN,
                uuid="merged",
                parent_uuids=("k1", "k2"),
                child_uuids=("merged",),
            ),
            event(uuid="unrelated"),
        ]
    )
    graph = repo.lineage("merged")
    assert isinstance(graph, nx.DiGraph)
    assert nx.has_path(graph, "root", "merged")
    assert graph.nodes["event:1"]["event_type"] == "FORK"
    assert set(graph.successors("event:1")) == {"k1", "k2"}
    assert "unrelated" not in graph
    assert repo.lineage("k2").nodes == graph.nodes


def test_lineage_is_bounded(make_repo) -> None:
    """A lineage stops at max_events events, as NiFi bounds lineage queries."""
    repo = make_repo()
    children = tuple(f"k{i}" for i in range(50))
    repo.register(
        [
            event(
                ProvenanceEventType.FORK, uuid="root", parent_uuids=("root",), child_uuids=children
            ),
            *(event(ProvenanceEventType.DROP, uuid=c) for c in children),
        ]
    )
    graph = repo.lineage("root", max_events=10)
    assert sum(1 for _, d in graph.nodes(data=True) if d["kind"] == "event") == 10
    assert len(repo.lineage("root").nodes) == 1 + 50 + 1 + 50  # FlowFiles, the fork, the drops


@pytest.fixture
def replay_setup(make_repo, tmp_path: Path):
    content = FileContentRepository(tmp_path / "content")
    flowfiles = WriteAheadFlowFileRepository(tmp_path / "wal")
    stream = content.writer("t").open_stream()
    stream.write(b"hello")
    claim = stream.close()
    return make_repo(), content, flowfiles, claim


def test_replay_enqueues_a_copy_with_a_replay_event(replay_setup) -> None:
    """Replay makes a new FlowFile with the event's input content and attributes on its queue."""
    repo, content, flowfiles, claim = replay_setup
    (original,) = repo.register(
        [
            event(
                ProvenanceEventType.CONTENT_MODIFIED,
                uuid="orig",
                previous_content_claim=claim,
                content_claim=ContentClaim(ResourceClaim("default", "1", "later"), 0, 1),
                previous_attributes={"filename": "in.txt", "discard.reason": "x"},
                updated_attributes={"filename": "out.txt"},
                source_queue_identifier="conn-1",
                lineage_start_date=77,
            )
        ]
    )
    copy = repo.replay(
        original.event_id, content=content, flowfiles=flowfiles, queues={"conn-1"}, now=5_000
    )
    assert copy.uuid != "orig"
    assert copy.content == claim
    assert copy.lineage_start_date == 77
    assert copy.attributes["filename"] == "in.txt"
    assert copy.attributes["flowfile.replay"] == "true"
    assert copy.attributes["flowfile.replay.timestamp"] == "5000"
    assert "discard.reason" not in copy.attributes
    assert content.claimant_count(claim.resource_claim) == 1
    assert [f.uuid for f in iter_queue(flowfiles, "conn-1")] == [copy.uuid]
    (replay,) = repo.search(event_type="REPLAY")
    assert (replay.parent_uuids, replay.child_uuids) == (("orig",), (copy.uuid,))


def test_a_rope_is_recorded_piece_by_piece_and_replays(replay_setup) -> None:
    """A zero-copy merge's rope is stored with every range, and a replay of it reads the same
    bytes and claims each piece."""
    repo, content, flowfiles, claim = replay_setup
    rope = Rope((claim.slice(0, 2), claim.slice(4, 1), claim.slice(1, 1)))
    (original,) = repo.register(
        [event(ProvenanceEventType.SEND, content_claim=rope, source_queue_identifier="q")]
    )
    assert repo.get(original.event_id).content_claim == rope
    copy = repo.replay(original.event_id, content=content, flowfiles=flowfiles, queues={"q"})
    assert content.read(copy.content) == b"heoe"
    assert content.claimant_count(claim.resource_claim) == 3


def test_replay_works_with_any_repository_implementation(make_repo, tmp_path: Path) -> None:
    """Replay uses only the repository protocols: in-memory content works with the real log."""
    content = MemoryContentRepository()
    flowfiles = WriteAheadFlowFileRepository(tmp_path / "replay-wal")
    claim = content.write_bytes(b"data")
    (original,) = make_repo().register(
        [event(ProvenanceEventType.SEND, content_claim=claim, source_queue_identifier="q")]
    )
    copy = make_repo().replay(original.event_id, content=content, flowfiles=flowfiles, queues={"q"})
    assert [s.count for s in flowfiles.segments("q")] == [1]
    assert content.read(copy.content) == b"data"


def test_replay_without_a_previous_claim_uses_the_current_one(replay_setup) -> None:
    """An event with no input claim replays its output content and attributes."""
    repo, content, flowfiles, claim = replay_setup
    (original,) = repo.register(
        [
            event(
                ProvenanceEventType.ATTRIBUTES_MODIFIED,
                content_claim=claim,
                previous_attributes={"a": "1"},
                updated_attributes={"a": "2"},
                source_queue_identifier="q",
            )
        ]
    )
    copy = repo.replay(original.event_id, content=content, flowfiles=flowfiles, queues={"q"})
    assert (copy.content, copy.attributes["a"]) == (claim, "2")


@pytest.mark.parametrize(
    ("fields", "queues", "message"),
    [
        ({"event_type": ProvenanceEventType.JOIN}, {"q"}, "multiple parents"),
        (
            {"content_claim": ContentClaim(ResourceClaim("default", "3", "gone"), 0, 1)},
            {"q"},
            "Content is no longer available",
        ),
        ({"source_queue_identifier": None}, {"q"}, "does not specify the Source FlowFile Queue"),
        ({}, {"other"}, "Source FlowFile Queue with ID q no longer exists"),
    ],
)
def test_replay_refusals(replay_setup, fields: dict, queues: set, message: str) -> None:
    """JOINs, vanished content and missing or deleted queues are refused, enqueuing nothing."""
    repo, content, flowfiles, claim = replay_setup
    kind = fields.pop("event_type", ProvenanceEventType.CONTENT_MODIFIED)
    base = {"content_claim": claim, "source_queue_identifier": "q"}
    (original,) = repo.register([event(kind, **{**base, **fields})])
    with pytest.raises(ReplayError, match=message):
        repo.replay(original.event_id, content=content, flowfiles=flowfiles, queues=queues)
    assert flowfiles.queue_ids() == ()
    assert repo.count() == 1


def test_retention_by_age_deletes_old_events(make_repo) -> None:
    """Events older than the max storage time are purged with their links and attributes."""
    repo = make_repo(max_storage_time="1 hour", indexed_attributes=["k"])
    hour = 3_600_000
    repo.register(
        [
            event(ProvenanceEventType.FORK, time=0, parent_uuids=("a",), child_uuids=("b",)),
            event(time=2 * hour - 1, updated_attributes={"k": "v"}),
            event(time=2 * hour, uuid="boundary"),
            event(time=3 * hour - 1, uuid="kept"),
        ]
    )
    assert repo.purge(now=3 * hour) == 2
    assert [e.flowfile_uuid for e in repo.search()] == ["boundary", "kept"]
    assert repo.search(attributes={"k": "v"}) == []
    assert len(repo.lineage("a").nodes) == 1


def test_retention_by_size_deletes_the_oldest_first(make_repo) -> None:
    """While over the max storage size the oldest events go first."""
    repo = make_repo(max_storage_size="2 KB")
    repo.register([event(uuid=f"e{i}", updated_attributes={"pad": "x" * 300}) for i in range(20)])
    removed = repo.purge(now=2_000)
    survivors = [e.flowfile_uuid for e in repo.search()]
    assert removed + len(survivors) == 20
    assert 0 < len(survivors) < 20
    assert survivors == [f"e{i}" for i in range(removed, 20)]


def test_check_reports_leftover_event_files(make_repo) -> None:
    """Half-written and already-indexed event files are reported and removed with fix."""
    repo = make_repo()
    writer = repo.writer("t")
    writer.append([event()])
    name = writer.close()
    repo.index_files([name])
    (repo.event_directory / "x.events.part").write_bytes(b"half")
    problems = sorted(f.problem for f in repo.check())
    assert problems == ["event file already indexed", "half-written event file"]
    assert all(f.fixed for f in repo.check(fix=True))
    assert repo.check() == []


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batches=st.lists(
        st.lists(st.sampled_from(list(ProvenanceEventType)), min_size=0, max_size=5),
        min_size=1,
        max_size=6,
    ),
    crash_after=st.integers(min_value=0, max_value=6),
)
def test_indexing_is_exactly_once_under_any_crash_point(
    tmp_path_factory: pytest.TempPathFactory, batches: list, crash_after: int
) -> None:
    """However many files were indexed before a crash, re-indexing leaves each event once."""
    root = tmp_path_factory.mktemp("prov")
    repo = SqlProvenanceRepository(root / "p.db")
    names = []
    for b, kinds in enumerate(batches):
        writer = repo.writer(f"b{b}")
        writer.append([event(kind, uuid=f"{b}-{i}") for i, kind in enumerate(kinds)])
        name = writer.close()
        if name:
            names.append(name)
    repo.index_files(names[:crash_after])
    repo.close()
    again = SqlProvenanceRepository(root / "p.db")
    again.index_files(names)
    expected = sorted(f"{b}-{i}" for b, kinds in enumerate(batches) for i in range(len(kinds)))
    assert sorted(e.flowfile_uuid for e in again.search(limit=1000)) == expected
    again.close()


def test_a_read_only_repository_queries_beside_the_writer(make_repo) -> None:  # type: ignore[no-untyped-def]
    """Opened read-only (as beside a live run), queries see the writer's later commits, and
    nothing can be written through it."""
    writer = make_repo()
    writer.register([_read_only_event("a")])
    reader = make_repo(read_only=True)
    assert [e.flowfile_uuid for e in reader.search()] == ["a"]
    writer.register([_read_only_event("b")])
    assert [e.flowfile_uuid for e in reader.search()] == ["a", "b"]
    assert reader.get(1).flowfile_uuid == "b"
    with pytest.raises(RepositoryError, match="opened read-only"):
        reader.register([_read_only_event("c")])


def test_a_read_only_repository_needs_an_existing_database(tmp_path: Path) -> None:
    """Read-only creates nothing: a missing SQLite file is one clear error."""
    with pytest.raises(RepositoryError, match="no provenance database at"):
        SqlProvenanceRepository(tmp_path / "none.db", read_only=True)
    assert not (tmp_path / "none.db").exists()


def _read_only_event(uuid: str) -> ProvenanceEvent:
    return ProvenanceEvent(
        event_type=ProvenanceEventType.CREATE,
        flowfile_uuid=uuid,
        component_id="c",
        component_type="GenerateFlowFile",
        event_time=1,
    )


# --- replay over batch runs: the same as over the one-by-one path's events ------------------


def _replayed(place: Path, event_id: int, lines_per_split: int) -> tuple:
    """Replay *event_id* of a path's repository: the copy, its content and queue, the REPLAY
    event; or the refusal with its ids and claims written out."""
    made = batch_runs.flow(place.parent / "in", place / "out", lines_per_split)
    with batch_runs.opened(place) as repos:
        try:
            copy = repos.provenance.replay(
                event_id,
                content=repos.content,
                flowfiles=repos.flowfiles,
                queues=replay_queues(made),
                now=7_000,
            )
        except ReplayError as refused:
            text = str(refused).replace(f"event {event_id}:", "event <id>:")
            return ("refused", re.sub(r"Repository \(.*\);", "Repository (<claim>);", text))
        (replay,) = repos.provenance.search(flowfile_uuid=copy.uuid)
        queued = {q for q in repos.flowfiles.queue_ids() if copy in iter_queue(repos.flowfiles, q)}
        data = None if copy.content is None else repos.content.read(copy.content)
    return ("replayed", copy, data, queued, replay)


def _replays_agree(places: dict, picks: list[tuple], lines_per_split: int, pairs: dict) -> int:
    """Replay each ``(batch event, its twin)`` in both repositories; the outcomes must agree.
    Returns how many were replayed (not refused)."""
    replayed = 0
    for ours, theirs in picks:
        mine = _replayed(places["batches"], ours.event_id, lines_per_split)
        other = _replayed(places["single"], theirs.event_id, lines_per_split)
        assert mine[0] == other[0], (ours, mine, other)
        if mine[0] == "refused":
            assert mine == other
            continue
        replayed += 1
        (_, copy, data, queued, replay), (_, twin, twin_data, twin_queued, twin_replay) = (
            mine,
            other,
        )
        paired = {**pairs, copy.uuid: twin.uuid}
        assert (data, queued, copy.size) == (twin_data, twin_queued, twin.size)
        unread = dict.fromkeys(("file.lastAccessTime", "merge.bin.age"), "")
        attributes = {k: paired.get(v, v) for k, v in copy.attributes.items()}
        assert attributes | unread == dict(twin.attributes) | unread
        ours_replay = batch_runs.canonical(replay, paired, places["batches"])
        assert ours_replay == batch_runs.canonical(twin_replay, {}, places["single"])
    return replayed


def _middle_of_each_kind(batches: list, single: list, pairs: dict, root: dict) -> list[tuple]:
    """The middle event of each component's events of each type in the batch run (the middle
    of a run), each with its twin in the one-by-one run."""
    twins = {batch_runs.canonical(e, {}, root["single"]): e for e in single}
    kinds: dict[tuple, list] = {}
    for found in batches:
        kinds.setdefault((found.component_id, found.event_type), []).append(found)
    picks = []
    for group in kinds.values():
        middle = group[len(group) // 2]
        picks.append((middle, twins[batch_runs.canonical(middle, pairs, root["batches"])]))
    return picks


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.lists(
        st.lists(st.text(st.sampled_from("ab 5"), max_size=6).map(str.encode), max_size=12),
        min_size=3,
        max_size=4,
    ),
    lines_per_split=st.integers(1, 3),
)
def test_replaying_events_of_a_batch_run_gives_what_the_one_by_one_run_gives(
    tmp_path_factory: pytest.TempPathFactory, files: list[list[bytes]], lines_per_split: int
) -> None:
    """The middle event of each kind (a split's ATTRIBUTES_MODIFIED, a ROUTE, a DROP, a SEND,
    a merged JOIN ...) replays as its one-by-one twin: the same content, attributes, queue and
    REPLAY event, or the same refusal; with the content gone, the same refusals."""
    root = tmp_path_factory.mktemp("replay")
    batch_runs.write_inputs(root / "in", files)
    places = batch_runs.run_both(root, lines_per_split)
    batches = batch_runs.all_events(places["batches"])
    single = batch_runs.all_events(places["single"])
    pairs = batch_runs.uuid_map(batches, single)
    picks = _middle_of_each_kind(batches, single, pairs, places)
    assert _replays_agree(places, picks, lines_per_split, pairs) == sum(
        e.source_queue_identifier is not None and e.event_type is not ProvenanceEventType.JOIN
        for e, _ in picks
    )
    for place in places.values():
        for claim in (place / "repo" / "content").rglob("*.claim"):
            claim.unlink()
    assert _replays_agree(places, picks, lines_per_split, pairs) == sum(
        e.source_queue_identifier is not None and e.content_claim is None for e, _ in picks
    )
