"""UnpackContent's readers: the entries of a TAR, a ZIP or a FlowFile package, one at a time.

Each reader yields :class:`Entry` values, the attributes NiFi gives the unpacked FlowFile and a
stream of its content, which the caller reads (or leaves) before asking for the next. Nothing is
read whole: TAR and the FlowFile packages are read front to back from the session's stream; a
ZIP is read through its central directory by :class:`SeekableContent`, which opens the content
again at each place ``zipfile`` seeks to (one stream open at a time).

Entry names are made safe before they become attributes (:func:`~processors._packaging.contained`):
``../../etc/passwd`` or ``/etc/passwd`` becomes ``path`` ``etc`` and ``filename`` ``passwd``, so
no entry can steer a later PutFile outside its directory. The File Filter still sees the name as
the archive holds it, as in NiFi.

Compression bombs are bounded: :func:`~processors._expansion.expansion_limit` (shared with
CompressContent) caps the bytes one archive may unpack to
(:data:`MAX_EXPANSION` times its size plus :data:`EXPANSION_ALLOWANCE`), ZIP entries whose data
overlap (the trick that makes a 10 MB ZIP unpack to terabytes) are refused, and ``zipfile``
never reads past an entry's declared size. Sparse TAR entries (GNU or PAX sparse) are refused in
a TAR and in a FlowFile Tar v1 package: a 3 KB entry can declare gigabytes of holes, which
``tarfile`` fills with zeros as the entry is read.
"""

from __future__ import annotations

import os
import stat
import struct
import tarfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import attrs
import pyzipper

from flowcore.patterns import FlowPattern
from processors._expansion import EXPANSION_ALLOWANCE, MAX_EXPANSION, expansion_limit
from processors._file_attributes import stamp
from processors._packaging import (
    PackagingError,
    contained,
    read_flowfile_stream,
    read_properties_xml,
)

__all__ = [
    "EXPANSION_ALLOWANCE",
    "MAX_ENTRIES",
    "MAX_EXPANSION",
    "ZIP_DATA_ERRORS",
    "Entry",
    "SeekableContent",
    "UnpackError",
    "ZipOptions",
    "check_entry_count",
    "check_not_sparse",
    "expansion_limit",
    "flowfile_stream_entries",
    "flowfile_tar_entries",
    "tar_entries",
    "zip_entries",
]

OCTET_STREAM = "application/octet-stream"
#: The most entries unpacked from one FlowFile. Each unpacked FlowFile is held (about 5 KB of
#: objects) until the input's session commits: a ZIP of 100,000 tiny entries peaks near 600 MB
#: over the process's own, a million would take gigabytes. A ZIP's count is read from its end
#: record before anything else; a TAR or a FlowFile package fails when it reaches the bound.
MAX_ENTRIES = 100_000
_AES_EXTRA = 0x9901  # WinZip AES
_TIME_EXTRA = 0x5455  # extended timestamp

#: What ``zipfile`` and ``pyzipper`` raise for a damaged or foreign ZIP, in its directory or
#: while an entry is read (a bad CRC, a bad AES HMAC, a corrupt extra field). pyzipper (used
#: with a Password) carries its own copy of zipfile: its BadZipFile is not zipfile's.
ZIP_DATA_ERRORS: tuple[type[BaseException], ...] = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    pyzipper.BadZipFile,
    pyzipper.LargeZipFile,
    NotImplementedError,  # a compression method the library lacks
    EOFError,
    KeyError,  # pyzipper's AES strength of a damaged extra field
    struct.error,
)


class UnpackError(ValueError):
    """The content cannot be unpacked as the format (the message says why)."""


@attrs.frozen
class Entry:
    """One unpacked entry.

    Attributes:
        attributes: what NiFi writes on the unpacked FlowFile (before the fragment attributes).
        content: the entry's bytes, to be read before the next entry is asked for.
        size: the entry's size when known up front (None for a FlowFile package's).
    """

    attributes: dict[str, str]
    content: Any
    size: int | None = None


def _check_expansion(total: int, archive_size: int) -> None:
    limit = expansion_limit(archive_size)
    if total > limit:
        msg = (
            f"the entries would unpack to {total} bytes, more than the {limit} allowed for an "
            f"archive of {archive_size} bytes ({MAX_EXPANSION} times its size plus "
            f"{EXPANSION_ALLOWANCE} bytes): a compression bomb?"
        )
        raise UnpackError(msg)


