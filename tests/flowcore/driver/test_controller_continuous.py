"""Tests for how the controller triggers sources: continuous runs, Run Schedules, and
micro-batches filled up to their limits."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

import flowcore.driver.sources as sources_module
from flowcore import Flow
from flowcore.driver.controller import RunResult, run_flow
from flowcore.driver.run_result import RunProgress
from flowcore.settings import Settings
from processors import GenerateFlowFile, UpdateAttribute


def test_continuous_mode_polls_until_told_to_stop(tmp_path: Path) -> None:
    """In continuous mode a source with NiFi's Run Schedule of 0 sec fills every micro-batch
    (MAX_SOURCE_TRIGGERS triggers); progress is reported; stop ends it."""
    settings = Settings(sync=False, parallelism=1, poll_interval="0 sec")
    flow = Flow("forever")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=2), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    reports = []

    def stop() -> bool:
        return len(reports) >= 5

    result = run_flow(
        flow,
        "direct",
        repository=tmp_path / "repo",
        settings=settings,
        continuous=True,
        progress=reports.append,
        should_stop=stop,
    )
    triggers = sources_module.MAX_SOURCE_TRIGGERS
    assert result.count("tag", "success") == 5 * triggers * 2
    # each micro-batch: a work item per trigger read, two FlowFiles each consumed by the tag
    assert [r.flowfiles_in for r in reports] == [triggers * 3] * 5
    assert [r.micro_batch for r in reports] == [1, 2, 3, 4, 5]


def _run_continuously(
    tmp_path: Path, flow: Flow, poll_interval: str, **hooks: Callable[..., object]
) -> RunResult:
    settings = Settings(sync=False, parallelism=1, poll_interval=poll_interval)
    return run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=settings, continuous=True, **hooks
    )


def _scheduled_flow(run_schedule: str) -> Flow:
    flow = Flow("paced")
    gen = flow.add(
        GenerateFlowFile(custom_text="x", batch_size=2), name="gen", run_schedule=run_schedule
    )
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    return flow


def test_a_run_schedule_triggers_a_source_once_per_period_in_continuous_mode(
    tmp_path: Path,
) -> None:
    """A source with Run Schedule 1 hour is triggered once, at the start, however many
    micro-batches a continuous run polls, and is not filled."""
    polls = []

    def stop() -> bool:
        polls.append(1)
        return len(polls) > 20

    result = _run_continuously(tmp_path, _scheduled_flow("1 hour"), "0 sec", should_stop=stop)
    assert result.count("tag", "success") == 2
    assert result.micro_batches == 20


def test_a_run_schedule_spaces_a_sources_triggers_by_its_period(tmp_path: Path) -> None:
    """With Run Schedule 200 millis, three triggers take at least two periods; the run
    sleeps until the next one is due rather than a whole poll interval."""
    reports: list[RunProgress] = []
    started = time.monotonic()
    result = _run_continuously(
        tmp_path,
        _scheduled_flow("200 millis"),
        "1 hour",
        progress=reports.append,
        should_stop=lambda: len(reports) >= 3,
    )
    assert time.monotonic() - started >= 0.4
    assert result.count("tag", "success") == 6
    assert [r.flowfiles_in for r in reports] == [3, 3, 3]


def _generated(
    tmp_path: Path, settings: Settings, threshold: int, *, alike: bool = True
) -> list[RunProgress]:
    flow = Flow("filling")
    per_flowfile = {} if alike else {"n": "${literal(1)}"}  # EL: made one by one
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=10, **per_flowfile), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, tag, back_pressure_object_threshold=threshold)
    flow.auto_terminate(tag, "success")
    reports: list[RunProgress] = []
    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=settings, progress=reports.append
    )
    assert result.count("gen", "success") == 100  # every trigger the run allows, as ever
    (stage,) = [line.split(":")[0] for line in result.plan.splitlines() if "Generate" in line]
    return [r for r in reports if r.stage_id == stage]


@pytest.mark.parametrize(
    ("alike", "plain", "batched"),
    [(True, 5, 35), (False, 35, 1_000)],
    ids=["batches-fill-to-the-batched-limit", "one-by-one-fills-to-the-plain-limit"],
)
def test_an_unbounded_source_fills_a_micro_batch_up_to_its_limit(
    tmp_path: Path, alike: bool, plain: int, batched: int
) -> None:
    """GenerateFlowFile is triggered until its FlowFiles fill a micro-batch: whole batches up to
    batch_max_batched_flowfiles, FlowFiles made one by one (EL) up to batch_max_flowfiles."""
    settings = Settings(
        sync=False,
        parallelism=1,
        unbounded_source_batches=10,
        batch_max_flowfiles=plain,
        batch_max_batched_flowfiles=batched,
    )
    runs = _generated(tmp_path, settings, threshold=0, alike=alike)
    assert [r.flowfiles_in for r in runs] == [4, 4, 2]  # work items: 4 triggers make 40


def test_filling_a_micro_batch_stops_at_an_output_threshold(tmp_path: Path) -> None:
    """Back pressure bounds the fill: triggers stop once the output queue would be full."""
    settings = Settings(sync=False, parallelism=1, unbounded_source_batches=10)
    runs = _generated(tmp_path, settings, threshold=25)
    assert runs[0].flowfiles_in == 3  # 30 FlowFiles reach the threshold of 25
