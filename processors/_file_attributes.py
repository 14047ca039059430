"""Files picked up from disk, shared by GetFile, ListFile, FileSplitter and PutFile.

The walk over an input directory, the filters GetFile and ListFile share (:class:`FileSelection`),
NiFi's attributes of each file found, and names that are not
valid UTF-8. POSIX file names are bytes; Python shows the bytes that are not UTF-8 as lone
surrogates, which no attribute, queue segment or provenance row can hold. So such a name is
ingested losslessly in two attributes: ``filename`` (and ``path``, ``absolute.path``) as text
with each invalid byte shown as U+FFFD, and ``filename.bytes``, the exact name percent-encoded
(RFC 3986). PutFile writes the exact bytes back when ``filename`` is unchanged.
"""

from __future__ import annotations

import functools
import grp
import logging
import os
import pwd
import stat
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import attrs

from flowcore.patterns import FlowPattern, compile_pattern
from flowcore.processor.context import ProcessContext

__all__ = [
    "RAW_FILENAME",
    "FileSelection",
    "exact_name",
    "file_attributes",
    "key_path",
    "path_key",
    "readable",
    "relative_path",
    "stamp",
    "text_of",
    "walk_files",
]

#: The exact bytes of a file name that is not valid UTF-8, percent-encoded.
RAW_FILENAME = "filename.bytes"
_ENCODED_KEY = "fs:"  # a listing-state key for a path that is not valid UTF-8

_DATE_FORMAT = "%Y-%m-%dT%H:%M:%S%z"  # NiFi's yyyy-MM-dd'T'HH:mm:ssZ


def stamp(seconds: float) -> str:
    """A file time in NiFi's attribute format."""
    return time.strftime(_DATE_FORMAT, time.localtime(seconds))


@functools.lru_cache(maxsize=256)
def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


