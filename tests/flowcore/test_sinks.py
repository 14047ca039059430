"""Tests for the driver side of two-phase sinks: recovery publishes what was committed and
throws away what was only staged."""

from __future__ import annotations

from pathlib import Path

from flowcore import Flow
from flowcore.controller import Controller
from flowcore.datasets import Chunk, Dataset, Manifest
from flowcore.datasets.store import write_chunk
from flowcore.repository_set import RepositorySet
from flowcore.runners.direct import DirectRunner
from processors import GenerateFlowFile, PutDataset
from repositories.records import Transaction


def _flow(dataset: Path) -> Flow:
    flow = Flow("sink")
    gen = flow.add(GenerateFlowFile(batch_size=3, file_size="4 B"), name="gen")
    put = flow.add(PutDataset(directory=str(dataset)), name="put")
    flow.connect(gen, put)
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def _staged(dataset: Dataset, version: int, name: str) -> None:
    write_chunk(dataset.chunk_path(name), [name.encode()])
    dataset.stage(Manifest(version, (Chunk(name, len(name), 1, 0),)))


def test_recovery_publishes_the_committed_version_and_drops_the_rest(tmp_path: Path) -> None:
    """A crash after the WAL commit but before the rename: the committed version is published
    at start-up; a version staged past the committed one (crash before the commit) is gone,
    with its chunks."""
    dataset = Dataset(tmp_path / "ds")
    _staged(dataset, 1, "committed")
    _staged(dataset, 2, "uncommitted")
    flow = _flow(dataset.path)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        controller = Controller(flow, DirectRunner(), repos)
        put_id = flow.component("put").id
        repos.flowfiles.commit(Transaction(state={put_id: {"version": "1"}}))
        controller.sinks.recover()
        controller.sinks.release()
    finally:
        repos.close()
    assert dataset.versions() == [1]
    assert dataset.pending_versions() == []
    assert sorted(p.name for p in dataset.chunk_dir.iterdir()) == ["committed"]


def test_each_stage_run_publishes_one_version(tmp_path: Path) -> None:
    """Every stage run with output adds exactly one version; the run reports the last one."""
    flow = _flow(tmp_path / "ds")
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        result = Controller(flow, DirectRunner(), repos).run()
    finally:
        repos.close()
    dataset = Dataset(tmp_path / "ds")
    assert result.sinks["put"]["version"] == str(dataset.latest_version())
    assert dataset.manifest().records == result.count("gen", "success") == 3
