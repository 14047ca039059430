"""Tests for the stage task function run on its own (no controller)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import attrs
import pytest

import flowcore.engine.task as task_module
from flowcore import Flow, Prioritizer, Processor, Relationship
from flowcore.compiler.stages import compile_flow
from flowcore.definition.queues import park_queue_id
from flowcore.engine.task import (
    CONTENT_FAILURE_REASON,
    read_segment_records,
    run_task,
)
from flowcore.engine.wire import TaskInput, TaskResult, TaskSpec
from flowcore.flowfile import ContentClaim, FlowFile, ResourceClaim
from flowcore.processor import InputRequirement
from flowcore.processor.kinds import SourceProcessor, WorkItem, WorkListing
from flowcore.session.external_files import fingerprint
from flowcore.session.host import QueuedFlowFile
from flowcore.settings import Settings
from processors import GenerateFlowFile, PutFile, SplitText, UpdateAttribute
from repositories import effects
from repositories.repository_set import RepositorySet

SETTINGS = Settings(sync=False, parallelism=1, penalization_period="1 min")


class Explode(Processor):
    """Fails on FlowFiles whose attribute ``boom`` is set; passes the others on."""

    relationships = (Relationship("success", "passed"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is None:
            return
        if flowfile.attributes.get("boom"):
            msg = f"cannot handle {flowfile.attributes['filename']}"
            raise ValueError(msg)
        session.transfer(flowfile, "success")


@pytest.fixture
def repos(tmp_path: Path):  # type: ignore[no-untyped-def]
    opened = RepositorySet.open(tmp_path / "repo", SETTINGS)
    yield opened
    opened.close()


def _run(repos: RepositorySet, flow: Flow, stage: int = 0, **given: object) -> TaskResult:
    compiled = compile_flow(flow)
    plan = compiled.plans[compiled.stages[stage].id]
    spec = TaskSpec(
        plan=plan,
        index=0,
        input=TaskInput(**given),  # type: ignore[arg-type]
        paths=repos.paths,
        settings=SETTINGS,
        batch_time=time.time_ns() // 1_000_000,
        first_id=1,
    )
    return run_task(spec)


def _outputs(repos: RepositorySet, result: TaskResult, queue: str) -> list[FlowFile]:
    return [
        f
        for s in result.enqueued
        if s.queue_id == queue
        for f in read_segment_records(repos.paths.segments, s.segment_id)
    ]


def _event_types(repos: RepositorySet, result: TaskResult) -> list[str]:
    assert result.provenance_files
    repos.provenance.index_files(result.provenance_files)
    return [e.event_type.value for e in repos.provenance.search(limit=10_000)]


def _generated(flow: Flow, text: str = "a\nb\nc") -> tuple:
    gen = flow.add(GenerateFlowFile(custom_text=text), name="gen")
    return gen


def test_pipelined_members_run_in_one_task(repos: RepositorySet) -> None:
    """A source, a splitter and a tagger run in one task; only the durable queue is written."""
    flow = Flow("f")
    gen = _generated(flow)
    split = flow.add(SplitText(line_split_count=1), name="split")
    tag = flow.add(UpdateAttribute(tagged="yes"), name="tag")
    sink = flow.add(UpdateAttribute(), name="sink")
    flow.connect(gen, split)
    flow.connect(split, tag, "splits")
    queue = flow.connect(tag, sink, durable=True)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(sink, "success")
    result = _run(repos, flow, work=(("gen", WorkItem("batch", {"count": 1})),))
    out = _outputs(repos, result, queue.id)
    assert [repos.content.read(f.content) for f in out] == [b"a", b"b", b"c"]
    assert all(f.attributes["tagged"] == "yes" for f in out)
    assert result.transfers["split"]["splits"] == (3, 3)
    assert result.provenance_files
    assert result.written_claims


def test_fan_out_clones_to_every_connection(repos: RepositorySet) -> None:
    """A relationship with two connections sends a clone down each, with a CLONE event."""
    flow = Flow("f")
    gen = _generated(flow, "x")
    left = flow.add(UpdateAttribute(), name="left")
    right = flow.add(UpdateAttribute(), name="right")
    first = flow.connect(gen, left, durable=True)
    second = flow.connect(gen, right, durable=True)
    flow.auto_terminate(left, "success")
    flow.auto_terminate(right, "success")
    result = _run(repos, flow, work=(("gen", WorkItem("batch", {"count": 2})),))
    a, b = _outputs(repos, result, first.id), _outputs(repos, result, second.id)
    assert len(a) == len(b) == 2
    assert {f.uuid for f in a}.isdisjoint(f.uuid for f in b)
    assert _event_types(repos, result).count("CLONE") == 2


def _queued_flow() -> tuple[Flow, str]:
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen")
    boom = flow.add(Explode(), name="boom")
    end = flow.add(UpdateAttribute(), name="end")
    queue = flow.connect(gen, boom, durable=True)
    flow.connect(boom, end)
    flow.auto_terminate(end, "success")
    return flow, queue.id


def _flowfile(number: int, **attributes: str) -> FlowFile:
    now = time.time_ns() // 1_000_000
    return FlowFile.create(number, now, {"filename": f"f{number}", **attributes})


def test_processor_error_parks_the_flowfile_penalized_with_a_bulletin(repos: RepositorySet) -> None:
    """A failing FlowFile goes back to its queue, penalized; the others go on; a bulletin."""
    flow, queue = _queued_flow()
    records = ((queue, _flowfile(1)), (queue, _flowfile(2, boom="1")), (queue, _flowfile(3)))
    result = _run(repos, flow, 1, records=records)
    back = _outputs(repos, result, queue)
    assert [f.attributes["filename"] for f in back] == ["f2"]
    assert back[0].penalty_expiration > time.time_ns() // 1_000_000
    assert all(result.waits[s.segment_id].long for s in result.enqueued)
    (bulletin,) = result.bulletins
    assert "cannot handle f2" in bulletin.message
    assert bulletin.component_name == "boom"
    assert result.transfers["end"]["success"][0] == 2


def test_error_after_a_pipelined_connection_parks_in_the_park_queue(repos: RepositorySet) -> None:
    """A FlowFile that reached the failing processor by reference waits in its park queue."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(boom="1"), name="gen")
    boom = flow.add(Explode(), name="boom")
    flow.connect(gen, boom)
    flow.auto_terminate(boom, "success")
    result = _run(repos, flow, work=(("gen", WorkItem("batch", {"count": 1})),))
    (summary,) = result.enqueued
    assert summary.queue_id == park_queue_id("boom")
    assert len(result.bulletins) == 1


