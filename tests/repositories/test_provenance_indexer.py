"""Tests for the background provenance indexer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import tests.repositories._batch_runs as batch_runs
from flowcore.clock import now_ms
from flowcore.errors import RepositoryError
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from repositories._provenance_rows import ROW_COLUMNS, event_record
from repositories.provenance import SqlProvenanceRepository
from repositories.provenance_indexer import ProvenanceIndexer


def _event_file(repository: SqlProvenanceRepository, owner: str, count: int) -> str:
    writer = repository.writer(owner)
    writer.append(
        [
            ProvenanceEvent(ProvenanceEventType.CREATE, f"{owner}-{n}", "c", "T", event_time=n)
            for n in range(count)
        ]
    )
    name = writer.close(sync=False)
    assert name is not None
    return name


def test_indexes_files_in_the_background_and_reports_them(tmp_path: Path) -> None:
    """Submitted files are indexed once each; close returns those not yet taken."""
    repository = SqlProvenanceRepository(tmp_path / "p.db")
    indexer = ProvenanceIndexer(repository, max_backlog=2)
    names = [_event_file(repository, f"t{n}", 3) for n in range(5)]
    for name in names:
        indexer.submit([name])
    taken = indexer.take_indexed()
    rest = indexer.close()
    assert sorted(taken + rest) == sorted(names)
    assert indexer.events == 15
    assert repository.count() == 15
    repository.close()


def test_an_indexing_failure_surfaces_in_the_controllers_thread(tmp_path: Path) -> None:
    """A missing file fails the indexer; the next call raises the repository's error."""
    repository = SqlProvenanceRepository(tmp_path / "p.db")
    indexer = ProvenanceIndexer(repository)
    indexer.submit(["no-such-file.events"])
    with pytest.raises(RepositoryError, match="is missing"):
        indexer.close()
    repository.close()


def test_retention_runs_at_start_and_then_every_maintenance_period(tmp_path: Path) -> None:
    """Events past max_storage_time are purged by the indexer's own thread: once when it
    starts, then at each maintenance period between indexing batches."""
    repository = SqlProvenanceRepository(tmp_path / "p.db", max_storage_time="1 min")
    repository.index_files([_event_file(repository, "before", 2)])  # from an earlier run
    indexer = ProvenanceIndexer(repository, maintenance_frequency=0.05)
    indexer.submit([_event_file(repository, "during", 3)])
    deadline = time.monotonic() + 10
    while indexer.purged < 5 and time.monotonic() < deadline:
        time.sleep(0.02)
    indexer.close()
    assert (indexer.events, indexer.purged, repository.count()) == (3, 5, 0)
    repository.close()


@pytest.mark.parametrize("limit", ["max_storage_time", "max_storage_size", "size_mid_run"])
def test_retention_leaves_the_same_events_of_a_batch_run_as_of_its_one_by_one_twin(
    tmp_path: Path, limit: str
) -> None:
    """A flow run twice on batches and twice one by one; retention at the indexer's start,
    by an age or a size that leaves just the second run, leaves the same events on both paths
    (each FlowFile's in the same order), and every search and lineage over them agrees; a size
    that cuts the first run mid-way (inside PutFile's SEND run, or between a FlowFile's SEND
    and its DROP one by one) leaves on each path exactly its newest events that fit."""
    files = [[b"a %d" % i for i in range(n)] for n in (90, 50, 70)]
    batch_runs.write_inputs(tmp_path / "in", files)
    places = batch_runs.run_both(tmp_path, 2)
    time.sleep(0.005)
    since = now_ms()
    (tmp_path / "in" / "late.log").write_bytes(b"".join(b"late %d\n" % i for i in range(60)))
    batch_runs.run_both(tmp_path, 2)
    before = {name: batch_runs.all_events(place) for name, place in places.items()}
    batches, single = before["batches"], before["single"]
    pairs = batch_runs.uuid_map(batches, single)

    def size_of(events: list) -> int:
        return sum(event_record(e, ())[0][ROW_COLUMNS.index("size_bytes")] for e in events)

    later = [e for e in single if e.event_time >= since]
    size = size_of(later)
    if limit == "size_mid_run":  # the oldest events go up to PutFile's middle SEND
        sends = [
            i
            for i, e in enumerate(batches)
            if e.component_name == "store" and e.event_type is ProvenanceEventType.SEND
        ]
        size = size_of(batches[sends[len(sends) // 2] :])
    kept = {}
    for name, events in before.items():  # the newest events that fit, each as if stored alone
        sizes = [size_of([e]) for e in events]
        start = len(events)
        while start and sum(sizes[start - 1 :]) <= size:
            start -= 1
        kept[name] = events[start:]
    for name, place in places.items():
        times = sorted(e.event_time for e in before[name])
        gap = max(i for i, t in enumerate(times) if t < since)  # the last of the first run
        options = {"max_storage_time": f"{now_ms() - (times[gap] + times[gap + 1]) // 2} ms"}
        if limit != "max_storage_time":
            options = {"max_storage_size": f"{size} B"}
        repository = SqlProvenanceRepository(
            place / "repo" / "provenance" / "provenance.db",
            indexed_attributes=("source",),
            **options,  # type: ignore[arg-type]
        )
        ProvenanceIndexer(repository).close()
        repository.close()
    survivors = batch_runs.all_events(places["batches"])
    if limit == "size_mid_run":
        assert survivors == kept["batches"]
        assert survivors[0].event_type is ProvenanceEventType.SEND
        assert batch_runs.all_events(places["single"]) == kept["single"]
        return
    assert batch_runs.per_flowfile(survivors, pairs, places["batches"]) == (
        batch_runs.per_flowfile(later, {}, places["single"])
    )
    assert batch_runs.all_events(places["single"]) == later
    batch_runs.assert_queries_agree(places, since, pairs)
