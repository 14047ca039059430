"""Tests for the harness's session host: the plumbing a TestRunner's sessions run against."""

from __future__ import annotations

import pytest

from flowcore import Processor, Relationship
from flowcore.errors import FlowFileHandlingError
from flowcore.session.process_session import ProcessSession
from flowcore.testing import TestRunner
from flowcore.testing._host import HarnessHost

SUCCESS = Relationship("success")


class _Pass(Processor):
    """Sends each FlowFile to success."""

    relationships = (SUCCESS,)

    def on_trigger(self, context, session) -> None:
        flowfile = session.get()
        if flowfile is not None:
            session.transfer(flowfile, SUCCESS)


#: What TestRunner showed before its host moved off it, and shows no more.
_PLUMBING = (
    "accepts_batches",
    "apply_commit",
    "destinations",
    "discard_spilled",
    "is_auto_terminated",
    "lowest_logged_level",
    "map_cache",
    "next_flowfile_id",
    "poll",
    "ready_count",
    "record_drops",
    "record_transfers",
    "relationships",
    "remove_unclaimed",
    "requeue",
    "reserve",
    "restore",
    "spill",
    "stage_file",
    "staged",
    "take_flowfile_ids",
    "take_queue_indices",
    "take_ready",
    "trigger_per_flowfile",
)


def test_the_runner_shows_no_plumbing() -> None:
    """The plumbing is defined on HarnessHost, not on TestRunner, and the runner forwards it
    (its sessions and batch mode run over the runner): each forwarded name is a forwarder of
    the host's, never a method of the runner's own."""
    forwarded = {
        name for name, member in vars(TestRunner).items() if type(member).__name__ == "_Forwarded"
    }
    own = {
        name
        for name, member in vars(TestRunner).items()
        if not name.startswith("_") and name not in forwarded
    }
    assert own.isdisjoint(_PLUMBING)
    assert forwarded == set(_PLUMBING)
    assert all(hasattr(HarnessHost, name) for name in _PLUMBING)
    runner = TestRunner(_Pass)
    assert runner.relationships() == runner.processor.relationship_names()
    assert runner.accepts_batches is False


def test_a_subclass_override_can_call_the_forwarded_member() -> None:
    """``super()`` reaches the host's member from a subclass that overrides it, and the name
    is the runner class's, as ``dir`` and ``mock.patch`` expect."""

    class Wider(TestRunner):
        def destinations(self, relationship: str) -> int:
            return super().destinations(relationship) + 1

    runner = Wider(_Pass)
    assert runner.destinations(SUCCESS.name) == 2
    assert "destinations" in dir(TestRunner)


def test_sessions_run_against_the_host_and_the_runner_sees_their_commits() -> None:
    """A session the runner creates commits through its host into the runner's transfers."""
    runner = TestRunner(_Pass)
    runner.enqueue(b"abc")
    session = runner.create_session()
    session.transfer(session.get(), SUCCESS)
    session.commit()
    runner.assert_transfer_count(SUCCESS, 1)
    runner.flowfiles_for(SUCCESS)[0].assert_content_equals("abc")
    runner.assert_queue_empty()


def test_a_runner_subclass_override_is_what_sessions_consult() -> None:
    """A subclass's ``destinations`` (no connection for success) fails the commit, as when the
    plumbing was the runner's own methods."""

    class Unconnected(TestRunner):
        def destinations(self, relationship: str) -> int:
            del relationship
            return 0

    runner = Unconnected(_Pass)
    runner.enqueue(b"x")
    session = ProcessSession(runner)
    session.transfer(session.get(), SUCCESS)
    with pytest.raises(FlowFileHandlingError, match="does not have any destinations"):
        session.commit()


def test_a_session_built_over_the_runner_itself_still_works() -> None:
    """``ProcessSession(runner)`` is what ``create_session`` makes: it commits into the runner."""
    runner = TestRunner(_Pass)
    runner.enqueue(b"x")
    session = ProcessSession(runner)
    session.transfer(session.get(), SUCCESS)
    session.commit()
    runner.assert_all_flowfiles_transferred(SUCCESS, 1)
    assert [e.event_type.value for e in runner.provenance_events] == []
