"""Tests for flowcore/session/_uuids.py: uuids derived from inputs, the same on replay."""

from __future__ import annotations

import uuid

from flowcore.flowfile import uuid_in_sequence
from flowcore.session._uuids import derived_prefix
from flowcore.testing import TestRunner
from processors import MergeContent, SplitText


def _split_uuids(content: bytes, parent_uuid: str, attribute: str = "uuid") -> list[str]:
    """An attribute of SplitText's children of a parent with a given uuid (as a committed queue
    would hold)."""
    runner = TestRunner(SplitText(line_split_count=1))
    runner.enqueue(content)
    (parent,) = runner.input_queue.take_ready()
    runner.input_queue.put(
        parent.replace(
            uuid=parent_uuid, attributes=parent.attributes.updated({"uuid": parent_uuid})
        )
    )
    runner.run()
    return [f.attributes[attribute] for f in runner.flowfiles_for("splits")]


def test_a_replayed_split_makes_the_same_uuids() -> None:
    """Splitting the same parent again (a replayed attempt) gives the same child uuids."""
    parent = str(uuid.uuid4())
    first = _split_uuids(b"a\nb\nc\n", parent)
    assert first == _split_uuids(b"a\nb\nc\n", parent)
    assert len(set(first)) == 3


def test_children_of_different_parents_differ() -> None:
    """Another parent's children get other uuids."""
    assert not set(_split_uuids(b"a\nb\n", str(uuid.uuid4()))) & set(
        _split_uuids(b"a\nb\n", str(uuid.uuid4()))
    )


def test_a_replayed_split_gives_the_same_fragment_identifier() -> None:
    """fragment.identifier is derived like the uuids: one per parent, the same on a replay,
    another for another parent, and never one of the children's uuids."""
    parent = str(uuid.uuid4())
    first = _split_uuids(b"a\nb\n", parent, "fragment.identifier")
    assert len(set(first)) == 1
    assert uuid.UUID(first[0]).version == 4
    assert first == _split_uuids(b"a\nb\n", parent, "fragment.identifier")
    assert first[0] not in _split_uuids(b"a\nb\n", parent)
    assert first != _split_uuids(b"a\nb\n", str(uuid.uuid4()), "fragment.identifier")


def test_derived_uuids_are_version_4_and_consecutive() -> None:
    """Children of one parent share a prefix and count up (provenance stores them as a run)."""
    children = _split_uuids(b"a\nb\nc\nd\n", str(uuid.uuid4()))
    assert all(uuid.UUID(c).version == 4 for c in children)
    numbered = [uuid_in_sequence(c) for c in children]
    assert len({n[0] for n in numbered if n}) == 1
    assert [n[1] for n in numbered if n] == [0, 1, 2, 3]
    assert uuid.UUID(derived_prefix("x") + "00000000").variant == uuid.RFC_4122


def test_merge_content_default_name_is_derived_from_its_entries() -> None:
    """A bundle's default name is a number that depends on its entries, not on the clock."""

    def bundle_name(uuids: list[str]) -> str:
        runner = TestRunner(MergeContent(minimum_number_of_entries=2, maximum_number_of_entries=2))
        for value in uuids:
            runner.enqueue(b"x")
            *earlier, last = runner.input_queue.take_ready()
            for flowfile in [
                *earlier,
                last.replace(uuid=value, attributes=last.attributes.updated({"uuid": value})),
            ]:
                runner.input_queue.put(flowfile)
        runner.run()
        (merged,) = runner.flowfiles_for("merged")
        return merged.attributes["filename"]

    entries = [str(uuid.uuid4()), str(uuid.uuid4())]
    name = bundle_name(entries)
    assert name.isdigit()
    assert bundle_name(entries) == name
    assert bundle_name([str(uuid.uuid4()), str(uuid.uuid4())]) != name