def check_entry_count(count: int) -> None:
    """Raise :class:`UnpackError` when an archive holds more than :data:`MAX_ENTRIES` entries."""
    if count > MAX_ENTRIES:
        msg = (
            f"the archive holds more than {MAX_ENTRIES} entries ({count} at least), the most "
            "UnpackContent unpacks from one FlowFile (each is held in memory until the "
            "FlowFile is done): split the archive into smaller ones"
        )
        raise UnpackError(msg)


def check_not_sparse(member: tarfile.TarInfo) -> None:
    """Raise :class:`UnpackError` when *member* is a sparse file (GNU or PAX sparse).

    Its declared size is mostly holes that ``tarfile`` fills with zeros while it is read: a few
    kilobytes of archive can declare gigabytes. Refused before a byte of it is read.
    """
    if member.issparse():
        msg = (
            f"the entry {member.name!r} is a sparse file declaring {member.size} bytes: sparse "
            "entries are not unpacked (a few bytes of them can stand for gigabytes of holes); "
            "archive the file without --sparse"
        )
        raise UnpackError(msg)


def permissions(mode: int) -> str:
    """NiFi's ``rwxr-xr-x`` form of the permission bits of *mode*."""
    return "".join(c if mode & (1 << (8 - i)) else "-" for i, c in enumerate("rwxrwxrwx"))


def _placed(name: str, *, trailing_slash: bool) -> dict[str, str]:
    """``filename`` and ``path`` of an entry name, made safe; NiFi's ``/`` when at the top.

    TAR's path ends in ``/``, ZIP's does not: NiFi's two readers differ, and so do these.
    """
    safe = contained(name)
    directory, _, filename = safe.rpartition("/")
    if not directory:
        return {"filename": filename, "path": "/"}
    return {"filename": filename, "path": directory + "/" if trailing_slash else directory}


# --- TAR ---------------------------------------------------------------------------------------


def tar_entries(stream: Any, archive_size: int, file_filter: FlowPattern) -> Iterator[Entry]:
    """The files of a TAR whose names the filter finds; directories are skipped.

    Raises:
        UnpackError: not a TAR, or cut short, or it would unpack past :func:`expansion_limit`.
    """
    total = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|") as archive:
            for member in archive:
                if member.isdir() or not file_filter.search(member.name):
                    continue
                check_not_sparse(member)
                total += member.size
                _check_expansion(total, archive_size)
                content = archive.extractfile(member) if member.isreg() else None
                yield Entry(_tar_attributes(member), content, member.size if content else 0)
    except (tarfile.TarError, EOFError, ValueError) as ex:  # ValueError: a PAX sparse map's text
        msg = f"not a readable TAR: {ex}"
        raise UnpackError(msg) from None


def _tar_attributes(member: tarfile.TarInfo) -> dict[str, str]:
    modified = stamp(member.mtime)
    pax = member.pax_headers
    attributes = {
        **_placed(member.name, trailing_slash=True),
        "mime.type": OCTET_STREAM,
        "file.permissions": permissions(member.mode),
        "file.owner": member.uname,
        "file.group": member.gname,
        "file.size": str(member.size),
        "file.lastModifiedTime": modified,
        "file.creationTime": _pax_time(pax, "LIBARCHIVE.creationtime") or modified,
    }
    if changed := _pax_time(pax, "ctime"):
        attributes["file.lastMetadataChange"] = changed
    if accessed := _pax_time(pax, "atime"):
        attributes["file.lastAccessTime"] = accessed
    return attributes


def _pax_time(pax: dict[str, str], key: str) -> str | None:
    try:
        return stamp(float(pax[key])) if key in pax else None
    except ValueError:
        return None


# --- ZIP ---------------------------------------------------------------------------------------


@attrs.frozen
class ZipOptions:
    """The ZIP properties: File Filter, Filename Character Set, Password, stored entries."""

    file_filter: FlowPattern
    charset: str = "UTF-8"
    password: str | None = None
    allow_stored_with_descriptor: bool = False


