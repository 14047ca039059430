"""Tests for the FlowFile model: immutability, core attributes, claims, pickling."""

from __future__ import annotations

import pickle

import attrs
import pytest

from flowcore.flowfile import Attributes, ContentClaim, FlowFile, ResourceClaim


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
