"""The checksum footers a content repository has read, one per version of a claim file.

A sealed claim file (its name ends with :data:`SEALED_SUFFIX`) carries its blocks' checksums in
a footer, read once per version of the file and remembered, so reading many small FlowFiles
from one file costs one footer read. The memory is bounded: past :data:`FOOTERS_KEPT` it starts
afresh. Reads run in many threads at once (Spark task threads, HTTP handlers streaming response
bodies from claims), and one of them may start the memory afresh between another's lookup and
its use: a lookup is therefore one ``dict.get``, never a membership test followed by an index.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from flowcore.flowfile import ResourceClaim
from repositories._claim_checksums import ClaimChecksums, FooterDamage, read_footer
from repositories._claim_reader import FileIdentity, damaged

__all__ = ["FOOTERS_KEPT", "SEALED_SUFFIX", "FooterCache"]

#: Ends the name of every claim file written with a checksum footer: such a file without a
#: footer was cut short. Files of older flowcores lack both (read unverified; check reports them).
SEALED_SUFFIX = ".claim"
FOOTERS_KEPT = 4096  # footers remembered per repository instance
#: Marks a file version whose footer is not remembered (None is remembered: no footer).
_UNREAD = object()


class FooterCache:
    """The footers read by one repository instance, by file version; safe across threads.

    Args:
        kept: footers remembered at most; past it the memory starts afresh.
    """

    def __init__(self, kept: int = FOOTERS_KEPT) -> None:
        self.kept = kept
        self._entries: dict[FileIdentity, ClaimChecksums | None] = {}
        self._lock = threading.Lock()  # held to evict and add, never to look up

    def __len__(self) -> int:
        return len(self._entries)

    def remember(self, identity: FileIdentity, checksums: ClaimChecksums | None) -> None:
        """Keep *identity*'s checksums (None: a file of an older flowcore, without a footer)."""
        with self._lock:
            if len(self._entries) >= self.kept:
                self._entries.clear()
            self._entries[identity] = checksums

    def clear(self) -> None:
        """Forget every footer (``check --fix`` wrote footers to files read without one)."""
        with self._lock:
            self._entries.clear()

    def footer_of(
        self, identity: FileIdentity, fd: int, where: Callable[[ResourceClaim], Path]
    ) -> ClaimChecksums | None:
        """The checksums of one version of a claim file; None for a file of an older flowcore.

        Args:
            identity: the version of the file *fd* reads.
            fd: a descriptor open on it.
            where: the path of a claim's file, for an error message (asked only then).

        Raises:
            ContentCorruptionError: a sealed claim file without a footer (cut short or
                overwritten), or a footer that does not add up.
        """
        found = self._entries.get(identity, _UNREAD)  # one lookup: another thread may evict
        if found is not _UNREAD:
            return found  # type: ignore[return-value]
        resource, _inode, size, _mtime, _ctime = identity
        try:
            checksums = read_footer(fd, size)
        except FooterDamage as problem:
            raise damaged(resource, where(resource), str(problem), None, None) from None
        if checksums is None and resource.id.endswith(SEALED_SUFFIX):
            raise damaged(
                resource,
                where(resource),
                f"it has no checksum footer, so it was cut short or overwritten after it was "
                f"written ({size} bytes remain)",
                None,
                None,
            )
        self.remember(identity, checksums)
        return checksums
