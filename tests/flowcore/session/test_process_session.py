"""Tests for ProcessSession: NiFi's contract, errors, content, state and provenance at commit."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import flowcore.session._content as session_content
from flowcore import FlowFile, Processor, ProvenanceEventType, Relationship
from flowcore.errors import (
    ContentChangedError,
    FlowFileAccessError,
    FlowFileHandlingError,
    RelationshipError,
)
from flowcore.flowfile import ContentClaim, Rope
from flowcore.session._content import RangeGather
from flowcore.session.process_session import FlowFileFilterResult, ProcessSession
from flowcore.testing import TestRunner
from repositories.content import FileContentRepository

E = ProvenanceEventType
SUCCESS = Relationship("success")
FAILURE = Relationship("failure")


class Dummy(Processor):
    """A processor that only declares relationships; tests drive its session directly."""

    relationships = (SUCCESS, FAILURE)


class FanOutRunner(TestRunner):
    """A harness whose 'success' has two connections and whose 'failure' is auto-terminated."""

    def destinations(self, relationship: str) -> int:
        return {"success": 2, "failure": 0}.get(relationship, 0)

    def is_auto_terminated(self, relationship: str) -> bool:
        return relationship == "failure"


@pytest.fixture
def runner() -> TestRunner:
    return TestRunner(Dummy())


def session_for(runner: TestRunner) -> ProcessSession:
    return ProcessSession(runner)


def types(runner: TestRunner) -> list[E]:
    return [e.event_type for e in runner.provenance_events]


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


# --- the two classic errors ------------------------------------------------------------------


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
    session = ProcessSession(runner)
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


# --- content -------------------------------------------------------------------------------


def test_write_is_copy_on_write(runner: TestRunner) -> None:
    """write() makes a new claim and never touches the old content; CONTENT_MODIFIED."""
    original = runner.enqueue(b"old")
    session = session_for(runner)
    flowfile = session.get()
    written = session.write(flowfile, b"new content")
    assert written.content != flowfile.content
    assert written.size == 11
    assert runner.content.read(original.flowfile.content) == b"old"
    session.transfer(written, SUCCESS)
    session.commit()
    assert types(runner) == [E.CONTENT_MODIFIED]
    event = runner.provenance_events[0]
    assert event.previous_content_claim == original.flowfile.content
    assert event.content_claim == written.content
    assert event.previous_file_size == 3


@pytest.mark.parametrize(
    "source",
    [b"abc", "abc", [b"a", b"bc"], lambda out: out.write(b"abc")],
    ids=["bytes", "str", "chunks", "callback"],
)
def test_write_accepts_bytes_text_chunks_and_callbacks(runner: TestRunner, source: object) -> None:
    """write() takes bytes, UTF-8 text, an iterable of chunks, or a stream callback."""
    runner.enqueue(b"")
    session = session_for(runner)
    flowfile = session.write(session.get(), source)  # type: ignore[arg-type]
    assert session.read_bytes(flowfile) == b"abc"


def test_empty_write_gives_no_claim(runner: TestRunner) -> None:
    """Writing nothing leaves a FlowFile with no content claim and size 0."""
    runner.enqueue(b"abc")
    session = session_for(runner)
    flowfile = session.write(session.get(), b"")
    assert flowfile.content is None
    assert flowfile.size == 0


def test_rewrite_append_and_merge(runner: TestRunner) -> None:
    """rewrite streams old to new; append adds; merge concatenates with delimiters."""
    runner.enqueue(b"ab")
    runner.enqueue(b"cd")
    session = session_for(runner)
    first, second = session.get(2)
    first = session.rewrite(first, lambda src, out: out.write(src.read().upper()))
    first = session.append(first, b"!")
    assert session.read_bytes(first) == b"AB!"
    bundle = session.create([first, second])
    bundle = session.merge([first, second], bundle, header=b"[", footer=b"]", demarcator=b",")
    assert session.read_bytes(bundle) == b"[AB!,cd]"
    session.transfer(bundle, SUCCESS)
    session.remove([first, second])
    session.commit()


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 9)), min_size=1, max_size=30))
def test_many_small_ranges_merge_from_windows_and_gathers(pieces: list[tuple[int, int]]) -> None:
    """Small ranges of one claim, given as claims or as a RangeGather, merge to their bytes."""
    runner = TestRunner(Dummy())
    data = bytes(range(256)) * 2
    runner.enqueue(data)
    session = session_for(runner)
    source = session.get()
    assert isinstance(source.content, ContentClaim)
    base, offsets, sizes, position = source.content.offset, [], [], 0
    for gap, size in pieces:  # increasing ranges, apart or touching
        position += gap
        offsets.append(position)
        sizes.append(size)
        position += size
    offsets = [o % 400 for o in offsets] if position > 500 else offsets
    expected = b"".join(data[o : o + n] for o, n in zip(offsets, sizes, strict=True))
    claims = [
        ContentClaim(source.content.resource_claim, base + o, n)
        for o, n in zip(offsets, sizes, strict=True)
        if n
    ]
    merged = session.merge_contents(claims, session.create(source))
    assert session.read_bytes(merged) == expected
    if position <= 500:
        for between in (b"", b"|"):
            gather = RangeGather(
                source.content.resource_claim, base + np.array(offsets), np.array(sizes), between
            )
            gathered = session.merge_contents([gather], session.create(source))
            assert session.read_bytes(gathered) == between.join(
                data[o : o + n] for o, n in zip(offsets, sizes, strict=True)
            )
            session.remove(gathered)
    session.remove([merged, source])
    session.commit()


def test_a_range_larger_than_the_window_is_copied_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge of ranges each larger than the gather window copies them (it once looped)."""
    monkeypatch.setattr(session_content, "GATHER_WINDOW", 4)
    runner = TestRunner(Dummy())
    runner.enqueue(b"abcdefghijklmnop")
    session = session_for(runner)
    source = session.get()
    claim = source.content
    assert isinstance(claim, ContentClaim)
    ranges = [ContentClaim(claim.resource_claim, claim.offset + o, 6) for o in (0, 8)]
    gather = RangeGather(claim.resource_claim, claim.offset + np.array([0, 8]), np.array([6, 6]))
    for parts in (ranges, [gather]):
        merged = session.merge_contents(parts, session.create(source))
        assert session.read_bytes(merged) == b"abcdefijklmn"
        session.remove(merged)
    session.remove(source)
    session.commit()


