"""Source files deleted or moved after a commit: GetFile's deletions, FetchFile's completion.

A source that takes a file in (GetFile without Keep Source File, FetchFile with Completion
Strategy ``Delete File`` or ``Move File``) must not touch the file before the FlowFile holding
its bytes is durable: a kill -9 in between would lose it. So the session stages a
:class:`~flowcore.session.host.Disposal`, the task records it in its effect file
(:mod:`repositories.effects`), and :func:`dispose` carries it out after the write-ahead log
transaction, and again at start-up if the process died in between. Every step is idempotent:

- a source already gone was deleted or moved before the crash: done;
- a move links the source at its target (which never overwrites) and then unlinks the source,
  so a crash between the two leaves both names on one file, which the next attempt recognises
  (same inode) and finishes;
- across file systems, where neither link nor rename works, the file is copied to a hidden
  temporary beside the target, fsynced, linked into place and only then removed at the source;
  a target left by a crashed attempt is recognised by its size and modification time (the copy
  keeps both).

Only the version of the file that was read is deleted or moved (its size, modification time and
inode, recorded when it was staged): a file rewritten before the commit, or a new file of the same
name found when a crashed run's disposals are finished, was never ingested and is left, with a
warning.

When the target exists, the move follows its :class:`~flowcore.session.host.MoveConflict`, as
NiFi's FetchFile does at that moment: rename (to the alternative name chosen when the move was
staged, so a second attempt picks the same one), replace, keep the existing file (the source is
deleted), or fail (both are left; a warning names them).
"""

from __future__ import annotations

import enum
import errno
import hashlib
import logging
import os
import shutil
from pathlib import Path

from flowcore.session.external_files import fingerprint
from flowcore.session.host import Disposal, MoveConflict

__all__ = ["Disposed", "dispose"]

LOG = logging.getLogger("flowcore.repositories.disposals")
#: errno values of a link refused because the file system has no hard links.
_NO_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK})


class Disposed(enum.Enum):
    """What carrying out one disposal did."""

    DELETED = "deleted"  # the source was deleted
    MOVED = "moved"  # the source is at its target now
    RENAMED = "renamed"  # the target existed: the source is at the alternative name
    KEPT_EXISTING = "kept existing"  # the target existed and was kept: the source deleted
    LEFT = "left"  # the target existed and the conflict strategy is Fail: nothing was done
    CHANGED = "changed"  # the source is not the version read (rewritten, or a new file): left
    ALREADY = "already"  # the source was gone already (done before a crash)


def dispose(disposal: Disposal) -> Disposed:
    """Delete or move *disposal*'s source; what happened (idempotent).

    The directories changed are not fsynced here: the caller syncs them once for many.

    Raises:
        OSError: the file system refused (permissions, a full disk); the source is left as it
            was, or, for a move across file systems, possibly copied too.
    """
    source = Path(disposal.source)
    if not _version_read(disposal):
        LOG.warning(
            "left %s in place: it is not the version that was read (rewritten since, or a new "
            "file of the same name), so it was never ingested",
            source,
        )
        return Disposed.CHANGED
    if disposal.target is None:
        try:
            source.unlink()
        except FileNotFoundError:
            return Disposed.ALREADY
        return Disposed.DELETED
    if not os.path.lexists(source):
        return Disposed.ALREADY
    target = Path(disposal.target)
    target.parent.mkdir(parents=True, exist_ok=True)
    conflict = disposal.conflict
    if _move(source, target, replace=conflict is MoveConflict.REPLACE):
        return Disposed.MOVED
    if conflict is MoveConflict.KEEP:
        source.unlink(missing_ok=True)
        return Disposed.KEPT_EXISTING
    alternative = disposal.alternative
    renamed = conflict is MoveConflict.RENAME and alternative is not None
    if renamed and _move(source, target.with_name(str(alternative)), replace=False):
        return Disposed.RENAMED
    LOG.warning(
        "could not move %s to %s: a file of that name exists and the Move Conflict Strategy is "
        "%r; left both as they are",
        source,
        target,
        conflict.value,
    )
    return Disposed.LEFT


def _version_read(disposal: Disposal) -> bool:
    """Whether the file at the source is the version read (or gone, or of unknown version)."""
    if disposal.fingerprint is None:
        return True
    try:
        return fingerprint(disposal.source) == disposal.fingerprint
    except FileNotFoundError:
        return True  # gone: done before a crash, or by someone else
    except OSError:
        return True  # unreadable: the disposal itself reports what goes wrong


def _move(source: Path, target: Path, *, replace: bool) -> bool:
    """Move *source* to *target*; False (nothing done) when *target* exists and may not go."""
    if replace:
        try:
            os.replace(source, target)
        except OSError as error:
            if error.errno != errno.EXDEV:
                raise
            return _copy_across(source, target, replace=True)
        return True
    try:
        os.link(source, target, follow_symlinks=False)  # never overwrites
    except FileExistsError:
        if not _same(source, target):
            return False
    except OSError as error:
        if error.errno == errno.EXDEV:
            return _copy_across(source, target, replace=False)
        if error.errno not in _NO_LINKS:
            raise
        # No hard links here (vfat, many SMB and FUSE mounts): check, then rename, as NiFi's
        # Files.move does (a file appearing in between is overwritten).
        if os.path.lexists(target):
            return False
        os.rename(source, target)
        return True
    source.unlink(missing_ok=True)
    return True


def _same(source: Path, target: Path) -> bool:
    """Whether *target* is *source* under a second name (a crash between link and unlink)."""
    try:
        return os.path.samestat(source.lstat(), target.lstat())
    except FileNotFoundError:
        return False


def _copy_across(source: Path, target: Path, *, replace: bool) -> bool:
    """Move *source* to another file system: copy, fsync, link into place, then unlink it."""
    if not replace and os.path.lexists(target):
        if not _copied(source, target):
            return False
        source.unlink(missing_ok=True)  # the copy was made before a crash
        return True
    digest = hashlib.blake2b(os.fsencode(f"{source}\0{target}"), digest_size=8).hexdigest()
    temporary = target.parent / f".flowcore-{digest}.part"
    shutil.copy2(source, temporary, follow_symlinks=False)
    fd = os.open(temporary, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    if replace:
        os.replace(temporary, target)
    else:
        try:
            os.link(temporary, target)
        except FileExistsError:
            temporary.unlink()
            return False
        except OSError as error:
            if error.errno not in _NO_LINKS:
                raise
            if os.path.lexists(target):
                temporary.unlink()
                return False
            os.rename(temporary, target)
        temporary.unlink(missing_ok=True)
    source.unlink(missing_ok=True)
    return True


def _copied(source: Path, target: Path) -> bool:
    """Whether *target* is a copy of *source* made by :func:`_copy_across` (size and mtime)."""
    try:
        left, right = source.lstat(), target.lstat()
    except FileNotFoundError:
        return False
    return left.st_size == right.st_size and left.st_mtime_ns == right.st_mtime_ns
