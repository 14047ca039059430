"""NiFi's Database Type values, shared by the SQL processors that take one.

NiFi builds its ``Database Type`` property from the ``DatabaseAdapter`` implementations its
ServiceLoader finds (``DatabaseAdapterDescriptor``): in NiFi 2, "Database Dialect Service"
(statements from a ``DatabaseDialectService``), Generic, Oracle, Oracle 12+, MS SQL 2012+,
MS SQL 2008, MySQL, PostgreSQL and Phoenix, each described as its adapter describes itself.
A value outside them (a misspelt "Postgres") is a validation problem naming the allowed
values, as in NiFi, instead of a setting silently ignored. flowcore's statements come from the
connection pool's dialect, so every value is accepted as NiFi's is; GenerateTableFetch pages by
it.
"""

from __future__ import annotations

from flowcore.properties import AllowableValue, PropertyDescriptor

__all__ = [
    "DATABASE_DIALECT_SERVICE",
    "DATABASE_TYPES",
    "GENERIC",
    "database_type_descriptor",
]

#: The Database Type that takes statements from the Database Dialect Service property.
DATABASE_DIALECT_SERVICE = "Database Dialect Service"
GENERIC = "Generic"

#: NiFi 2's allowable values, in its ServiceLoader's order, with its adapters' descriptions.
DATABASE_TYPES: tuple[AllowableValue, ...] = (
    AllowableValue(
        DATABASE_DIALECT_SERVICE,
        description="Requires configuring a Database Dialect Service for SQL statements",
    ),
    AllowableValue(GENERIC, description="Generates ANSI SQL"),
    AllowableValue("Oracle", description="Generates Oracle compliant SQL"),
    AllowableValue(
        "Oracle 12+", description="Generates Oracle compliant SQL for version 12 or greater"
    ),
    AllowableValue(
        "MS SQL 2012+",
        description="Generates MS SQL Compatible SQL, for version 2012 or greater",
    ),
    AllowableValue("MS SQL 2008", description="Generates MS SQL Compatible SQL for version 2008"),
    AllowableValue("MySQL", description="Generates MySQL compatible SQL"),
    AllowableValue("PostgreSQL", description="Generates PostgreSQL compatible SQL"),
    AllowableValue("Phoenix", description="Generates Phoenix compliant SQL"),
)


def database_type_descriptor(description: str, *aliases: str) -> PropertyDescriptor:
    """NiFi's ``Database Type``: required, Generic by default, one of :data:`DATABASE_TYPES`.

    Args:
        description: what the processor does with it (flowcore's own note).
        *aliases: the property's former internal names (``db-fetch-db-type``, ``db-type``).
    """
    return PropertyDescriptor(
        "Database Type",
        description=description,
        default=GENERIC,
        required=True,
        allowable_values=DATABASE_TYPES,
        aliases=aliases,
    )
