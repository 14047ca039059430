"""Reading one byte range of a claim file, verifying the checksummed blocks it touches.

A :class:`RangeReader` is the stream :meth:`FileContentRepository.open` returns. Over a claim
file with a checksum footer it goes through a :class:`BlockVerifier`: every block the range
touches is read whole and checked against its CRC32C before any of its bytes are handed out,
so a flipped byte is refused instead of delivered, and a range never costs more than one
extra block at each end. Blocks already verified by this repository instance (the file
unchanged since: same inode, size and modification time) are read as plain ranges, so many
small FlowFiles packed into one block cost one verification between them.
"""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from crc32c import crc32c

from flowcore.errors import ContentCorruptionError, ContentNotFoundError
from flowcore.flowfile import ResourceClaim
from repositories._claim_checksums import ClaimChecksums

__all__ = ["READ_CHUNK", "BlockVerifier", "RangeReader", "VerifiedBlocks", "damaged"]

READ_CHUNK = 64 * 1024  # read buffer of a claim range stream
_MAX_PREAD = 1 << 30  # pread returns at most about 2 GiB per call on Linux
_COPY_CHUNK = 1 << 20  # read-and-write copying where the kernel cannot copy
#: copy_file_range's answers meaning "not between these two files": copy by hand instead
_NO_KERNEL_COPY = frozenset(
    {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF}
)
_VERIFY_WINDOW = 1 << 20  # bytes read at a time to verify a range before a kernel copy
_REMEMBERED_BLOCKS = 16_384  # verified blocks remembered per repository (1 GiB of content)

#: What identifies one version of a claim file: (claim, inode, size, mtime_ns, ctime_ns).
FileIdentity = tuple[ResourceClaim, int, int, int, int]


