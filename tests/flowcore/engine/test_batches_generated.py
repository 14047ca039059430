"""Tests for FlowFile batches inside tasks, made by GenerateFlowFile and tagged by
UpdateAttribute: the same FlowFiles and events as one by one, and the ways back to one by one
(a fanned-out relationship, a failing batch form, the unpacking limit)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.engine._driver import BatchDriver
from processors import GenerateFlowFile, MergeContent, PutFile, UpdateAttribute
from tests.flowcore.engine._batch_outcomes import SETTINGS, _per_component


def _flow(out: Path, fan_out: bool = False, **generate: object) -> Flow:
    flow = Flow("batches")
    gen = flow.add(GenerateFlowFile(batch_size=7, **generate, kind="x"), name="gen")
    tag = flow.add(UpdateAttribute(source="bench"), name="tag")
    merge = flow.add(
        MergeContent(minimum_number_of_entries=3, maximum_number_of_entries=3), name="merge"
    )
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(gen, tag)
    flow.connect(tag, merge, back_pressure_object_threshold=1_000)
    flow.connect(merge, put, "merged")
    if fan_out:
        flow.connect(gen, put)
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


@pytest.mark.parametrize(
    "generate",
    [
        {"file_size": "10 B"},
        {"custom_text": "line\n", "mime_type": "text/plain"},
        {},
        {"file_size": "10 B", "unique_flowfiles": True},
        {"custom_text": "x", "size": "${fileSize:plus(1)}", "shout": "${literal('a'):toUpper()}"},
    ],
    ids=["random", "custom-text", "empty", "unique", "expressions"],
)
def test_whole_batches_give_the_flowfiles_and_events_of_the_one_by_one_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generate: dict, outcome: Callable
) -> None:
    """GenerateFlowFile and UpdateAttribute on batches: same outputs, counts and provenance,
    events in the same order."""
    flow = _flow(tmp_path / "whole" / "out", **generate)
    whole = outcome(tmp_path / "whole", flow, SETTINGS, ordered=True)
    monkeypatch.setattr(GenerateFlowFile, "read_work_batches", lambda *_: None)
    monkeypatch.setattr(UpdateAttribute, "transform_batch", lambda *_: None)
    flow = _flow(tmp_path / "single" / "out", **generate)
    single = outcome(tmp_path / "single", flow, SETTINGS, ordered=True)
    if "file_size" in generate:  # random content: each run draws its own bytes
        assert sorted(len(c) for c in whole[1].elements()) == sorted(
            len(c) for c in single[1].elements()
        )
        assert (whole[0], whole[2]) == (single[0], single[2])
    else:
        assert whole == single


@pytest.mark.parametrize(
    "generate",
    [{"file_size": "10 B", "unique_flowfiles": True}, {"custom_text": "x", "n": "${fileSize}"}],
    ids=["unique", "expression"],
)
def test_unique_contents_and_expressions_are_generated_as_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generate: dict
) -> None:
    """GenerateFlowFile makes unique random contents and per-FlowFile attributes as one batch:
    its one-by-one read_work is never called."""

    def refused(*_: object) -> None:
        msg = "read_work must not run: the batch form covers this configuration"
        raise AssertionError(msg)

    monkeypatch.setattr(GenerateFlowFile, "read_work", refused)
    flow = _flow(tmp_path / "out", **generate)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("gen", "success") == 21
    assert not result.bulletins
    if "unique_flowfiles" in generate:
        contents = [p.read_bytes() for p in (tmp_path / "out").iterdir()]
        pieces = {c[i : i + 10] for c in contents for i in range(0, 30, 10)}
        assert len(pieces) == 21  # every FlowFile drew its own bytes


def test_a_fanned_out_relationship_takes_the_flowfiles_one_by_one(tmp_path: Path) -> None:
    """Two destinations need clones, so the batch is materialized: nothing is lost."""
    flow = _flow(tmp_path / "out", fan_out=True, custom_text="x")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("gen", "success") == 42  # 21 FlowFiles, each to two connections
    assert result.count("tag", "success") == 21
    assert result.count("put", "success") == 21 + 7


def test_a_processor_failing_on_a_batch_gets_its_flowfiles_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transform_batch that raises declines: the FlowFiles still go through on_trigger."""

    def broken(*_: object) -> None:
        msg = "no batches today"
        raise RuntimeError(msg)

    monkeypatch.setattr(UpdateAttribute, "transform_batch", broken)
    flow = _flow(tmp_path / "out", custom_text="x")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("tag", "success") == 21
    assert result.count("put", "success") == 7
    assert all(p.read_bytes() == b"xxx" for p in (tmp_path / "out").iterdir())


def test_a_task_unpacks_at_most_the_flowfile_limit_and_defers_the_other_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outcome: Callable
) -> None:
    """Batches a processor takes one by one are unpacked up to batch_max_flowfiles per task;
    the others wait whole in its queue: the same FlowFiles and events, over more
    micro-batches (so each component's events in the same order)."""
    settings = attrs.evolve(SETTINGS, batch_max_flowfiles=7)
    flow = _flow(tmp_path / "whole" / "out", custom_text="x")
    whole = outcome(tmp_path / "whole", flow, settings, ordered=True)
    monkeypatch.setattr(UpdateAttribute, "transform_batch", lambda *_: None)
    held: list[int] = []
    real = BatchDriver.unpacks

    def spying(driver: BatchDriver, batch: Any, queue_id: str) -> bool:
        unpacked = real(driver, batch, queue_id)
        held.append(driver.member.task.unpacked)
        return unpacked

    monkeypatch.setattr(BatchDriver, "unpacks", spying)
    deferred = outcome(
        tmp_path / "deferred",
        _flow(tmp_path / "deferred" / "out", custom_text="x"),
        settings,
        ordered=True,
    )
    assert _per_component(deferred) == _per_component(whole)
    # Three batches of 7 met UpdateAttribute whole in the first task, which unpacked one and
    # deferred two; the deferred ones come back whole from the queue: the next task unpacks
    # one of the two, the last the third. Each task holds at most 7 unpacked.
    assert held == [7] * 6
