"""Tests for NiFi's contract on what a ProcessSession method takes: any version of a FlowFile
resolves to its newest; unknown, transferred, removed or unaccounted-for FlowFiles and unknown or
unconnected relationships fail, named, and roll the session back."""

from __future__ import annotations

import pytest

from flowcore import FlowFile
from flowcore.errors import FlowFileHandlingError, RelationshipError
from flowcore.testing import TestRunner
from tests.flowcore.session._session_runner import SUCCESS, Dummy, session_for


# a Dummy's harness; why not in a conftest.py: see _session_runner.py
@pytest.fixture
def runner() -> TestRunner:
    return TestRunner(Dummy())


def test_unknown_relationship_names_it(runner: TestRunner) -> None:
    """Transferring to an undeclared relationship fails at once, naming it and the declared ones."""
    runner.enqueue(b"x")
    session = session_for(runner)
    flowfile = session.get()
    with pytest.raises(RelationshipError, match="Relationship 'nope' is not known") as caught:
        session.transfer(flowfile, "nope")
    assert "success" in str(caught.value)


def test_flowfile_not_accounted_for_rolls_back(runner: TestRunner) -> None:
    """Commit with an untransferred FlowFile fails naming it, and the input goes back."""
    runner.enqueue(b"x")
    session = session_for(runner)
    flowfile = session.get()
    created = session.create()
    session.transfer(created, SUCCESS)
    with pytest.raises(
        FlowFileHandlingError, match="transfer relationship not specified"
    ) as caught:
        session.commit()
    assert flowfile.uuid in str(caught.value)
    assert "was not created in this session" in str(caught.value)
    assert runner.queue_size() == 1
    assert runner.flowfiles_for("success") == []
    assert runner.provenance_events == []


def test_created_flowfile_not_accounted_for_says_so(runner: TestRunner) -> None:
    """The message distinguishes FlowFiles created in the session."""
    session = session_for(runner)
    session.create()
    with pytest.raises(FlowFileHandlingError, match="was created in this session"):
        session.commit()


ACTIONS = {
    "transfer": lambda session, flowfile: session.transfer(flowfile, SUCCESS),
    "remove": lambda session, flowfile: session.remove(flowfile),
    "put_attribute": lambda session, flowfile: session.put_attribute(flowfile, "a", "b"),
    "write": lambda session, flowfile: session.write(flowfile, b"y"),
}


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_transferred_flowfile_cannot_be_used_again(runner: TestRunner, action: str) -> None:
    """A transferred FlowFile cannot be transferred, removed or modified; the session rolls back."""
    runner.enqueue(b"x")
    session = session_for(runner)
    flowfile = session.get()
    session.transfer(flowfile, SUCCESS)
    with pytest.raises(FlowFileHandlingError, match="already marked for transfer"):
        ACTIONS[action](session, flowfile)
    assert runner.queue_size() == 1


def test_removed_flowfile_cannot_be_used(runner: TestRunner) -> None:
    """A removed FlowFile is refused and the session rolls back."""
    runner.enqueue(b"x")
    session = session_for(runner)
    flowfile = session.get()
    session.remove(flowfile)
    with pytest.raises(FlowFileHandlingError, match="already been marked for removal"):
        session.transfer(flowfile, SUCCESS)
    assert runner.queue_size() == 1


def test_unknown_flowfile_is_refused(runner: TestRunner) -> None:
    """A FlowFile from elsewhere is not known in this session."""
    stranger = FlowFile.create(999, 0)
    with pytest.raises(FlowFileHandlingError, match="is not known in this session"):
        session_for(runner).transfer(stranger, SUCCESS)


def test_relationship_without_destination_fails_commit() -> None:
    """A relationship with no connection that is not auto-terminated fails the commit."""

    class Unconnected(TestRunner):
        def destinations(self, relationship: str) -> int:
            return 0

    runner = Unconnected(Dummy())
    runner.enqueue(b"x")
    session = runner.create_session()
    session.transfer(session.get(), SUCCESS)
    with pytest.raises(FlowFileHandlingError, match="does not have any destinations"):
        session.commit()
    assert runner.queue_size() == 1


def test_older_references_resolve_to_the_newest_version(runner: TestRunner) -> None:
    """Methods take any version of a FlowFile and act on the newest (records keyed by id)."""
    runner.enqueue(b"x")
    session = session_for(runner)
    first = session.get()
    session.put_attribute(first, "a", "1")
    session.put_attribute(first, "b", "2")  # an old reference
    session.transfer(first, SUCCESS)
    session.commit()
    out = runner.flowfiles_for("success")[0]
    assert out.attributes["a"] == "1"
    assert out.attributes["b"] == "2"


def test_transferred_flowfile_cannot_be_read_or_cloned(runner: TestRunner) -> None:
    """As NiFi's validateRecordState: read and clone refuse a FlowFile already transferred."""
    runner.enqueue(b"x")
    session = session_for(runner)
    flowfile = session.get()
    session.transfer(flowfile, SUCCESS)
    with pytest.raises(FlowFileHandlingError, match="already marked for transfer"):
        session.read_bytes(flowfile)
