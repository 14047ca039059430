"""Tests for the end of the controller's batch run: why each queue is stuck, and a run that
ends though FlowFiles are held."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from flowcore import Flow, Processor, Relationship
from flowcore.driver.controller import RunResult, run_flow
from flowcore.errors import FlowIdentityError
from flowcore.settings import Settings
from processors import (
    GenerateFlowFile,
    GetFile,
    LogAttribute,
    MergeContent,
    SplitText,
    UpdateAttribute,
)
from tests.flowcore.driver._controller_runs import SETTINGS, Explode


class PenalizeAll(Processor):
    """Passes every FlowFile on, penalized (NiFi's session.penalize)."""

    relationships = (Relationship("success", "penalized"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(session.penalize(flowfile), "success")


def test_back_pressure_that_never_clears_names_the_full_queue(tmp_path: Path) -> None:
    """Upstream of a full queue nothing runs: its queue says which queue held it back."""
    settings = Settings(sync=False, parallelism=1, unbounded_source_batches=3)
    flow = Flow("pressure")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=20), name="gen")
    tag = flow.add(UpdateAttribute(a="b"), name="tag")
    boom = flow.add(Explode(), name="boom")
    flow.connect(gen, tag, back_pressure_object_threshold=5)
    flow.connect(tag, boom, back_pressure_object_threshold=5)
    flow.auto_terminate(boom, "success")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.stuck["gen -[success]-> tag"].startswith(
        "tag could not run: its output queue tag -[success]-> boom is at its back-pressure"
    )
    assert "processor errors in boom" in result.stuck["tag -[success]-> boom"]
    assert sum(count for count, _ in result.queued.values()) == 40


def test_penalized_flowfiles_are_not_blamed_on_processor_errors(tmp_path: Path) -> None:
    """FlowFiles penalized past the end of a batch run (no error) are reported as penalized."""
    flow = Flow("penalties")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=2), name="gen")
    pen = flow.add(PenalizeAll(), name="pen")
    tag = flow.add(UpdateAttribute(a="b"), name="tag")
    flow.connect(gen, pen)
    flow.connect(pen, tag, durable=True)
    flow.auto_terminate(tag, "success")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.stuck == {
        "pen -[success]-> tag": "penalized past the end of the run; a later run takes them"
    }


def test_a_queue_no_connection_reads_any_more_refuses_the_run(tmp_path: Path) -> None:
    """Run a flow, drop the connection that holds FlowFiles, run again: refused, queue named."""
    repository = tmp_path / "repo"
    flow = Flow("changed")
    gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
    boom = flow.add(Explode(), name="boom")
    flow.connect(gen, boom, durable=True)
    flow.auto_terminate(boom, "success")
    assert run_flow(flow, "direct", repository=repository, settings=SETTINGS).stuck
    later = Flow("changed")
    gen2 = later.add(GenerateFlowFile(custom_text="x"), name="gen2")
    later.auto_terminate(gen2, "success")
    with pytest.raises(FlowIdentityError, match=r"gen -\[success\]-> boom holds 1 FlowFile"):
        run_flow(later, "direct", repository=repository, settings=SETTINGS)


