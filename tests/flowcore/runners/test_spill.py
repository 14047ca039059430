"""Tests for the shuffle by reference: records in spill files, references through Spark."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.flowfile import Attributes, ContentClaim, FlowFile, ResourceClaim, new_uuids
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.runners import spill
from flowcore.runners.jobs import ShuffleInput, StageJob
from flowcore.runners.spill import SpilledRecord, balanced_groups, spill_segments, unspilled


def _batch(count: int, first_id: int) -> FlowFileBatch:
    key, first = new_uuids(count)
    return FlowFileBatch.alike(
        count=count,
        first_id=first_id,
        uuid_key=key,
        uuid_first=first,
        attributes=Attributes({"path": "./", "group": "a"}),
        uuid_named=("filename",),
        resource_claim=ResourceClaim("default", "0", "claim-1"),
        offset=0,
        stride=10,
        size=10,
        entry_date=500,
        lineage_start_date=500,
        queue_date=900,
        queue_date_index=first_id,
    )


def _flowfile(number: int) -> FlowFile:
    claim = ContentClaim(ResourceClaim("default", "1", "claim-2"), number * 3, 3)
    return FlowFile.create(number, 700, {"group": "b"}, content=claim)


def _job(tmp_path: Path, records: dict[str, list[tuple[int, tuple]]], monkeypatch) -> StageJob:  # type: ignore[no-untyped-def]
    """A job whose map side gives *records* for each segment id (the grouping is tested with
    the engine's tasks); its spill directory under *tmp_path*."""
    monkeypatch.setattr(spill, "shuffle_map", lambda job, queue_id, segment_id: records[segment_id])
    shuffle = ShuffleInput((), str(tmp_path), 8, spill_dir=str(tmp_path / "shuffle" / "run"))
    return StageJob(plan=None, specs=(), shuffle=shuffle)  # type: ignore[arg-type]


def _key(record: FlowFile | FlowFileBatch) -> object:
    if isinstance(record, FlowFileBatch):
        return ("batch", record.ids.tolist(), record.uuid_numbers.tolist(), record.queue_date)
    return ("flowfile", record)


def test_a_map_task_spills_its_segments_into_one_file_and_they_come_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches and FlowFiles of several segments go into one file the directory's owner alone
    reads, and the references of each partition bring back the same records and queues."""
    first, second = _batch(5, 1), _batch(3, 10)
    loose = [_flowfile(n) for n in (20, 21, 22)]
    records = {
        "seg-1": [(0, ("q1", first)), (3, ("q1", loose[0])), (3, ("q1", loose[1]))],
        "seg-2": [(3, ("q2", second)), (0, ("q2", loose[2]))],
    }
    job = _job(tmp_path, records, monkeypatch)
    spilled = spill_segments(job, [("q1", "seg-1"), ("q2", "seg-2")])
    files = list((tmp_path / "shuffle" / "run").iterdir())
    assert len(files) == 1
    assert (tmp_path / "shuffle" / "run").stat().st_mode & 0o777 == 0o700
    assert all(len(str(reference)) < 300 for _, (_, reference) in spilled)
    by_partition: dict[int, list] = {}
    for partition, reference in spilled:
        by_partition.setdefault(partition, []).append(reference)
    assert {p: sum(r.count for _, r in refs) for p, refs in by_partition.items()} == {0: 6, 3: 5}
    back = {
        p: sorted(((q, _key(r)) for q, r in unspilled(refs)), key=str)
        for p, refs in by_partition.items()
    }
    assert back == {
        0: sorted([("q1", _key(first)), ("q2", _key(loose[2]))], key=str),
        3: sorted([("q1", _key(loose[0])), ("q1", _key(loose[1])), ("q2", _key(second))], key=str),
    }


def test_a_reduce_task_reads_thousands_of_spill_files_with_few_descriptors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """References into 1,500 map tasks' files read back with at most 200 more open files than
    the process had: each file is opened once and closed before the next (a queue of many small
    segments)."""
    records = {f"seg-{n}": [(1, ("q", _batch(2, 10 * n + 1)))] for n in range(1_500)}
    job = _job(tmp_path, records, monkeypatch)
    references = [ref for n in range(1_500) for _, ref in spill_segments(job, [("q", f"seg-{n}")])]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # above what this process already holds (a test worker's earlier tests hold some)
    held = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 56
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(held + 200, hard), hard))
    try:
        back = unspilled(references)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert sorted(int(r.ids[0]) for _, r in back) == [10 * n + 1 for n in range(1_500)]  # type: ignore[union-attr]


def test_a_spilled_record_is_a_small_reference(tmp_path: Path) -> None:
    """What travels through Spark for spilled records is their file, place and count only."""
    import pickle

    reference = SpilledRecord(str(tmp_path / "shuffle" / "run" / ("f" * 32)), 4096, 123_456, 10_000)
    assert len(pickle.dumps(reference)) < 300
    assert not os.path.exists(reference.path)


@given(st.lists(st.integers(0, 100_000), max_size=40), st.integers(1, 16))
def test_balanced_groups_hold_every_partition_once_and_spread_the_load(
    loads: list[int], groups: int
) -> None:
    """Every partition lands in exactly one group, at most *groups* groups, each in order, and
    no group carries more than an even share plus the largest partition (greedy's bound)."""
    made = balanced_groups(loads, groups)
    assert sorted(p for group in made for p in group) == list(range(len(loads)))
    assert len(made) <= groups
    assert all(group == sorted(group) and group for group in made)
    if loads:
        heaviest = max(sum(loads[p] for p in group) for group in made)
        assert heaviest <= sum(loads) / min(groups, len(loads)) + max(loads)


def test_two_busy_partitions_go_to_two_tasks_whatever_their_numbers() -> None:
    """Two correlation values hashed to partitions 1 and 5 run on both cores, not one."""
    loads = [0, 500, 0, 0, 0, 480, 0, 0]
    made = balanced_groups(loads, 2)
    assert len(made) == 2
    assert {p for group in made for p in group if loads[p]} == {1, 5}
    assert [sum(loads[p] for p in group) for group in made] in ([500, 480], [480, 500])
