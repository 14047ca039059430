"""File-level building blocks shared by the durable repositories.

Every repository file that must be whole or absent (checkpoints, queue segments, provenance event
files) is written the same way, and every framed format opens with the same magic-and-version
check, so corruption is reported in one voice: the file, the offset and what is wrong.
"""

from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path
from typing import Any

import attrs

from flowcore.errors import WalCorruptionError

__all__ = ["FileFormat", "file_stem", "fsync_directory", "read_header", "write_atomically"]


def file_stem(owner: str, default: str) -> str:
    """*owner* (a task attempt) made safe for a file name; *default* when it is empty."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in owner) or default


def fsync_directory(path: Path) -> None:
    """Make a rename in *path* durable (POSIX needs the directory fsynced); best effort."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):  # some filesystems refuse fsync on directories
            os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(
    final: Path,
    data: bytes,
    *,
    partial: Path | None = None,
    sync: bool = True,
    sync_directory: bool = False,
) -> None:
    """Write *data* under *partial* (default ``<final>.part``), fsync it, rename it to *final*.

    A crash leaves either the old *final* or the new one, never a torn file under that name.
    A write the file system refuses (a full disk) names the file, and leaves no partial file
    taking space.
    """
    partial = partial or final.with_name(final.name + ".part")
    try:
        with open(partial, "wb") as out:
            out.write(data)
            out.flush()
            if sync:
                os.fsync(out.fileno())
    except OSError as error:
        with contextlib.suppress(OSError):
            partial.unlink()
        if error.filename is not None:
            raise
        raise OSError(error.errno, error.strerror, str(partial)) from error
    os.replace(partial, final)
    if sync_directory:
        fsync_directory(final.parent)


@attrs.frozen
class FileFormat:
    """A framed file format: magic bytes, then a fixed header whose first field is the version.

    Attributes:
        kind: what the file is, in error messages (``"segment"``).
        magic: the bytes every such file starts with.
        header: the fixed header after the magic; its first field is the format version.
        version: the version this flowcore writes and reads.
        also_reads: older versions this flowcore still reads.
    """

    kind: str
    magic: bytes
    header: struct.Struct
    version: int
    also_reads: frozenset[int] = frozenset()

    @property
    def start(self) -> int:
        """Where the data after the fixed header begins."""
        return len(self.magic) + self.header.size


def read_header(path: Path, data: bytes, fmt: FileFormat) -> tuple[Any, ...]:
    """The fixed header fields of a framed file, the first being its format version.

    Raises:
        WalCorruptionError: the magic is wrong, the file is too short, or the version is not
            the one this flowcore reads.
    """
    if not data.startswith(fmt.magic) or len(data) < fmt.start:
        msg = f"{path} is not a flowcore {fmt.kind} (bad magic in the header at offset 0)"
        raise WalCorruptionError(msg)
    fields = fmt.header.unpack_from(data, len(fmt.magic))
    if fields[0] != fmt.version and fields[0] not in fmt.also_reads:
        msg = (
            f"{path} has {fmt.kind} format version {fields[0]}; this flowcore reads version "
            f"{fmt.version} (open it with the flowcore that wrote it)"
        )
        raise WalCorruptionError(msg)
    return fields
