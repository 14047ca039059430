"""Tests for batches handed on before their session's commit: a session that fails after
is rolled back as any other."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import attrs
import numpy as np

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.processor import Processor
from flowcore.processor.relationship import Relationship
from processors import GenerateFlowFile, PutFile, UpdateAttribute
from repositories.repository_set import RepositorySet
from tests.flowcore.engine._batch_outcomes import SETTINGS


class _ForkThenFail(Processor):
    """Forks a one-byte child as a batch, transfers it, then fails (when told to)."""

    relationships = (Relationship("splits"), Relationship("original"))

    def __init__(self, *, fail: bool) -> None:
        super().__init__()
        self.fail = fail

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        parent = session.get()
        if parent is None:
            return
        children = session.fork_batch(parent, np.array([0]), np.array([1]), {"child": "y"}, {})
        session.transfer_batch(children, "splits")
        if self.fail:
            msg = "after the hand-over"
            raise RuntimeError(msg)
        session.transfer(parent, "original")


def _fork_flow(root: Path, *, fail: bool) -> Flow:
    flow = Flow("handed")
    gen = flow.add(GenerateFlowFile(batch_size=2, custom_text="ab"), name="gen")
    fork = flow.add(_ForkThenFail(fail=fail), name="fork")
    tag = flow.add(UpdateAttribute(tagged="yes"), name="tag")
    put = flow.add(PutFile(directory=str(root / "out")), name="put")
    flow.connect(gen, fork, durable=True)
    flow.connect(fork, tag, "splits")
    flow.connect(tag, put)
    flow.auto_terminate(fork, "original")
    flow.auto_terminate(put, ["success", "failure"])
    return flow


def test_a_session_failing_after_its_batches_went_on_is_rolled_back_as_any_other(
    tmp_path: Path,
) -> None:
    """Batches handed on before the commit cannot be called back: when the session then fails,
    the task runs again holding its batches, and the failure rolls back, penalizes and reports
    its FlowFile as without a hand-over; the run goes on and nothing it made is committed."""
    outcomes = []
    for hand_over_at in (0, 200_000):
        settings = attrs.evolve(SETTINGS, batch_hand_over_flowfiles=hand_over_at)
        root = tmp_path / str(hand_over_at)
        result = run_flow(
            _fork_flow(root, fail=True), "direct", repository=root / "repo", settings=settings
        )
        repos = RepositorySet.open(root / "repo")
        try:
            events = repos.provenance.search(limit=100)
            shapes = Counter((e.component_name, e.event_type.value) for e in events)
            queued = [repos.flowfiles.queue_size(q)[0] for q in repos.flowfiles.queue_ids()]
        finally:
            repos.close()
        assert not (root / "out").exists() or not any((root / "out").iterdir())
        assert any("after the hand-over" in b.message for b in result.bulletins), result.bulletins
        outcomes.append((shapes, queued, dict(result.transfers), sorted(result.queued)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == Counter({("gen", "CREATE"): 6})  # the fork committed nothing
    assert outcomes[0][1] == [6]  # all its input queued again, penalized
    result = run_flow(
        _fork_flow(tmp_path, fail=False),
        "direct",
        repository=tmp_path / "repo2",
        settings=SETTINGS,
    )
    assert result.count("tag", "success") == 6  # three generations of two, one child each


class _Sleepy(Processor):
    """Takes SLEEP seconds per batch it is handed (its batch form) or FlowFile."""

    relationships = (Relationship("success"),)

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        if flowfile is not None:
            time.sleep(SLEEP)
            session.transfer(flowfile, "success")

    def transform_batch(self, context, batch):  # type: ignore[no-untyped-def]
        time.sleep(SLEEP)
        return "success", batch


SLEEP = 0.02


def test_the_time_of_an_attempt_run_again_after_a_hand_over_counts(tmp_path: Path) -> None:
    """The member after a session that failed after handing its batches on ran in the first
    attempt only (the second holds the batches, which then roll back): its task time still
    counts that run, as NiFi counts a rolled back task's time."""
    flow = Flow("handed-time")
    gen = flow.add(GenerateFlowFile(batch_size=2, custom_text="ab"), name="gen")
    fork = flow.add(_ForkThenFail(fail=True), name="fork")
    sleepy = flow.add(_Sleepy(), name="sleepy")
    flow.connect(gen, fork, durable=True)
    flow.connect(fork, sleepy, "splits")
    flow.auto_terminate(fork, "original")
    flow.auto_terminate(sleepy, "success")
    settings = attrs.evolve(SETTINGS, batch_hand_over_flowfiles=0)
    result = run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)
    assert result.count("sleepy", "success") == 0  # nothing it did was committed
    assert result.tasks_duration_nanos["sleepy"] >= SLEEP * 1e9  # but it ran
