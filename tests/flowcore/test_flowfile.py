"""Tests for the FlowFile model: immutability, core attributes, claims, pickling."""

from __future__ import annotations

import itertools
import os
import pickle
import uuid

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.flowfile import (
    UUID_SEQUENCE_BITS,
    Attributes,
    ContentClaim,
    CountedUuids,
    FlowFile,
    ResourceClaim,
    Rope,
    _UuidSequence,
    content_of,
    new_uuid,
    new_uuids,
    sequence_uuid,
)


def test_create_sets_core_attributes() -> None:
    """A new FlowFile has filename (its uuid), path './' and uuid."""
    flowfile = FlowFile.create(1, 1000)
    assert flowfile.attributes["uuid"] == flowfile.uuid
    assert flowfile.attributes["filename"] == flowfile.uuid
    assert flowfile.attributes["path"] == "./"
    assert flowfile.lineage_start_date == flowfile.entry_date == 1000


def test_flowfile_is_frozen_and_changes_make_new_values() -> None:
    """Attributes cannot be changed in place; with_attributes returns a new value."""
    flowfile = FlowFile.create(1, 0, {"a": "1"})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        flowfile.size = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        flowfile.attributes["a"] = "2"  # type: ignore[index]
    changed = flowfile.with_attributes(a="2")
    assert flowfile.attributes["a"] == "1"
    assert changed.attributes["a"] == "2"


def test_uuid_cannot_be_changed_and_core_attributes_cannot_be_removed() -> None:
    """with_attributes ignores uuid; without_attributes keeps filename, path and uuid."""
    flowfile = FlowFile.create(1, 0, {"x": "y"})
    assert flowfile.with_attributes(uuid="other").uuid == flowfile.uuid
    stripped = flowfile.without_attributes("filename", "path", "uuid", "x")
    assert set(stripped.attributes) == {"filename", "path", "uuid"}


def test_invalid_flowfiles_are_rejected() -> None:
    """A FlowFile without core attributes or with a mismatched uuid attribute is refused."""
    with pytest.raises(ValueError, match="core attributes"):
        FlowFile(id=1, uuid="u", attributes={"uuid": "u"})
    with pytest.raises(ValueError, match="must equal"):
        FlowFile(id=1, uuid="u", attributes={"uuid": "v", "filename": "f", "path": "p"})


def test_attribute_values_must_be_strings() -> None:
    """Non-string attribute values are refused with a hint."""
    with pytest.raises(TypeError, match="str"):
        Attributes({"a": 1})  # type: ignore[dict-item]


def test_content_claim_slices() -> None:
    """Slicing a claim offsets into the same resource claim; bad ranges are refused."""
    claim = ContentClaim(ResourceClaim("c", "1", "id"), 10, 100)
    part = claim.slice(5, 20)
    assert (part.offset, part.length, part.resource_claim) == (15, 20, claim.resource_claim)
    with pytest.raises(ValueError, match="inside the claim"):
        claim.slice(90, 20)


def test_flowfiles_pickle_and_hash() -> None:
    """FlowFiles survive pickling (Spark ships them) and are hashable values."""
    claim = ContentClaim(ResourceClaim("c", "1", "id"), 0, 3)
    flowfile = FlowFile.create(1, 0, {"k": "v"}, content=claim)
    copy = pickle.loads(pickle.dumps(flowfile))
    assert copy == flowfile
    assert hash(copy) == hash(flowfile)
    assert copy.size == 3


def test_penalty() -> None:
    """A FlowFile is penalized until its penalty expiration."""
    flowfile = attrs.evolve(FlowFile.create(1, 0), penalty_expiration=500)
    assert flowfile.is_penalized(499)
    assert not flowfile.is_penalized(500)


# --- ropes --------------------------------------------------------------------------------------

_FILES = {name: bytes(range(i, i + 40)) for i, name in enumerate("abc")}
_PIECES = st.lists(
    st.tuples(st.sampled_from("abc"), st.integers(0, 39), st.integers(0, 20)).map(
        lambda t: ContentClaim(ResourceClaim("c", "1", t[0]), t[1], min(t[2], 40 - t[1]))
    ),
    max_size=8,
)


def _bytes_of(content: ContentClaim | Rope | None) -> bytes:
    if content is None:
        return b""
    return b"".join(
        _FILES[p.resource_claim.id][p.offset : p.offset + p.length] for p in content.pieces
    )


@given(pieces=_PIECES, data=st.data())
def test_a_rope_reads_as_its_pieces_and_slices_like_bytes(pieces, data) -> None:  # type: ignore[no-untyped-def]
    """content_of joins touching ranges without changing the bytes; any slice of a rope holds
    exactly the bytes at that range."""
    expected = b"".join(_bytes_of(p) for p in pieces)
    content = content_of(pieces)
    assert _bytes_of(content) == expected
    if content is None:
        assert expected == b""
        return
    assert content.length == len(expected)
    offset = data.draw(st.integers(0, content.length))
    length = data.draw(st.integers(0, content.length - offset))
    assert _bytes_of(content.slice(offset, length)) == expected[offset : offset + length]