def test_a_changed_zero_copy_source_routes_its_flowfiles_to_failure(
    repos: RepositorySet, tmp_path: Path
) -> None:
    """A FlowFile pointing into an outside file that changed can never be read again: it goes
    to the reading processor's failure saying why; a FlowFile on an intact file goes on."""
    changed, intact = tmp_path / "changed.log", tmp_path / "intact.log"
    changed.write_bytes(b"one\ntwo\n")
    intact.write_bytes(b"three\n")

    def external(number: int, path: Path) -> FlowFile:
        claim = ContentClaim(ResourceClaim.external(str(path), fingerprint(path)), 0, 4)
        now = time.time_ns() // 1_000_000
        return FlowFile.create(number, now, {"filename": path.name}, content=claim)

    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen")
    split = flow.add(SplitText(line_split_count=1), name="split")
    end = flow.add(UpdateAttribute(), name="end")
    queue = flow.connect(gen, split, durable=True)
    splits = flow.connect(split, end, "splits", durable=True)
    failed = flow.connect(split, end, "failure", durable=True)
    flow.auto_terminate(split, "original")
    flow.auto_terminate(end, "success")
    records = ((queue.id, external(1, changed)), (queue.id, external(2, intact)))
    changed.write_bytes(b"ONE\nTWO\nTHREE\n")
    result = _run(repos, flow, 1, records=records)
    (failure,) = _outputs(repos, result, failed.id)
    assert failure.attributes["filename"] == "changed.log"
    assert "changed after it was listed" in failure.attributes[CONTENT_FAILURE_REASON]
    assert failure.penalty_expiration == 0
    assert [repos.content.read(f.content) for f in _outputs(repos, result, splits.id)] == [b"thre"]
    assert not any(s.queue_id == queue.id for s in result.enqueued)
    (bulletin,) = result.bulletins
    assert bulletin.level == "WARNING"
    assert "routed 1 FlowFile(s) to failure" in bulletin.message


def test_penalized_input_waits_without_running(repos: RepositorySet) -> None:
    """A penalized FlowFile read from a queue goes straight back, due at its penalty's end."""
    flow, queue = _queued_flow()
    later = time.time_ns() // 1_000_000 + 60_000
    penalized = _flowfile(1).replace(penalty_expiration=later)
    result = _run(repos, flow, 1, records=((queue, penalized),))
    (summary,) = result.enqueued
    assert result.waits[summary.segment_id].retry_at == later
    assert not result.bulletins


