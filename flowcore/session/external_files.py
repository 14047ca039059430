"""External content: byte ranges of files outside the content repository, read in place.

Zero-copy ingestion points a FlowFile at a range of the original file instead of copying it.
The claim carries the file's fingerprint (size, modification time in ns, inode) taken when the
file was listed; every open checks it against the open descriptor, so a file that was rewritten
in place is refused instead of read as the wrong bytes. A file replaced by a new one (a new
inode) is refused too, unless a descriptor opened before the change is still cached: that one
still reads the old, correct bytes.

Ingestion that copies a file instead reads it in chunks (:func:`file_chunks`): the session's
``import_from`` and GetFile's batch form both do.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from flowcore.errors import ContentChangedError, ContentNotFoundError
from flowcore.flowfile import ContentClaim, ResourceClaim

__all__ = [
    "changed",
    "checked",
    "file_chunks",
    "fingerprint",
    "fingerprint_of",
    "matches",
    "open_external",
    "range_claim",
]


def fingerprint_of(info: os.stat_result) -> str:
    """``size:mtime_ns:inode``, the identity of one version of a file."""
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"


def fingerprint(path: str | os.PathLike[str]) -> str:
    """The fingerprint of the file at *path* now."""
    return fingerprint_of(os.stat(path))


def matches(claim: ResourceClaim) -> bool:
    """Whether the claim's file still exists as the version it was listed as."""
    try:
        return fingerprint(claim.id) == claim.section
    except OSError:
        return False


def open_external(claim: ResourceClaim) -> int:
    """A read descriptor on the claim's file, checked against its fingerprint.

    Raises:
        ContentNotFoundError: the file is gone.
        ContentChangedError: the file is not the version the claim was made from.
    """
    try:
        fd = os.open(claim.id, os.O_RDONLY)
    except FileNotFoundError:
        msg = (
            f"{claim.id} is gone, and a FlowFile's content is a range of it (zero-copy "
            "ingestion); keep source files until the flow has processed them, or ingest with "
            "Copy Into Repository set to true"
        )
        raise ContentNotFoundError(msg, external=claim) from None
    return checked(claim, fd)


def checked(claim: ResourceClaim, fd: int) -> int:
    """*fd* itself, when its file is still the version the claim was made from.

    Raises:
        ContentChangedError: it is not (*fd* is closed).
    """
    now = fingerprint_of(os.fstat(fd))
    if now != claim.section:
        os.close(fd)
        raise changed(claim.id, claim.section, now, claim)
    return fd


def changed(
    path: str, was: str, now: str, claim: ResourceClaim | None = None
) -> ContentChangedError:
    """The error for a file that is no longer the version that was listed."""
    msg = (
        f"{path} changed after it was listed (size:mtime_ns:inode was {was}, is {now}), so "
        "a FlowFile's content range no longer holds its bytes; ingest files that may change "
        "with Copy Into Repository set to true"
    )
    return ContentChangedError(msg, external=claim)


def range_claim(
    path: str | os.PathLike[str], offset: int, length: int | None, fingerprint: str | None
) -> ContentClaim | None:
    """The claim of *length* bytes at *offset* of a file, read in place (None: no bytes).

    What ``session.import_by_reference`` and a source's batch form point a FlowFile at.

    Args:
        path: the file; made absolute, since every executor reads it by that path.
        offset: where the range starts.
        length: how many bytes (None: to the end of the file).
        fingerprint: ``size:mtime_ns:inode`` when the file was listed (None: taken now).

    Raises:
        ContentChangedError: the file is no longer the version *fingerprint* names.
        ValueError: the range does not lie inside the file.
    """
    absolute = os.path.abspath(path)
    info = os.stat(absolute)
    taken = fingerprint_of(info)
    if fingerprint is not None and fingerprint != taken:
        raise changed(absolute, fingerprint, taken)
    size = info.st_size - offset if length is None else length
    if offset < 0 or size < 0 or offset + size > info.st_size:
        msg = (
            f"cannot reference {size} bytes at offset {offset} of {absolute}, which holds "
            f"{info.st_size} bytes; the range must lie inside the file"
        )
        raise ValueError(msg)
    if not size:
        return None
    return ContentClaim(ResourceClaim.external(absolute, taken), offset, size)


def file_chunks(
    path: str | os.PathLike[str], chunk_size: int, offset: int = 0, length: int | None = None
) -> Iterator[bytes]:
    """The bytes of the file at *path*, *chunk_size* at a time, to copy it without holding it.

    With *offset* and *length*, only that range (a block of a large file); a file shorter than
    the range ends early, and the caller, who knows what it expected, decides what that means.
    The file is opened when the first chunk is asked for, and closed after the last.
    """
    with open(path, "rb") as source:
        source.seek(offset)
        if length is None:
            while chunk := source.read(chunk_size):
                yield chunk
            return
        left = length
        while left > 0 and (chunk := source.read(min(chunk_size, left))):
            left -= len(chunk)
            yield chunk
