"""Frozen records the repositories exchange: segments, transactions, findings, paths, bulletins.

Besides queue segments, WAL transactions and check findings: the paths tasks write to, and the
bulletins ``flowcore status`` shows.

A *segment* is an immutable batch of FlowFile records in one queue (like NiFi's swap files, at
most :data:`MAX_SEGMENT_RECORDS`). Tasks write segments; the driver only keeps their summaries
and commits one :class:`Transaction` per stage run, naming the segments it consumed and produced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import attrs

from flowcore.flowfile import FlowFile, ResourceClaim

__all__ = [
    "MAX_SEGMENT_RECORDS",
    "Bulletin",
    "Finding",
    "RepositoryPaths",
    "SegmentSummary",
    "Transaction",
    "claim_counts_of",
]

MAX_SEGMENT_RECORDS = 10_000  # FlowFile records per segment (NiFi's swap file size)


def claim_counts_of(flowfiles: Iterable[FlowFile]) -> Counter[ResourceClaim]:
    """How many references *flowfiles* hold to each resource claim (a segment's claim counts).

    A rope holds one reference per piece.
    """
    return Counter(
        claim for f in flowfiles if f.content is not None for claim in f.content.resource_claims
    )


def _claim_counts(
    value: Mapping[ResourceClaim, int] | Iterable[tuple[ResourceClaim, int]],
) -> tuple[tuple[ResourceClaim, int], ...]:
    pairs = value.items() if isinstance(value, Mapping) else value
    return tuple(sorted(pairs, key=lambda pair: (pair[0].container, pair[0].section, pair[0].id)))


@attrs.frozen
class SegmentSummary:
    """What the driver knows about a segment without reading it.

    Attributes:
        segment_id: unique name of the segment (a file name in the durable repository).
        queue_id: the queue (connection) the segment belongs to.
        count: number of FlowFile records.
        bytes: total content size of those FlowFiles.
        claim_counts: each resource claim the records reference, with how many records do,
            sorted; the driver rebuilds claimant counts at start-up from these alone.
        min_id: smallest FlowFile id inside.
        max_id: largest FlowFile id inside.
        batched: the segment holds one FlowFile batch (FlowFiles alike but for their position,
            stored as one record): they cost a task bytes, not objects, so the scheduler
            counts them against ``batch_max_batched_flowfiles``.
    """

    segment_id: str
    queue_id: str
    count: int
    bytes: int
    claim_counts: tuple[tuple[ResourceClaim, int], ...] = attrs.field(
        default=(), converter=_claim_counts
    )
    min_id: int = 0
    max_id: int = 0
    batched: bool = False

    @property
    def resource_claims(self) -> frozenset[ResourceClaim]:
        """Every resource claim the records reference."""
        return frozenset(claim for claim, _ in self.claim_counts)


def _state_map(
    value: Mapping[str, Mapping[str, str] | None],
) -> Mapping[str, Mapping[str, str] | None]:
    return {k: (dict(v) if v is not None else None) for k, v in value.items()}


@attrs.frozen
class Transaction:
    """One atomic commit of a stage run to the FlowFile repository.

    Attributes:
        dequeued: segment ids consumed (they leave their queues).
        enqueued: new segments (they join their queues, in order).
        state: new processor state per component id; ``None`` clears a component's state.
        provenance_files: event files the provenance repository must index after commit.
        sink_commits: opaque commit messages of two-phase sinks, applied with the transaction.
    """

    dequeued: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    enqueued: tuple[SegmentSummary, ...] = attrs.field(default=(), converter=tuple)
    state: Mapping[str, Mapping[str, str] | None] = attrs.field(factory=dict, converter=_state_map)
    provenance_files: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    sink_commits: tuple[bytes, ...] = attrs.field(default=(), converter=tuple)


@attrs.frozen
class Finding:
    """One inconsistency found by a repository's ``check()``.

    Attributes:
        repository: ``content``, ``flowfile`` or ``provenance``.
        location: the file, claim, queue or event concerned.
        problem: what is wrong.
        fixed: whether ``check(fix=True)`` repaired it.
    """

    repository: str
    location: str
    problem: str
    fixed: bool = False

    def __str__(self) -> str:
        suffix = " (fixed)" if self.fixed else ""
        return f"[{self.repository}] {self.location}: {self.problem}{suffix}"


@attrs.frozen
class RepositoryPaths:
    """Where a task writes: paths every executor can reach.

    Attributes:
        content: the content repository's container directories.
        segments: the FlowFile repository's segment directory.
        events: the provenance repository's event-file directory.
        effects: where tasks stage sinks' external effects (see :mod:`repositories.effects`).
        repository_id: the repository's random id (see ``RepositorySet.repository_id``).
    """

    content: tuple[str, ...]
    segments: str
    events: str
    effects: str
    repository_id: str = ""


@attrs.frozen
class Bulletin:
    """A processor error shown by ``flowcore status`` (NiFi's bulletin board).

    Attributes:
        time: epoch ms.
        component_id: the component that failed.
        component_name: its name.
        level: ``ERROR`` or ``WARNING``.
        message: what happened, with the FlowFiles concerned.
    """

    time: int
    component_id: str
    component_name: str
    level: str
    message: str
