"""Tests for flowcore/session/_effects.py: staged files and deferred log lines of a session."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import ClassVar

import pytest

from flowcore import Flow, ProcessContext, Processor, ProcessSession
from flowcore.driver.controller import Controller
from flowcore.errors import ProcessException
from flowcore.processor.relationship import SUCCESS
from flowcore.runners.direct import DirectRunner
from flowcore.testing import TestRunner
from processors import GenerateFlowFile, LogAttribute
from repositories.repository_set import RepositorySet


class _StageThenFail(Processor):
    """Stages a file and a log line, then fails when the FlowFile says so."""

    relationships: ClassVar = (SUCCESS,)
    DIRECTORY: ClassVar = Path()

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        temporary = session.stage_file(self.DIRECTORY / flowfile.attributes["filename"])
        temporary.write_bytes(b"x")
        session.log_after_commit("flowcore.test.staged", logging.WARNING, "staged once")
        if flowfile.attributes.get("fail") == "yes":
            msg = "asked to fail"
            raise RuntimeError(msg)
        session.transfer(flowfile, SUCCESS)


def test_a_rollback_deletes_staged_files_and_logs_nothing(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """A session that rolls back leaves no temporary and emits no deferred line."""
    _StageThenFail.DIRECTORY = tmp_path
    runner = TestRunner(_StageThenFail())
    runner.enqueue(b"a", {"filename": "a.txt", "fail": "yes"})
    with (
        caplog.at_level(logging.WARNING, logger="flowcore.test.staged"),
        pytest.raises(RuntimeError),
    ):
        runner.run()
    assert list(tmp_path.iterdir()) == []
    assert "staged once" not in caplog.text


def test_a_commit_publishes_and_logs_once(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """A committed session's file appears under its name and its line is logged once."""
    _StageThenFail.DIRECTORY = tmp_path
    runner = TestRunner(_StageThenFail())
    runner.enqueue(b"a", {"filename": "a.txt"})
    with caplog.at_level(logging.WARNING, logger="flowcore.test.staged"):
        runner.run()
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
    assert caplog.text.count("staged once") == 1


def test_log_attribute_logs_on_the_driver_after_the_commit(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """In a run, LogAttribute's lines are emitted once per committed FlowFile."""
    flow = Flow("log")
    gen = flow.add(GenerateFlowFile(batch_size=3, unique_flowfiles=True), name="gen")
    log = flow.add(LogAttribute(log_prefix="PREFIX"), name="log")
    flow.connect(gen, log)
    flow.auto_terminate(log, ["success"])
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        with caplog.at_level(logging.INFO, logger="flowcore.processors.LogAttribute"):
            Controller(flow, DirectRunner(), repos).run()
    finally:
        repos.close()
    assert len([r for r in caplog.records if "PREFIX" in r.getMessage()]) == 3


def test_disposals_are_staged_absolute_with_the_version_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative source or target is made absolute when staged (a start-up may finish it
    from another directory), and the version there now is recorded."""
    from flowcore.session._effects import StagedEffects
    from flowcore.session.external_files import fingerprint

    monkeypatch.chdir(tmp_path)
    Path("a.txt").write_text("x")
    effects = StagedEffects(None)  # type: ignore[arg-type]  # disposals need nothing of a host
    effects.delete_after_commit("a.txt")
    effects.move_after_commit("a.txt", "done/a.txt")
    _, _, (delete, move) = effects.take()
    assert delete.source == str(tmp_path / "a.txt")
    assert move.target == str(tmp_path / "done" / "a.txt")
    assert delete.fingerprint == move.fingerprint == fingerprint(tmp_path / "a.txt")


class _StageTwiceCancelOne(Processor):
    """Stages one target twice, gives up the first temporary, and records what is_staged says."""

    relationships: ClassVar = (SUCCESS,)
    DIRECTORY: ClassVar = Path()
    seen: ClassVar[list[bool]] = []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        target = self.DIRECTORY / "same.txt"
        seen = _StageTwiceCancelOne.seen
        seen.append(session.is_staged(target))
        first = session.stage_file(target)
        second = session.stage_file(target)
        seen.append(session.is_staged(target))
        session.cancel_staged(first)
        seen.append(session.is_staged(target))
        session.cancel_staged(second)
        seen.append(session.is_staged(target))
        session.transfer(flowfile, SUCCESS)


def test_is_staged_follows_targets_staged_and_given_up(tmp_path: Path) -> None:
    """A target stays staged while one of its temporaries remains, and not after the last is
    given up."""
    _StageTwiceCancelOne.DIRECTORY = tmp_path
    _StageTwiceCancelOne.seen = []
    runner = TestRunner(_StageTwiceCancelOne())
    runner.enqueue(b"a")
    runner.run()
    assert _StageTwiceCancelOne.seen == [False, True, True, False]
    assert list(tmp_path.iterdir()) == []


class _Acts(Processor):
    """Records one after-commit action per FlowFile (touch a marker file), then may fail."""

    relationships: ClassVar = (SUCCESS,)
    DONE: ClassVar[list[list[dict[str, str]]]] = []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        session.after_commit({"name": flowfile.attributes["filename"]})
        if flowfile.attributes.get("fail") == "yes":
            msg = "asked to fail"
            raise RuntimeError(msg)
        session.transfer(flowfile, SUCCESS)

    def run_after_commit_actions(self, context: ProcessContext, actions) -> None:  # type: ignore[no-untyped-def]
        del context
        self.DONE.append([dict(a) for a in actions])


def test_after_commit_actions_run_once_committed_and_never_after_a_rollback() -> None:
    """The harness hands a committed session's actions to the processor at once; a session
    that rolls back hands over nothing."""
    _Acts.DONE = []
    runner = TestRunner(_Acts())
    runner.enqueue(b"a", {"filename": "a.txt", "fail": "yes"})
    with pytest.raises(RuntimeError):
        runner.run()
    assert _Acts.DONE == []
    runner = TestRunner(_Acts())
    runner.enqueue(b"b", {"filename": "b.txt"})
    runner.run()
    assert _Acts.DONE == [[{"name": "b.txt"}]]


def test_an_after_commit_action_must_be_json() -> None:
    """An action that is not JSON fails in the task, naming the rule, not after the commit."""

    class _Bad(_Acts):
        def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
            session.after_commit({"when": object()})

    runner = TestRunner(_Bad())
    with pytest.raises(ProcessException, match="must be JSON"):
        runner.run()
