"""Tests for merging chunks: planning by mergeability, compaction, and kill -9 during it."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.datasets import Chunk, Dataset, Manifest, Mergeability, compact, plan_compaction
from flowcore.datasets.store import write_chunk
from flowcore.errors import DatasetError

_MERGEABILITY = st.sampled_from(
    [Mergeability.ALWAYS, Mergeability.NEVER, Mergeability.after(100), Mergeability.after(10**9)]
)
_CHUNKS = st.lists(st.tuples(st.integers(1, 60), _MERGEABILITY), max_size=40)


@given(spec=_CHUNKS, file_max=st.integers(2, 6), threshold=st.floats(0.05, 1.0))
def test_compaction_merges_only_adjacent_eligible_chunks_within_limits(
    spec, file_max, threshold
) -> None:  # type: ignore[no-untyped-def]
    """Every planned range is adjacent, fully eligible now, at most merge_file_max chunks and
    at most threshold x split threshold bytes; no eligible neighbours are left that fit."""
    chunks = [Chunk(f"c{i}", size, 1, 0, m) for i, (size, m) in enumerate(spec)]
    now = 1_000
    groups = plan_compaction(
        chunks, now, split_threshold=200, merge_file_max=file_max, mergeability_threshold=threshold
    )
    position = {c.id: i for i, c in enumerate(chunks)}
    by_id = {c.id: c for c in chunks}
    for group in groups:
        indexes = [position[i] for i in group]
        assert indexes == list(range(indexes[0], indexes[0] + len(group)))
        assert 2 <= len(group) <= file_max
        assert sum(by_id[i].size for i in group) <= threshold * 200
        assert all(by_id[i].mergeability.eligible(0, now) for i in group)


def _dataset(root: Path, sizes: list[int], *, mergeability: Mergeability = Mergeability.ALWAYS):
    dataset = Dataset(root)
    chunks = []
    rng = random.Random(len(sizes))
    for n, size in enumerate(sizes):
        data = rng.randbytes(size)
        write_chunk(dataset.chunk_path(f"c{n:04d}"), [data])
        chunks.append(Chunk(f"c{n:04d}", size, 1, 0, mergeability))
    dataset.stage(Manifest(1, tuple(chunks), ordered=True, demarcator=b"\n"))
    dataset.publish(1)
    return dataset


def test_compact_publishes_one_new_version_with_the_same_bytes(tmp_path: Path) -> None:
    """Compaction joins the small chunks, keeps the bytes (demarcators included) and order,
    and leaves NEVER chunks alone."""
    dataset = _dataset(tmp_path / "ds", [10, 20, 30, 40, 500, 5, 5])
    before = b"".join(dataset.iter_bytes())
    done = compact(dataset, split_threshold=1_000, now_ms=0)
    assert (done.chunks_before, done.chunks_after, done.merged_groups) == (7, 3, 2)
    assert b"".join(dataset.iter_bytes()) == before
    assert dataset.latest_version() == 2
    never = _dataset(tmp_path / "never", [10, 20], mergeability=Mergeability.NEVER)
    assert compact(never, split_threshold=1_000).merged_groups == 0


def test_compaction_refuses_a_dataset_in_use(tmp_path: Path) -> None:
    """A running writer holds the lock: compaction says so instead of racing it."""
    dataset = _dataset(tmp_path / "ds", [10, 20])
    writer = Dataset(tmp_path / "ds")
    writer.acquire("write")
    try:
        with pytest.raises(DatasetError, match="another flow run or compaction"):
            compact(dataset, split_threshold=1_000)
    finally:
        writer.release()


@pytest.mark.slow
def test_kill_9_during_compaction_loses_nothing(tmp_path: Path) -> None:
    """`flowcore dataset compact` killed with SIGKILL at random moments: every time, the
    dataset reads back the same bytes from one whole version; a last run finishes the job."""
    pristine = _dataset(tmp_path / "pristine", [100_000] * 400)
    expected = b"".join(pristine.iter_bytes())
    script = Path(sys.executable).parent / "flowcore"

    def compact(path: Path) -> list[str]:
        return [str(script), "dataset", "compact", str(path), "--desired-chunk-size", "1 GB"]

    # Kill within the time an undisturbed compaction takes on this machine, start-up included.
    # That time varies with the load on the machine, so a compaction that ends before its kill
    # narrows the window to the time it took and does not count: ten real kills are required.
    shutil.copytree(pristine.path, tmp_path / "timed")
    started = time.monotonic()
    subprocess.run(compact(tmp_path / "timed"), capture_output=True, timeout=120, check=True)
    window = time.monotonic() - started
    rng = random.Random(11)
    kills = 0
    for attempt in range(30):
        path = tmp_path / f"ds{attempt}"
        shutil.copytree(pristine.path, path)
        command = compact(path)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        delay = rng.uniform(0.05, 0.9 * window)
        time.sleep(delay)
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        else:
            window = max(delay, 0.1)
        process.wait(timeout=60)
        reader = Dataset(path)
        assert b"".join(reader.iter_bytes()) == expected
        assert not reader.pending_versions()
        finished = subprocess.run(command, capture_output=True, timeout=120, check=True)
        assert b"chunks" in finished.stdout
        assert b"".join(reader.iter_bytes()) == expected
        assert len(reader.manifest().chunks) < 400
        named = {c.id for v in reader.versions() for c in reader.manifest(v).chunks}
        assert {p.name for p in reader.chunk_dir.iterdir()} <= named
        if kills == 10:
            break
    assert kills == 10, f"only {kills} compactions were still going when killed"
