"""Tests for dataset values: mergeability rules and the manifest format."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowcore.datasets import Chunk, Manifest, Mergeability, MergeabilityKind


@given(created=st.integers(0, 10**12), now=st.integers(0, 10**12), delay=st.integers(0, 10**9))
def test_mergeability_eligibility(created: int, now: int, delay: int) -> None:
    """ALWAYS is always eligible, NEVER never, DELAY once the chunk is old enough."""
    assert Mergeability.ALWAYS.eligible(created, now)
    assert not Mergeability.NEVER.eligible(created, now)
    assert Mergeability.after(delay).eligible(created, now) == (now - created >= delay)


def test_mergeability_text_round_trips_and_bad_text_is_named() -> None:
    """never, always, delay:<ms> and delay:<NiFi period> parse; anything else is refused."""
    for value in (Mergeability.NEVER, Mergeability.ALWAYS, Mergeability.after(5_000)):
        assert Mergeability.from_text(value.to_text()) == value
    assert Mergeability.from_text("delay:2 hours") == Mergeability(
        MergeabilityKind.DELAY, 7_200_000
    )
    with pytest.raises(ValueError, match="'sometimes' is not one of"):
        Mergeability.from_text("sometimes")


def test_manifest_round_trips_with_keys_and_operations() -> None:
    """A manifest's bytes read back into the same value, demarcator and key ranges included."""
    manifest = Manifest(
        3,
        (
            Chunk("a", 10, 2, 5, Mergeability.after(60_000), "k1", "k9", operation="op"),
            Chunk("b", 4, 1, 6),
        ),
        ordered=True,
        demarcator=b"\n--\n",
        created_ms=7,
    )
    assert Manifest.from_bytes(manifest.to_bytes()) == manifest
    assert (manifest.size, manifest.records) == (14, 3)
