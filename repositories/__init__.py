"""flowcore's storage: content, FlowFile (write-ahead log) and provenance repositories.

Each is a protocol (``repositories.protocols``) with a durable implementation and an in-memory one
(``repositories.memory``) for unit tests.
"""

from repositories.memory import (
    MemoryContentRepository,
    MemoryFlowFileRepository,
    MemoryProvenanceRepository,
)
from repositories.protocols import (
    ContentOutputStream,
    ContentRepository,
    ContentWriter,
    FlowFileRepository,
    ProvenanceEventSink,
    ProvenanceRepository,
)
from repositories.records import Finding, SegmentSummary, Transaction

__all__ = [
    "ContentOutputStream",
    "ContentRepository",
    "ContentWriter",
    "Finding",
    "FlowFileRepository",
    "MemoryContentRepository",
    "MemoryFlowFileRepository",
    "MemoryProvenanceRepository",
    "ProvenanceEventSink",
    "ProvenanceRepository",
    "SegmentSummary",
    "Transaction",
]
