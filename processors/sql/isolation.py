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
from flowcore.processor.context import ProcessContext
from flowcore.properties import AllowableValue, PropertyDescriptor

__all__ = ["ISOLATION_LEVELS", "TRANS_ISOLATION_LEVEL", "isolated", "isolation_of"]

#: Transaction Isolation Level's values (JDBC's constants) as SQLAlchemy names the levels;
#: TRANSACTION_NONE (0) sets none (the driver's default stays).
ISOLATION_LEVELS = {
    "1": "READ UNCOMMITTED",
    "2": "READ COMMITTED",
    "4": "REPEATABLE READ",
    "8": "SERIALIZABLE",
}


TRANS_ISOLATION_LEVEL = PropertyDescriptor(
    "Transaction Isolation Level",
    description="This setting will set the transaction isolation level for the database "
    "connection for drivers that support this setting",
    aliases=("transaction-isolation-level",),
    allowable_values=(
        AllowableValue("0", "TRANSACTION_NONE"),
        AllowableValue("2", "TRANSACTION_READ_COMMITTED"),
        AllowableValue("1", "TRANSACTION_READ_UNCOMMITTED"),
        AllowableValue("4", "TRANSACTION_REPEATABLE_READ"),
        AllowableValue("8", "TRANSACTION_SERIALIZABLE"),
    ),
)


def isolation_of(processor: Any, context: ProcessContext) -> str | None:
    """The level to read at, as SQLAlchemy names it (None: not set, or TRANSACTION_NONE).

    Transaction Isolation Level where the processor has it: NiFi's QueryDatabaseTable has
    it, QueryDatabaseTableRecord not.
    """
    if TRANS_ISOLATION_LEVEL not in processor.property_descriptors:
        return None
    return ISOLATION_LEVELS.get(context.get_property(TRANS_ISOLATION_LEVEL).value or "")


#: The levels from weakest to strongest: a database without one runs the next stronger it
#: has (the SQL standard's rule; SQLite's JDBC driver takes READ COMMITTED as SERIALIZABLE).
_ORDER = ("READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE")


@contextlib.contextmanager
def isolated(pool: Any, raw: Any, level: str | None) -> Iterator[None]:
    """The transactions on *raw* at isolation *level* (NiFi's setTransactionIsolation).

    A level the database lacks is raised to the next one it has, as SQLite's JDBC driver
    does (PostgreSQL itself runs READ UNCOMMITTED as READ COMMITTED). The driver's default is
    set back before the connection returns to the pool.

    Raises:
        ProcessException: the database has neither the level nor a stronger one.
    """
    if level is None:
        yield
        return
    dialect = pool.engine().dialect
    raw.commit()  # a level is set between transactions (a Validation Query's, if any)
    errors = []
    for candidate in _ORDER[_ORDER.index(level) :]:
        try:
            dialect.set_isolation_level(raw.driver_connection, candidate)
            break
        except Exception as error:  # SQLAlchemy's ArgumentError naming the dialect's levels
            errors.append(error)
    else:
        msg = (
            f"Transaction Isolation Level {level} cannot be set on {pool.transit_uri()} "
            f"({errors[0]}): choose one the database supports, or leave it unset"
        )
        raise ProcessException(msg) from errors[0]
    try:
        yield
    finally:
        try:
            raw.rollback()  # nothing left open (the read commits; an error's is ended)
            dialect.reset_isolation_level(raw.driver_connection)
        except Exception:  # a broken connection: not back into the pool at that level
            raw.invalidate()
