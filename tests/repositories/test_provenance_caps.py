"""Tests for the provenance attribute cap (NiFi's max.attribute.length)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flowcore import Flow
from flowcore.flowfile_batch.columns import TextColumn
from flowcore.provenance_events import (
    InterleavedRuns,
    ProvenanceEvent,
    ProvenanceEventRun,
    ProvenanceEventType,
)
from flowcore.settings import Settings
from processors import GenerateFlowFile, UpdateAttribute
from repositories._provenance_caps import MAX_ATTRIBUTE_LENGTH, capped
from repositories.provenance import SqlProvenanceRepository
from repositories.repository_set import RepositorySet

UUID = "00000000-0000-4000-8000-000000000000"


def _event(**attributes: str) -> ProvenanceEvent:
    return ProvenanceEvent(
        ProvenanceEventType.ATTRIBUTES_MODIFIED, UUID, "c", "T", 1, updated_attributes=attributes
    )


def test_the_default_is_nifis() -> None:
    """The cap defaults to NiFi's 65536 characters, in the settings and the repository."""
    assert MAX_ATTRIBUTE_LENGTH == 65_536
    assert Settings().provenance_max_attribute_length == 65_536


def test_a_cap_under_a_uuid_is_refused() -> None:
    """A cap under 36 characters (NiFi's minimum, a uuid's length) is refused by name."""
    with pytest.raises(ValueError, match="provenance_max_attribute_length"):
        Settings.parse({"provenance_max_attribute_length": "35"})


def test_long_values_are_cut_and_short_ones_kept() -> None:
    """Values past the cap keep their first characters; names and short values are unchanged."""
    event = _event(big="a" * 100 + "b", small="s", uuid=UUID)
    cut = capped(event, 50)
    assert isinstance(cut, ProvenanceEvent)
    assert dict(cut.updated_attributes) == {"big": "a" * 50, "small": "s", "uuid": UUID}


def test_an_event_without_long_values_is_the_same_object() -> None:
    """Nothing to cut costs no copy."""
    event = _event(small="s")
    assert capped(event, 50) is event


def test_runs_and_interleaved_runs_are_cut_in_their_columns() -> None:
    """A batch's run cuts its first event and its text columns' values, keeping its shape."""
    column = TextColumn(np.array([0, 1, 0]), ("x" * 80, "y"))
    run = ProvenanceEventRun(
        _event(body="z" * 90), np.array([0, 1, 2]), updated_columns={"body": column}
    )
    cut = capped(run, 40)
    assert isinstance(cut, ProvenanceEventRun)
    assert [cut.event(i).updated_attributes["body"] for i in range(3)] == ["x" * 40, "y", "x" * 40]
    group = capped(InterleavedRuns((run,), (np.array([0, 1, 2]),)), 40)
    assert isinstance(group, InterleavedRuns)
    assert [e.updated_attributes["body"] for e in group.events()] == ["x" * 40, "y", "x" * 40]


def test_the_repository_stores_cut_values(tmp_path: Path) -> None:
    """Events indexed from a task's file and events registered directly are both cut."""
    repo = SqlProvenanceRepository(tmp_path / "provenance.db", max_attribute_length=40)
    writer = repo.writer("t")
    writer.append([_event(body="w" * 1000)])
    name = writer.close()
    assert name is not None
    repo.index_files([name])
    repo.register([_event(body="r" * 1000)])
    stored = [repo.get(i).updated_attributes["body"] for i in range(2)]
    repo.close()
    assert stored == ["w" * 40, "r" * 40]


def test_provenance_does_not_grow_with_attribute_size(tmp_path: Path) -> None:
    """A run giving 40 FlowFiles a distinct 1 MB attribute each stores at most the cap per value
    and event: provenance.db stays near events x 64 KB (8 MB), not events x 1 MB (129 MB)."""
    flow = Flow("big-attributes")
    gen = flow.add(GenerateFlowFile(batch_size=40, unique_flowfiles=True), name="gen")
    big = flow.add(UpdateAttribute(big="${UUID():padRight(1048576, 'x')}"), name="big")
    tag = flow.add(UpdateAttribute(tag="y"), name="tag")
    flow.connect(gen, big)
    flow.connect(big, tag)
    flow.auto_terminate(tag, "success")
    result = flow.run(runner="direct", repository=tmp_path / "repo")
    assert result.provenance_events > 0
    repositories = RepositorySet.open(tmp_path / "repo")
    try:
        provenance = repositories.provenance
        values = [
            provenance.get(i).attributes.get("big") for i in range(provenance.max_event_id() + 1)
        ]
    finally:
        repositories.close()
    assert {len(v) for v in values if v is not None} == {MAX_ATTRIBUTE_LENGTH}
    database = tmp_path / "repo" / "provenance" / "provenance.db"
    stored = sum(p.stat().st_size for p in database.parent.glob("provenance.db*"))
    assert stored < 2 * len(values) * MAX_ATTRIBUTE_LENGTH + 2**20
