"""Tests for relationships."""

from __future__ import annotations

from flowcore.processor.relationship import FAILURE, ORIGINAL, SUCCESS, Relationship


def test_relationships_match_by_name() -> None:
    """Equality and hashing use the name only, so descriptions never split a relationship."""
    assert Relationship("success", "other words", auto_terminated=True) == SUCCESS
    assert len({SUCCESS, Relationship("success")}) == 1
    assert str(FAILURE) == "failure"
    assert ORIGINAL.name == "original"
