"""Writing claim files: one owner's writer packs consecutive contents into appendable files.

A claim file is only ever written by the writer that created it (so Spark executors write to a
shared path without locks), one stream at a time; its blocks are checksummed as they are written
and the checksums are appended as its footer when the writer retires it
(:mod:`repositories._claim_checksums`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, BinaryIO, Protocol

from flowcore.errors import FlowFileAccessError
from flowcore.flowfile import ContentClaim, ResourceClaim
from repositories._claim_checksums import BlockSummer
from repositories._claim_reader import file_identity

if TYPE_CHECKING:
    from pathlib import Path

    from repositories._claim_reader import FileIdentity

__all__ = ["ClaimFiles", "FileWriter"]

_BUFFER = 1 << 20  # write buffer per open claim file


class ClaimFiles(Protocol):
    """What a writer needs of its repository: claims, their paths, word of files opened and retired.

    :class:`~repositories.content.FileContentRepository` is the one; the writer sits below it.
    """

    max_appendable_size: int
    always_sync: bool

    def new_claim(self, owner: str) -> ResourceClaim: ...

    def named_claim(self, name: str) -> ResourceClaim: ...

    def path_of(self, claim: ResourceClaim) -> Path: ...

    def writing(self, claim: ResourceClaim, file: BinaryIO) -> None: ...

    def retired(
        self,
        claim: ResourceClaim,
        identity: FileIdentity | None = None,
        summer: BlockSummer | None = None,
    ) -> None: ...


class _FileStream:
    """Appends one content claim to the writer's current claim file."""

    def __init__(
        self,
        writer: FileWriter,
        claim: ResourceClaim,
        file: BinaryIO,
        offset: int,
        summer: BlockSummer,
    ) -> None:
        self._writer = writer
        self._claim = claim
        self._file = file
        self._offset = offset
        self._summer = summer
        self._written = 0
        self._closed = False

    @property
    def bytes_written(self) -> int:
        return self._written

    def write(self, data: bytes | memoryview) -> int:
        if self._closed:
            msg = f"cannot write to a closed content stream on {self._claim}"
            raise FlowFileAccessError(msg)
        self._file.write(data)
        self._summer.update(data)
        self._written += len(data)
        return len(data)

    def close(self) -> ContentClaim | None:
        if self._closed:
            msg = f"content stream on {self._claim} was already closed"
            raise FlowFileAccessError(msg)
        self._closed = True  # no flush: the claim's file is flushed when read or retired
        self._writer._stream_closed(self._claim, self._offset + self._written)
        if self._written == 0:
            return None
        return ContentClaim(self._claim, self._offset, self._written)


class FileWriter:
    """One owner's writer: packs consecutive contents into claim files up to the appendable size.

    Each claim file's blocks are checksummed as they are written; the checksums go into the
    file's footer when the writer retires it (full, or the writer closed), so a claim is
    sealed before any commit can reference it.
    """

    def __init__(self, repo: ClaimFiles, owner: str) -> None:
        self._repo = repo
        self._owner = owner
        self._current: tuple[ResourceClaim, BinaryIO, int] | None = None
        self._busy: set[ResourceClaim] = set()
        self._files: dict[ResourceClaim, tuple[BinaryIO, BlockSummer]] = {}

    def open_stream(self) -> _FileStream:
        current = self._current
        if current is None or current[0] in self._busy:
            claim = self._repo.new_claim(self._owner)
            file = open(self._repo.path_of(claim), "ab", buffering=_BUFFER)  # noqa: SIM115
            self._files[claim] = (file, BlockSummer())
            self._repo.writing(claim, file)
            current = (claim, file, 0)
            self._current = current
        claim, file, offset = current
        self._busy.add(claim)
        return _FileStream(self, claim, file, offset, self._files[claim][1])

    def open_named_stream(self, name: str) -> _FileStream:
        """Start a claim file of its own named *name* (:meth:`FileContentRepository.named_claim`).

        Several tasks can each write one piece of a content whose claims they all know by name
        before any is written (a large file read as blocks in parallel). The file holds that
        one content and is sealed when its stream closes; an earlier attempt's leftovers under
        the name are truncated, since a retried task writes the same bytes again.
        """
        claim = self._repo.named_claim(name)
        path = self._repo.path_of(claim)
        path.parent.mkdir(parents=True, exist_ok=True)
        file = open(path, "wb", buffering=_BUFFER)  # noqa: SIM115
        self._files[claim] = (file, BlockSummer())
        self._repo.writing(claim, file)
        self._busy.add(claim)
        return _FileStream(self, claim, file, 0, self._files[claim][1])

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
        entry = self._files.pop(claim, None)
        if entry is None:
            self._repo.retired(claim)
            return
        file, summer = entry
        file.write(summer.footer())
        file.flush()
        if self._repo.always_sync:
            os.fsync(file.fileno())
        info = os.fstat(file.fileno())
        file.close()
        self._repo.retired(claim, file_identity(claim, info), summer)

    def close(self) -> None:
        for claim in list(self._files):
            if claim not in self._busy:
                self._retire(claim)
        self._current = None
