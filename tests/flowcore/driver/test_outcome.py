"""Tests for a run's outcome: the reader a queue's reason names, and the plan as the run ran it.

Why queues are stuck at the end of a run is tested through whole runs in
``test_controller_stuck.py``.
"""

from __future__ import annotations

from flowcore import Flow
from flowcore.compiler.stages import compile_flow, explain
from flowcore.definition.queues import park_queue_id
from flowcore.driver.outcome import explain_run, reader_of
from flowcore.settings import Settings
from processors import GenerateFlowFile, MergeContent, UpdateAttribute


def _flow() -> Flow:
    flow = Flow("outcome")
    gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
    merge = flow.add(MergeContent(), name="merge")
    end = flow.add(UpdateAttribute(), name="end")
    flow.connect(gen, merge)
    flow.connect(merge, end, "merged")
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(end, "success")
    return flow


def test_the_reader_of_a_queue_is_the_member_taking_from_it() -> None:
    """A connection's queue is read by its stage's member; a park queue by its own component."""
    compiled = compile_flow(_flow())
    queue_id, member = next(
        (q, m) for p in compiled.plans.values() for q, m in p.queue_members.items()
    )
    assert reader_of(compiled.plans, queue_id) == member
    assert reader_of(compiled.plans, park_queue_id("somebody")) == "somebody"
    assert reader_of(compiled.plans, "gone") is None


def test_the_plan_shows_what_the_runner_did_for_each_stage_that_ran() -> None:
    """Each described stage gets a 'ran as' line under its own; the rest is the plan as is."""
    compiled = compile_flow(_flow())
    settings = Settings()
    stage_id = next(iter(compiled.plans))
    plan = explain_run(compiled, "direct", settings, {stage_id: "1 task(s) in-process"})
    lines = plan.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split(":", 1)[0] == stage_id)
    assert lines[at + 1] == "  ran as: 1 task(s) in-process"
    assert [x for x in lines if not x.startswith("  ran as:")] == explain(
        compiled, runner="direct", settings=settings
    ).splitlines()
    assert explain_run(compiled, "direct", settings, {}) == explain(
        compiled, runner="direct", settings=settings
    )
