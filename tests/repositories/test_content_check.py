"""Tests for what check does to one claim file: verify it, seal it, find who references it."""

from __future__ import annotations

import os
from pathlib import Path

from flowcore.flowfile import ContentClaim, FlowFile, ResourceClaim
from repositories._claim_checksums import MAGIC
from repositories._content_check import claim_references, referenced_by, seal, verify_file
from repositories.flowfile_wal import WriteAheadFlowFileRepository
from repositories.records import Transaction


def test_claim_references_come_from_segment_summaries(tmp_path: Path) -> None:
    """Each claim's FlowFiles are counted per queue from the committed segments' summaries."""
    flowfiles = WriteAheadFlowFileRepository(tmp_path, sync=False)
    shared = ResourceClaim("default", "1", "x.claim")
    other = ResourceClaim("default", "2", "y.claim")

    def made(first: int, claims: list[ResourceClaim]) -> list[FlowFile]:
        return [
            FlowFile.create(first + i, 0, {}).with_content(ContentClaim(c, 0, 1))
            for i, c in enumerate(claims)
        ]

    a = flowfiles.write_segment("a", made(0, [shared, shared, other]))
    b = flowfiles.write_segment("b", made(10, [shared]))
    flowfiles.commit(Transaction(enqueued=(a, b)))
    assert claim_references(flowfiles) == {shared: {"a": 2, "b": 1}, other: {"a": 1}}
    flowfiles.close()


def test_referenced_by_names_counts_and_queues() -> None:
    """A finding says how many FlowFiles reference a claim and, when known, in which queues."""
    assert referenced_by(1, None) == "1 queued FlowFile reference it"
    assert referenced_by(3, {"b": 1, "a": 2}) == (
        "3 queued FlowFiles reference it (queue 'a': 2, queue 'b': 1)"
    )


def test_seal_records_checksums_of_an_old_file_as_it_is(tmp_path: Path) -> None:
    """Sealing appends a footer covering the bytes as they are; verifying then finds them sound."""
    path = tmp_path / "old"
    data = os.urandom(200_000)
    path.write_bytes(data)
    assert verify_file(path, sealed_name=False)[1]  # legacy: no footer
    assert verify_file(path, sealed_name=True) == (
        "it has no checksum footer, so it was cut short or overwritten after it was written "
        "(200000 bytes remain)",
        False,
    )
    seal(path, sync=False)
    assert path.read_bytes().startswith(data)
    assert path.read_bytes().endswith(MAGIC)
    assert verify_file(path, sealed_name=False) == (None, False)
