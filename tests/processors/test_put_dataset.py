"""Tests for PutDataset: chunks written by tasks, versions published by the driver, and the
auto_merge section (kill -9 during dataset writes: tests/stress/test_dataset_kills.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from flowcore import Flow, ProvenanceEventType
from flowcore.datasets import AutoMergeMode, Dataset
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, PutDataset, SplitText


def test_the_harness_writes_chunks_and_publishes_a_version(tmp_path: Path) -> None:
    """FlowFiles go into a chunk with the demarcator between them, a version is published,
    and each FlowFile gets a SEND event."""
    runner = TestRunner(PutDataset(directory=str(tmp_path / "ds"), demarcator="\n"))
    for text in ("a", "b", "c"):
        runner.enqueue(text, {"k": text})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 3)
    dataset = Dataset(tmp_path / "ds")
    assert b"".join(dataset.iter_bytes()) == b"a\nb\nc"
    assert dataset.latest_version() == 1
    assert runner.state["version"] == "1"
    sends = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.SEND]
    assert len(sends) == 3


def test_chunks_roll_over_at_the_desired_size_and_record_key_ranges(tmp_path: Path) -> None:
    """A task starts a new chunk once one reaches the desired size; each records its keys."""
    runner = TestRunner(
        PutDataset(directory=str(tmp_path / "ds"), desired_chunk_size="4 B", key_attribute="k")
    )
    for key in ("b", "a", "d", "c"):
        runner.enqueue("xyz", {"k": key})
    runner.run()
    chunks = Dataset(tmp_path / "ds").manifest().chunks
    assert [(c.size, c.first_key, c.last_key) for c in chunks] == [(6, "a", "b"), (6, "c", "d")]


def test_the_auto_merge_section_sets_the_properties_and_is_checked() -> None:
    """auto_merge={...} is the same as the properties; manual mode needs its two limits."""
    sink = PutDataset(directory="ds", auto_merge={"mode": "economy", "desired_chunk_size": "64 MB"})
    config = sink.auto_merge()
    assert config.mode is AutoMergeMode.ECONOMY
    assert config.desired_chunk_size == 64 * 1024 * 1024
    TestRunner(sink).assert_valid()
    TestRunner(PutDataset(directory="ds", auto_merge={"mode": "manual"})).assert_not_valid()
    with pytest.raises(ValueError, match="auto_merge has no 'size'"):
        PutDataset(directory="ds", auto_merge={"size": 1})


def _lines_flow(root: Path, mode: str, **section: object) -> Flow:
    flow = Flow("to-dataset")
    get = flow.add(GetFile(input_directory=str(root / "in"), keep_source_file=True, batch_size=2))
    split = flow.add(SplitText(line_split_count=20, remove_trailing_newlines=False), name="split")
    put = flow.add(
        PutDataset(directory=str(root / "ds"), auto_merge={"mode": mode, **section}), name="put"
    )
    flow.connect(get, split)
    flow.connect(split, put, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


@pytest.mark.parametrize("mode", ["disabled", "relaxed", "economy"])
def test_a_flow_writes_every_line_once_in_each_mode(
    tmp_path: Path, mode: str, runner: str, line_inputs: Callable[..., bytes]
) -> None:
    """On the engine, each mode gives a dataset holding every input line exactly once;
    relaxed leaves fewer, larger chunks than disabled and reports its high-water mark."""
    expected = line_inputs(tmp_path)
    result = run_flow(
        _lines_flow(tmp_path, mode, desired_chunk_size="16 KB", chunk_size_threshold=50),
        runner,
        repository=tmp_path / "repo",
        # GetFile fills a micro-batch; two FlowFiles per micro-batch keep it at one listing
        # of Batch Size 2 each, so the sink sees four stage runs.
        settings=Settings(
            parallelism=2, sync=False, batch_max_flowfiles=2, driver_run_max_flowfiles=0
        ),
    )
    dataset = Dataset(tmp_path / "ds")
    data = b"".join(dataset.iter_bytes())
    assert b"".join(sorted(data.splitlines(keepends=True))) == expected
    report = result.sinks["put"]
    assert int(report["version"]) == dataset.latest_version()
    assert int(report["chunks"]) == len(dataset.manifest().chunks)
    if mode == "relaxed":
        assert int(report["merge.jobs"]) > 0
        assert int(report["intermediate"]) <= 1
        assert int(report["intermediate.high_water"]) > int(report["intermediate"])
    if mode == "disabled":
        assert int(report["merge.jobs"]) == 0
