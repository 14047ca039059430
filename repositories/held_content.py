"""Committed content read after its commit, its claims held claimed meanwhile.

The driver decrements a claimant count once the FlowFile repository durably stops referencing a
claim, and a claim at zero is archived or destroyed by the next cleanup
(:mod:`repositories.content`). What reads a FlowFile's content after that commit, while the
FlowFile may already be gone (HandleHttpResponse's body, streamed to its client by a request
thread), holds the content instead of copying it: a hold is one more claimant of each of the
content's resource claims, taken while they are still claimed (before the commit's
decrements), and released once the reading is done. Holds live in memory only, like claimant
counts: after a crash the counts are rebuilt from the FlowFile repository, and the reader died
with the process anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flowcore.flowfile import Content
    from repositories.protocols import ContentRepository

__all__ = ["HeldContent"]


class HeldContent:
    """A :class:`~flowcore.processor.context.CommittedContent` over a content repository.

    Args:
        repository: the run's content repository (the driver's, or the test harness's).
    """

    def __init__(self, repository: ContentRepository) -> None:
        self.repository = repository

    def hold(self, content: Content) -> None:
        """One more claimant of each of *content*'s resource claims (a rope's, piece by piece)."""
        for claim in content.resource_claims:
            self.repository.increment_claimant_count(claim)

    def read(self, content: Content, offset: int, length: int) -> bytes:
        """*length* bytes of *content* from *offset*: that window is all that is read.

        Raises:
            ValueError: the window does not lie inside *content*.
            ContentNotFoundError, ContentCorruptionError: as the repository's reads.
        """
        window = content.slice(offset, length)
        return b"" if window is None else self.repository.read(window)

    def release(self, content: Content) -> None:
        """One claimant less of each resource claim; at zero the next cleanup takes it."""
        for claim in content.resource_claims:
            self.repository.decrement_claimant_count(claim)