def test_expired_flowfiles_are_dropped_with_an_expire_event(repos: RepositorySet) -> None:
    """FlowFiles older than the connection's expiration get EXPIRE and go no further."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen")
    end = flow.add(UpdateAttribute(), name="end")
    queue = flow.connect(gen, end, flowfile_expiration="1 sec")
    flow.auto_terminate(end, "success")
    old = _flowfile(1).replace(entry_date=0)
    result = _run(repos, flow, 1, records=((queue.id, old), (queue.id, _flowfile(2))))
    assert result.consumed["end"] == 2
    assert result.transfers["end"]["success"][0] == 1
    assert _event_types(repos, result).count("EXPIRE") == 1


def test_prioritizers_order_the_batch(repos: RepositorySet) -> None:
    """With the priority attribute prioritizer, lower numbers go first."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen")
    put = flow.add(UpdateAttribute(), name="tag")
    end = flow.add(UpdateAttribute(), name="end")
    queue = flow.connect(gen, put, prioritizers=[Prioritizer.PRIORITY_ATTRIBUTE])
    out = flow.connect(put, end, durable=True)
    flow.auto_terminate(end, "success")
    records = tuple(
        (queue.id, _flowfile(n, priority=p)) for n, p in enumerate(["5", "1", "x", "3"], 1)
    )
    result = _run(repos, flow, 1, records=records)
    order = [f.attributes["priority"] for f in _outputs(repos, result, out.id)]
    assert order == ["1", "3", "5", "x"]


def test_source_read_error_becomes_a_bulletin(repos: RepositorySet, tmp_path: Path) -> None:
    """A work item that cannot be read is reported; the task still finishes."""
    flow = Flow("f")
    gen = flow.add(GenerateFlowFile(), name="gen")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(gen, put)
    flow.auto_terminate(put, ["success", "failure"])
    result = _run(repos, flow, work=(("gen", WorkItem("batch", {})),))
    (bulletin,) = result.bulletins
    assert "could not read batch" in bulletin.message


class Unreachable(Processor):
    """Its on_scheduled always raises; it would pass FlowFiles on."""

    relationships = (Relationship("success", "passed"),)

    def on_scheduled(self, context):  # type: ignore[no-untyped-def]
        msg = "no route to host"
        raise OSError(msg)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        msg = "never triggered: it was not scheduled"
        raise AssertionError(msg)


def test_a_member_whose_on_scheduled_raises_keeps_its_input_for_later(
    repos: RepositorySet,
) -> None:
    """The member does not run: its FlowFiles go back to its park queue, retried after the
    administrative yield as a long wait; the task names it; its siblings run on."""
    flow = Flow("f")
    gen = _generated(flow, "x")
    down = flow.add(Unreachable(), name="down")
    tag = flow.add(UpdateAttribute(), name="tag")
    flow.connect(gen, down)
    kept = flow.connect(gen, tag, durable=True)
    flow.auto_terminate(down, "success")
    flow.auto_terminate(tag, "success")
    before = time.time_ns() // 1_000_000
    result = _run(repos, flow, work=(("gen", WorkItem("batch", {"count": 2})),))
    component = down.id
    assert result.unscheduled == {component: "on_scheduled raised OSError: no route to host"}
    assert len(_outputs(repos, result, kept.id)) == 2
    parked = [s for s in result.enqueued if s.queue_id == park_queue_id(component)]
    assert sum(s.count for s in parked) == 2
    assert all(result.waits[s.segment_id].long for s in parked)
    yield_ms = SETTINGS.administrative_yield_ms
    assert all(result.waits[s.segment_id].retry_at >= before + yield_ms for s in parked)
    [bulletin] = result.bulletins
    assert bulletin.message.startswith("Unreachable 'down' failed to schedule: on_scheduled raised")


