"""Tests for the controller's batch runs: micro-batches, commits, restarts, back pressure,
end of input, processor errors, and the repository a run holds."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import attrs
import pytest

from flowcore import Flow, Processor, Relationship
from flowcore.driver.controller import Controller, run_flow
from flowcore.errors import FlowValidationError, RepositoryError
from flowcore.runners.direct import DirectRunner
from flowcore.settings import Settings
from processors import (
    GenerateFlowFile,
    GetFile,
    MergeContent,
    PutFile,
    RouteOnAttribute,
    SplitText,
    UpdateAttribute,
)
from repositories.repository_set import RepositorySet, read_bulletins, read_status
from tests.flowcore.driver._controller_runs import SETTINGS, Explode, Tee


class TakeTwo(Processor):
    """A slow consumer: takes two FlowFiles per trigger, then yields."""

    relationships = (Relationship("success", "taken"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfiles = session.get(2)
        session.transfer(flowfiles, "success")
        context.yield_()


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


def test_runs_in_one_process_leave_no_descriptors_open(tmp_path: Path) -> None:
    """Run after run in one process (a server, a notebook), descriptors do not pile up: the
    content repository's cached readers close with the run, the tasks' with each task."""
    import os

    (tmp_path / "in").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "in" / f"{name}.txt").write_bytes(b"".join(b"%d\n" % i for i in range(50)))

    def once(n: int) -> int:
        flow = Flow("descriptors")
        get = flow.add(GetFile(input_directory=str(tmp_path / "in"), keep_source_file=True))
        split = flow.add(SplitText(line_split_count=7))
        merge = flow.add(MergeContent(minimum_number_of_entries=2, max_bin_age="1 sec"))
        put = flow.add(PutFile(directory=str(tmp_path / f"out{n}")))
        flow.connect(get, split)
        flow.connect(split, merge, "splits")
        flow.connect(merge, put, "merged")
        flow.auto_terminate(split, ["original", "failure"])
        flow.auto_terminate(merge, ["original", "failure"])
        flow.auto_terminate(put, ["success", "failure"])
        run_flow(flow, "direct", repository=tmp_path / f"repo{n}", settings=SETTINGS)
        return len(os.listdir("/proc/self/fd"))

    first = once(0)
    assert [once(n) for n in range(1, 4)] == [first] * 3


def test_a_relationship_auto_terminated_by_default_drops_unless_connected(
    tmp_path: Path, runner: str
) -> None:
    """Unconnected, a processor's default auto-terminated relationship drops as the user's
    would (counts, NiFi's DROP details); connected, its connection wins."""
    flow = Flow("tee")
    gen = flow.add(GenerateFlowFile(custom_text="hi", batch_size=3), name="gen")
    tee = flow.add(Tee(), name="tee")
    flow.connect(gen, tee)
    flow.auto_terminate(tee, "success")
    result = run_flow(flow, runner, repository=tmp_path / "repo", settings=SETTINGS)
    assert result.transfers["tee"] == {"success": (3, 6), "copies": (3, 6)}
    assert result.finished
    assert not result.queued
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        drops = repos.provenance.search(event_type="DROP")
        details = sorted(e.details for e in drops)
        assert (
            details
            == ["Auto-Terminated by copies Relationship"] * 3
            + ["Auto-Terminated by success Relationship"] * 3
        )
    finally:
        repos.close()
    kept = Flow("tee-kept")
    gen = kept.add(GenerateFlowFile(custom_text="hi", batch_size=3), name="gen")
    tee = kept.add(Tee(), name="tee")
    log = kept.add(UpdateAttribute(kind="copy"), name="log")
    kept.connect(gen, tee)
    kept.connect(tee, log, "copies")
    kept.auto_terminate(tee, "success")
    kept.auto_terminate(log, "success")
    result = run_flow(kept, runner, repository=tmp_path / "kept", settings=SETTINGS)
    assert result.transfers["log"] == {"success": (3, 6)}


def test_a_source_listing_gets_services_with_their_parameters_bound(tmp_path: Path) -> None:
    """A source that lists through a service on the driver (QueryDatabaseTableRecord's
    DBCPConnectionPool) sees the service's ``#{...}`` references bound to the run's parameters,
    as its tasks do."""
    from flowcore.registry import available_services
    from processors import QueryDatabaseTableRecord

    database = tmp_path / "shop.sqlite"
    with sqlite3.connect(database) as connection:
        connection.execute("create table customers (id integer primary key, name text)")
        connection.executemany("insert into customers values (?, ?)", [(1, "a"), (2, "b")])
    services = available_services()
    flow = Flow("parameters-in-services", parameters={"db.url": f"jdbc:sqlite:{database}"})
    flow.add_service(
        services["DBCPConnectionPool"](**{"Database Connection URL": "#{db.url}"}), name="db"
    )
    flow.add_service(services["JsonRecordSetWriter"](), name="json")
    query = flow.add(
        QueryDatabaseTableRecord(
            **{
                "Database Connection Pooling Service": "db",
                "Table Name": "customers",
                "Maximum-value Columns": "id",
                "Record Writer": "json",
            }
        ),
        name="query",
    )
    flow.auto_terminate(query, "success")
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
    assert result.count("query", "success") == 1