class SeekableContent:
    """A FlowFile's content as a seekable file for ``zipfile``, read through the session.

    Reads go on from one open stream while they follow each other; a seek elsewhere closes it
    and opens the content again at the new place (``session.read(flowfile, offset, length)``).

    Args:
        open_range: ``open_range(offset, length)`` opens that range of the content.
        size: the content's size.
    """

    def __init__(
        self, open_range: Callable[[int, int], AbstractContextManager[Any]], size: int
    ) -> None:
        self._open_range = open_range
        self._size = size
        self._position = 0
        self._opened: AbstractContextManager[Any] | None = None
        self._stream: Any = None
        self._stream_position = -1

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._position, os.SEEK_END: self._size}[whence]
        if base + offset < 0:
            msg = f"cannot seek to {base + offset}, before the start of the content"
            raise OSError(msg)
        self._position = base + offset
        return self._position

    def read(self, size: int = -1) -> bytes:
        left = self._size - self._position
        if left <= 0:
            return b""
        wanted = left if size is None or size < 0 else min(size, left)
        if self._stream is None or self._stream_position != self._position:
            self.close()
            self._opened = self._open_range(self._position, left)
            self._stream = self._opened.__enter__()
        data = self._stream.read(wanted)
        self._position += len(data)
        self._stream_position = self._position
        return data

    def close(self) -> None:
        """Close the open stream, if any (the next read opens one again)."""
        if self._opened is not None:
            opened, self._opened, self._stream = self._opened, None, None
            opened.__exit__(None, None, None)


def zip_entries(
    content: SeekableContent, archive_size: int, options: ZipOptions
) -> Iterator[Entry]:
    """The files of a ZIP whose names the filter finds, in central directory order.

    Raises:
        UnpackError: not a ZIP, an encrypted entry without the right Password, a stored entry
            with a data descriptor while those are not allowed, overlapping entries, an entry
            that fails its CRC, or more bytes than :func:`expansion_limit`.
    """
    opener = pyzipper.AESZipFile if options.password is not None else zipfile.ZipFile
    try:
        # The directory's entry count, before zipfile reads every entry of it into objects
        # (a private helper, unchanged in CPython for two decades; None: not a ZIP, which
        # the opener says in its words).
        end = zipfile._EndRecData(content)  # type: ignore[attr-defined]
        if end is not None:
            check_entry_count(end[zipfile._ECD_ENTRIES_TOTAL])  # type: ignore[attr-defined]
        with opener(content) as archive:  # type: ignore[arg-type]
            if options.password is not None:
                archive.setpassword(options.password.encode("utf-8"))
            infos = archive.infolist()
            _check_overlaps(infos, archive.start_dir)
            chosen = []
            for info in infos:
                name = _zip_name(info, options.charset)
                if not info.is_dir() and options.file_filter.search(name):
                    chosen.append((info, name))
            _check_expansion(sum(info.file_size for info, _ in chosen), archive_size)
            for info, name in chosen:
                if (
                    info.compress_type == zipfile.ZIP_STORED
                    and info.flag_bits & 0x08
                    and not options.allow_stored_with_descriptor
                ):
                    msg = (
                        f"the entry {name!r} is stored with a data descriptor; set Allow Stored "
                        "Entries With Data Descriptor to true to read it"
                    )
                    raise UnpackError(msg)
                with archive.open(info) as stream:
                    yield Entry(_zip_attributes(info, name), stream, info.file_size)
    except ZIP_DATA_ERRORS as ex:
        msg = f"not a readable ZIP: {ex}"
        raise UnpackError(msg) from None
    except RuntimeError as ex:  # zipfile's "password required" and "Bad password"
        msg = f"cannot decrypt the ZIP: {ex} (set Password to the archive's)"
        raise UnpackError(msg) from None


def _zip_name(info: zipfile.ZipInfo, charset: str) -> str:
    """The entry's name: UTF-8 when flagged so, else decoded with Filename Character Set."""
    if info.flag_bits & 0x800:
        return info.filename
    raw = info.filename.encode("cp437")  # zipfile decoded it as cp437, which loses nothing
    return raw.decode(charset, "replace")


