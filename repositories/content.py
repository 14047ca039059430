"""The file content repository: content as byte ranges of append-only files on disk.

Layout, as NiFi's FileSystemRepository: ``<container>/<section>/<claim id>`` with 1024 sections
per container and containers used round-robin (one per disk). Each writer (one per session or
task attempt, named by its owner) appends consecutive small contents to one resource claim file
until it reaches the max appendable size, then starts another; a claim file is only ever written
by the writer that created it, so Spark executors can write to a shared path without locks.
Reads open the claim file and seek to the range.

Claimant counts live in memory and are rebuilt from the FlowFile repository at start-up; a claim
file is removed only when nothing claims it and its writer is done with it. Archiving, orphan
cleanup at start-up and ``check(fix=True)`` repairs come with the durable repositories issue.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import BinaryIO

from flowcore.errors import ContentNotFoundError, FlowFileAccessError, RepositoryError
from flowcore.flowfile import ContentClaim, ResourceClaim
from repositories.records import Finding

__all__ = ["DEFAULT_MAX_APPENDABLE_SIZE", "SECTIONS_PER_CONTAINER", "FileContentRepository"]

DEFAULT_MAX_APPENDABLE_SIZE = 1024 * 1024  # bytes per claim file before a new one starts
SECTIONS_PER_CONTAINER = 1024  # sub-directories per container, as NiFi
_BUFFER = 1 << 20  # write buffer per open claim file


class _RangeReader:
    """A read-only stream over ``[offset, offset + length)`` of a claim file."""

    def __init__(self, path: Path, offset: int, length: int) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 - closed by close()/__exit__
        self._file.seek(offset)
        self._remaining = length
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        if self._remaining <= 0:
            return b""
        wanted = self._remaining if size < 0 else min(size, self._remaining)
        data = self._file.read(wanted)
        self._remaining -= len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        limit = self._remaining if size < 0 else min(size, self._remaining)
        data = self._file.readline(limit)
        self._remaining -= len(data)
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        if not self.closed:
            self._file.close()
            self.closed = True

    def __enter__(self) -> _RangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _FileStream:
    """Appends one content claim to the writer's current claim file."""

    def __init__(
        self, writer: _FileWriter, claim: ResourceClaim, file: BinaryIO, offset: int
    ) -> None:
        self._writer = writer
        self._claim = claim
        self._file = file
        self._offset = offset
        self._written = 0
        self._closed = False

    @property
    def bytes_written(self) -> int:
        return self._written

    def write(self, data: bytes) -> int:
        if self._closed:
            msg = f"cannot write to a closed content stream on {self._claim}"
            raise FlowFileAccessError(msg)
        self._file.write(data)
        self._written += len(data)
        return len(data)

    def close(self) -> ContentClaim | None:
        if self._closed:
            msg = f"content stream on {self._claim} was already closed"
            raise FlowFileAccessError(msg)
        self._closed = True
        self._file.flush()
        self._writer._stream_closed(self._claim, self._offset + self._written)
        if self._written == 0:
            return None
        return ContentClaim(self._claim, self._offset, self._written)


class _FileWriter:
    """One owner's writer: packs consecutive contents into claim files up to the appendable size."""

    def __init__(self, repo: FileContentRepository, owner: str) -> None:
        self._repo = repo
        self._owner = owner
        self._current: tuple[ResourceClaim, BinaryIO, int] | None = None
        self._busy: set[ResourceClaim] = set()
        self._files: dict[ResourceClaim, BinaryIO] = {}

    def open_stream(self) -> _FileStream:
        current = self._current
        if current is None or current[0] in self._busy:
            claim = self._repo._new_claim(self._owner)
            file = open(self._repo.path_of(claim), "ab", buffering=_BUFFER)  # noqa: SIM115
            self._files[claim] = file
            current = (claim, file, 0)
            self._current = current
        claim, file, offset = current
        self._busy.add(claim)
        return _FileStream(self, claim, file, offset)

    def _stream_closed(self, claim: ResourceClaim, end: int) -> None:
        self._busy.discard(claim)
        if self._current is not None and self._current[0] == claim:
            if end >= self._repo.max_appendable_size:
                self._retire(claim)
                self._current = None
            else:
                self._current = (claim, self._current[1], end)
        elif claim not in self._busy:
            self._retire(claim)

    def _retire(self, claim: ResourceClaim) -> None:
        file = self._files.pop(claim, None)
        if file is not None:
            file.flush()
            if self._repo.always_sync:
                os.fsync(file.fileno())
            file.close()
        self._repo._writable.discard(claim)

    def close(self) -> None:
        for claim in list(self._files):
            if claim not in self._busy:
                self._retire(claim)
        self._current = None


