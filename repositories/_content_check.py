"""What ``check`` does to one claim file: verify every block, or seal a file of an older flowcore.

Kept apart from :mod:`repositories.content` because it reads whole files (the repository's
readers touch only the blocks a range needs) and because it is the only code that appends to a
claim file after its writer retired it (:func:`seal`, under ``check --fix``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from crc32c import crc32c

from flowcore.flowfile import ResourceClaim
from repositories._claim_checksums import BlockSummer, FooterDamage, read_footer

if TYPE_CHECKING:
    from repositories.protocols import FlowFileRepository

__all__ = ["ClaimReferences", "claim_references", "referenced_by", "seal", "verify_file"]

_CHECK_READ = 16  # blocks read at once while verifying a whole file
_LISTED = 5  # damaged byte ranges named in one finding

#: Which queues hold FlowFiles pointing into each claim, and how many: claim -> queue -> count.
ClaimReferences = Mapping[ResourceClaim, Mapping[str, int]]


def claim_references(flowfiles: FlowFileRepository) -> dict[ResourceClaim, dict[str, int]]:
    """Each claim's referencing queues, from the segment summaries alone (no segment is read)."""
    references: dict[ResourceClaim, dict[str, int]] = {}
    for queue in flowfiles.queue_ids():
        for summary in flowfiles.segments(queue):
            for claim, count in summary.claim_counts:
                per_queue = references.setdefault(claim, {})
                per_queue[queue] = per_queue.get(queue, 0) + count
    return references


def referenced_by(count: int, queues: Mapping[str, int] | None) -> str:
    """``"3 queued FlowFiles reference it (queue 'a': 2, queue 'b': 1)"``, for a finding."""
    text = f"{count} queued FlowFile{'s' if count != 1 else ''} reference it"
    if queues:
        listed = ", ".join(f"queue {q!r}: {n}" for q, n in sorted(queues.items()))
        text += f" ({listed})"
    return text


def verify_file(path: Path, *, sealed_name: bool) -> tuple[str | None, bool]:
    """Verify every block of a claim file.

    Returns:
        ``(problem, legacy)``: what is wrong (None when every block matches), and whether
        the file has no footer because an older flowcore wrote it (*sealed_name* false).
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        try:
            checksums = read_footer(fd, size)
        except FooterDamage as problem:
            return str(problem), False
        if checksums is None:
            if sealed_name:
                return (
                    f"it has no checksum footer, so it was cut short or overwritten after it "
                    f"was written ({size} bytes remain)"
                ), False
            return (
                "it was written by a flowcore without content checksums, so its bytes cannot "
                "be verified; 'flowcore check --fix' records checksums of its bytes as they "
                "are now"
            ), True
        bad: list[tuple[int, int]] = []
        step = checksums.block_size * _CHECK_READ
        for start in range(0, checksums.data_length, step):
            data = os.pread(fd, min(step, checksums.data_length - start), start)
            view = memoryview(data)
            for offset in range(0, len(data), checksums.block_size):
                block = (start + offset) // checksums.block_size
                lo, hi = checksums.block_span(block)
                if crc32c(view[offset : offset + hi - lo]) != checksums.crcs[block]:
                    bad.append((lo, hi))
        if not bad:
            return None, False
        ranges = ", ".join(f"{lo} to {hi - 1}" for lo, hi in bad[:_LISTED])
        more = f" and {len(bad) - _LISTED} more" if len(bad) > _LISTED else ""
        return (
            f"{len(bad)} of {len(checksums.crcs)} blocks do not match the checksums recorded "
            f"when it was written (bytes {ranges}{more})"
        ), False
    finally:
        os.close(fd)


def seal(path: Path, *, sync: bool = True) -> None:
    """Append a checksum footer to a claim file an older flowcore wrote, for its bytes as now."""
    summer = BlockSummer()
    with open(path, "r+b") as file:
        while data := file.read(1 << 20):
            summer.update(data)
        file.write(summer.footer())
        file.flush()
        if sync:
            os.fsync(file.fileno())