@functools.lru_cache(maxsize=256)
def _group(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def relative_path(path: Path, root: Path) -> str:
    """The file's directory relative to *root*, ending in ``/`` (NiFi's ``path`` attribute)."""
    parent, base = os.fspath(path.parent), os.fspath(root)
    if parent == base:
        return "/"
    if parent.startswith(base.rstrip("/") + "/"):
        return parent[len(base.rstrip("/")) + 1 :] + "/"
    relative = os.path.relpath(parent, base)
    return ("" if relative == "." else relative) + "/"


def text_of(name: str) -> str:
    """*name* as valid UTF-8 text: bytes that are not UTF-8 become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def path_key(path: str | os.PathLike[str]) -> str:
    """A listing-state key for *path* that survives any file name (UTF-8 or not)."""
    text = os.fspath(path)
    if text_of(text) == text:
        return text
    return _ENCODED_KEY + urllib.parse.quote_from_bytes(os.fsencode(text))


def key_path(key: str) -> Path:
    """The path a :func:`path_key` names."""
    if key.startswith(_ENCODED_KEY):
        return Path(os.fsdecode(urllib.parse.unquote_to_bytes(key[len(_ENCODED_KEY) :])))
    return Path(key)


def exact_name(attributes: Mapping[str, str]) -> str:
    """The file name to write for a FlowFile (PutFile).

    Its exact original bytes when it came with them (``filename.bytes``) and ``filename`` was
    not changed since; else ``filename``.
    """
    filename = attributes.get("filename", "")
    raw = attributes.get(RAW_FILENAME)
    if raw:
        exact = os.fsdecode(urllib.parse.unquote_to_bytes(raw))
        if text_of(exact) == filename:
            return exact
    return filename


def file_attributes(path: Path, root: Path, info: os.stat_result) -> dict[str, str]:
    """``filename``, ``path``, ``absolute.path`` and the ``file.*`` attributes of GetFile.

    A name that is not valid UTF-8 also gets ``filename.bytes`` (see the module's docstring).
    """
    named = {}
    if text_of(path.name) != path.name:
        named[RAW_FILENAME] = urllib.parse.quote_from_bytes(os.fsencode(path.name))
    return {
        "filename": text_of(path.name),
        **named,
        "path": text_of(relative_path(path, root)),
        "absolute.path": text_of(str(path.parent)) + "/",
        "file.creationTime": stamp(getattr(info, "st_birthtime", info.st_ctime)),
        "file.lastModifiedTime": stamp(info.st_mtime),
        "file.lastAccessTime": stamp(info.st_atime),
        "file.owner": _owner(info.st_uid),
        "file.group": _group(info.st_gid),
        "file.permissions": stat.filemode(info.st_mode)[1:],
        "file.size": str(info.st_size),
    }


def walk_files(
    root: Path,
    *,
    recursive: bool,
    name_filter: FlowPattern,
    skip_hidden: bool = False,
    directory_filter: Callable[[str], object] | None = None,
    skip_hidden_directories: bool | None = None,
) -> Iterator[tuple[Path, os.stat_result]]:
    """``(path, stat)`` of the files under *root* whose names match *name_filter*.

    Directories and names are visited sorted, so listings are stable from scan to scan.
    *directory_filter* gets each directory relative to *root* (``""`` for *root* itself); files
    that vanish while being listed are skipped. Hidden directories are skipped with hidden
    files unless *skip_hidden_directories* says otherwise (NiFi's ListFile enters them).
    """
    skip_directories = skip_hidden if skip_hidden_directories is None else skip_hidden_directories
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        if not recursive:
            subdirs.clear()
        elif skip_directories:
            subdirs[:] = [d for d in subdirs if not d.startswith(".")]
        if directory_filter is not None:
            relative = os.path.relpath(directory, root)
            if not directory_filter("" if relative == "." else relative):
                continue
        for name in sorted(files):
            if (skip_hidden and name.startswith(".")) or not name_filter.accepts(name):
                continue
            path = Path(directory) / name
            try:
                info = path.stat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue  # a FIFO, socket or device: opening it could block a run for good
            yield path, info


def readable(path: Path, logger: logging.Logger) -> bool:
    """Whether *path* can be read; a warning names it when not."""
    if os.access(path, os.R_OK):
        return True
    logger.warning("Cannot read %s; skipping it", path)
    return False


@attrs.frozen
class FileSelection:
    """Which files of a directory GetFile and ListFile take: their shared filter properties.

    File Filter (on the name), Path Filter (on the directory relative to the input directory,
    when recursing), Recurse Subdirectories, Ignore Hidden Files, Minimum/Maximum File Age
    (by modification time) and Minimum/Maximum File Size, read once from the context.
    """

    name_filter: FlowPattern
    path_filter: FlowPattern | None
    recursive: bool
    skip_hidden: bool
    min_age_ms: int
    max_age_ms: int | None
    min_size: int
    max_size: int | None

    @classmethod
    def of(cls, context: ProcessContext) -> FileSelection:
        """The selection the processor's properties configure."""
        path_text = context.get_property("Path Filter").value
        recursive = bool(context.get_property("Recurse Subdirectories").as_boolean())
        max_age = context.get_property("Maximum File Age").as_time_period("ms")
        max_size = context.get_property("Maximum File Size").as_data_size("B")
        return cls(
            name_filter=compile_pattern(context.get_property("File Filter").value or ".*"),
            path_filter=compile_pattern(path_text) if path_text and recursive else None,
            recursive=recursive,
            skip_hidden=bool(context.get_property("Ignore Hidden Files").as_boolean()),
            min_age_ms=int(context.get_property("Minimum File Age").as_time_period("ms") or 0),
            max_age_ms=None if max_age is None else int(max_age),
            min_size=int(context.get_property("Minimum File Size").as_data_size("B") or 0),
            max_size=None if max_size is None else int(max_size),
        )

    def files(
        self, root: Path, now_ms: int, *, skip_hidden_directories: bool = True
    ) -> Iterator[tuple[Path, os.stat_result]]:
        """``(path, stat)`` of the files under *root* selected at *now_ms* (sorted walk)."""
        directory_filter = self.path_filter.accepts if self.path_filter is not None else None
        for path, info in walk_files(
            root,
            recursive=self.recursive,
            name_filter=self.name_filter,
            skip_hidden=self.skip_hidden,
            directory_filter=directory_filter,
            skip_hidden_directories=self.skip_hidden and skip_hidden_directories,
        ):
            age = now_ms - info.st_mtime_ns // 1_000_000
            young = self.min_age_ms > 0 and age < self.min_age_ms  # a file from the future: kept
            if young or (self.max_age_ms is not None and age > self.max_age_ms):
                continue
            size = info.st_size
            if size < self.min_size or (self.max_size is not None and size > self.max_size):
                continue
            yield path, info
