"""Tests for the live status and progress of a run: status.json and the progress reports."""

from __future__ import annotations

import time
from pathlib import Path

from flowcore import Flow, Processor, Relationship
from flowcore.driver.controller import Controller, run_flow
from flowcore.driver.run_result import RunProgress
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from processors import FileSplitter, GenerateFlowFile, GetFile, UpdateAttribute
from repositories.repository_set import RepositorySet, read_status

SETTINGS = Settings(sync=False, parallelism=1)


class Explode(Processor):
    """Always fails."""

    relationships = (Relationship("success", "never"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        if session.get() is not None:
            msg = "this processor always fails"
            raise RuntimeError(msg)


def _connections(status: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    return {c["label"]: c for c in status["connections"]}


def test_a_full_queue_shows_over_its_threshold_and_the_stage_held_back(tmp_path: Path) -> None:
    """After the source fills its output past the threshold, status marks that connection over
    and names the source's stage as held back; the other connection is listed with zeros."""
    flow = Flow("pressed")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=5), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag")
    end = flow.add(UpdateAttribute(), name="end")
    flow.connect(gen, tag, back_pressure_object_threshold=2)
    flow.connect(tag, end, durable=True)
    flow.auto_terminate(end, "success")
    repos = RepositorySet.open(tmp_path / "repo", SETTINGS)
    try:
        controller = Controller(flow, DirectRunner(), repos, SETTINGS)
        source = controller.compiled.stages[0]
        controller.run_stage(source, continuous=True)
        assert controller.run_stage(source, continuous=True) == 0  # held back now
        controller.close()
    finally:
        repos.close()
    status = read_status(tmp_path / "repo")
    assert status is not None
    full = _connections(status)["gen -[success]-> tag"]
    assert (full["flowfiles"], full["bytes"]) == (5, 5)
    assert full["back_pressure"] == {
        "object_threshold": 2,
        "data_size_threshold": "1 GB",
        "over": True,
    }
    assert status["held_back"] == {source.id: [full["id"]]}
    empty = _connections(status)["tag -[success]-> end"]
    assert (empty["flowfiles"], empty["back_pressure"]["over"]) == (0, False)
    assert status["stages"][source.id]["flowfiles_out"] == 5


def test_failed_flowfiles_show_as_parked_and_penalized(tmp_path: Path) -> None:
    """A FlowFile that came by a pipelined connection and failed is parked and penalized."""
    flow = Flow("errors")
    gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
    boom = flow.add(Explode(), name="boom")
    flow.connect(gen, boom)
    flow.auto_terminate(boom, "success")
    settings = Settings(sync=False, parallelism=1, penalization_period="1 hour")
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    status = read_status(tmp_path / "repo")
    assert status is not None
    assert status["parked"] == {
        "boom (returned after errors)": {
            "flowfiles": 1,
            "bytes": 1,
            "penalized": 1,
            "penalized_bytes": 1,
            "in_bins": 0,
            "in_bins_bytes": 0,
        }
    }
    assert status["penalized"] == {"flowfiles": 1, "bytes": 1}
    assert _connections(status)["gen -[success]-> boom"]["flowfiles"] == 0
    assert status["run"]["ended"] is not None
    assert status["micro_batch"]["running"] == []


def test_progress_reports_each_stage_and_the_input_read(tmp_path: Path) -> None:
    """GetFile's listed files give the input's fraction, growing to 1; each stage keeps its own
    counts (not added up), in execution order."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    for index in range(6):
        (inbox / f"{index}.txt").write_text("x" * (index + 1))
    flow = Flow("files")
    get = flow.add(
        GetFile(input_directory=str(inbox), keep_source_file=True, batch_size=2), name="get"
    )
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(get, tag, durable=True)
    flow.auto_terminate(tag, "success")
    reports: list[RunProgress] = []
    settings = Settings(sync=False, parallelism=1, batch_max_flowfiles=2)
    run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=settings, progress=reports.append
    )
    fractions = [r.input.fraction for r in reports if r.input is not None]
    assert fractions == sorted(fractions)
    assert fractions[0] < 1
    assert fractions[-1] == 1
    last = reports[-1]
    assert last.input is not None
    assert last.input.by_bytes
    assert (last.input.read_items, last.input.read_bytes) == (6, 21)
    assert [(s.name, s.flowfiles_in, s.flowfiles_out) for s in last.stages] == [
        ("get", 6, 6),
        ("tag", 6, 0),
    ]
    assert last.elapsed_seconds > 0


def test_file_splitter_counts_its_blocks_left(tmp_path: Path) -> None:
    """FileSplitter knows how many blocks it has left, not their bytes: progress counts items."""
    big = tmp_path / "big.txt"
    big.write_text("line\n" * 100)
    flow = Flow("blocks")
    split = flow.add(
        FileSplitter(input_directory=str(big), block_size="100 B", blocks_threshold=2), name="split"
    )
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(split, tag, "blocks")
    flow.auto_terminate(split, ["files", "failure"])
    flow.auto_terminate(tag, "success")
    reports: list[RunProgress] = []
    run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=SETTINGS, progress=reports.append
    )
    inputs = [r.input for r in reports if r.input is not None]
    assert inputs[0].pending_bytes is None
    assert (inputs[0].read_items, inputs[0].pending_items) == (2, 3)
    assert (inputs[-1].read_items, inputs[-1].pending_items) == (5, 0)
    assert inputs[-1].fraction == 1


def test_a_replayed_flowfile_is_counted_by_the_next_run(tmp_path: Path) -> None:
    """A FlowFile replayed between runs shows as replayed in the next run's status."""
    flow = Flow("again")
    gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
    tag = flow.add(UpdateAttribute(k="v"), name="tag")
    flow.connect(gen, tag, durable=True)
    flow.auto_terminate(tag, "success")
    run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert read_status(tmp_path / "repo")["replayed"] == 0  # type: ignore[index]
    repos = RepositorySet.open(tmp_path / "repo", SETTINGS)
    try:
        event = repos.provenance.search(component_id=tag.id)[0]
        queue = event.source_queue_identifier
        assert queue is not None
        repos.provenance.replay(
            event.event_id, content=repos.content, flowfiles=repos.flowfiles, queues=[queue]
        )
    finally:
        repos.close()
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("tag", "success") == 2  # a new one and the replayed one
    assert read_status(tmp_path / "repo")["replayed"] == 1  # type: ignore[index]


class Slow(Processor):
    """Takes SLOW_SECONDS per FlowFile: a task time no clock can read short."""

    relationships = (Relationship("success", "all"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            time.sleep(SLOW_SECONDS)
            session.transfer(flowfile, "success")


SLOW_SECONDS = 0.001


def test_task_time_is_written_per_processor_and_grows_with_work(tmp_path: Path) -> None:
    """Each processor of a fused stage has its own task time in status.json (NiFi's
    Tasks/Time): the slow member at least its sleeps, growing with each stage run."""
    flow = _timed_flow()
    repos = RepositorySet.open(tmp_path / "repo", SETTINGS)
    try:
        controller = Controller(flow, DirectRunner(), repos, SETTINGS)
        (stage,) = controller.compiled.stages  # one fused stage: three members, one task
        controller.run_stage(stage, continuous=True)
        first = read_status(tmp_path / "repo")
        controller.run_stage(stage, continuous=True)
        second = read_status(tmp_path / "repo")
        controller.close()
    finally:
        repos.close()
    assert first is not None
    assert second is not None
    times = first["tasks_duration_nanos"]
    assert set(times) == {"gen", "slow", "tag"}
    assert all(n > 0 for n in times.values())
    before = first["transfers"]["slow"]["success"][0]
    assert times["slow"] >= before * SLOW_SECONDS * 1e9 > 0
    grown = second["tasks_duration_nanos"]
    more = second["transfers"]["slow"]["success"][0] - before
    assert grown["slow"] - times["slow"] >= more * SLOW_SECONDS * 1e9 > 0
    assert all(grown[name] > times[name] for name in times)


def test_the_run_result_keeps_the_task_times_status_json_shows(tmp_path: Path) -> None:
    """A run's result carries the same per-processor task times as its last status.json."""
    result = run_flow(_timed_flow(), "direct", repository=tmp_path / "repo", settings=SETTINGS)
    status = read_status(tmp_path / "repo")
    assert status is not None
    assert result.tasks_duration_nanos == status["tasks_duration_nanos"]
    slept = result.transfers["slow"]["success"][0] * SLOW_SECONDS * 1e9
    assert result.tasks_duration_nanos["slow"] >= slept > 0


def _timed_flow() -> Flow:
    flow = Flow("timed")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=2), name="gen")
    slow = flow.add(Slow(), name="slow")
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, slow)
    flow.connect(slow, tag)
    flow.auto_terminate(tag, "success")
    return flow