def test_touching_ranges_join_and_a_rope_needs_two_pieces() -> None:
    """Consecutive ranges of one claim become one claim; a rope of fewer pieces is refused."""
    claim = ResourceClaim("c", "1", "a")
    joined = content_of([ContentClaim(claim, 0, 5), ContentClaim(claim, 5, 3)])
    assert joined == ContentClaim(claim, 0, 8)
    assert content_of([ContentClaim(claim, 0, 0)]) is None
    with pytest.raises(ValueError, match="two or more non-empty pieces"):
        Rope((ContentClaim(claim, 0, 5),))
    rope = Rope((ContentClaim(claim, 0, 5), ContentClaim(claim, 9, 1)))
    assert rope.length == 6
    assert rope.resource_claims == (claim, claim)
    assert pickle.loads(pickle.dumps(rope)) == rope
    assert str(rope) == "c/1/a[0:5] + c/1/a[9:10]"


def test_new_uuid_is_a_random_version_4_uuid() -> None:
    """FlowFile uuids parse as RFC 4122 version-4 UUIDs, print back the same, and differ."""
    made = [new_uuid() for _ in range(2_000)]
    for text in made:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)
    assert len(set(made)) == len(made)


def test_new_uuids_of_one_process_count_up_under_one_prefix() -> None:
    """Neighbouring uuids differ only in their last 8 hex digits, one apart (provenance runs)."""
    first, second = new_uuid(), new_uuid()
    assert first[:28] == second[:28]
    assert int(second[28:], 16) == int(first[28:], 16) + 1


def test_a_forked_process_and_an_exhausted_counter_start_a_new_prefix() -> None:
    """Spark forks its Python workers: each must draw a prefix of its own."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports its next uuid and leaves at once
        os.write(writer, new_uuid().encode())
        os._exit(0)
    os.close(writer)
    os.waitpid(pid, 0)
    child = os.read(reader, 64).decode()
    os.close(reader)
    assert child[:28] != new_uuid()[:28]
    sequence = _UuidSequence()
    prefix = sequence()[:28]
    sequence._state = (prefix, itertools.count(1 << UUID_SEQUENCE_BITS))
    after = sequence()
    assert after[:28] != prefix
    assert after[28:] == "00000000"


def test_reserved_uuids_are_consecutive_under_a_prefix_of_their_own() -> None:
    """A batch's uuids count up from a fresh prefix that the one-by-one uuids never use."""
    start, first = new_uuids(3)
    made = [f"{start}{first + i:08x}" for i in range(3)]
    for text in made:
        assert uuid.UUID(text).version == 4
    assert new_uuid()[:28] != start
    assert new_uuids(1)[0] != start


def test_counted_uuids_read_like_the_tuple_of_their_uuids() -> None:
    """Runs join when they touch; length, items, slices, equality and hash are the tuple's."""
    prefix = new_uuid()[:28]
    counted = CountedUuids([(prefix, 5, 2), (prefix, 7, 1), ("x" * 28, 0, 0), (prefix, 1, 1)])
    spelled = tuple(sequence_uuid(prefix, n) for n in (5, 6, 7, 1))
    assert counted.runs == ((prefix, 5, 3, 1), (prefix, 1, 1, 1))
    assert len(counted) == 4
    assert tuple(counted) == spelled
    assert counted == spelled
    assert spelled == counted
    assert counted == list(spelled)
    assert hash(counted) == hash(spelled)
    assert counted[0] == spelled[0]
    assert counted[-1] == spelled[-1]
    assert counted[1:3] == spelled[1:3]
    with pytest.raises(IndexError):
        counted[4]
    assert counted != spelled[:3]


def test_counted_uuids_holding_the_same_uuids_are_equal_however_their_runs_were_made() -> None:
    """Runs joined one way or another (a stride found, or single uuids) hold the same uuids:
    equal, with one hash; membership follows the steps."""
    prefix = new_uuid()[:28]
    strided = CountedUuids([(prefix, 0, 1), (prefix, 2, 3)])
    single = CountedUuids([(prefix, 0, 1), (prefix, 2, 1), (prefix, 3, 1), (prefix, 4, 1)])
    assert strided.runs != single.runs
    assert strided == single
    assert hash(strided) == hash(single)
    every_eighth = CountedUuids([(prefix, 3, 5, 8)])
    assert sequence_uuid(prefix, 19) in every_eighth
    assert sequence_uuid(prefix, 20) not in every_eighth
    assert list(every_eighth) == [sequence_uuid(prefix, n) for n in (3, 11, 19, 27, 35)]
