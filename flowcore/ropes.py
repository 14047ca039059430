"""When a zero-copy rope is worth keeping, and when it should be rewritten as one claim.

A rope costs a little at every read (one range per piece) and keeps every resource claim it
points into alive, even when most of such a claim's bytes are otherwise dead. The policy keeps
a rope only while both costs stay small:

* at most ``max_pieces`` pieces after touching ranges are joined (default 1,000);
* its bytes are at least ``min_live_fraction`` (default 0.5) of the bytes of the repository
  claims it pins. External claims (ranges of the original input files, from FileSplitter) are
  not counted: the repository does not own them, so pinning them costs it nothing.

Anything else is flattened when it is made: the merge copies, as it would without Zero Copy.
Writing a rope to a sink (PutFile) streams its pieces in order, so outputs are always flat.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from flowcore.flowfile import ResourceClaim, Rope

__all__ = ["DEFAULT_ROPE_POLICY", "RopePolicy"]


@attrs.frozen
class RopePolicy:
    """Limits on the ropes zero-copy merges may build.

    Attributes:
        max_pieces: the most pieces a kept rope may have.
        min_live_fraction: the least share of its pinned repository bytes a kept rope must use.
    """

    max_pieces: int = attrs.field(default=1_000, validator=attrs.validators.ge(2))
    min_live_fraction: float = attrs.field(
        default=0.5, validator=[attrs.validators.ge(0.0), attrs.validators.le(1.0)]
    )

    def keeps(self, rope: Rope, claim_size: Callable[[ResourceClaim], int | None]) -> bool:
        """Whether *rope* may stay a rope, given each resource claim's size (None: unknown)."""
        if len(rope.pieces) > self.max_pieces:
            return False
        live = 0
        for piece in rope.pieces:
            if not piece.resource_claim.is_external:
                live += piece.length
        pinned = 0
        for claim in set(rope.resource_claims):
            if claim.is_external:
                continue
            size = claim_size(claim)
            if size is None:
                return False  # cannot tell how much it pins: do not risk it
            pinned += size
        return pinned == 0 or live >= self.min_live_fraction * pinned


DEFAULT_ROPE_POLICY = RopePolicy()
