"""PostgreSQL reads of QueryDatabaseTable(Record): streamed rows, autocommit reads.

What :mod:`processors.sql.query_base` uses when the pool's driver is psycopg: a query's rows
streamed in Fetch Size chunks (:class:`Streamed`) and a read on a pooled connection in
autocommit, the connection set back before it returns to the pool (:func:`reading`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from typing import Any

__all__ = ["Streamed", "chunked_rows", "is_psycopg", "reading"]


def is_psycopg(cursor: Any) -> bool:
    """Whether *cursor* is psycopg's (the other drivers execute and fetch as they always did)."""
    return type(cursor).__module__.split(".")[0] == "psycopg"


def chunked_rows() -> bool:
    """Whether libpq streams rows in chunks (17 and later): else one per message, slower."""
    import psycopg  # noqa: PLC0415 (a psycopg cursor is at hand: it is installed)

    return psycopg.pq.version() >= 170000


class Streamed:
    """A query's rows as psycopg streams them, behind the cursor methods the writers use.

    ``Cursor.stream`` reads Fetch Size rows at a time as the server sends them, so converting
    and writing one chunk overlaps the server making the next (a plain ``execute`` waits for
    the whole result, and holds all of it in the client's memory). The first row is read at
    once: its chunk sets ``description``. :meth:`close` cancels what is left unread (Maximum
    Number of Fragments reached).
    """

    def __init__(
        self, cursor: Any, query: str, args: Any, described: Any, *, binary: bool, size: int
    ) -> None:
        self._cursor = cursor
        self._described = described
        self._rows = cursor.stream(query, args, binary=binary, size=size)
        self._first = list(islice(self._rows, 1))

    @property
    def description(self) -> Any:
        """The result's columns: the first chunk's, or the ``LIMIT 0``'s when there is none."""
        return self._cursor.description or self._described

    def fetchmany(self, size: int) -> list[tuple]:
        """The next *size* rows at most; none at the end."""
        first, self._first = self._first, []
        return first + list(islice(self._rows, size - len(first)))

    def close(self) -> None:
        """End the stream (a query still running is cancelled)."""
        self._rows.close()


@contextmanager
def reading(raw: Any, *, autocommit: bool) -> Iterator[None]:
    """A read on *raw*: in autocommit when asked and psycopg's, else a transaction committed.

    Autocommit spares PostgreSQL's BEGIN and COMMIT, two of a read's few round trips (what a
    short read mostly waits for on a loaded machine). The pool's connections are not in
    autocommit (SQLAlchemy expects transactions), so the mode is set back before the
    connection returns, and a connection that cannot be set back is dropped from the pool.
    """
    driver = getattr(raw, "driver_connection", None)
    if not autocommit or type(driver).__module__.split(".")[0] != "psycopg":
        yield
        raw.commit()
        return
    raw.commit()  # a Validation Query's transaction, if any (none: no round trip)
    driver.autocommit = True
    try:
        yield
    finally:
        try:
            driver.autocommit = False
        except Exception:  # a broken connection: not back into the pool in autocommit
            raw.invalidate()