def test_damage_between_the_ranges_does_not_fail_their_merge() -> None:
    """A window around small ranges that runs into damaged bytes is not needed: each range is
    then read on its own, and only a damaged range would fail."""
    runner = TestRunner(Dummy())
    runner.enqueue(b"a" * 300_000)
    session = session_for(runner)
    source = session.get()
    claim = source.content
    assert isinstance(claim, ContentClaim)
    ranges = [ContentClaim(claim.resource_claim, claim.offset + o, 10) for o in (0, 50, 200_000)]
    real_window = session._content._window
    session._content._window = lambda window: None  # as when the window's middle is damaged
    merged = session.merge_contents(ranges, session.create(source))
    assert session.read_bytes(merged) == b"a" * 30
    session._content._window = real_window
    session.remove([merged, source])
    session.commit()


def test_a_zero_copy_merge_is_a_rope_that_reads_the_same(runner: TestRunner) -> None:
    """merge(zero_copy=True) points at the sources' ranges, writes each delimiter once, and
    reads, streams and slices like the copied merge."""
    for data in (b"alpha", b"beta", b"gamma"):
        runner.enqueue(data)
    session = session_for(runner)
    sources = session.get(3)
    bundle = session.merge(sources, session.create(sources), b"<", b">", b"|", zero_copy=True)
    assert isinstance(bundle.content, Rope)
    assert session.read_bytes(bundle) == b"<alpha|beta|gamma>"
    with session.read(bundle) as stream:
        assert stream.read(3) == b"<al"
        assert stream.read() == b"pha|beta|gamma>"
    source_claims = {c for f in sources for c in f.content.resource_claims}
    written = set(bundle.content.resource_claims) - source_claims
    assert len(written) == 1  # the three delimiters share one small claim file
    split = session.clone(bundle, 4, 7)
    assert session.read_bytes(split) == b"ha|beta"
    assert set(split.content.resource_claims) <= set(bundle.content.resource_claims)
    session.transfer([bundle, split], SUCCESS)
    session.remove(sources)
    session.commit()