def test_a_full_queue_fed_by_an_exhausted_source_does_not_stop_the_end_of_input(
    tmp_path: Path,
) -> None:
    """A queue over its back pressure threshold, whose feeding stage has nothing left to read,
    holds nothing back: the batch run still merges the open bins at the end of input (it
    ended with every FlowFile queued and a 'penalized' stuck line)."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for number in range(4):
        (inputs / f"f{number}.txt").write_text("".join(f"{number} {i}\n" for i in range(300)))
    flow = Flow("backed-up")
    get = flow.add(GetFile(input_directory=str(inputs), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1, remove_trailing_newlines=False), name="split")
    tag = flow.add(UpdateAttribute(k="${fragment.index:mod(2)}"), name="tag")
    merge = flow.add(
        MergeContent(
            correlation_attribute_name="k",
            minimum_number_of_entries=10**6,
            maximum_number_of_entries=10**6,
        ),
        name="merge",
    )
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.connect(tag, merge, back_pressure_object_threshold=100)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["merged", "original", "failure"])
    settings = attrs.evolve(SETTINGS, batch_max_flowfiles=100)  # the merge stage takes a part
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert (result.count("merge", "merged"), result.count("merge", "original")) == (2, 1_200)
    assert result.stuck == {}


class _FailsByUuid(Processor):
    """Routes a FlowFile to failure until it was retried ``uuid % 4`` times (retry on failure)."""

    relationships = (Relationship("success"), Relationship("failure"))

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is None:
            return
        tries = int(flowfile.attributes.get(f"retryCount.{context.component.id}", "0"))
        fails = int(flowfile.attributes["uuid"].replace("-", ""), 16) % 4
        session.transfer(flowfile, "failure" if tries < fails else "success")


def test_a_batch_run_ends_when_held_flowfiles_cannot_be_taken(tmp_path: Path) -> None:
    """Retried FlowFiles whose backoff is over but whose processor is held back (its output
    queue full before a disabled processor) are idle, not waited for forever: the run ends."""
    import threading

    from flowcore.definition.component_settings import RetrySettings

    flow = Flow("held")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=8), name="gen")
    flaky = flow.add(
        _FailsByUuid(),
        name="flaky",
        penalty_duration="50 ms",
        retry=RetrySettings(["failure"], count=5),
    )
    done = flow.add(LogAttribute(), name="done", disabled=True)
    flow.connect(gen, flaky)
    flow.connect(flaky, done, "success", back_pressure_object_threshold=1)
    flow.auto_terminate(flaky, "failure")
    results: list[RunResult] = []
    settings = Settings(sync=False, parallelism=1)
    worker = threading.Thread(
        target=lambda: results.append(
            run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
        ),
        daemon=True,
    )
    worker.start()
    worker.join(60)
    assert results, "the batch run did not end within 60 s"
    assert not results[0].finished
    assert results[0].queued["flaky -[success]-> done"][0] >= 1


def _held_by_funnel(connect: bool) -> Flow:
    """gen -> tag -> funnel 'hold', the funnel connected on to 'done' when *connect*."""
    flow = Flow("held")
    gen = flow.add(GenerateFlowFile(custom_text="xy", batch_size=4), name="gen")
    tag = flow.add(UpdateAttribute(a="b"), name="tag")
    hold = flow.funnel("hold")
    flow.funnel("unused")  # no connection at all: never runs
    flow.connect(gen, tag)
    flow.connect(tag, hold)
    if connect:
        done = flow.add(UpdateAttribute(c="d"), name="done")
        flow.connect(hold, done)
        flow.auto_terminate(done, "success")
    return flow


def test_flowfiles_before_a_funnel_with_no_way_out_wait_durably_and_are_not_stuck(
    tmp_path: Path,
) -> None:
    """A dangling funnel keeps what reaches it queued: the run finishes, nothing is stuck, and
    a later run with the funnel connected takes those FlowFiles on."""
    result = run_flow(_held_by_funnel(False), "direct", repository=tmp_path / "repo")
    assert result.finished
    assert result.stuck == {}
    assert result.queued == {"tag -[success]-> hold": (4, 8)}
    assert result.dead_ends == {"tag -[success]-> hold": "hold"}
    assert result.waiting_before_funnels() == {"hold": (4, 8)}
    assert result.waiting_for_disabled() == {}
    assert "(waits before funnel 'hold', no outgoing connection)" in result.summary()
    assert result.stage_runs == 1  # neither funnel ran
    again = run_flow(_held_by_funnel(True), "direct", repository=tmp_path / "repo")
    assert again.transfers["done"] == {"success": (4 + 4, 16)}
    assert again.queued == {}
