"""The content repository as a task sees it: shared appendable claims, counts left to the driver.

Every session of a task writes through one claim writer, so small contents pack into the task's
claim files. Claimant counts change only when the driver commits, so the task never destroys
content; the claims it wrote are reported, and the driver releases those nothing references.
"""

from __future__ import annotations

from typing import Any

from flowcore.flowfile import Content, ContentClaim, ResourceClaim
from repositories.content import FileContentRepository

__all__ = ["TaskContent"]


class _Stream:
    """A content stream that tells its task which resource claim it wrote."""

    def __init__(self, inner: Any, written: set[ResourceClaim]) -> None:
        self._inner = inner
        self._written = written

    @property
    def bytes_written(self) -> int:
        return self._inner.bytes_written

    def write(self, data: bytes | memoryview) -> int:
        return self._inner.write(data)

    def close(self) -> ContentClaim | None:
        claim = self._inner.close()
        if claim is not None:
            self._written.add(claim.resource_claim)
        return claim


class _SharedWriter:
    """The task's one writer, lent to every session; only the task closes it."""

    def __init__(self, content: TaskContent) -> None:
        self._content = content

    def open_stream(self) -> _Stream:
        return _Stream(self._content.writer_impl.open_stream(), self._content.written)

    def open_named_stream(self, name: str) -> _Stream:
        return _Stream(self._content.writer_impl.open_named_stream(name), self._content.written)

    def close(self) -> None:
        """Sessions end; the writer stays open for the rest of the task."""


class TaskContent:
    """The content repository inside a task.

    Reads pass through, writes pack into the task's claim files, and claimant counts are left
    to the driver (they change only at commit).

    A rolled-back session's bytes stay in the claim file; the file goes when nothing claims it.
    """

    def __init__(self, repository: FileContentRepository, owner: str) -> None:
        self.repository = repository
        self.writer_impl = repository.writer(owner)
        self.written: set[ResourceClaim] = set()

    @property
    def max_appendable_size(self) -> int:
        """The bytes after which a claim file is no longer appended to (the repository's)."""
        return self.repository.max_appendable_size

    def writer(self, owner: str = "") -> _SharedWriter:
        del owner
        return _SharedWriter(self)

    def named_claim(self, name: str) -> ResourceClaim:
        return self.repository.named_claim(name)

    def open(self, claim: Content) -> Any:
        return self.repository.open(claim)

    def read(self, claim: Content) -> bytes:
        return self.repository.read(claim)

    def export(self, claim: Content, out: Any) -> int:
        return self.repository.export(claim, out)

    def exists(self, resource_claim: ResourceClaim) -> bool:
        return self.repository.exists(resource_claim)

    def size_of(self, resource_claim: ResourceClaim) -> int | None:
        return self.repository.size_of(resource_claim)

    def claimant_count(self, resource_claim: ResourceClaim) -> int:
        del resource_claim
        return 1  # never zero here: only the driver destroys content

    def increment_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        del resource_claim, delta
        return 1

    def decrement_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        del resource_claim, delta
        return 1

    def remove(self, resource_claim: ResourceClaim) -> bool:
        del resource_claim
        return False

    def close(self) -> None:
        try:
            self.writer_impl.close()
        finally:
            self.repository.close()  # its read descriptors: a worker runs task after task
