"""Tests for read-only access to a provenance database: locating it, id ranges, reading events."""

from __future__ import annotations

import itertools
from pathlib import Path

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, func, select

from flowcore.errors import RepositoryError
from flowcore.flowfile import ContentClaim, ResourceClaim
from flowcore.provenance_events import (
    InterleavedRuns,
    ProvenanceEvent,
    ProvenanceEventRun,
    ProvenanceEventType,
)
from repositories._provenance_schema import EVENTS
from repositories.provenance import SqlProvenanceRepository
from repositories.provenance_reader import (
    claim_texts,
    event_id_range,
    provenance_url,
    read_events,
)

PREFIX = "0123abcd-0000-4000-8000-0000"


def _created(number: int) -> ProvenanceEvent:
    uuid = f"{PREFIX}{number:08x}"
    return ProvenanceEvent(
        event_type=ProvenanceEventType.CREATE,
        flowfile_uuid=uuid,
        component_id="gen-1",
        component_type="GenerateFlowFile",
        event_time=1_000 + number,
        file_size=10,
        updated_attributes={"filename": uuid, "uuid": uuid},
        content_claim=ContentClaim(ResourceClaim("default", "1", "a"), number * 10, 10),
    )


def _dropped(number: int) -> ProvenanceEvent:
    return ProvenanceEvent(
        event_type=ProvenanceEventType.DROP,
        flowfile_uuid=f"{PREFIX}{number:08x}",
        component_id="put-1",
        component_type="PutFile",
        event_time=5_000,
        details="Auto-Terminated by success Relationship",
    )


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A repository directory whose provenance holds runs of CREATEs (one row for many events)
    and single DROPs."""
    root = tmp_path / "repo"
    store = SqlProvenanceRepository(root / "provenance" / "provenance.db")
    store.register([_created(n) for n in range(40)])
    store.register([_dropped(n) for n in range(0, 40, 3)])
    store.close()
    return root


def test_a_repository_directory_a_database_file_and_a_url_are_located(
    repository: Path, tmp_path: Path
) -> None:
    """The directory and its database file give the same SQLite URL; a URL is kept as given."""
    database = repository / "provenance" / "provenance.db"
    assert provenance_url(repository) == f"sqlite:///{database.resolve()}"
    assert provenance_url(database) == provenance_url(repository)
    assert provenance_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    with pytest.raises(RepositoryError, match=r"has no provenance database .*--repository"):
        provenance_url(tmp_path / "elsewhere")


@settings(  # the fixture is only read
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cuts=st.lists(st.integers(0, 60), max_size=6))
def test_ranges_that_tile_the_ids_read_every_event_once(repository: Path, cuts: list[int]) -> None:
    """However the ids are cut, runs included, the ranges give the stored events exactly once,
    in id order, equal to what the repository's own search returns."""
    url = provenance_url(repository)
    low, high = event_id_range(url)
    bounds = sorted({low, high, *(min(max(c, low), high) for c in cuts)})
    read = [e for a, b in itertools.pairwise(bounds) for e in read_events(url, a, b)]
    store = SqlProvenanceRepository(repository / "provenance" / "provenance.db")
    try:
        assert read == store.search(limit=10_000)
    finally:
        store.close()
    assert [e.event_id for e in read] == list(range(len(read)))
    assert len(read) == 40 + 14


def test_the_fixture_stores_runs(repository: Path) -> None:
    """The CREATEs fold into runs, so a row holds many events (what the ranges must respect)."""
    engine = create_engine(provenance_url(repository))
    with engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(EVENTS)).scalar()
    engine.dispose()
    assert rows is not None
    assert rows < 40 + 14


def test_an_empty_database_has_an_empty_range(tmp_path: Path) -> None:
    """No event: the range is empty, so a reader makes no partition."""
    SqlProvenanceRepository(tmp_path / "provenance" / "provenance.db").close()
    assert event_id_range(provenance_url(tmp_path)) == (0, 0)


def test_claims_are_given_as_sql_stores_them() -> None:
    """A content claim reads ``container/section/id:offset:length``; none is None."""
    assert claim_texts(_created(2)) == ("default/1/a:20:10", None)


@settings(max_examples=15, deadline=None)
@given(cuts=st.lists(st.integers(0, 30), max_size=4))
def test_ranges_read_each_event_of_interleaved_runs_once_in_id_order(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int]
) -> None:
    """Runs whose events interleave (PutFile's SEND, DROP, SEND ...) belong to the range of
    their row's first id: every event once, each range's in id order."""
    root = tmp_path_factory.mktemp("group")
    store = SqlProvenanceRepository(root / "provenance" / "provenance.db")
    writer = store.writer("t")
    runs = tuple(
        ProvenanceEventRun(attrs.evolve(make(0), event_time=5_000), np.arange(10))
        for make in (_created, _dropped)
    )
    writer.append([_created(99), InterleavedRuns(runs, (np.arange(0, 20, 2), np.arange(1, 20, 2)))])
    name = writer.close(sync=False)
    assert name is not None
    store.index_files([name])
    url = provenance_url(root)
    low, high = event_id_range(url)
    bounds = sorted({low, high, *(min(max(c, low), high) for c in cuts)})
    parts = [list(read_events(url, a, b)) for a, b in itertools.pairwise(bounds)]
    for part in parts:
        assert [e.event_id for e in part] == sorted(e.event_id for e in part)
    read = sorted((e for part in parts for e in part), key=lambda e: e.event_id)
    assert read == store.search(limit=100)
    assert [e.event_id for e in read] == list(range(21))
    store.close()