def file_identity(claim: ResourceClaim, info: os.stat_result) -> FileIdentity:
    """The version of *claim*'s file that *info* describes.

    The change time is in it because no one can set it: a write that keeps the size and puts
    the modification time back (``touch -r``, ``rsync -t``, a coarse clock) still changes it.
    """
    return (claim, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def damaged(
    claim: ResourceClaim, path: Path, problem: str, offset: int | None, length: int | None
) -> ContentCorruptionError:
    """The error for a damaged claim file, naming it and saying what to do."""
    reason = f"content claim {str(claim)!r} ({str(path)!r}) is damaged: {problem}"
    msg = (
        f"{reason}; the FlowFiles whose content lies there cannot be delivered and go to "
        "their processor's failure relationship with content.failure.reason; 'flowcore "
        "check' lists every damaged claim and the queues that reference it (restore the "
        "file from a backup, or ingest the source data again)"
    )
    return ContentCorruptionError(msg, claim=claim, offset=offset, length=length, reason=reason)


class VerifiedBlocks:
    """The blocks a repository instance has verified, per version of each claim file.

    Bounded: past :data:`_REMEMBERED_BLOCKS` it starts afresh (blocks are verified again).
    """

    def __init__(self) -> None:
        self._blocks: set[tuple[FileIdentity, int]] = set()

    def __contains__(self, key: tuple[FileIdentity, int]) -> bool:
        return key in self._blocks

    def add(self, key: tuple[FileIdentity, int]) -> None:
        if len(self._blocks) >= _REMEMBERED_BLOCKS:
            self._blocks = set()
        self._blocks.add(key)

    def add_file(self, identity: FileIdentity, blocks: int) -> None:
        """Remember every block of one file version (one larger than the bound is not kept)."""
        if blocks > _REMEMBERED_BLOCKS:
            return
        if len(self._blocks) + blocks > _REMEMBERED_BLOCKS:
            self._blocks = set()
        self._blocks.update((identity, block) for block in range(blocks))

    def forget(self, claim: ResourceClaim) -> None:
        """Drop what is known of *claim* (its file was archived, removed or changed)."""
        self._blocks = {key for key in self._blocks if key[0][0] != claim}


class BlockVerifier:
    """Reads byte ranges of one claim file, verifying each block they touch once."""

    def __init__(
        self,
        identity: FileIdentity,
        locate: Callable[[], Path],
        checksums: ClaimChecksums,
        verified: VerifiedBlocks,
    ) -> None:
        self._identity = identity
        self._locate = locate  # the file's path, for messages only (it costs a stat)
        self._sums = checksums
        self._verified = verified

    def block_end(self, position: int) -> int:
        """The end of the block holding file offset *position*."""
        size = self._sums.block_size
        return min((position // size + 1) * size, self._sums.data_length)

    def pread(self, fd: int, count: int, position: int) -> bytes:
        """The *count* bytes at *position*, every block they touch verified.

        Raises:
            ContentCorruptionError: a block's bytes do not match its checksum, or the file
                ends before them.
        """
        size = self._sums.block_size
        first, last = position // size, (position + count - 1) // size
        unverified = [
            block
            for block in range(first, last + 1)
            if (self._identity, block) not in self._verified
        ]
        if not unverified:
            return _pread(fd, count, position)
        # An unverified block at either end is read whole; the blocks between are whole anyway.
        start = first * size if unverified[0] == first else position
        end = self._sums.block_span(last)[1] if unverified[-1] == last else position + count
        data = _pread(fd, end - start, start)
        if len(data) < end - start:
            raise damaged(
                self._identity[0],
                self._locate(),
                f"the file ends at byte {start + len(data)}, inside the {end - start} bytes "
                f"at offset {start} its checksum footer covers",
                start + len(data),
                None,
            )
        view = memoryview(data)
        for block in unverified:
            lo, hi = self._sums.block_span(block)
            self._check(block, view[lo - start : hi - start], lo)
        if start == position and end - start == count:
            return data
        return bytes(view[position - start : position - start + count])

    def pread_into(self, fd: int, view: memoryview, position: int) -> int:
        """Fill *view* with the bytes at *position*, every block they touch verified.

        The bytes go straight into the caller's buffer (a merge reuses one window for all its
        reads, instead of a fresh allocation per window). A block the range only partly
        covers is read whole on the side, checked, and its covered part copied from there,
        so every byte handed out was checked. Returns ``len(view)``.

        Raises:
            ContentCorruptionError: as :meth:`pread`.
        """
        if not view:
            return 0
        got = _preadv(fd, view, position)
        if got < len(view):  # the footer says the data goes on: the file was cut short
            raise damaged(
                self._identity[0],
                self._locate(),
                f"the file ends at byte {position + got}, inside the {len(view)} bytes at "
                f"offset {position} its checksum footer covers",
                position + got,
                None,
            )
        size = self._sums.block_size
        end = position + got
        for block in range(position // size, (end - 1) // size + 1):
            if (self._identity, block) in self._verified:
                continue
            lo, hi = self._sums.block_span(block)
            if position <= lo and hi <= end:
                self._check(block, view[lo - position : hi - position], lo)
                continue
            whole = memoryview(self.pread(fd, hi - lo, lo))  # checks the block whole
            first, last = max(lo, position), min(hi, end)
            view[first - position : last - position] = whole[first - lo : last - lo]
        return got

    def _check(self, block: int, data: memoryview, lo: int) -> None:
        """Verify one whole block's bytes and remember it.

        Raises:
            ContentCorruptionError: the bytes do not match the block's checksum.
        """
        actual = crc32c(data)
        if actual != self._sums.crcs[block]:
            raise damaged(
                self._identity[0],
                self._locate(),
                f"block {block} (bytes {lo} to {lo + len(data) - 1}) has CRC32C {actual:#010x} "
                f"but {self._sums.crcs[block]:#010x} was recorded when the file was written",
                lo,
                len(data),
            )
        self._verified.add((self._identity, block))

    def verify(self, fd: int, count: int, position: int) -> None:
        """Check every block *count* bytes at *position* touch, reading only unverified ones.

        Raises:
            ContentCorruptionError: as :meth:`pread`.
        """
        size = self._sums.block_size
        end = position + count
        position -= position % size  # whole blocks, a bounded window at a time
        while position < end:
            window = min(_VERIFY_WINDOW, end - position)
            first, last = position // size, (position + window - 1) // size
            if any((self._identity, b) not in self._verified for b in range(first, last + 1)):
                self.pread(fd, window, position)
            position += window


def _write_all(out: BinaryIO, data: bytes) -> int:
    """Write all of *data* to *out*; returns ``len(data)``, the bytes of the range copied.

    A raw file may take part of a write (it is written again from there); any other stream
    takes it whole, whatever count it returns (a compressing wrapper may count its output).
    """
    if isinstance(out, io.RawIOBase):
        view = memoryview(data)
        while view:
            written = out.write(view)
            if not written:
                msg = f"{out!r} took no bytes of a write"
                raise OSError(errno.EIO, msg)
            view = view[written:]
    else:
        out.write(data)
    return len(data)


def _plain_descriptor(out: BinaryIO) -> int | None:
    """The descriptor of *out* when writing to it is writing to that file, flushed; else None.

    A compressing or encoding wrapper (``GzipFile``) hands out the descriptor of the file
    beneath it: bytes copied there would bypass it, so it is written to as a stream.
    """
    raw = out.raw if isinstance(out, io.BufferedWriter | io.BufferedRandom) else out
    if not isinstance(raw, io.FileIO):
        return None
    out.flush()
    return raw.fileno()


def _preadv(fd: int, view: memoryview, position: int) -> int:
    """Fill *view* from *position*; returns the bytes read (fewer only at the end of the file)."""
    got = 0
    while got < len(view):
        read = os.preadv(fd, [view[got : got + _MAX_PREAD]], position + got)
        if not read:
            break
        got += read
    return got


def _pread(fd: int, count: int, position: int) -> bytes:
    """Up to *count* bytes at *position* (fewer only at the end of the file)."""
    pieces = []
    while count > 0:
        data = os.pread(fd, min(count, _MAX_PREAD), position)
        if not data:
            break
        pieces.append(data)
        position += len(data)
        count -= len(data)
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


class RangeReader:
    """A read-only, buffered stream over ``[offset, offset + length)`` of a claim file.

    It reads with ``pread`` on its own duplicate of the repository's cached descriptor, so many
    readers of one claim file share a single ``open`` and never disturb each other's position.
    With a *verifier* every block is checked before its bytes are returned; the buffer is then
    filled a block at a time so sequential reading verifies each block once.
    """

    def __init__(
        self, fd: int, offset: int, length: int, verifier: BlockVerifier | None = None
    ) -> None:
        self._fd = fd
        self._next = offset  # file offset of the first byte not yet buffered
        self._unbuffered = length  # bytes of the range not yet buffered
        self._buffer = b""
        self._start = 0  # first unread byte in the buffer
        self._verifier = verifier
        self.closed = False

    def _pread(self, count: int) -> bytes:
        if self._verifier is not None:
            return self._verifier.pread(self._fd, count, self._next)
        return os.pread(self._fd, count, self._next)

    def _fill(self) -> bool:
        if self._unbuffered <= 0:
            return False
        count = min(READ_CHUNK, self._unbuffered)
        if self._verifier is not None:  # up to the block's end: the next fill starts aligned
            count = min(count, self._verifier.block_end(self._next) - self._next) or count
        data = self._pread(count)
        if not data:
            self._unbuffered = 0
            return False
        self._buffer = self._buffer[self._start :] + data
        self._start = 0
        self._next += len(data)
        self._unbuffered -= len(data)
        return True

    def _take(self, count: int) -> bytes:
        """Up to *count* unbuffered bytes of the range, straight from the file."""
        pieces = []
        while count > 0 and self._unbuffered > 0:
            data = self._pread(min(count, self._unbuffered, _MAX_PREAD))
            if not data:
                self._unbuffered = 0
                break
            pieces.append(data)
            self._next += len(data)
            self._unbuffered -= len(data)
            count -= len(data)
        return b"".join(pieces)

    def read(self, size: int = -1) -> bytes:
        available = len(self._buffer) - self._start
        if 0 <= size <= available:
            data = self._buffer[self._start : self._start + size]
            self._start += len(data)
            return data
        rest = self._buffer[self._start :]
        self._buffer, self._start = b"", 0
        wanted = self._unbuffered if size < 0 else size - available
        tail = self._take(wanted)  # large reads skip the buffer: no repeated copying
        return rest + tail if rest else tail

    def readinto(self, buffer: bytearray | memoryview) -> int:
        """Fill *buffer* with the next bytes of the range; returns how many (0 at its end).

        Large reads go straight from the file into *buffer* (verified there), with no
        intermediate bytes object: a caller that reuses one buffer touches no new memory.
        """
        view = memoryview(buffer).cast("B")
        given = 0
        available = len(self._buffer) - self._start
        if available:
            given = min(available, len(view))
            view[:given] = self._buffer[self._start : self._start + given]
            self._start += given
            if self._start == len(self._buffer):
                self._buffer, self._start = b"", 0
        wanted = min(len(view) - given, self._unbuffered)
        if wanted <= 0:
            return given
        target = view[given : given + wanted]
        if self._verifier is not None:
            got = self._verifier.pread_into(self._fd, target, self._next)
        else:
            got = _preadv(self._fd, target, self._next)
        self._next += got
        self._unbuffered = 0 if got < wanted else self._unbuffered - got
        return given + got

    def readline(self, size: int = -1) -> bytes:
        while True:
            end = self._buffer.find(b"\n", self._start)
            available = len(self._buffer) - self._start
            if end >= 0 and (size < 0 or end - self._start < size):
                return self.read(end - self._start + 1)
            if 0 <= size <= available or not self._fill():
                return self.read(size if size >= 0 else available)

    def copy_to(self, out: BinaryIO) -> int:
        """Copy the rest of the range into the open file *out*; returns the bytes copied.

        The blocks are verified first (only those not verified before are read), then the
        kernel copies the bytes file to file (``copy_file_range``), so they never pass through
        Python: exporting a large FlowFile costs one copy, not a read and a write. Where the
        kernel cannot (another file system on an old kernel, a pipe), it is read and written.
        """
        copied = 0
        expected = len(self._buffer) - self._start + self._unbuffered
        if self._start < len(self._buffer):
            copied = _write_all(out, self._buffer[self._start :])
        self._buffer, self._start = b"", 0
        count = self._unbuffered
        if self._verifier is not None and count > 0:
            self._verifier.verify(self._fd, count, self._next)
        try:
            target = _plain_descriptor(out)
            while target is not None and self._unbuffered > 0:
                moved = os.copy_file_range(self._fd, target, self._unbuffered, self._next)
                if moved == 0:
                    break  # the file ends early: the rest is read below, which reports it
                self._next += moved
                self._unbuffered -= moved
                copied += moved
        except (OSError, io.UnsupportedOperation, AttributeError) as error:
            if self._unbuffered != count or (
                isinstance(error, OSError) and error.errno not in _NO_KERNEL_COPY
            ):
                raise
        while chunk := self.read(_COPY_CHUNK):
            copied += _write_all(out, chunk)
        if copied != expected:  # the file was cut short after it was opened
            msg = f"a content claim's file ended {expected - copied} bytes before its range's end"
            raise ContentNotFoundError(msg)
        return copied

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
            self.closed = True

    def __enter__(self) -> RangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
