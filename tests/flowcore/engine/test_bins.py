"""Tests for binning FlowFile batches inside tasks: the bins and events of the one-by-one path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

import flowcore.engine._bins as task_bins
from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.driver.stage_jobs import StageJobs
from flowcore.settings import Settings
from processors import GenerateFlowFile, MergeContent, PutFile, UpdateAttribute

SETTINGS = Settings(sync=False, parallelism=2, unbounded_source_batches=3)

CONFIGS = {
    "aligned": {"minimum_number_of_entries": 7, "maximum_number_of_entries": 7},
    "across-batches": {"minimum_number_of_entries": 3, "maximum_number_of_entries": 5},
    "one-bin": {
        "minimum_number_of_entries": 4,
        "maximum_number_of_entries": 4,
        "maximum_number_of_bins": 1,
    },
    "max-bytes": {"maximum_group_size": "12 B", "minimum_number_of_entries": 2},
    "min-bytes": {"minimum_group_size": "20 B", "maximum_number_of_entries": 1000},
    "end-of-input": {"minimum_number_of_entries": 100},
    "delimiters": {
        "minimum_number_of_entries": 6,
        "maximum_number_of_entries": 6,
        "delimiter_strategy": "Text",
        "header": "[${kind}",
        "footer": "]",
        "demarcator": ",",
    },
    "zero-copy": {
        "minimum_number_of_entries": 7,
        "maximum_number_of_entries": 7,
        "zero_copy": True,
    },
    "unique-attributes": {
        "minimum_number_of_entries": 10,
        "maximum_number_of_entries": 10,
        "attribute_strategy": "Keep All Unique Attributes",
    },
}


def _flow(out: Path, merge: dict, *, keep_originals: bool = False, text: str = "line\n") -> Flow:
    flow = Flow("bins")
    gen = flow.add(GenerateFlowFile(batch_size=7, custom_text=text, kind="x"), name="gen")
    tag = flow.add(UpdateAttribute(source="bench"), name="tag")
    merger = flow.add(MergeContent(**merge), name="merge")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(gen, tag)
    flow.connect(tag, merger, back_pressure_object_threshold=1_000)
    flow.connect(merger, put, "merged")
    if keep_originals:
        seen = flow.add(UpdateAttribute(seen="yes"), name="seen")
        flow.connect(merger, seen, "original")
        flow.auto_terminate(seen, "success")
    else:
        flow.auto_terminate(merger, "original")
    flow.auto_terminate(merger, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def _both(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    outcome: Callable,
    make: Callable[[Path], Flow],
    settings: Settings = SETTINGS,
) -> tuple[object, object, int]:
    """The outcome with bins packed from batches, then one by one; and batch bins merged."""
    merged = []
    real = MergeContent.merge_batches

    def counting(self: MergeContent, *args: object) -> object:
        made = real(self, *args)  # type: ignore[arg-type]
        merged.append(made is not None)
        return made

    with monkeypatch.context() as patch:
        patch.setattr(MergeContent, "merge_batches", counting)
        whole = outcome(root / "whole", make(root / "whole" / "out"), settings)
    with monkeypatch.context() as patch:
        patch.setattr(MergeContent, "bin_batches", lambda *_, **__: None)
        single = outcome(root / "single", make(root / "single" / "out"), settings)
    return whole, single, sum(merged)


@pytest.mark.parametrize("batch_max", [100_000, 7], ids=["one-micro-batch", "a-trigger-each"])
@pytest.mark.parametrize("merge", CONFIGS.values(), ids=CONFIGS.keys())
def test_bins_packed_from_batches_are_the_one_by_one_bins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: Callable, merge: dict, batch_max: int
) -> None:
    """Same merged files, transfer counts and provenance as binning each FlowFile.

    With a trigger per micro-batch, open bins go back to the queue as batches and meet the
    next trigger's batches.
    """
    settings = attrs.evolve(
        SETTINGS, batch_max_flowfiles=batch_max, batch_max_batched_flowfiles=batch_max
    )
    whole, single, merged = _both(
        tmp_path, monkeypatch, outcome, lambda out: _flow(out, merge), settings
    )
    assert merged > 0
    assert whole == single


def _handed_over(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the batch bins handed to merge jobs (spying on the stage jobs)."""
    handed: list[int] = []
    real = StageJobs._merge_job

    def spy(self: StageJobs, plan: object, ready: list, first_index: int, *, run: str) -> object:
        handed.extend(1 for r in ready if r.batches)
        return real(self, plan, ready, first_index, run=run)  # type: ignore[arg-type]

    monkeypatch.setattr(StageJobs, "_merge_job", spy)
    return handed


def test_bins_handed_to_merge_tasks_as_cuts_are_the_one_by_one_bins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: Callable
) -> None:
    """Ready bins of batches merged by a second job (however small) still match."""
    monkeypatch.setattr(task_bins, "MERGE_APART_BYTES", 0)
    handed = _handed_over(monkeypatch)
    merge = CONFIGS["max-bytes"]  # three ready bins in each task
    whole, single, merged = _both(tmp_path, monkeypatch, outcome, lambda out: _flow(out, merge))
    assert merged > 0
    assert handed
    assert whole == single


def test_small_ready_bins_of_batches_are_merged_where_they_are_decided(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below MERGE_APART_BYTES no second job runs: it would cost more than the merging."""
    handed = _handed_over(monkeypatch)
    result = run_flow(
        _flow(tmp_path / "out", CONFIGS["max-bytes"]),
        "direct",
        repository=tmp_path / "repo",
        settings=SETTINGS,
    )
    assert result.count("merge", "merged") == 11  # ten of two, the last one at end of input
    assert not handed


def test_originals_sent_on_get_merge_uuid_as_a_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: Callable
) -> None:
    """Originals routed to a processor carry merge.uuid, with ATTRIBUTES_MODIFIED runs."""
    merge = CONFIGS["across-batches"]
    whole, single, merged = _both(
        tmp_path, monkeypatch, outcome, lambda out: _flow(out, merge, keep_originals=True)
    )
    assert merged > 0
    assert whole == single
    assert whole[2]["seen"]["success"][0] == 21  # type: ignore[index]


def test_a_bin_that_cannot_be_merged_from_batches_is_merged_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing delimiter file fails the batch merge; the bin's FlowFiles go to failure."""
    merge = {
        "minimum_number_of_entries": 7,
        "maximum_number_of_entries": 7,
        "delimiter_strategy": "Filename",
        "header": "${kind}.missing",
    }
    flow = _flow(tmp_path / "out", merge)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("merge", "failure") == 21
    assert result.count("merge", "merged") == 0


def test_a_declining_processor_bins_the_flowfiles_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bin_batches raising is no loss: the batches are materialized and binned as always."""

    def broken(*_: object, **__: object) -> None:
        msg = "no batches today"
        raise RuntimeError(msg)

    monkeypatch.setattr(MergeContent, "bin_batches", broken)
    flow = _flow(tmp_path / "out", CONFIGS["aligned"])
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("merge", "merged") == 3
    assert all(p.read_bytes() == b"line\n" * 7 for p in (tmp_path / "out").iterdir())
