"""The provenance database's environmental faults, as one line naming the database.

SQLAlchemy raises a database's refusals as ``OperationalError`` with the driver's text inside,
which reached the user as a page of SQL and parameters (issue 31): another program holding a
write lock on ``provenance.db`` (an ``sqlite3`` shell or a database browser left in a
transaction), or the disk under ``provenance/`` full. Both are the user's to fix and cost
nothing committed: the FlowFile log names every event file not yet indexed, so the next start
indexes them. :func:`named_faults` turns them into a :class:`~flowcore.errors.RepositoryError`
naming the database and the fix, or a :class:`~flowcore.errors.StorageFaultError` (an
``ENOSPC`` error whose file name is the database) that ``flowcore`` prints as a full disk.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from sqlalchemy import Engine, exc

from flowcore.errors import RepositoryError, StorageFaultError

__all__ = ["database_name", "named_faults", "with_named_faults"]

_LOCKED = ("database is locked", "database table is locked", "database is busy")
_Method = TypeVar("_Method", bound=Callable[..., Any])


def database_name(engine: Engine) -> str:
    """The database as a user knows it: a SQLite file's path, else its URL without password."""
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database:
        return url.database.removeprefix("file:").split("?", 1)[0]
    return url.render_as_string(hide_password=True)


def _fault(error: exc.OperationalError, where: str) -> OSError | None:
    text = str(error.orig or error).lower()
    if any(sign in text for sign in _LOCKED):
        msg = (
            f"the provenance database {where} is locked by another program writing to it (an "
            "sqlite3 shell or a database browser with a transaction open?): close that "
            "program's transaction and run again; the run stopped and kept everything it had "
            "committed (its events are indexed at the next start)"
        )
        return RepositoryError(msg)
    if "database or disk is full" in text or ("disk i/o error" in text and _full_disk(where)):
        return StorageFaultError(errno.ENOSPC, os.strerror(errno.ENOSPC), where)
    return None


def _full_disk(where: str) -> bool:
    """Whether the file system holding *where* has no space left (a disk I/O error's cause)."""
    try:
        status = os.statvfs(os.path.dirname(where) or ".")
    except OSError:
        return False
    return status.f_bavail == 0


@contextlib.contextmanager
def named_faults(engine: Engine) -> Iterator[None]:
    """Run the block; a lock held by another program or a full disk ends it in one line.

    Raises:
        RepositoryError: another program holds a write lock on the database.
        StorageFaultError: the disk holding the database is full (``filename`` names it).
    """
    try:
        yield
    except exc.OperationalError as error:
        fault = _fault(error, database_name(engine))
        if fault is None:
            raise
        raise fault from None


def with_named_faults(method: _Method) -> _Method:
    """Decorate a repository method writing through ``self.engine`` with :func:`named_faults`."""

    @functools.wraps(method)
    def named(self: Any, *args: Any, **kwargs: Any) -> Any:
        with named_faults(self.engine):
            return method(self, *args, **kwargs)

    return named  # type: ignore[return-value]
