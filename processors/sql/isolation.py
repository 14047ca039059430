"""QueryDatabaseTable(Record)'s Transaction Isolation Level on a read's connection.

NiFi calls ``Connection.setTransactionIsolation`` with the property's JDBC constant before
its queries; here the level is set through SQLAlchemy's dialect on the pooled connection's
driver connection (PostgreSQL, MySQL, SQLite each as they support it) and set back after.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from flowcore.errors import ProcessException

__all__ = ["ISOLATION_LEVELS", "isolated"]

#: Transaction Isolation Level's values (JDBC's constants) as SQLAlchemy names the levels;
#: TRANSACTION_NONE (0) sets none (the driver's default stays).
ISOLATION_LEVELS = {
    "1": "READ UNCOMMITTED",
    "2": "READ COMMITTED",
    "4": "REPEATABLE READ",
    "8": "SERIALIZABLE",
}


@contextlib.contextmanager
def isolated(pool: Any, raw: Any, level: str | None) -> Iterator[None]:
    """The transactions on *raw* at isolation *level* (NiFi's setTransactionIsolation).

    The driver's default is set back before the connection returns to the pool.

    Raises:
        ProcessException: the database has no such level (SQLite's READ COMMITTED, say).
    """
    if level is None:
        yield
        return
    dialect = pool.engine().dialect
    raw.commit()  # a level is set between transactions (a Validation Query's, if any)
    try:
        dialect.set_isolation_level(raw.driver_connection, level)
    except Exception as error:
        msg = (
            f"Transaction Isolation Level {level} cannot be set on {pool.transit_uri()} "
            f"({error}): choose one the database supports, or leave it unset"
        )
        raise ProcessException(msg) from error
    try:
        yield
    finally:
        try:
            raw.rollback()  # nothing left open (the read commits; an error's is ended)
            dialect.reset_isolation_level(raw.driver_connection)
        except Exception:  # a broken connection: not back into the pool at that level
            raw.invalidate()
