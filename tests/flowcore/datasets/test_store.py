"""Tests for the dataset directory: staging, publishing, recovery, retention and the lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowcore.datasets import RETAINED_VERSIONS, Chunk, Dataset, Manifest, Mergeability
from flowcore.datasets.store import write_chunk
from flowcore.errors import DatasetError


def chunk(dataset: Dataset, data: bytes, name: str) -> Chunk:
    size = write_chunk(dataset.chunk_path(name), [data])
    return Chunk(name, size, 1, 0)


def test_a_staged_version_is_invisible_until_published(tmp_path: Path) -> None:
    """Readers see the last published version; publish is one rename and idempotent."""
    dataset = Dataset(tmp_path / "ds")
    assert dataset.manifest() == Manifest(0)
    one = Manifest(1, (chunk(dataset, b"hello ", "a"),))
    dataset.stage(one)
    assert dataset.latest_version() == 0
    assert dataset.publish(1)
    assert not dataset.publish(1)
    two = Manifest(2, (*one.chunks, chunk(dataset, b"world", "b")), demarcator=b"|")
    dataset.stage(two)
    assert b"".join(dataset.iter_bytes()) == b"hello "
    dataset.publish(2)
    assert b"".join(dataset.iter_bytes()) == b"hello |world"
    assert b"".join(dataset.iter_bytes(1)) == b"hello "


def test_discarding_an_uncommitted_version_removes_its_chunks(tmp_path: Path) -> None:
    """A staged version above the committed one goes, and so do chunks only it named."""
    dataset = Dataset(tmp_path / "ds")
    dataset.stage(Manifest(1, (chunk(dataset, b"kept", "a"),)))
    dataset.publish(1)
    dataset.stage(Manifest(2, (chunk(dataset, b"lost", "b"),)))
    chunk(dataset, b"orphan", "c")  # a task attempt that never committed
    assert dataset.discard_pending(above=1) == [2]
    assert sorted(p.name for p in dataset.chunk_dir.iterdir()) == ["a"]


def test_old_versions_and_their_chunks_age_out(tmp_path: Path) -> None:
    """Only the last RETAINED_VERSIONS versions stay readable; a gone one is a clear error."""
    dataset = Dataset(tmp_path / "ds")
    for version in range(1, 5):
        dataset.stage(Manifest(version, (chunk(dataset, b"x", f"c{version}"),)))
        dataset.publish(version)
    assert dataset.versions() == list(range(5 - RETAINED_VERSIONS, 5))
    assert sorted(p.name for p in dataset.chunk_dir.iterdir()) == ["c3", "c4"]
    with pytest.raises(DatasetError, match="has no version 1"):
        dataset.manifest(1)


def test_one_writer_at_a_time_and_unsettled_versions_block_changes(tmp_path: Path) -> None:
    """The lock refuses a second holder; a staged version blocks outside changes with the fix."""
    first, second = Dataset(tmp_path / "ds"), Dataset(tmp_path / "ds")
    first.acquire("write")
    with pytest.raises(DatasetError, match="another flow run or compaction"):
        second.acquire("compact")
    first.release()
    second.stage(Manifest(1, (chunk(second, b"x", "a"),)))
    with pytest.raises(DatasetError, match="run that flow again"):
        second.set_mergeability(["a"], Mergeability.NEVER)


def test_user_files_join_as_never_mergeable_chunks(tmp_path: Path) -> None:
    """add_file copies a user's file in as a NEVER chunk; set_mergeability changes it."""
    source = tmp_path / "mine.bin"
    source.write_bytes(b"user data")
    dataset = Dataset(tmp_path / "ds")
    manifest = dataset.add_file(source)
    (added,) = manifest.chunks
    assert added.mergeability == Mergeability.NEVER
    assert b"".join(dataset.iter_bytes()) == b"user data"
    changed = dataset.set_mergeability([added.id], Mergeability.ALWAYS)
    assert changed.chunks[0].mergeability == Mergeability.ALWAYS
    assert changed.version == manifest.version + 1
    with pytest.raises(DatasetError, match="has no chunk 'nope'"):
        dataset.set_mergeability(["nope"], Mergeability.NEVER)


def test_a_directory_without_manifests_is_not_a_dataset(tmp_path: Path) -> None:
    """``require_exists`` refuses a mistyped path (readers would see it as empty) and accepts
    a dataset once it has a version; ``to_spark`` checks it before asking Spark."""
    dataset = Dataset(tmp_path / "ds")
    with pytest.raises(DatasetError, match="is not a dataset"):
        dataset.require_exists()
    with pytest.raises(DatasetError, match="is not a dataset"):
        dataset.to_spark(spark=None)  # refused before the session is touched
    (tmp_path / "one").write_bytes(b"x")
    dataset.add_file(tmp_path / "one")
    dataset.require_exists()