class FileContentRepository:
    """Content stored in claim files under one or more container directories.

    Args:
        containers: directories, one per disk; a single path is one container named
            ``default``.
        max_appendable_size: bytes after which a claim file is no longer appended to. Small
            values free disk sooner (a claim file lives as long as its last claimant); large
            values mean fewer files. NiFi ships 50 KB; flowcore defaults to 1 MB because Spark
            tasks write many small FlowFiles per task and file count costs more on shared
            storage.
        always_sync: fsync each claim file when its writer retires it.
    """

    def __init__(
        self,
        containers: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        max_appendable_size: int = DEFAULT_MAX_APPENDABLE_SIZE,
        always_sync: bool = False,
    ) -> None:
        if isinstance(containers, str | os.PathLike):
            containers = [containers]
        self.containers = {
            f"c{index}" if len(containers) > 1 else "default": Path(path)
            for index, path in enumerate(containers)
        }
        for path in self.containers.values():
            path.mkdir(parents=True, exist_ok=True)
        self.max_appendable_size = max_appendable_size
        self.always_sync = always_sync
        self._counts: dict[ResourceClaim, int] = {}
        self._writable: set[ResourceClaim] = set()
        self._next = itertools.count()
        self._round_robin = itertools.cycle(sorted(self.containers))
        self._lock = threading.Lock()

    def _new_claim(self, owner: str) -> ResourceClaim:
        with self._lock:
            n = next(self._next)
            container = next(self._round_robin)
        section = str(n % SECTIONS_PER_CONTAINER)
        stem = owner.replace("/", "_") or "session"
        # The millisecond prefix doubles as the claim's creation time (archive age-off).
        claim = ResourceClaim(
            container, section, f"{time.time_ns() // 1_000_000}-{stem}-{uuid.uuid4().hex[:12]}"
        )
        self.path_of(claim).parent.mkdir(parents=True, exist_ok=True)
        self._writable.add(claim)
        return claim

    def path_of(self, claim: ResourceClaim) -> Path:
        """The file holding a resource claim.

        Raises:
            RepositoryError: the claim names a container this repository does not have.
        """
        root = self.containers.get(claim.container)
        if root is None:
            msg = (
                f"resource claim {claim} names unknown container {claim.container!r}; "
                f"known: {sorted(self.containers)!r}"
            )
            raise RepositoryError(msg)
        return root / claim.section / claim.id

    def writer(self, owner: str = "") -> _FileWriter:
        """A writer whose files are named after *owner* (a task attempt id)."""
        return _FileWriter(self, owner)

    def open(self, claim: ContentClaim) -> BinaryIO:
        """A stream over exactly the claim's bytes."""
        path = self.path_of(claim.resource_claim)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            msg = f"content {claim} is no longer in the content repository ({path} is gone)"
            raise ContentNotFoundError(msg) from None
        if claim.offset + claim.length > size:
            msg = f"content {claim} extends past the end of {path} ({size} bytes)"
            raise ContentNotFoundError(msg)
        return _RangeReader(path, claim.offset, claim.length)  # type: ignore[return-value]

    def read(self, claim: ContentClaim) -> bytes:
        """The claim's bytes."""
        with self.open(claim) as stream:
            return stream.read()

    def exists(self, resource_claim: ResourceClaim) -> bool:
        """Whether the claim file exists."""
        return self.path_of(resource_claim).exists()

    def increment_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        """Add claimants."""
        with self._lock:
            self._counts[resource_claim] = self._counts.get(resource_claim, 0) + delta
            return self._counts[resource_claim]

    def decrement_claimant_count(self, resource_claim: ResourceClaim, delta: int = 1) -> int:
        """Remove claimants, never below zero."""
        with self._lock:
            count = max(0, self._counts.get(resource_claim, 0) - delta)
            self._counts[resource_claim] = count
            return count

    def claimant_count(self, resource_claim: ResourceClaim) -> int:
        """Current claimant count."""
        return self._counts.get(resource_claim, 0)

    def remove(self, resource_claim: ResourceClaim) -> bool:
        """Delete an unclaimed claim file that no writer is still appending to."""
        with self._lock:
            if self._counts.get(resource_claim, 0) > 0 or resource_claim in self._writable:
                return False
            self._counts.pop(resource_claim, None)
        try:
            self.path_of(resource_claim).unlink()
        except FileNotFoundError:
            return False
        return True

    def resource_claims(self) -> Iterable[ResourceClaim]:
        """Every claim file on disk."""
        for container, root in sorted(self.containers.items()):
            for section in sorted(root.iterdir(), key=lambda p: p.name):
                if section.is_dir() and section.name.isdigit():
                    for path in sorted(section.iterdir()):
                        if path.is_file():
                            yield ResourceClaim(container, section.name, path.name)

    def check(self, *, fix: bool = False) -> list[Finding]:
        """Report claimed claims whose files are missing."""
        findings = []
        for claim, count in list(self._counts.items()):
            if count > 0 and not self.exists(claim):
                if fix:
                    self._counts.pop(claim)
                findings.append(
                    Finding(
                        "content",
                        str(claim),
                        f"{count} claimants but the file is missing",
                        fixed=fix,
                    )
                )
        return findings