def _synced_paths(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """Record the paths os.fsync and syncfs are called on, as the task flushes its files."""
    fsynced: list[str] = []
    whole: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        fsynced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    def syncfs(fd: int) -> int:
        whole.append(os.readlink(f"/proc/self/fd/{fd}"))
        return 0

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(effects, "_syncfs", lambda: syncfs)
    monkeypatch.setattr(effects, "can_sync_whole_file_systems", lambda: True)
    return fsynced, whole


def _run_with_content_in(
    content: Path, tmp_path: Path, repos: RepositorySet, flowfiles: int
) -> tuple[TaskResult, Path]:
    flow = Flow("f")
    gen = flow.add(
        GenerateFlowFile(batch_size=flowfiles, file_size="3 KB", unique_flowfiles=True), name="gen"
    )
    sink = flow.add(UpdateAttribute(), name="sink")
    flow.connect(gen, sink, durable=True)
    flow.auto_terminate(sink, "success")
    compiled = compile_flow(flow)
    plan = compiled.plans[compiled.stages[0].id]
    paths = attrs.evolve(repos.paths, content=(str(content),))
    spec = TaskSpec(
        plan=plan,
        index=0,
        input=TaskInput(work=((gen.id, WorkItem("batch", {"count": 1})),)),
        paths=paths,
        settings=attrs.evolve(SETTINGS, sync=True, content_claim_max_appendable_size="1 KB"),
        batch_time=time.time_ns() // 1_000_000,
        first_id=1,
    )
    return run_task(spec), content


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name fds")
def test_content_claims_on_another_directory_are_fsynced_before_the_task_returns(
    repos: RepositorySet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With content in a directory of its own, every claim file the task wrote is fsynced
    (and the directories naming them), as its segments are: the commit will name them."""
    fsynced, _ = _synced_paths(monkeypatch)
    result, content = _run_with_content_in(tmp_path / "other" / "content", tmp_path, repos, 4)
    claims = {str(p) for p in content.rglob("*") if p.is_file()}
    assert len(claims) == len(result.written_claims) >= 1
    assert claims <= set(fsynced)
    assert {str(Path(c).parent) for c in claims} <= set(fsynced)
    assert set(fsynced) & {str(p) for p in Path(repos.paths.segments).iterdir()}


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name fds")
def test_many_files_sync_the_content_file_system_too(
    repos: RepositorySet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past FSYNC_EACH_MAX files a task flushes whole file systems: the content's one too
    when it is another (content under /dev/shm, a tmpfs, beside a repository on disk)."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")
    _, whole = _synced_paths(monkeypatch)
    monkeypatch.setattr(effects, "FSYNC_EACH_MAX", 0)
    content = Path(tempfile.mkdtemp(dir=shm)) / "content"
    try:
        result, _ = _run_with_content_in(content, tmp_path, repos, 40)
        assert result.written_claims
        assert str(content) in whole
        assert any(Path(p).is_relative_to(tmp_path) for p in whole)  # the segments' disk
    finally:
        shutil.rmtree(content.parent, ignore_errors=True)


def test_fan_out_of_an_updated_flowfile_records_nifis_events(repos: RepositorySet) -> None:
    """UpdateAttribute's success on two connections: as NiFi, the ATTRIBUTES_MODIFIED the
    processor reports, then a CLONE of the updated FlowFile.

    Both are the parent's events and carry the original attributes and the update; the clone
    gets no event of its own.
    """
    flow = Flow("f")
    gen = _generated(flow, "x")
    tag = flow.add(UpdateAttribute(tagged="yes"), name="tag")
    left = flow.add(UpdateAttribute(), name="left")
    right = flow.add(UpdateAttribute(), name="right")
    flow.connect(gen, tag)
    first = flow.connect(tag, left, durable=True)
    second = flow.connect(tag, right, durable=True)
    flow.auto_terminate(left, "success")
    flow.auto_terminate(right, "success")
    result = _run(repos, flow, work=(("gen", WorkItem("batch", {"count": 2})),))
    a, b = _outputs(repos, result, first.id), _outputs(repos, result, second.id)
    assert all(f.attributes["tagged"] == "yes" for f in a + b)
    repos.provenance.index_files(result.provenance_files)
    events = [e for e in repos.provenance.search(limit=100) if e.component_name == "tag"]
    for parent in b:  # each FlowFile's events in its session's order
        mine = [e.event_type.value for e in events if e.flowfile_uuid == parent.uuid]
        assert mine == ["ATTRIBUTES_MODIFIED", "CLONE"]
    assert len(events) == 4
    assert {u for e in events for u in e.child_uuids} == {f.uuid for f in a}
    for event in events:
        assert dict(event.updated_attributes) == {"tagged": "yes"}
        assert "tagged" not in event.previous_attributes


class DownQuery(SourceProcessor):
    """A source whose read yields (ExecuteSQL without input, its database down); with
    *until* set it asks for that time instead (``yield_until``)."""

    until: int | None = None

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        return WorkListing([WorkItem("query")], state)

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        if self.until is None:
            context.yield_()
        else:
            context.yield_until(self.until)


def test_a_plain_yield_in_a_source_read_travels_as_a_duration(repos: RepositorySet) -> None:
    """A source that yields while reading reports the ms of its Yield Duration left, not an
    executor clock's time, so the driver's clock alone places the end of its yield."""
    flow = Flow("f")
    query = flow.add(DownQuery(), name="query", yield_duration="1 min")
    flow.auto_terminate(query, "success")
    result = _run(repos, flow, work=(("query", WorkItem("query")),))
    assert result.yielded == {}
    assert 0 < result.yielded_for["query"] <= 60_000


class DownUntil(DownQuery):
    """A source whose read asks not to be triggered before a time (in 2100)."""

    until = 4_102_444_800_000


def test_a_yield_until_in_a_source_read_keeps_its_time(repos: RepositorySet) -> None:
    """A source that asked not to be triggered before a time reports that time as asked."""
    flow = Flow("f")
    query = flow.add(DownUntil(), name="query")
    flow.auto_terminate(query, "success")
    result = _run(repos, flow, work=(("query", WorkItem("query")),))
    assert result.yielded == {"query": 4_102_444_800_000}
    assert result.yielded_for == {}


class LoopedQuery(SourceProcessor):
    """ExecuteSQL's trigger: with its only input a self-loop and nothing taken, it runs as a
    source (counted in *source_runs*); a FlowFile taken goes back round the loop penalized,
    with a penalized clone, so its queue holds only penalized FlowFiles after it."""

    input_requirement = InputRequirement.INPUT_ALLOWED
    fed_by_self_loops = False
    unbounded = True
    relationships = (Relationship("success", "the result"), Relationship("failure", "retried"))
    source_runs = 0

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            flowfile = session.penalize(flowfile)
            clone = session.penalize(session.clone(flowfile))
            session.transfer(flowfile, "failure")
            session.transfer(clone, "failure")
            return
        if context.has_non_loop_connection():
            return
        LoopedQuery.source_runs += 1
        super().on_trigger(context, session)

    def list_work(self, context, state):  # type: ignore[no-untyped-def]
        return WorkListing([WorkItem("query")], state)

    def read_work(self, context, session, item):  # type: ignore[no-untyped-def]
        session.transfer(session.create(), "success")


@pytest.mark.parametrize("durable", [False, True])
def test_a_source_draining_only_penalized_flowfiles_runs_no_unlisted_source_run(
    repos: RepositorySet, durable: bool
) -> None:
    """A source fed by a self-loop whose queued FlowFiles are all penalized (as its trigger
    left them, or as they were queued) is not triggered on them: no source run that the
    driver did not list happens in the task, and they wait in their queue."""
    flow = Flow("f")
    query = flow.add(LoopedQuery(), name="query")
    loop = flow.connect(query, query, "failure", durable=durable)
    flow.auto_terminate(query, "success")
    LoopedQuery.source_runs = 0
    later = time.time_ns() // 1_000_000 + 60_000
    queued = _flowfile(102).replace(penalty_expiration=later)
    result = _run(repos, flow, records=((loop.id, _flowfile(101)), (loop.id, queued)))
    assert LoopedQuery.source_runs == 0
    assert "success" not in result.transfers.get("query", {})
    assert len(_outputs(repos, result, loop.id)) == 3


def test_a_source_handed_penalized_input_is_not_triggered_on_it(
    repos: RepositorySet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should penalized FlowFiles reach a self-loop-fed source's pending input (admission
    hands them back today; this puts one there after it), the task hands them back before
    the drain: no trigger finds nothing to take and runs an unlisted source run."""
    flow = Flow("f")
    query = flow.add(LoopedQuery(), name="query")
    loop = flow.connect(query, query, "failure", durable=True)
    flow.auto_terminate(query, "success")
    later = time.time_ns() // 1_000_000 + 60_000
    penalized = QueuedFlowFile(_flowfile(101).replace(penalty_expiration=later), loop.id)
    read_input = task_module._Task._read_input

    def read_then_penalized(task: task_module._Task) -> None:
        read_input(task)
        task.members["query"].pending.append(penalized)

    monkeypatch.setattr(task_module._Task, "_read_input", read_then_penalized)
    LoopedQuery.source_runs = 0
    result = _run(repos, flow)
    assert LoopedQuery.source_runs == 0
    assert [f.id for f in _outputs(repos, result, loop.id)] == [101]
