"""Tests for the rope policy: which zero-copy ropes are kept and which are copied."""

from __future__ import annotations

from flowcore.flowfile import ContentClaim, ResourceClaim, Rope
from flowcore.ropes import DEFAULT_ROPE_POLICY, RopePolicy

A = ResourceClaim("c", "1", "a")
B = ResourceClaim("c", "1", "b")
OUTSIDE = ResourceClaim.external("/data/big.log", "1000000:1:2")


def test_a_rope_using_most_of_what_it_pins_is_kept() -> None:
    """Half or more of the pinned repository bytes live: the rope stays."""
    rope = Rope((ContentClaim(A, 0, 60), ContentClaim(B, 0, 40)))
    assert DEFAULT_ROPE_POLICY.keeps(rope, {A: 100, B: 100}.get)
    assert not DEFAULT_ROPE_POLICY.keeps(rope, {A: 1_000, B: 1_000}.get)


def test_too_many_pieces_or_an_unknown_size_means_copying() -> None:
    """Past max_pieces, or when a pinned claim's size is unknown, the rope is flattened."""
    rope = Rope(tuple(ContentClaim(A, i * 2, 1) for i in range(5)))
    assert RopePolicy(max_pieces=5, min_live_fraction=0).keeps(rope, {A: 10}.get)
    assert not RopePolicy(max_pieces=4, min_live_fraction=0).keeps(rope, {A: 10}.get)
    assert not DEFAULT_ROPE_POLICY.keeps(rope, {}.get)


def test_outside_files_cost_the_repository_nothing() -> None:
    """Ranges of external files never count as pinned, however small a share they use."""
    rope = Rope((ContentClaim(OUTSIDE, 0, 10), ContentClaim(OUTSIDE, 500, 10)))
    assert DEFAULT_ROPE_POLICY.keeps(rope, {}.get)
    mixed = Rope((ContentClaim(OUTSIDE, 0, 10), ContentClaim(A, 0, 2)))
    assert DEFAULT_ROPE_POLICY.keeps(mixed, {A: 4}.get)
    assert not DEFAULT_ROPE_POLICY.keeps(mixed, {A: 5}.get)