def _check_overlaps(infos: list[zipfile.ZipInfo], directory_start: int) -> None:
    """Refuse entries whose data overlap another's or the central directory."""
    ordered = sorted(infos, key=lambda i: i.header_offset)
    ends = [i.header_offset for i in ordered[1:]] + [directory_start]
    for info, limit in zip(ordered, ends, strict=True):
        if info.header_offset + 30 + info.compress_size > limit:
            msg = (
                f"the entry {info.filename!r} overlaps the next one: entries sharing their "
                "data are how a small ZIP unpacks to terabytes (a compression bomb)"
            )
            raise UnpackError(msg)


def _extra_fields(extra: bytes) -> dict[int, bytes]:
    fields = {}
    while len(extra) >= 4:
        kind, size = struct.unpack("<HH", extra[:4])
        fields[kind] = extra[4 : 4 + size]
        extra = extra[4 + size :]
    return fields


def _zip_attributes(info: zipfile.ZipInfo, name: str) -> dict[str, str]:
    extra = _extra_fields(info.extra)
    if not info.flag_bits & 0x1:
        method = "NONE"
    elif _AES_EXTRA in extra:
        method = "AES"
    else:
        method = "ZIP_STANDARD"
    moment = time.mktime((*info.date_time, 0, 0, -1))  # DOS times are local, as in Java
    stamped = extra.get(_TIME_EXTRA, b"")
    if len(stamped) >= 5 and stamped[0] & 0x1:
        moment = struct.unpack("<i", stamped[1:5])[0]
    # NiFi reads the mode of Unix-made entries only; others show no permission bits
    mode = (info.external_attr >> 16) & 0o777 if info.create_system == 3 else 0
    modified = stamp(moment)
    return {
        **_placed(name, trailing_slash=False),
        "mime.type": OCTET_STREAM,
        "file.encryptionMethod": method,
        "file.size": str(info.file_size),
        "file.permissions": permissions(stat.S_IMODE(mode)),
        "file.lastModifiedTime": modified,
        "file.creationTime": modified,
    }


# --- FlowFile packages --------------------------------------------------------------------------


def flowfile_stream_entries(stream: Any, version: int) -> Iterator[Entry]:
    """The FlowFiles of a FlowFile Stream package, with their packaged attributes.

    Raises:
        UnpackError: not a package of this version, or cut short.
    """
    try:
        for packaged in read_flowfile_stream(stream, version=version):
            yield Entry(packaged.attributes, packaged.content, packaged.size)
    except PackagingError as ex:
        raise UnpackError(str(ex)) from None


def flowfile_tar_entries(stream: Any, *, first_only: bool = False) -> Iterator[Entry]:
    """The FlowFiles of a FlowFile Tar v1 package: ``flowfile.attributes`` then ``.content``.

    NiFi's ``FlowFileUnpackagerV1`` reads only a package's first FlowFile (*first_only*, as
    ListenHTTP reads a request's body); UnpackContent reads all the tars MergeContent writes
    back to back (``ignore_zeros`` reads past each one's end-of-archive blocks). A sparse entry
    is refused (:func:`check_not_sparse`).

    Raises:
        UnpackError: not such a package, cut short, or holding a sparse entry.
    """
    try:
        with tarfile.open(fileobj=stream, mode="r|", ignore_zeros=not first_only) as archive:
            attributes: dict[str, str] | None = None
            for member in archive:
                check_not_sparse(member)
                if attributes is None:
                    if member.name != "flowfile.attributes" or member.size > 64 << 20:
                        msg = f"expected the entry flowfile.attributes, found {member.name!r}"
                        raise UnpackError(msg)
                    xml = archive.extractfile(member)
                    attributes = read_properties_xml(xml.read() if xml else b"")
                    continue
                if member.name != "flowfile.content":
                    msg = f"expected the entry flowfile.content, found {member.name!r}"
                    raise UnpackError(msg)
                yield Entry(attributes, archive.extractfile(member), member.size)
                attributes = None
                if first_only:
                    return
            if attributes is not None:
                msg = "the package ends after flowfile.attributes, without flowfile.content"
                raise UnpackError(msg)
    except (tarfile.TarError, EOFError, ValueError, PackagingError) as ex:
        msg = f"not a readable FlowFile Tar v1 package: {ex}"
        raise UnpackError(msg) from None
