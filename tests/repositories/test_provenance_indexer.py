"""Tests for the background provenance indexer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from flowcore.errors import RepositoryError
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
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
