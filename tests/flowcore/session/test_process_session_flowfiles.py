"""Tests for ProcessSession's FlowFiles: getting, creating (FORK, JOIN, CREATE), cloning,
and attributes, whose earlier values no operation changes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore import FlowFile
from flowcore.errors import FlowFileHandlingError
from flowcore.session.process_session import FlowFileFilterResult
from flowcore.testing import TestRunner
from tests.flowcore.session._session_runner import FAILURE, SUCCESS, Dummy, E, session_for, types


# a Dummy's harness; why not in a conftest.py: see _session_runner.py
@pytest.fixture
def runner() -> TestRunner:
    return TestRunner(Dummy())


# --- getting -------------------------------------------------------------------------------


def test_get_returns_none_when_empty_and_batches(runner: TestRunner) -> None:
    """get() gives one FlowFile or None; get(n) up to n in queue order."""
    session = session_for(runner)
    assert session.get() is None
    for i in range(5):
        runner.enqueue(str(i))
    batch = session.get(3)
    assert [session.read_text(f) for f in batch] == ["0", "1", "2"]
    assert runner.queue_size() == 2
    session.transfer(batch, SUCCESS)
    session.commit()
    assert [f.content for f in runner.flowfiles_for("success")] == [b"0", b"1", b"2"]


def test_get_with_filter(runner: TestRunner) -> None:
    """A filter accepts, rejects and stops the scan as NiFi's FlowFileFilter does."""
    for i in range(6):
        runner.enqueue(b"", {"n": str(i)})

    def evens_until_four(flowfile: FlowFile) -> FlowFileFilterResult:
        n = int(flowfile.attributes["n"])
        if n == 4:
            return FlowFileFilterResult.ACCEPT_AND_TERMINATE
        return (
            FlowFileFilterResult.ACCEPT_AND_CONTINUE
            if n % 2 == 0
            else FlowFileFilterResult.REJECT_AND_CONTINUE
        )

    session = session_for(runner)
    taken = session.get(evens_until_four)
    assert [f.attributes["n"] for f in taken] == ["0", "2", "4"]
    assert [f.attributes["n"] for f in runner.queued_flowfiles] == ["1", "3", "5"]


# --- attributes ------------------------------------------------------------------------------


def test_uuid_is_ignored_and_core_attributes_survive_removal(runner: TestRunner) -> None:
    """Setting uuid is silently ignored; removing uuid, filename or path is ignored."""
    runner.enqueue(b"x", {"filename": "f.txt", "drop.me": "1", "drop.too": "2", "keep": "3"})
    session = session_for(runner)
    flowfile = session.get()
    flowfile = session.put_attribute(flowfile, "uuid", "forged")
    flowfile = session.remove_all_attributes(flowfile, ["uuid", "filename", "path"])
    flowfile = session.remove_all_attributes(flowfile, re.compile(r"drop\..*"))
    session.transfer(flowfile, SUCCESS)
    session.commit()
    out = runner.flowfiles_for("success")[0]
    assert out.attributes["uuid"] == out.uuid != "forged"
    assert out.attributes["filename"] == "f.txt"
    assert out.attributes["path"] == "target"
    assert "drop.me" not in out.attributes
    assert out.attributes["keep"] == "3"


def test_attribute_values_must_be_strings(runner: TestRunner) -> None:
    """A non-string attribute value is refused with a hint."""
    runner.enqueue(b"x")
    session = session_for(runner)
    with pytest.raises(TypeError, match="str"):
        session.put_attribute(session.get(), "n", 5)  # type: ignore[arg-type]


# --- creating, cloning -----------------------------------------------------------------------


def test_create_from_parent_inherits_and_forks(runner: TestRunner) -> None:
    """A child copies attributes except uuid, alternate.identifier and discard.reason; FORK."""
    runner.enqueue(b"x", {"a": "1", "alternate.identifier": "alt", "discard.reason": "r"})
    session = session_for(runner)
    parent = session.get()
    child = session.create(parent)
    assert child.attributes["a"] == "1"
    assert child.uuid != parent.uuid
    assert "alternate.identifier" not in child.attributes
    assert "discard.reason" not in child.attributes
    assert child.lineage_start_date == parent.lineage_start_date
    session.transfer(child, SUCCESS)
    session.transfer(parent, FAILURE)
    session.commit()
    fork = runner.provenance_events[0]
    assert fork.event_type is E.FORK
    assert fork.flowfile_uuid == parent.uuid
    assert fork.child_uuids == (child.uuid,)
    assert types(runner) == [E.FORK]


