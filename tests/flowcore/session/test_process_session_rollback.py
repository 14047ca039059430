"""Tests for ProcessSession's unit of work: rollback, penalties, state staged until commit,
and FlowFiles migrated to another session."""

from __future__ import annotations

import pytest

from flowcore.errors import FlowFileHandlingError
from flowcore.testing import TestRunner
from tests.flowcore.session._session_runner import SUCCESS, Dummy, session_for


# a Dummy's harness; why not in a conftest.py: see _session_runner.py
@pytest.fixture
def runner() -> TestRunner:
    return TestRunner(Dummy())


# --- rollback, penalties, state --------------------------------------------------------------


def test_rollback_restores_inputs_discards_content_events_and_state(runner: TestRunner) -> None:
    """Rollback returns inputs unchanged and drops created FlowFiles, written claims and state."""
    original = runner.enqueue(b"keep me", {"a": "1"})
    session = session_for(runner)
    flowfile = session.get()
    flowfile = session.write(session.put_attribute(flowfile, "a", "2"), b"changed")
    written_claim = flowfile.content.resource_claim
    session.transfer(session.create(flowfile), SUCCESS)
    session.set_state({"k": "v"})
    session.rollback()
    (back,) = runner.queued_flowfiles
    assert back == original.flowfile
    assert not runner.content.exists(written_claim)
    assert runner.state == {}
    assert runner.provenance_events == []


def test_rollback_with_penalty_delays_the_flowfile(runner: TestRunner) -> None:
    """rollback(penalize=True) penalizes inputs; they are not handed out until it expires."""
    runner.enqueue(b"x")
    session = session_for(runner)
    session.get()
    session.rollback(penalize=True)
    assert len(runner.penalized_flowfiles) == 1
    assert session.get() is None
    runner.advance_time(30)
    assert session.get() is not None


def test_penalize_sets_the_penalty(runner: TestRunner) -> None:
    """penalize() sets the penalty to now plus the penalization period."""
    runner.enqueue(b"x")
    session = session_for(runner)
    flowfile = session.penalize(session.get())
    assert flowfile.penalty_expiration == runner.now() + runner.penalization_ms


def test_state_commits_with_the_session(runner: TestRunner) -> None:
    """State staged in a session becomes visible at commit; replace_state checks the version."""
    session = session_for(runner)
    initial = session.get_state()
    assert initial.version == -1
    assert session.replace_state(initial, {"count": "1"})
    session.commit()
    assert runner.state == {"count": "1"}
    stale = initial
    assert not session.replace_state(stale, {"count": "2"})
    session.adjust_counter("files", 3)
    session.commit()
    assert runner.get_counter_value("files") == 3


# --- migrate ---------------------------------------------------------------------------------


def test_migrate_moves_flowfiles_and_their_events(runner: TestRunner) -> None:
    """Migrated FlowFiles and their pending events commit (or roll back) with the new session."""
    runner.enqueue(b"a")
    runner.enqueue(b"b")
    source = session_for(runner)
    first, second = source.get(2)
    first = source.write(first, b"A")
    holder = session_for(runner)
    source.migrate(holder, [first])
    source.transfer(second, SUCCESS)
    source.commit()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"b"]
    holder.rollback()
    assert [runner.content.read(f.content) for f in runner.queued_flowfiles] == [b"a"]


def test_migrate_keeps_forked_families_together(runner: TestRunner) -> None:
    """A forked parent cannot be migrated without its children, as NiFi enforces."""
    runner.enqueue(b"abc")
    source = session_for(runner)
    parent = source.get()
    source.clone(parent, 0, 1)
    with pytest.raises(FlowFileHandlingError, match="parent and all children"):
        source.migrate(session_for(runner), [parent])
