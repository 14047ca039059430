"""Tests for the provenance database's schema and its upgrades."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from repositories import _provenance_schema
from repositories.provenance import SqlProvenanceRepository
from repositories.provenance_reader import event_id_range, read_events


def _event(uuid: str) -> ProvenanceEvent:
    return ProvenanceEvent(
        event_type=ProvenanceEventType.CREATE,
        flowfile_uuid=uuid,
        component_id="gen-1",
        component_type="GenerateFlowFile",
        event_time=1_000,
        file_size=10,
    )


def _earlier_database(path: Path) -> None:
    """A database as a flowcore before interleaved runs left it: no ``event_group`` column."""
    writer = SqlProvenanceRepository(path)
    writer.register([_event("a"), _event("b")])
    writer.close()
    database = sqlite3.connect(path)
    try:
        for (name,) in database.execute(
            "select name from sqlite_master where type = 'index' and sql like '%event_group%'"
        ).fetchall():
            database.execute(f"drop index {name}")
        database.execute("alter table provenance_event drop column event_group")
        database.commit()
    finally:
        database.close()


def test_a_read_only_open_reads_a_database_of_an_earlier_flowcore(tmp_path: Path) -> None:
    """`flowcore provenance` on an older repository: the empty column is added, then read."""
    path = tmp_path / "provenance.db"
    _earlier_database(path)
    reader = SqlProvenanceRepository(path, read_only=True)
    try:
        assert [e.flowfile_uuid for e in reader.search()] == ["a", "b"]
    finally:
        reader.close()


def test_the_spark_reader_reads_a_database_of_an_earlier_flowcore(tmp_path: Path) -> None:
    """The DataFrame reader's rows come from an older database too."""
    path = tmp_path / "provenance.db"
    _earlier_database(path)
    url = f"sqlite:///{path}"
    low, high = event_id_range(url)  # the driver's plan, then the tasks' reads
    events = list(read_events(url, low, high))
    assert [e.flowfile_uuid for e in events] == ["a", "b"]


def _read(path: Path) -> list[str]:
    """The uuids of the events a read-only open finds, then the Spark reader's plan of them."""
    reader = SqlProvenanceRepository(path, read_only=True)
    try:
        uuids = [e.flowfile_uuid for e in reader.search()]
    finally:
        reader.close()
    assert event_id_range(f"sqlite:///{path}") == (0, 2)
    return uuids


def test_a_database_is_inspected_once_until_another_takes_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read-only opens and the Spark reader's plans inspect a database's schema once in a
    process; an earlier flowcore's database restored in its place is upgraded again."""
    inspected: list[str] = []
    inspect = _provenance_schema.add_event_group

    def counted(engine: Any) -> bool:
        inspected.append(str(engine.url))
        return inspect(engine)

    monkeypatch.setattr(_provenance_schema, "add_event_group", counted)
    path = tmp_path / "provenance.db"
    _earlier_database(path)
    assert [_read(path) for _ in range(3)] == [["a", "b"]] * 3
    assert len(inspected) == 1
    restored = tmp_path / "backup.db"
    _earlier_database(restored)
    restored.replace(path)  # another file (inode) at the same path
    assert _read(path) == ["a", "b"]
    assert len(inspected) == 2
