"""NiFi's attributes of a file picked up from disk, shared by GetFile and FileSplitter."""

from __future__ import annotations

import grp
import os
import pwd
import stat
import time
from pathlib import Path

__all__ = ["file_attributes", "relative_path", "stamp"]

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
