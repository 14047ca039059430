"""Tests for the controller: micro-batches, commits, restarts, back pressure, end of input."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

import flowcore.driver.sources as sources_module
from flowcore import Flow, Processor, Relationship
from flowcore.compiler.stages import compile_flow
from flowcore.driver.controller import Controller, RunResult, run_flow
from flowcore.driver.run_result import RunProgress
from flowcore.errors import FlowValidationError, RepositoryError
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from processors import (
    GenerateFlowFile,
    GetFile,
    LogAttribute,
    MergeContent,
    PutFile,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
)
from repositories.repository_set import RepositorySet, read_bulletins, read_status

# every stage run goes to the runner under test, however small (see driver_run_max_flowfiles)
SETTINGS = Settings(sync=False, parallelism=2, shuffle_partitions=3, driver_run_max_flowfiles=0)


class TakeTwo(Processor):
    """A slow consumer: takes two FlowFiles per trigger, then yields."""

    relationships = (Relationship("success", "taken"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfiles = session.get(2)
        session.transfer(flowfiles, "success")
        context.yield_()


class Explode(Processor):
    """Always fails."""

    relationships = (Relationship("success", "never"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        if session.get() is not None:
            msg = "this processor always fails"
            raise RuntimeError(msg)


def _write_inputs(directory: Path, files: int = 3, lines: int = 25) -> bytes:
    directory.mkdir(parents=True, exist_ok=True)
    everything = b""
    for number in range(files):
        data = "".join(f"file {number} line {i}\n" for i in range(lines)).encode()
        (directory / f"in-{number}.txt").write_bytes(data)
        everything += data
    return everything


def _file_flow(tmp_path: Path, **merge: object) -> Flow:
    flow = Flow("files")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=5, remove_trailing_newlines=False), name="split")
    tag = flow.add(UpdateAttribute(kind="log"), name="tag")
    options = {"merge_strategy": "Defragment", **merge}
    combine = flow.add(MergeContent(**options), name="merge")
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"),
        name="put",
    )
    flow.connect(get, split)
    flow.connect(split, tag, "splits")
    flow.connect(tag, combine)
    flow.connect(combine, put, "merged")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(combine, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_batch_run_processes_everything_and_records_provenance(tmp_path: Path) -> None:
    """Files are split, tagged, defragmented and written back byte for byte."""
    _write_inputs(tmp_path / "in")
    result = run_flow(
        _file_flow(tmp_path), "direct", repository=tmp_path / "repo", settings=SETTINGS
    )
    for source in (tmp_path / "in").iterdir():
        assert (tmp_path / "out" / source.name).read_bytes() == source.read_bytes()
    assert result.count("split", "splits") == 15
    assert result.count("merge", "merged") == 3
    assert result.count("put", "success") == 3
    assert result.queued == {}
    assert result.provenance_events > 0
    assert "stage-2" in result.plan
    assert "task(s) in-process" in result.plan


def test_a_second_run_ingests_nothing_twice(tmp_path: Path, runner: str) -> None:
    """GetFile's listing state is committed with its output: a rerun finds nothing new."""
    _write_inputs(tmp_path / "in")
    run_flow(_file_flow(tmp_path), runner, repository=tmp_path / "repo", settings=SETTINGS)
    again = run_flow(_file_flow(tmp_path), runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert again.count("get", "success") == 0
    assert again.provenance_events == 0


def test_provenance_settings_index_attributes_and_apply_retention(tmp_path: Path) -> None:
    """Listed attributes are indexed by the tasks and found through the index, as the stored
    maps find them; the next run starts by applying retention to what the store holds."""
    _write_inputs(tmp_path / "in")
    indexed = attrs.evolve(SETTINGS, provenance_indexed_attributes=("kind",))
    run_flow(_file_flow(tmp_path), "direct", repository=tmp_path / "repo", settings=indexed)
    found = {}
    for settings in (indexed, SETTINGS):  # through the index, then by the stored maps
        repos = RepositorySet.open(tmp_path / "repo", settings)
        events = repos.provenance.search(attributes={"kind": "log"}, limit=1_000_000)
        found[settings.provenance_indexed_attributes] = {e.event_id for e in events}
        repos.close()
    assert found[("kind",)] == found[()]
    assert len(found[()]) >= 15  # at least each split's ATTRIBUTES_MODIFIED
    database = sqlite3.connect(tmp_path / "repo" / "provenance" / "provenance.db")
    rows = database.execute("select count(*) from provenance_attribute where name = 'kind'")
    assert rows.fetchone()[0] > 0
    database.close()
    tiny = attrs.evolve(SETTINGS, provenance_max_storage_size="1 B")
    again = run_flow(_file_flow(tmp_path), "direct", repository=tmp_path / "repo", settings=tiny)
    assert again.provenance_events == 0
    repos = RepositorySet.open(tmp_path / "repo", SETTINGS)
    assert repos.provenance.count() == 0
    repos.close()


def test_restart_resumes_from_the_committed_queues(tmp_path: Path) -> None:
    """Work committed to a durable queue by one process is finished by the next."""
    _write_inputs(tmp_path / "in")
    flow = _file_flow(tmp_path)
    repos = RepositorySet.open(tmp_path / "repo", SETTINGS)
    controller = Controller(flow, DirectRunner(), repos, SETTINGS)
    controller.run_stage(controller.compiled.stages[0])
    controller.close()
    repos.close()
    assert not (tmp_path / "out").exists()
    result = run_flow(
        _file_flow(tmp_path), "direct", repository=tmp_path / "repo", settings=SETTINGS
    )
    assert result.count("get", "success") == 0
    assert result.count("merge", "merged") == 3
    assert len(list((tmp_path / "out").iterdir())) == 3


def test_open_bins_merge_at_end_of_input(tmp_path: Path, runner: str) -> None:
    """Bins short of their minimum are merged when the input ends, reason END_OF_INPUT."""
    flow = Flow("gen")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=5), name="gen")
    merge = flow.add(MergeContent(minimum_number_of_entries=100), name="merge")
    tag = flow.add(UpdateAttribute(), name="end")
    flow.connect(gen, merge)
    flow.connect(merge, tag, "merged", durable=True)
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(tag, "success")
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("merge", "merged") == 1
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        (merged,) = repos.provenance.search(event_type="JOIN")
        assert merged.attributes["merge.reason"] == "END_OF_INPUT"
        assert merged.attributes["merge.count"] == "5"
    finally:
        repos.close()


