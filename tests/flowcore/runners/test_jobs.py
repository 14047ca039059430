"""Tests for what runners share: a shuffle's records left in files and read back."""

from __future__ import annotations

import pickle
from pathlib import Path

from flowcore.flowfile import FlowFile
from flowcore.runners.jobs import SpilledRecord, unspilled


def _spill(path: Path, records: list[object]) -> list[SpilledRecord]:
    spilled, offset = [], 0
    with path.open("wb") as out:
        for record in records:
            data = pickle.dumps(record)
            out.write(data)
            spilled.append(SpilledRecord(str(path), offset, len(data)))
            offset += len(data)
    return spilled


def test_spilled_records_come_back_in_the_order_given_beside_unspilled_ones(
    tmp_path: Path,
) -> None:
    """Records read back from two map tasks' files keep the order the reduce side got them
    in, each with its queue, and records that travelled whole pass unchanged."""
    first = _spill(tmp_path / "a", [FlowFile.create(1, 0), FlowFile.create(2, 0)])
    second = _spill(tmp_path / "b", [FlowFile.create(3, 0)])
    whole = FlowFile.create(4, 0)
    got = unspilled([("q1", second[0]), ("q2", first[1]), ("q1", whole), ("q2", first[0])])
    assert [(q, f.id) for q, f in got] == [("q1", 3), ("q2", 2), ("q1", 4), ("q2", 1)]  # type: ignore[attr-defined]


def test_a_spilled_record_is_a_small_reference() -> None:
    """What travels through Spark for a spilled record is its file, offset and length only."""
    record = SpilledRecord("/repo/flowfile/shuffle/run/seg-1-abc", 4096, 123_456)
    assert len(pickle.dumps(record)) < 200