def test_a_rope_the_policy_refuses_is_copied_instead(runner: TestRunner) -> None:
    """Inputs using a small share of a big claim file would pin dead bytes: the merge copies."""
    runner.enqueue(b"x" * 1000)
    session = session_for(runner)
    (big,) = session.get(1)
    pieces = [session.clone(big, i * 100, 3) for i in range(3)]
    bundle = session.merge(pieces, session.create(pieces), zero_copy=True)
    assert isinstance(bundle.content, ContentClaim)
    assert bundle.content.resource_claim != big.content.resource_claim
    assert session.read_bytes(bundle) == b"x" * 9
    session.transfer([big, *pieces, bundle], SUCCESS)
    session.commit()


def test_read_stream_blocks_other_use_until_closed(runner: TestRunner) -> None:
    """While a read stream is open the FlowFile cannot be transferred; after, it can."""
    runner.enqueue(b"line1\nline2\n")
    session = session_for(runner)
    flowfile = session.get()
    with session.read(flowfile) as stream:
        assert list(stream) == [b"line1\n", b"line2\n"]
        with pytest.raises(FlowFileAccessError, match="open stream"):
            session.transfer(flowfile, SUCCESS)
    with pytest.raises(FlowFileAccessError, match="closed"):
        stream.read()
    session.transfer(flowfile, SUCCESS)
    session.commit()


