"""Files picked up from disk, shared by GetFile and FileSplitter.

The walk over an input directory, and NiFi's attributes of each file found.
"""

from __future__ import annotations

import grp
import logging
import os
import pwd
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from flowcore.patterns import FlowPattern

__all__ = ["file_attributes", "readable", "relative_path", "stamp", "walk_files"]

_DATE_FORMAT = "%Y-%m-%dT%H:%M:%S%z"  # NiFi's yyyy-MM-dd'T'HH:mm:ssZ


def stamp(seconds: float) -> str:
    """A file time in NiFi's attribute format."""
    return time.strftime(_DATE_FORMAT, time.localtime(seconds))


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def relative_path(path: Path, root: Path) -> str:
    """The file's directory relative to *root*, ending in ``/`` (NiFi's ``path`` attribute)."""
    relative = os.path.relpath(path.parent, root)
    return ("" if relative == "." else relative) + "/"


def file_attributes(path: Path, root: Path, info: os.stat_result) -> dict[str, str]:
    """``filename``, ``path``, ``absolute.path`` and the ``file.*`` attributes of GetFile."""
    return {
        "filename": path.name,
        "path": relative_path(path, root),
        "absolute.path": str(path.parent) + "/",
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
) -> Iterator[tuple[Path, os.stat_result]]:
    """``(path, stat)`` of the files under *root* whose names match *name_filter*.

    Directories and names are visited sorted, so listings are stable from scan to scan.
    *directory_filter* gets each directory relative to *root* (``""`` for *root* itself); files
    that vanish while being listed are skipped.
    """
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        if not recursive:
            subdirs.clear()
        elif skip_hidden:
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
