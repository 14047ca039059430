"""Tests for the driver side of two-phase sinks: recovery publishes what was committed and
throws away what was only staged."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from flowcore import Flow, ProcessContext, Processor, ProcessSession
from flowcore.datasets import Chunk, Dataset, Manifest
from flowcore.datasets.store import write_chunk
from flowcore.driver.controller import Controller
from flowcore.driver.sinks import EFFECTS_STATE
from flowcore.processor.relationship import SUCCESS
from flowcore.runners.direct import DirectRunner
from flowcore.session.host import AfterCommitAction, Publication
from flowcore.settings import Settings
from processors import GenerateFlowFile, PutDataset, PutFile, UpdateAttribute
from repositories.effects import TARGETS_DIRECTORY, EffectFileWriter
from repositories.records import Transaction
from repositories.repository_set import RepositorySet, read_bulletins


def _flow(dataset: Path) -> Flow:
    flow = Flow("sink")
    gen = flow.add(GenerateFlowFile(batch_size=3, file_size="4 B"), name="gen")
    put = flow.add(PutDataset(directory=str(dataset)), name="put")
    flow.connect(gen, put)
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def _staged(dataset: Dataset, version: int, name: str) -> None:
    write_chunk(dataset.chunk_path(name), [name.encode()])
    dataset.stage(Manifest(version, (Chunk(name, len(name), 1, 0),)))


def test_recovery_publishes_the_committed_version_and_drops_the_rest(tmp_path: Path) -> None:
    """A crash after the WAL commit but before the rename: the committed version is published
    at start-up; a version staged past the committed one (crash before the commit) is gone,
    with its chunks."""
    dataset = Dataset(tmp_path / "ds")
    _staged(dataset, 1, "committed")
    _staged(dataset, 2, "uncommitted")
    flow = _flow(dataset.path)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        controller = Controller(flow, DirectRunner(), repos)
        put_id = flow.component("put").id
        repos.flowfiles.commit(Transaction(state={put_id: {"version": "1"}}))
        controller.sinks.recover()
        controller.sinks.release()
    finally:
        repos.close()
    assert dataset.versions() == [1]
    assert dataset.pending_versions() == []
    assert sorted(p.name for p in dataset.chunk_dir.iterdir()) == ["committed"]


def test_each_stage_run_publishes_one_version(tmp_path: Path) -> None:
    """Every stage run with output adds exactly one version; the run reports the last one."""
    flow = _flow(tmp_path / "ds")
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        result = Controller(flow, DirectRunner(), repos).run()
    finally:
        repos.close()
    dataset = Dataset(tmp_path / "ds")
    assert result.sinks["put"]["version"] == str(dataset.latest_version())
    assert dataset.manifest().records == result.count("gen", "success") == 3


def _put_flow(tmp_path: Path, **put: object) -> Flow:
    flow = Flow("put")
    gen = flow.add(
        GenerateFlowFile(batch_size=4, file_size="4 B", unique_flowfiles=True), name="gen"
    )
    name = flow.add(UpdateAttribute(filename="${uuid}"), name="name")
    out = flow.add(PutFile(directory=str(tmp_path / "out"), **put), name="put")
    flow.connect(gen, name)
    flow.connect(name, out)
    flow.auto_terminate(out, ["success", "failure"])
    return flow


def test_put_file_effects_are_carried_out_after_the_commit(tmp_path: Path) -> None:
    """A run's files appear once the transaction is durable; no effect file or temporary stays,
    and the transaction names the effect files it committed."""
    flow = _put_flow(tmp_path)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        result = Controller(flow, DirectRunner(), repos).run()
        committed = json.loads(repos.flowfiles.state(EFFECTS_STATE)["files"])
    finally:
        repos.close()
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(written) == result.count("put", "success") == 4
    assert not any(name.startswith(".") for name in written)
    assert committed
    assert not any(Path(f).exists() for f in committed)


def test_recovery_publishes_committed_effects_and_sweeps_the_rest(tmp_path: Path) -> None:
    """A crash between the commit and the renames: the committed file is renamed at start-up;
    an attempt that never committed leaves neither its temporary nor its effect file."""
    out = tmp_path / "out"
    out.mkdir()
    flow = _put_flow(tmp_path)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        effects = repos.paths.effects
        committed = EffectFileWriter(effects, "put-t0-committed")
        temporary = committed.stage(out)
        temporary.write_bytes(b"committed")
        committed.commit([Publication(str(temporary), str(out / "kept.txt"))], [])
        committed_path = committed.close()
        dead = EffectFileWriter(effects, "put-t0-dead")
        orphan = dead.stage(out)
        orphan.write_bytes(b"never committed")
        dead.commit([Publication(str(orphan), str(out / "lost.txt"))], [])
        dead.close()
        repos.flowfiles.commit(
            Transaction(state={EFFECTS_STATE: {"files": json.dumps([committed_path])}})
        )
        controller = Controller(flow, DirectRunner(), repos)
        findings = controller.sinks.recover()
        controller.sinks.release()
    finally:
        repos.close()
    assert sorted(p.name for p in out.iterdir()) == ["kept.txt"]
    assert (out / "kept.txt").read_bytes() == b"committed"
    assert [f.location for f in findings] == [dead.path.name]
    assert list(Path(effects).iterdir()) == []


def test_same_name_twice_in_one_task_meets_the_conflict_rule(tmp_path: Path) -> None:
    """Two FlowFiles of one task with one name: with 'fail' the second goes to failure, as if
    the first were already on disk (it is only staged until the commit)."""
    flow = Flow("same-name")
    gen = flow.add(
        GenerateFlowFile(batch_size=3, file_size="4 B", unique_flowfiles=True), name="gen"
    )
    name = flow.add(UpdateAttribute(filename="same.txt"), name="name")
    out = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(gen, name)
    flow.connect(name, out)
    flow.auto_terminate(out, ["success", "failure"])
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        result = Controller(flow, DirectRunner(), repos).run()
    finally:
        repos.close()
    assert (result.count("put", "success"), result.count("put", "failure")) == (1, 2)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["same.txt"]


@pytest.mark.parametrize("strategy", ["fail", "ignore"])
def test_same_name_in_tasks_running_side_by_side_is_written_once(
    tmp_path: Path, strategy: str
) -> None:
    """Tasks of one stage run that stage the same name: the first reserves it, the others meet
    the conflict rule (failure with 'fail', success unwritten with 'ignore'), so no FlowFile is
    reported as written while its file is dropped at publication."""
    flow = Flow("same-name")
    gen = flow.add(
        GenerateFlowFile(batch_size=2, file_size="4 B", unique_flowfiles=True), name="gen"
    )
    name = flow.add(UpdateAttribute(filename="same.txt"), name="name")
    out = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy=strategy),
        name="put",
    )
    flow.connect(gen, name)
    flow.connect(name, out)
    flow.auto_terminate(out, ["success", "failure"])
    settings = Settings(sync=False, parallelism=3, unbounded_source_batches=3)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        result = Controller(flow, DirectRunner(), repos, settings=settings).run()
        sends = repos.provenance.search(event_type="SEND")
        targets = Path(repos.paths.effects) / TARGETS_DIRECTORY
    finally:
        repos.close()
    success, failure = result.count("put", "success"), result.count("put", "failure")
    assert (success, failure) == ((1, 5) if strategy == "fail" else (6, 0))
    assert len(sends) == 1
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["same.txt"]
    assert not targets.exists()  # released after the commit


def test_generated_flowfiles_get_new_uuids_in_every_micro_batch_and_run(tmp_path: Path) -> None:
    """GenerateFlowFile's items do not name their data: its FlowFiles keep random uuids, so
    default names (the uuid) never collide across triggers, micro-batches or runs."""
    flow = Flow("generated")
    gen = flow.add(
        GenerateFlowFile(batch_size=20, file_size="4 B", unique_flowfiles=True), name="gen"
    )
    out = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(gen, out)
    flow.auto_terminate(out, ["success", "failure"])
    settings = Settings(sync=False, unbounded_source_batches=3)
    for _ in range(2):
        repos = RepositorySet.open(tmp_path / "repo")
        try:
            result = Controller(flow, DirectRunner(), repos, settings=settings).run()
        finally:
            repos.close()
        assert result.count("put", "failure") == 0
    assert len(list((tmp_path / "out").iterdir())) == 2 * 3 * 20


def test_a_refused_publication_is_tried_again_at_the_next_commit(tmp_path: Path) -> None:
    """A rename refused after a commit is tried again with the next commit's effects, not only
    at the next start: once the obstacle is gone the file appears and no retry file is left;
    the refusal is one ERROR bulletin, not one per commit."""
    out = tmp_path / "out"
    out.mkdir()
    flow = _put_flow(tmp_path)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        controller = Controller(flow, DirectRunner(), repos)
        writer = EffectFileWriter(repos.paths.effects, "put-t0-1")
        temporary = writer.stage(out)
        temporary.write_bytes(b"late")
        writer.commit([Publication(str(temporary), str(out / "a.txt"))], [])
        (out / "a.txt").mkdir()
        (out / "a.txt" / "inside").write_bytes(b"")
        assert controller.sinks.carry_out([writer.close() or ""]).waiting
        assert controller.sinks.carry_out([]).waiting  # the next commit: still refused
        (out / "a.txt" / "inside").unlink()
        (out / "a.txt").rmdir()
        report = controller.sinks.carry_out([])
        errors = [b for b in read_bulletins(repos.directory) if b.level == "ERROR"]
    finally:
        repos.close()
    assert (report.published, report.waiting) == (1, ())
    assert (out / "a.txt").read_bytes() == b"late"
    assert [p.name for p in Path(repos.paths.effects).iterdir()] == []
    assert len(errors) == 1


class _RunnerWithADeadAttempt(DirectRunner):
    """Runs tasks directly, after leaving a staged file as a failed attempt would."""

    def __init__(self, effects: str, out: Path) -> None:
        super().__init__()
        self.effects, self.out, self.orphans = effects, out, []

    def execute(self, job):  # type: ignore[no-untyped-def]
        dead = EffectFileWriter(self.effects, f"dead-{len(self.orphans)}")
        orphan = dead.stage(self.out)
        orphan.write_bytes(b"half")
        dead.close(sync=False)
        self.orphans.append(orphan)
        return super().execute(job)


def test_a_dead_attempt_s_temporaries_go_at_the_next_commit(tmp_path: Path) -> None:
    """Files staged by attempts that never commit (a Spark task that failed and ran again) are
    removed after each commit, so none is left in the output directory after the run."""
    out = tmp_path / "out"
    out.mkdir()
    flow = _put_flow(tmp_path)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        runner = _RunnerWithADeadAttempt(repos.paths.effects, out)
        result = Controller(flow, runner, repos).run()
    finally:
        repos.close()
    assert runner.orphans
    assert not any(o.exists() for o in runner.orphans)
    assert len(list(out.iterdir())) == result.count("put", "success") == 4


class _Touch(Processor):
    """Records an after-commit action per FlowFile: create a marker file (idempotently)."""

    relationships: ClassVar = (SUCCESS,)
    DIRECTORY: ClassVar = Path()

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        session.after_commit({"marker": flowfile.attributes["uuid"]})
        session.transfer(flowfile, SUCCESS)

    def run_after_commit_actions(
        self, context: ProcessContext, actions: Sequence[Mapping[str, Any]]
    ) -> None:
        del context
        for action in actions:
            if action["marker"] == "boom":
                msg = "the remote server went away"
                raise OSError(msg)
            (self.DIRECTORY / action["marker"]).touch()


def _touch_flow(tmp_path: Path) -> Flow:
    _Touch.DIRECTORY = tmp_path / "markers"
    _Touch.DIRECTORY.mkdir(exist_ok=True)
    flow = Flow("touch")
    gen = flow.add(
        GenerateFlowFile(batch_size=5, file_size="1 B", unique_flowfiles=True), name="gen"
    )
    touch = flow.add(_Touch(), name="touch")
    flow.connect(gen, touch)
    flow.auto_terminate(touch, ["success"])
    return flow


def test_after_commit_actions_are_carried_out_after_the_commit(tmp_path: Path) -> None:
    """Each committed FlowFile's action is carried out once, on the driver, after the
    transaction that made it durable; no effect file stays."""
    flow = _touch_flow(tmp_path)
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        result = Controller(flow, DirectRunner(), repos).run()
    finally:
        repos.close()
    assert len(list(_Touch.DIRECTORY.iterdir())) == result.count("touch", "success") == 5
    assert list(Path(repos.paths.effects).glob("*.effects")) == []


def test_recovery_carries_out_committed_actions_and_drops_uncommitted_ones(
    tmp_path: Path,
) -> None:
    """A crash between the commit and the actions: the committed action runs at start-up;
    an attempt that never committed never acts; a failing action becomes a bulletin; one of
    a component not in the flow stays pending (a bulletin says so), never dropped."""
    flow = _touch_flow(tmp_path)
    touch_id = flow.component("touch").id
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        effects = repos.paths.effects
        committed = EffectFileWriter(effects, "touch-t0-committed")
        committed.commit(
            [], [], [],
            [AfterCommitAction(touch_id, {"marker": "kept"}),
             AfterCommitAction(touch_id, {"marker": "boom"}),
             AfterCommitAction("gone-component", {"marker": "orphan"})],
        )  # fmt: skip
        committed_path = committed.close()
        dead = EffectFileWriter(effects, "touch-t0-dead")
        dead.commit([], [], [], [AfterCommitAction(touch_id, {"marker": "never"})])
        dead.close()
        repos.flowfiles.commit(
            Transaction(state={EFFECTS_STATE: {"files": json.dumps([committed_path])}})
        )
        settings = Settings(after_commit_budget="200 ms")
        controller = Controller(flow, DirectRunner(), repos, settings)
        controller.sinks.recover()
        controller.sinks.release()
        bulletins = read_bulletins(repos.directory)
    finally:
        repos.close()
    assert sorted(p.name for p in _Touch.DIRECTORY.iterdir()) == ["kept"]
    messages = [b.message for b in bulletins]
    assert any("could not carry out 2 after-commit action(s)" in m for m in messages)
    assert any("gone-component" in m and "not in the flow" in m for m in messages)
    left = list(Path(effects).iterdir())
    assert [p.suffix for p in left] == [".actions"]
    assert json.loads(left[0].read_text()) == {
        "component": "gone-component",
        "actions": [{"marker": "orphan"}],
    }


class _SlowTouch(_Touch):
    """Touches its markers only once its gate opens (a remote server that hangs)."""

    GATE: ClassVar = threading.Event()

    def run_after_commit_actions(
        self, context: ProcessContext, actions: Sequence[Mapping[str, Any]]
    ) -> None:
        assert type(self).GATE.wait(60)
        super().run_after_commit_actions(context, actions)


def test_a_hanging_after_commit_action_holds_the_run_only_its_budget(tmp_path: Path) -> None:
    """The remote hangs: the run commits and ends anyway, the actions kept in pending files;
    the next start carries them out (each marker made) before its own, and removes them."""
    _Touch.DIRECTORY = tmp_path / "markers"
    _Touch.DIRECTORY.mkdir()
    hanging = threading.Event()
    _SlowTouch.GATE = hanging

    def flow() -> Flow:
        made = Flow("touch")
        gen = made.add(
            GenerateFlowFile(batch_size=5, file_size="1 B", unique_flowfiles=True), name="gen"
        )
        touch = made.add(_SlowTouch(), name="touch")
        made.connect(gen, touch)
        made.auto_terminate(touch, ["success"])
        return made

    settings = Settings(after_commit_budget="50 millis")
    repos = RepositorySet.open(tmp_path / "repo", settings)
    try:
        first = Controller(flow(), DirectRunner(), repos, settings).run()
        effects = Path(repos.paths.effects)
        assert first.count("touch", "success") == 5
        assert list(_Touch.DIRECTORY.iterdir()) == []
        assert list(effects.glob("*.actions"))
        _SlowTouch.GATE = threading.Event()
        _SlowTouch.GATE.set()
        second = Controller(flow(), DirectRunner(), repos, settings).run()
        made = len(list(_Touch.DIRECTORY.iterdir()))  # the first run's, then its own
        assert made == first.count("touch", "success") + second.count("touch", "success") == 10
        assert list(effects.glob("*.actions")) == []
    finally:
        hanging.set()  # the first run's worker, still waiting, finds its work done
        repos.close()


class _Settler(_Touch):
    """Settles what uncommitted attempts left; its database hangs up (or a copy runs)."""

    CALLS: ClassVar[list[list[Mapping[str, Any]]]] = []
    ERROR: ClassVar[type[Exception]] = OSError

    def settle_after_commit_actions(
        self, context: ProcessContext, pending: Sequence[Mapping[str, Any]]
    ) -> None:
        del context
        type(self).CALLS.append(list(pending))
        msg = "the database does not answer"
        raise type(self).ERROR(msg)


def test_a_failed_settle_is_not_tried_again_after_every_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A settle that failed after a commit waits SETTLE_BACKOFF_SECONDS before the next (a
    hanging database must not hold every commit); it is told what pending files hold; a
    ConfigurationError at start-up (a copied repository running) refuses the start."""
    from flowcore.driver import sinks
    from flowcore.errors import ConfigurationError

    _Touch.DIRECTORY = tmp_path / "markers"
    flow = Flow("settle")
    gen = flow.add(GenerateFlowFile(batch_size=1, file_size="1 B"), name="gen")
    settler = flow.add(_Settler(), name="settler")
    flow.connect(gen, settler)
    flow.auto_terminate(settler, ["success"])
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        (Path(repos.paths.effects)).mkdir(parents=True, exist_ok=True)
        pending = Path(repos.paths.effects) / "1-kept.actions"
        component = flow.component("settler").id
        pending.write_text(json.dumps({"component": component, "actions": [{"marker": "k"}]}))
        controller = Controller(flow, DirectRunner(), repos)
        plan = next(p for p in controller.plans.values() if p.members[-1].name == "settler")
        _Settler.CALLS = []
        monkeypatch.setattr(sinks, "SETTLE_BACKOFF_SECONDS", 0.0)
        controller.sinks.settle(plan=plan)
        controller.sinks.settle(plan=plan)
        assert _Settler.CALLS == [[{"marker": "k"}]] * 2  # the pending file's action kept
        monkeypatch.setattr(sinks, "SETTLE_BACKOFF_SECONDS", 3600.0)
        controller.sinks.settle(plan=plan)
        controller.sinks.settle(plan=plan)  # within the backoff: not asked
        assert len(_Settler.CALLS) == 3
        monkeypatch.setattr(_Settler, "ERROR", ConfigurationError)
        with pytest.raises(ConfigurationError, match="does not answer"):
            controller.sinks.settle({})  # at start-up: refused
    finally:
        repos.close()


def test_a_settle_that_fails_at_start_is_one_line_not_a_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A settle refused at start-up (PutDatabaseRecord's database refusing the password) is an
    ERROR bulletin and an ERROR record of one line; the traceback is at DEBUG only (found by
    review: two tracebacks on stderr)."""
    import logging

    from repositories.repository_set import read_bulletins

    caplog.set_level(logging.INFO, "flowcore.driver.sinks")
    _Touch.DIRECTORY = tmp_path / "markers"
    flow = Flow("settle-start")
    gen = flow.add(GenerateFlowFile(batch_size=1, file_size="1 B"), name="gen")
    settler = flow.add(_Settler(), name="settler")
    flow.connect(gen, settler)
    flow.auto_terminate(settler, ["success"])
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        controller = Controller(flow, DirectRunner(), repos)
        _Settler.CALLS = []
        controller.sinks.settle({})
        controller.sinks.settle({})
        bulletins = [b for b in read_bulletins(repos.directory) if b.level == "ERROR"]
    finally:
        repos.close()
    line = "settler could not settle what earlier runs left: OSError: the database does not answer"
    assert [b.message for b in bulletins] == [line, line]
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert [r.getMessage() for r in errors] == [line, line]
    assert all(r.exc_info is None for r in errors)