def test_import_and_export(runner: TestRunner, tmp_path) -> None:
    """import_from copies a file (deleting it after commit when asked); export_to writes one."""
    source = tmp_path / "in.txt"
    source.write_bytes(b"from disk")
    session = session_for(runner)
    flowfile = session.import_from(source, session.create(), keep_source=False)
    assert source.exists()
    session.export_to(flowfile, tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_bytes() == b"from disk"
    session.transfer(flowfile, SUCCESS)
    session.commit()
    assert not source.exists()


# --- routing --------------------------------------------------------------------------------


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
    session = ProcessSession(runner)
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
    session = ProcessSession(runner)
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


def test_transferred_flowfile_cannot_be_read_or_cloned(runner: TestRunner) -> None:
    """As NiFi's validateRecordState: read and clone refuse a FlowFile already transferred."""
    runner.enqueue(b"x")
    session = session_for(runner)
    flowfile = session.get()
    session.transfer(flowfile, SUCCESS)
    with pytest.raises(FlowFileHandlingError, match="already marked for transfer"):
        session.read_bytes(flowfile)


# --- spilling ----------------------------------------------------------------------------------


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


def test_import_by_reference_points_at_a_range_without_copying(
    runner: TestRunner, tmp_path: Path
) -> None:
    """The content is a range of the file itself; a range past its end or a stale
    fingerprint is refused with the file named."""
    path = tmp_path / "data.txt"
    path.write_bytes(b"hello world")
    session = session_for(runner)
    flowfile = session.import_by_reference(path, session.create(), offset=6, length=5)
    assert flowfile.size == 5
    assert flowfile.content is not None
    assert flowfile.content.resource_claim.is_external
    assert session.read_bytes(flowfile) == b"world"
    with pytest.raises(ValueError, match="must lie inside the file"):
        session.import_by_reference(path, flowfile, offset=8, length=5)
    with pytest.raises(ContentChangedError, match=str(path)):
        session.import_by_reference(path, flowfile, fingerprint="1:2:3")
    session.transfer(flowfile, SUCCESS)
    session.commit()


# --- damaged content ------------------------------------------------------------------------


class CatchAll(Processor):
    """Reads its FlowFile one way and routes it to failure itself when reading fails."""

    relationships = (SUCCESS, FAILURE)

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def on_trigger(self, context, session):  # type: ignore[no-untyped-def]
        flowfile = session.get()
        try:
            if self.how == "read_bytes":
                session.read_bytes(flowfile)
            elif self.how == "stream":
                with session.read(flowfile) as stream:
                    while stream.read(1000):
                        pass
            elif self.how == "rewrite":
                flowfile = session.rewrite(flowfile, lambda i, o: o.write(i.read()))
            elif self.how == "append":
                flowfile = session.append(flowfile, b"more")
            else:
                merged = session.create([flowfile])
                try:
                    session.merge([flowfile], merged)
                finally:
                    session.remove(merged)
        except Exception:
            session.transfer(flowfile, FAILURE)
            return
        session.transfer(flowfile, SUCCESS)


class FileRunner(TestRunner):
    """The harness over a real file content repository, to damage its claim files."""

    __test__ = False

    def __init__(self, processor: Processor, root: Path) -> None:
        super().__init__(processor)
        self.content = FileContentRepository(root)  # type: ignore[assignment]

    def enqueue_written(self, contents: list[bytes]) -> list[FlowFile]:
        writer = self.content.writer("test")
        flowfiles = []
        for data in contents:
            stream = writer.open_stream()
            stream.write(data)
            flowfile = FlowFile.create(self.next_flowfile_id(), self.now(), {"filename": "f"})
            flowfiles.append(flowfile.with_content(stream.close()))
        writer.close()
        for flowfile in flowfiles:
            self.content.increment_claimant_count(flowfile.content.resource_claim)
            self.input_queue.put(flowfile)
        return flowfiles


@pytest.mark.parametrize("how", ["read_bytes", "stream", "rewrite", "append", "merge"])
def test_a_processor_failing_damaged_content_itself_sets_the_reason(
    tmp_path: Path, how: str
) -> None:
    """Damaged content a processor routes to failure itself carries content.failure.reason."""
    runner = FileRunner(CatchAll(how), tmp_path)
    damaged, _sound = runner.enqueue_written([b"x" * 70_000, b"y" * 70_000])
    path = runner.content.path_of(damaged.content.resource_claim)
    raw = bytearray(path.read_bytes())
    raw[10] ^= 1  # block 0: the first FlowFile only
    path.write_bytes(bytes(raw))
    runner.run(2)
    (failed,) = runner.flowfiles_for("failure")
    reason = failed.attributes["content.failure.reason"]
    assert str(damaged.content.resource_claim) in reason
    assert "block 0 (bytes 0 to 65535)" in reason
    (passed,) = runner.flowfiles_for("success")
    assert "content.failure.reason" not in passed.attributes


def test_a_failure_for_another_reason_gets_no_content_reason(tmp_path: Path) -> None:
    """Only a read that found damage marks the FlowFile; other failures leave no reason."""
    path = tmp_path / "outside.txt"
    path.write_bytes(b"hello")
    runner = TestRunner(CatchAll("read_bytes"))
    runner.enqueue(b"fine")
    runner.run()
    assert runner.flowfiles_for("success")
    session = session_for(runner)
    flowfile = session.create()
    flowfile = session.import_by_reference(path, flowfile)
    path.write_bytes(b"changed!")
    with pytest.raises(ContentChangedError):
        session.read_bytes(flowfile)
    session.transfer(flowfile, FAILURE)
    assert (
        "changed after it was listed"
        in session.commit().outputs[0].flowfile.attributes["content.failure.reason"]
    )
