"""Tests for where ProcessSession's FlowFiles go at commit and the provenance events they get:
back to their queue, removed (DROP), cloned to fan out, auto-terminated, modified, reported."""

from __future__ import annotations

import pytest

from flowcore.errors import FlowFileHandlingError
from flowcore.testing import TestRunner
from tests.flowcore.session._session_runner import FAILURE, SUCCESS, Dummy, E, session_for, types


class FanOutRunner(TestRunner):
    """A harness whose 'success' has two connections and whose 'failure' is auto-terminated."""

    def destinations(self, relationship: str) -> int:
        return {"success": 2, "failure": 0}.get(relationship, 0)

    def is_auto_terminated(self, relationship: str) -> bool:
        return relationship == "failure"


# a Dummy's harness; why not in a conftest.py: see _session_runner.py
@pytest.fixture
def runner() -> TestRunner:
    return TestRunner(Dummy())


def test_transfer_to_self_returns_to_queue(runner: TestRunner) -> None:
    """transfer(ff) with no relationship puts it back on its queue; created ones cannot."""
    runner.enqueue(b"x")
    session = session_for(runner)
    session.transfer(session.get())
    with pytest.raises(FlowFileHandlingError, match="back to self"):
        session.transfer(session.create())


def test_remove_dequeued_emits_drop_with_reason(runner: TestRunner) -> None:
    """Removing a dequeued FlowFile emits DROP with its discard.reason as details."""
    runner.enqueue(b"x", {"discard.reason": "duplicate"})
    session = session_for(runner)
    session.remove(session.get())
    session.commit()
    (event,) = runner.provenance_events
    assert event.event_type is E.DROP
    assert event.details == "duplicate"


def test_removed_child_leaves_no_trace(runner: TestRunner) -> None:
    """A FlowFile created and removed in one session leaves no events; its FORK is dropped."""
    runner.enqueue(b"x")
    session = session_for(runner)
    parent = session.get()
    child = session.create(parent)
    session.provenance.route(child, SUCCESS)
    session.remove(child)
    session.transfer(parent, SUCCESS)
    session.commit()
    assert runner.provenance_events == []


def test_fan_out_clones_and_auto_termination_drops() -> None:
    """Two connections on a relationship clone the FlowFile; auto-terminated ones DROP last."""
    runner = FanOutRunner(Dummy())
    runner.enqueue(b"a")
    runner.enqueue(b"b")
    session = runner.create_session()
    first, second = session.get(2)
    session.transfer(second, FAILURE)
    session.transfer(first, SUCCESS)
    session.commit()
    assert types(runner) == [E.CLONE, E.DROP]
    assert runner.provenance_events[-1].details == "Auto-Terminated by failure Relationship"
    outputs = runner.flowfiles_for("success")
    assert [o.content for o in outputs] == [b"a", b"a"]
    assert outputs[0].uuid != outputs[1].uuid


def test_attributes_modified_only_when_nothing_else_explains_it(runner: TestRunner) -> None:
    """ATTRIBUTES_MODIFIED is emitted alone; with a ROUTE or content change it is not."""
    for _ in range(3):
        runner.enqueue(b"x")
    session = session_for(runner)
    a, b, c = session.get(3)
    a = session.put_attribute(a, "k", "v")
    b = session.put_attribute(b, "k", "v")
    session.provenance.route(b, SUCCESS)
    c = session.write(session.put_attribute(c, "k", "v"), b"y")
    session.transfer([a, b, c], SUCCESS)
    session.commit()
    # Per-record events follow record order: a's ATTRIBUTES_MODIFIED, then c's CONTENT_MODIFIED.
    assert types(runner) == [E.ROUTE, E.ATTRIBUTES_MODIFIED, E.CONTENT_MODIFIED]
    modified = runner.provenance_events[1]
    assert modified.updated_attributes == {"k": "v"}
    assert modified.flowfile_uuid == a.uuid


