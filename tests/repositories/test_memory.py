"""Tests for the in-memory repositories: claims and counts, provenance queries, transactions."""

from __future__ import annotations

import pytest

from flowcore.errors import ContentNotFoundError, FlowFileAccessError
from flowcore.provenance_events import ProvenanceEvent, ProvenanceEventType
from repositories.memory import (
    MemoryContentRepository,
    MemoryProvenanceRepository,
)
from repositories.protocols import ContentRepository, ProvenanceRepository


def test_implementations_satisfy_the_protocols() -> None:
    """Each in-memory repository implements its protocol."""
    assert isinstance(MemoryContentRepository(), ContentRepository)
    assert isinstance(MemoryProvenanceRepository(), ProvenanceRepository)


def test_small_claims_share_a_resource_claim_until_the_appendable_size() -> None:
    """Consecutive small writes pack into one resource claim; past the max a new one starts."""
    repo = MemoryContentRepository(max_appendable_size=10)
    writer = repo.writer("task-1")
    claims = []
    for data in (b"aaaa", b"bbbb", b"cccc", b"dd"):
        stream = writer.open_stream()
        stream.write(data)
        claims.append(stream.close())
    assert claims[0].resource_claim == claims[1].resource_claim == claims[2].resource_claim
    assert claims[3].resource_claim != claims[0].resource_claim
    assert [repo.read(c) for c in claims] == [b"aaaa", b"bbbb", b"cccc", b"dd"]
    assert claims[1].offset == 4


def test_concurrent_streams_use_separate_resource_claims() -> None:
    """Two streams open at once never interleave bytes in one resource claim."""
    repo = MemoryContentRepository()
    writer = repo.writer()
    first, second = writer.open_stream(), writer.open_stream()
    first.write(b"one")
    second.write(b"two")
    a, b = first.close(), second.close()
    assert a.resource_claim != b.resource_claim
    assert (repo.read(a), repo.read(b)) == (b"one", b"two")


def test_stream_misuse_and_empty_writes() -> None:
    """Writing after close fails; an empty stream gives no claim."""
    repo = MemoryContentRepository()
    stream = repo.writer().open_stream()
    assert stream.close() is None
    with pytest.raises(FlowFileAccessError):
        stream.write(b"x")


def test_claimant_counts_gate_removal() -> None:
    """A resource claim is removed only when nothing claims it; reads then fail clearly."""
    repo = MemoryContentRepository()
    claim = repo.write_bytes(b"data")
    repo.increment_claimant_count(claim.resource_claim)
    assert not repo.remove(claim.resource_claim)
    assert repo.decrement_claimant_count(claim.resource_claim) == 0
    assert repo.decrement_claimant_count(claim.resource_claim) == 0
    assert repo.remove(claim.resource_claim)
    with pytest.raises(ContentNotFoundError, match="no longer in the content repository"):
        repo.read(claim)
    assert repo.check() == []


def event(event_type: ProvenanceEventType, uuid: str, time: int, **kw: object) -> ProvenanceEvent:
    return ProvenanceEvent(event_type, uuid, "c1", "Dummy", time, **kw)  # type: ignore[arg-type]


def test_provenance_ids_search_and_lineage() -> None:
    """Events get consecutive ids; search filters by field; lineage links parents and children."""
    repo = MemoryProvenanceRepository()
    stored = repo.register(
        [
            event(ProvenanceEventType.RECEIVE, "p", 1, updated_attributes={"filename": "a.txt"}),
            event(ProvenanceEventType.FORK, "p", 2, parent_uuids=("p",), child_uuids=("c1", "c2")),
            event(ProvenanceEventType.DROP, "c1", 3),
        ]
    )
    assert [e.event_id for e in stored] == [0, 1, 2]
    assert repo.max_event_id() == 2
    assert repo.get(1).event_type is ProvenanceEventType.FORK
    with pytest.raises(KeyError):
        repo.get(9)
    assert [e.event_id for e in repo.search(flowfile_uuid="p")] == [0, 1]
    assert [e.event_id for e in repo.search(event_type="DROP")] == [2]
    assert [e.event_id for e in repo.search(filename="a.txt")] == [0]
    assert [e.event_id for e in repo.search(start=2, end=2)] == [1]
    assert [e.event_id for e in repo.search(attributes={"filename": "a.txt"})] == [0]
    graph = repo.lineage("c1")
    assert graph.has_edge("p", "event:1")
    assert graph.has_edge("event:1", "c2")


def test_named_claims_in_memory() -> None:
    """A named claim in memory is the claim its name gives, and reads back."""
    repo = MemoryContentRepository()
    stream = repo.writer().open_named_stream("1-blocks-z-b0")
    stream.write(b"abc")
    claim = stream.close()
    assert claim is not None
    assert claim.resource_claim == repo.named_claim("1-blocks-z-b0")
    assert repo.read(claim) == b"abc"