def test_create_from_parents_joins_common_attributes(runner: TestRunner) -> None:
    """A child of several parents keeps equal shared attributes and the oldest lineage; JOIN."""
    runner.enqueue(b"a", {"same": "1", "differs": "x", "only.a": "1"})
    runner.advance_time(5)
    runner.enqueue(b"b", {"same": "1", "differs": "y"})
    session = session_for(runner)
    parents = session.get(2)
    child = session.create(parents)
    assert child.attributes["same"] == "1"
    assert "differs" not in child.attributes
    assert "only.a" not in child.attributes
    assert child.lineage_start_date == parents[0].lineage_start_date
    session.transfer(child, SUCCESS)
    session.remove(parents)
    session.commit()
    assert types(runner) == [E.JOIN, E.DROP, E.DROP]
    join = runner.provenance_events[0]
    assert set(join.parent_uuids) == {p.uuid for p in parents}
    assert join.child_uuids == (child.uuid,)


def test_create_without_parent_emits_create(runner: TestRunner) -> None:
    """A FlowFile created from nothing gets filename=uuid, path ./ and a CREATE event."""
    session = session_for(runner)
    flowfile = session.create()
    assert flowfile.attributes["filename"] == flowfile.uuid
    assert flowfile.attributes["path"] == "./"
    session.transfer(session.write(flowfile, b"new"), SUCCESS)
    session.commit()
    assert types(runner) == [E.CREATE]
    assert runner.provenance_events[0].source_queue_identifier is None


def test_full_clone_emits_clone_and_partial_clone_forks(runner: TestRunner) -> None:
    """clone() shares content (CLONE); clone(offset, size) is a zero-copy slice (FORK)."""
    runner.enqueue(b"hello world")
    session = session_for(runner)
    original = session.get()
    full = session.clone(original)
    part = session.clone(original, 6, 5)
    assert full.content == original.content
    assert part.content.resource_claim == original.content.resource_claim
    assert part.content.offset == original.content.offset + 6
    assert part.size == 5
    assert session.read_bytes(part) == b"world"
    session.transfer([original, full, part], SUCCESS)
    session.commit()
    assert types(runner) == [E.FORK, E.CLONE]
    assert runner.flowfiles_for("success")[2].content == b"world"


def test_clone_out_of_range_is_refused(runner: TestRunner) -> None:
    """A partial clone past the end of the content raises, naming the sizes."""
    runner.enqueue(b"abc")
    session = session_for(runner)
    flowfile = session.get()
    with pytest.raises(FlowFileHandlingError, match="inside its 3 bytes"):
        session.clone(flowfile, 2, 5)


# --- property: attribute immutability under any operations -----------------------------------

operation = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(["a", "b", "uuid", "filename"]), st.text(max_size=3)),
    st.tuples(st.just("remove"), st.sampled_from(["a", "b", "uuid", "path", "x"]), st.none()),
    st.tuples(st.just("write"), st.none(), st.binary(max_size=4)),
    st.tuples(st.just("clone"), st.none(), st.none()),
)


@given(
    st.lists(operation, max_size=12),
    st.dictionaries(st.sampled_from(["a", "b", "x"]), st.text(max_size=3)),
)
def test_session_operations_never_change_earlier_values(ops: list, start: dict[str, str]) -> None:
    """Any sequence of operations leaves every earlier FlowFile value and the input untouched."""
    runner = TestRunner(Dummy())
    queued = runner.enqueue(b"seed", start)
    session = runner.create_session()
    current = session.get()
    seen: list[tuple[FlowFile, dict[str, str]]] = [(current, dict(current.attributes))]
    model = dict(current.attributes)
    clones = []
    for kind, key, value in ops:
        if kind == "put":
            current = session.put_attribute(current, key, value)
            if key != "uuid":
                model[key] = value
        elif kind == "remove":
            current = session.remove_attribute(current, key)
            if key not in ("uuid", "filename", "path"):
                model.pop(key, None)
        elif kind == "write":
            current = session.write(current, value)
        else:
            clones.append(session.clone(current))
        seen.append((current, dict(current.attributes)))
        assert dict(current.attributes) == model
    for flowfile, snapshot in seen:
        assert dict(flowfile.attributes) == snapshot
    assert queued.flowfile.attributes == {
        **start,
        **{k: queued.attributes[k] for k in ("filename", "path", "uuid")},
    }
    session.transfer([current, *clones], SUCCESS)
    session.commit()
    assert dict(runner.flowfiles_for("success")[0].attributes) == model
