"""Tests for the repository records."""

from __future__ import annotations

from flowcore.flowfile import ResourceClaim
from repositories.records import MAX_SEGMENT_RECORDS, Finding, SegmentSummary, Transaction


def test_records_are_frozen_values() -> None:
    """Summaries and transactions are hashable-by-content values with copies of their input."""
    claim = ResourceClaim("c", "1", "x")
    summary = SegmentSummary("s1", "q", 2, 10, {claim: 2}, 1, 2)
    assert summary.resource_claims == frozenset({claim})
    assert summary.claim_counts == ((claim, 2),)
    state = {"GetFile": {"k": "v"}}
    transaction = Transaction(enqueued=[summary], state=state)
    state["GetFile"]["k"] = "changed"
    assert transaction.state == {"GetFile": {"k": "v"}}
    assert MAX_SEGMENT_RECORDS == 10_000


def test_finding_reads_as_a_sentence() -> None:
    """A check finding names repository, location and problem."""
    finding = Finding("content", "c/1/x", "2 claimants but no data", fixed=True)
    assert str(finding) == "[content] c/1/x: 2 claimants but no data (fixed)"
