"""Tests for Run Schedules: periods and crons, on sources and on processors with input."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest

from flowcore import Flow
from flowcore.compiler.plan import MemberPlan
from flowcore.driver.controller import run_flow
from flowcore.driver.run_result import RunProgress
from flowcore.driver.schedules import Schedules
from flowcore.settings import Settings
from processors import GenerateFlowFile, LogAttribute, UpdateAttribute


def _member(run_schedule_ms: int = 0, cron: str | None = None) -> MemberPlan:
    return MemberPlan("m-1", "m", "UpdateAttribute", None, {}, frozenset(), True, 1,
                      run_schedule_ms, cron)  # fmt: skip


class _Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def test_a_period_is_due_at_once_then_once_per_period() -> None:
    """A timer-driven member may run at the start, then not before a period has passed."""
    clock = _Clock(1_000_000)
    schedules = Schedules(clock)
    member = _member(run_schedule_ms=500)
    assert schedules.due(member)
    schedules.ran(member)
    clock.now += 499
    assert not schedules.due(member)
    assert schedules.upcoming([member]) == 1_000_500
    clock.now += 1
    assert schedules.due(member)
    assert schedules.due(_member())  # no schedule: always


def test_a_cron_is_due_at_its_next_time_after_the_start() -> None:
    """A CRON driven member waits for the first time after the run's start, then the next."""
    clock = _Clock(1_767_225_600_250)  # a quarter second past a whole second
    schedules = Schedules(clock)
    member = _member(cron="*/2 * * * * ?")
    first = schedules.next_due(member)
    assert first > clock.now
    assert first % 2000 == 0
    assert not schedules.due(member)
    clock.now = first
    assert schedules.due(member)
    schedules.ran(member)
    assert schedules.next_due(member) == first + 2000


def _stage_runs(tmp_path: Path, flow: Flow, stage_name: str, runs: int) -> list[float]:
    """Run *flow* continuously until the stage named *stage_name* ran *runs* times: when."""
    times: list[float] = []
    started = time.monotonic()

    def progress(report: RunProgress) -> None:
        names = {s.stage_id: s.name for s in report.stages}
        if names.get(report.stage_id) == stage_name:
            times.append(time.monotonic() - started)

    run_flow(
        flow,
        "direct",
        repository=tmp_path / "repo",
        settings=Settings(sync=False, parallelism=1, poll_interval="20 ms"),
        continuous=True,
        progress=progress,
        should_stop=lambda: len(times) >= runs or time.monotonic() - started > 30,
    )
    return times


def test_a_cron_source_is_triggered_at_its_times_in_a_continuous_run(tmp_path: Path) -> None:
    """A source on cron ``* * * * * ?`` fires once a second, on the second, not at the start."""
    flow = Flow("cron")
    gen = flow.add(
        GenerateFlowFile(custom_text="x"),
        name="gen",
        scheduling_strategy="CRON_DRIVEN",
        run_schedule="* * * * * ?",
    )
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    times = _stage_runs(tmp_path, flow, "gen+tag", 3)
    assert len(times) == 3
    # three consecutive seconds, not every 20 ms poll (times are taken after each commit)
    assert times[2] - times[0] >= 1.5, times
    assert all(b - a >= 0.5 for a, b in itertools.pairwise(times)), times


def test_a_run_schedule_on_a_processor_with_input_runs_its_stage_once_per_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """UpdateAttribute with Run Schedule 300 millis behind an ever-running source runs its
    stage at most once per period; its input waits queued in between. The period runs from
    when a run is marked done (``Schedules.ran``), so those marks are what is timed: the
    progress reports come after each commit, whose length varies on a busy machine."""
    marks: list[float] = []
    real_ran = Schedules.ran

    def timed_ran(self: Schedules, member: MemberPlan) -> None:
        if member.name == "tag":
            marks.append(time.monotonic())
        real_ran(self, member)

    monkeypatch.setattr(Schedules, "ran", timed_ran)
    flow = Flow("paced")
    gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag", run_schedule="300 millis")
    log = flow.add(LogAttribute(log_level="debug"), name="log")
    flow.connect(gen, tag)
    flow.connect(tag, log)
    flow.auto_terminate(log, "success")
    times = _stage_runs(tmp_path, flow, "tag", 4)
    assert len(times) == 4
    assert len(marks) >= 4
    assert all(b - a >= 0.299 for a, b in itertools.pairwise(marks))


def test_a_batch_run_ignores_schedules(tmp_path: Path) -> None:
    """A batch run is one pass (NiFi's Run Once): a cron source and a periodic processor run
    at once, however far off their schedules are."""
    flow = Flow("once")
    gen = flow.add(
        GenerateFlowFile(custom_text="x", batch_size=4),
        name="gen",
        scheduling_strategy="CRON_DRIVEN",
        run_schedule="0 0 0 1 1 ? 2060",
    )
    tag = flow.add(UpdateAttribute(), name="tag", run_schedule="1 hour")
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    started = time.monotonic()
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("tag", "success") == 4
    assert result.finished
    assert time.monotonic() - started < 30