def test_reported_events_carry_processor_fields(runner: TestRunner) -> None:
    """RECEIVE, SEND and ROUTE carry transit URI, relationship and component identity."""
    session = session_for(runner)
    flowfile = session.write(session.create(), b"data")
    session.provenance.receive(flowfile, "file:///in/data", details="picked up")
    session.provenance.send(flowfile, "https://example.org/upload")
    session.transfer(flowfile, SUCCESS)
    session.commit()
    receive, send = runner.provenance_events
    assert receive.event_type is E.RECEIVE
    assert receive.transit_uri == "file:///in/data"
    assert receive.details == "picked up"
    assert receive.component_type == "Dummy"
    assert send.event_type is E.SEND
    assert send.content_claim == flowfile.content
    assert [e.event_id for e in runner.provenance_events] == [0, 1]


def _fan_out_one(change: str) -> tuple[TestRunner, str, str]:
    """Take one FlowFile ({'a': '1'}), change it as *change* says, send it to two connections.

    Returns the runner, the FlowFile's uuid (it goes to the last connection) and its clone's.
    """
    runner = FanOutRunner(Dummy())
    runner.enqueue(b"x", {"a": "1"})
    session = runner.create_session()
    flowfile = session.get()
    if change in ("attributes", "reported attributes"):
        flowfile = session.put_attribute(flowfile, "k", "v")
    if change == "reported attributes":
        session.provenance.modify_attributes(flowfile)
    if change == "content":
        flowfile = session.write(flowfile, b"y")
    if change == "route":
        session.provenance.route(flowfile, SUCCESS)
    session.transfer(flowfile, SUCCESS)
    session.commit()
    clone, last = runner.flowfiles_for("success")
    assert last.uuid == flowfile.uuid
    return runner, flowfile.uuid, clone.uuid


def test_fan_out_of_changed_attributes_records_only_the_clone() -> None:
    """NiFi: the fan-out CLONE counts as the parent's event, so no ATTRIBUTES_MODIFIED is added."""
    runner, parent, clone = _fan_out_one("attributes")
    (event,) = runner.provenance_events
    assert event.event_type is E.CLONE
    assert event.flowfile_uuid == parent
    assert list(event.parent_uuids) == [parent]
    assert list(event.child_uuids) == [clone]


def test_fan_out_clone_carries_original_and_updated_attributes() -> None:
    """The CLONE is enriched when made, as NiFi's reporter does: original vs. changed attributes."""
    runner, parent, _ = _fan_out_one("attributes")
    (event,) = runner.provenance_events
    assert dict(event.updated_attributes) == {"k": "v"}
    assert dict(event.previous_attributes)["a"] == "1"
    assert "k" not in event.previous_attributes
    assert dict(event.previous_attributes)["uuid"] == parent


def test_fan_out_after_reported_attributes_change() -> None:
    """A reported ATTRIBUTES_MODIFIED comes first, then the CLONE (NiFi's UpdateAttribute case)."""
    runner, parent, clone = _fan_out_one("reported attributes")
    assert types(runner) == [E.ATTRIBUTES_MODIFIED, E.CLONE]
    modified, cloned = runner.provenance_events
    assert modified.flowfile_uuid == cloned.flowfile_uuid == parent
    assert dict(modified.updated_attributes) == dict(cloned.updated_attributes) == {"k": "v"}
    assert list(cloned.child_uuids) == [clone]


def test_fan_out_after_content_change() -> None:
    """CONTENT_MODIFIED is added whatever else was: after the CLONE, which holds the new content."""
    runner, parent, _ = _fan_out_one("content")
    assert types(runner) == [E.CLONE, E.CONTENT_MODIFIED]
    cloned, modified = runner.provenance_events
    assert cloned.flowfile_uuid == modified.flowfile_uuid == parent
    assert cloned.content_claim == modified.content_claim
    assert modified.previous_content_claim != modified.content_claim
    assert [f.content for f in runner.flowfiles_for("success")] == [b"y", b"y"]


def test_fan_out_of_a_routed_flowfile() -> None:
    """A processor that only routes: its ROUTE, then the CLONE, and nothing for the clone."""
    runner, _, clone = _fan_out_one("route")
    assert types(runner) == [E.ROUTE, E.CLONE]
    cloned = runner.provenance_events[1]
    assert dict(cloned.updated_attributes) == {}
    assert clone not in {e.flowfile_uuid for e in runner.provenance_events}
