"""Tests for ProcessSession's spilling: finished FlowFiles handed to the host before commit."""

from __future__ import annotations

import pytest

from flowcore.testing import TestRunner
from tests.flowcore.session._session_runner import FAILURE, SUCCESS, Dummy, E, session_for


# a Dummy's harness; why not in a conftest.py: see _session_runner.py
@pytest.fixture
def runner() -> TestRunner:
    return TestRunner(Dummy())


def test_spill_hands_finished_flowfiles_over_in_batches(runner: TestRunner) -> None:
    """With a spill threshold, finished children leave the session early; the result is the same."""
    runner.spill_threshold = 10
    runner.enqueue(b"0123456789" * 3)
    session = session_for(runner)
    parent = session.get()
    for offset in range(25):
        session.transfer(session.clone(parent, offset, 1), SUCCESS)
        if offset == 9:
            assert len(session._ledger.records) == 1  # the ten children were handed to the host
    session.transfer(parent, FAILURE)
    session.commit()
    assert [f.content for f in runner.flowfiles_for("success")] == [
        bytes([b]) for b in (b"0123456789" * 3)[:25]
    ]
    forks = [e for e in runner.provenance_events if e.event_type is E.FORK]
    assert len(forks) == 3
    assert sorted(u for e in forks for u in e.child_uuids) == sorted(
        f.uuid for f in runner.flowfiles_for("success")
    )
    assert {e.flowfile_uuid for e in forks} == {parent.uuid}


def test_rollback_discards_spilled_flowfiles(runner: TestRunner) -> None:
    """A rollback after a spill loses the spilled children too, and restores the input."""
    runner.spill_threshold = 2
    runner.enqueue(b"abc")
    session = session_for(runner)
    parent = session.get()
    for offset in range(3):
        session.transfer(session.clone(parent, offset, 1), SUCCESS)
    session.rollback()
    assert runner.queue_size() == 1
    session.transfer(session.get(), SUCCESS)
    session.commit()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"abc"]
    assert runner.provenance_events == []