def test_incomplete_defragment_goes_to_failure_at_end_of_input(tmp_path: Path, runner: str) -> None:
    """A file missing a fragment cannot be rebuilt: its fragments go to failure, none is lost."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("one\ntwo\nthree\n")
    flow = Flow("defrag")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in"), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    drop = flow.add(RouteOnAttribute(keep="${fragment.index:equals('2'):not()}"), name="drop")
    merge = flow.add(MergeContent(merge_strategy="Defragment"), name="merge")
    failed = flow.add(UpdateAttribute(), name="failed")
    flow.connect(get, split)
    flow.connect(split, drop, "splits")
    flow.connect(drop, merge, "keep")
    flow.connect(merge, failed, "failure")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(drop, "unmatched")
    flow.auto_terminate(merge, ["original", "merged"])
    flow.auto_terminate(failed, "success")
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("merge", "failure") == 2
    assert result.count("merge", "merged") == 0


def test_back_pressure_stops_and_resumes_the_upstream_stage(tmp_path: Path) -> None:
    """Upstream is not scheduled while its output queue is at the threshold; nothing is lost."""
    settings = Settings(
        sync=False, parallelism=1, unbounded_source_batches=8, yield_duration="0 sec"
    )
    flow = Flow("pressure")
    gen = flow.add(GenerateFlowFile(custom_text="x", batch_size=5), name="gen")
    slow = flow.add(TakeTwo(), name="slow")
    flow.connect(gen, slow, back_pressure_object_threshold=10)
    flow.auto_terminate(slow, "success")
    repos = RepositorySet.open(tmp_path / "repo", settings)
    controller = Controller(flow, DirectRunner(), repos, settings)
    (queue,) = [c.id for c in flow.connections]
    observed: list[tuple[str, int, int]] = []
    original = controller.run_stage

    def recording(stage, **options):  # type: ignore[no-untyped-def]
        before = repos.flowfiles.queue_size(queue)[0]
        took = original(stage, **options)
        observed.append((stage.id, before, took))
        return took

    controller.run_stage = recording  # type: ignore[method-assign]
    try:
        result = controller.run()
    finally:
        repos.close()
    upstream = [(before, took) for stage, before, took in observed if stage == "stage-1"]
    assert any(before >= 10 and took == 0 for before, took in upstream), upstream
    assert all(took == 0 for before, took in upstream if before >= 10)
    resumed = [i for i, (before, took) in enumerate(upstream) if before < 10 and took]
    held = [i for i, (before, took) in enumerate(upstream) if before >= 10]
    assert resumed
    assert held
    assert max(resumed) > min(held), "upstream resumed below the threshold"
    assert result.count("gen", "success") == 40
    assert result.count("slow", "success") == 40
    assert result.queued == {}


def test_processor_errors_keep_the_flowfile_queued_with_a_bulletin(
    tmp_path: Path, runner: str
) -> None:
    """A failing FlowFile stays queued (penalized) and the run ends; status shows the bulletin."""
    settings = Settings(sync=False, parallelism=1, penalization_period="0 sec")
    flow = Flow("errors")
    gen = flow.add(GenerateFlowFile(custom_text="x"), name="gen")
    boom = flow.add(Explode(), name="boom")
    flow.connect(gen, boom)
    flow.auto_terminate(boom, "success")
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=settings)
    assert list(result.queued.values()) == [(1, 1)]
    assert "boom (returned after errors)" in result.queued
    assert "this processor always fails" in result.bulletins[0].message
    assert read_bulletins(tmp_path / "repo")[0].component_name == "boom"
    status = read_status(tmp_path / "repo")
    assert status is not None
    assert [q["flowfiles"] for q in status["queues"].values()] == [1]
    json.dumps(status)


def test_unbounded_sources_run_a_set_number_of_times(tmp_path: Path) -> None:
    """GenerateFlowFile never runs out, so batch mode triggers it unbounded_source_batches times."""
    settings = Settings(sync=False, parallelism=1, unbounded_source_batches=3)
    flow = Flow("gen")
    gen = flow.add(GenerateFlowFile(batch_size=2, file_size="10 B"), name="gen")
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("tag", "success") == 6


def test_concurrent_tasks_trigger_a_source_in_parallel_tasks(tmp_path: Path) -> None:
    """A source with 2 concurrent tasks is triggered twice per micro-batch, in two tasks."""
    settings = Settings(sync=False, parallelism=2, unbounded_source_batches=4)
    flow = Flow("gen")
    gen = flow.add(GenerateFlowFile(batch_size=2, file_size="10 B"), name="gen", concurrent_tasks=2)
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, tag)
    flow.auto_terminate(tag, "success")
    assert "source work, GenerateFlowFile 'gen' x2 concurrent tasks" in flow.explain()
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("tag", "success") == 8
    assert "2 task(s) in-process" in result.plan


def test_a_repository_serves_one_run_at_a_time(tmp_path: Path) -> None:
    """A second open of a repository in use fails with a message saying so."""
    first = RepositorySet.open(tmp_path / "repo")
    try:
        with pytest.raises(RepositoryError, match="in use by another flowcore run"):
            RepositorySet.open(tmp_path / "repo")
    finally:
        first.close()


def test_invalid_flows_are_rejected_before_anything_runs(tmp_path: Path) -> None:
    """Validation errors come before the repository is touched."""
    flow = Flow("bad")
    flow.add(UpdateAttribute(), name="orphan")
    with pytest.raises(FlowValidationError):
        run_flow(flow, "direct", repository=tmp_path / "repo")
    assert not (tmp_path / "repo").exists()


def test_content_of_finished_flowfiles_is_released(tmp_path: Path, runner: str) -> None:
    """After a run nothing is queued, so no live claim file remains (all archived)."""
    _write_inputs(tmp_path / "in")
    run_flow(_file_flow(tmp_path), runner, repository=tmp_path / "repo", settings=SETTINGS)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        assert list(repos.content.resource_claims()) == []
        assert repos.content.check() == []
        assert repos.flowfiles.check() == []
    finally:
        repos.close()


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


# --- the end of a batch run: why each queue is stuck ---------------------------------------


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


def test_a_queue_no_connection_reads_any_more_says_so(tmp_path: Path) -> None:
    """Run a flow, drop the connection that holds FlowFiles, run again: the queue is named."""
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
    result = run_flow(later, "direct", repository=repository, settings=SETTINGS)
    assert any("no connection of the flow reads this queue" in r for r in result.stuck.values())


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


class NeedsService(Processor):
    """Passes FlowFiles on; its on_scheduled raises while the file *down* exists (a service
    that is down), and it writes *done* once it has passed a FlowFile on."""

    relationships = (Relationship("success", "passed"),)

    def __init__(self, down: str, done: str = "", **properties: object) -> None:
        super().__init__(**properties)
        self.down, self.done = down, done

    def on_scheduled(self, context):  # type: ignore[no-untyped-def]
        if Path(self.down).exists():
            msg = "service at db:5432 refused the connection"
            raise ConnectionError(msg)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(flowfile, "success")
            if self.done:
                Path(self.done).touch()


def test_a_processor_whose_on_scheduled_raises_leaves_its_input_queued(
    tmp_path: Path, runner: str
) -> None:
    """As NiFi: an ERROR bulletin names the processor and the exception, the rest of the flow
    runs, its input stays queued with a stuck reason naming the failure; a later run, the
    service back, processes it."""
    down = tmp_path / "down"
    down.touch()
    flow = Flow("scheduling")
    gen = flow.add(GenerateFlowFile(batch_size=3, unique_flowfiles=True), name="gen")
    needs = flow.add(NeedsService(str(down)), name="needs")
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, needs)
    flow.connect(gen, tag)
    flow.auto_terminate(needs, "success")
    flow.auto_terminate(tag, "success")
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert result.count("tag", "success") == 3
    assert not result.finished
    assert sum(count for count, _ in result.queued.values()) == 3
    [why] = result.stuck.values()
    assert why.startswith(
        "needs could not be scheduled: on_scheduled raised ConnectionError: service at "
        "db:5432 refused the connection"
    )
    messages = {b.message for b in read_bulletins(tmp_path / "repo")}
    assert any(
        m.startswith("NeedsService 'needs' failed to schedule: on_scheduled") for m in messages
    )
    down.unlink()
    again = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert again.count("needs", "success") == 6  # the 3 kept, and 3 new
    assert again.finished


def test_on_scheduled_is_tried_again_after_the_administrative_yield(tmp_path: Path) -> None:
    """In a continuous run a processor whose on_scheduled raised is scheduled again after the
    administrative yield duration; once it succeeds its queued input goes through."""
    down, done = tmp_path / "down", tmp_path / "done"
    down.touch()
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a")
    flow = Flow("retry")
    get = flow.add(GetFile(input_directory=str(tmp_path / "in")), name="get")
    needs = flow.add(NeedsService(str(down), str(done)), name="needs")
    flow.connect(get, needs)
    flow.auto_terminate(needs, "success")
    settings = Settings(
        sync=False, parallelism=1, poll_interval="10 ms", administrative_yield_duration="200 ms"
    )
    started = time.monotonic()
    calls = []

    def stop() -> bool:
        calls.append(1)
        if len(calls) == 3:
            down.unlink()  # the service comes back
        return done.exists() or time.monotonic() - started > 60

    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=settings, continuous=True,
        should_stop=stop,
    )  # fmt: skip
    assert result.count("needs", "success") == 1
    assert any("failed to schedule" in b.message for b in result.bulletins)
    assert not result.unscheduled


def test_a_disabled_processor_never_runs_and_its_flowfiles_wait_for_it(
    tmp_path: Path, runner: str
) -> None:
    """FlowFiles queue durably before a disabled processor (never validated nor scheduled);
    the rest of the flow runs, and the batch run ends finished, saying what waits for it."""
    flow = Flow("half-off")
    gen = flow.add(GenerateFlowFile(batch_size=3), name="gen")
    tag = flow.add(UpdateAttribute(kind="log"), name="tag")
    put = flow.add(PutFile(), name="put", disabled=True)  # no Directory: not validated
    flow.connect(gen, tag)
    into = flow.connect(tag, put)
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert result.finished
    assert result.stuck == {}
    assert result.count("tag", "success") == 3
    assert "put" not in result.received
    assert result.disabled == {"tag -[success]-> put": "put"}
    assert result.waiting_for_disabled() == {"put": (3, 0)}
    again = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert again.queued["tag -[success]-> put"][0] == 6  # kept, durably, run after run
    assert into.id in compile_flow(flow).durable


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

    from flowcore.flow import RetrySettings

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
