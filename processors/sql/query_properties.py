"""QueryDatabaseTable's properties and its kept maxima as text (NiFi's names and state keys).

Kept apart from the reads (:mod:`processors.sql.query_base`): QueryDatabaseTable,
QueryDatabaseTableRecord and GenerateTableFetch all read these properties, and the listing and
GenerateTableFetch keep and bound their maxima the same way.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR, TIME_PERIOD_VALIDATOR
from processors.sql.database_types import database_type_descriptor

__all__ = [
    "AUTO_COMMIT",
    "COLUMN_NAMES",
    "DB_TYPE",
    "FETCH_SIZE",
    "INITIAL_LOAD_STRATEGY",
    "MAX_FRAGMENTS",
    "MAX_ROWS_PER_FLOW_FILE",
    "MAX_VALUE_COLUMN_NAMES",
    "OUTPUT_BATCH_SIZE",
    "QUERY_TIMEOUT",
    "SQL_QUERY",
    "TABLE_NAME",
    "WHERE_CLAUSE",
    "bound_param",
    "state_key",
]

_ENV = ExpressionLanguageScope.ENVIRONMENT
NAMESPACE_DELIMITER = "@!@"
INITIAL_MAX_VALUE_PROP_START = "initial.maxvalue."

DB_TYPE = database_type_descriptor(
    "Database Type for generating statements specific to a particular service or vendor "
    "(flowcore's statements are the same for all).",
    "db-fetch-db-type",
)
TABLE_NAME = PropertyDescriptor(
    "Table Name",
    description="The name of the database table to be queried. When a custom query is used, "
    "this property is used to alias the query and appears as an attribute on the FlowFile.",
    required=True,
    el_scope=_ENV,
)
COLUMN_NAMES = PropertyDescriptor(
    "Columns to Return",
    description="A comma-separated list of column names to be used in the query. If no "
    "column names are supplied, all columns in the specified table will be returned.",
    el_scope=_ENV,
)
WHERE_CLAUSE = PropertyDescriptor(
    "Additional WHERE clause",
    description="A custom clause to be added in the WHERE condition when building SQL queries.",
    el_scope=_ENV,
    aliases=("db-fetch-where-clause", "Additional WHERE Clause"),  # NiFi 2.7's name
)
SQL_QUERY = PropertyDescriptor(
    "Custom Query",
    description="A custom SQL query used to retrieve data. Instead of building a SQL query "
    "from other properties, this query will be wrapped as a sub-query.",
    el_scope=_ENV,
    aliases=("db-fetch-sql-query",),
)
MAX_VALUE_COLUMN_NAMES = PropertyDescriptor(
    "Maximum-value Columns",
    description="A comma-separated list of column names. The processor will keep track of "
    "the maximum value for each column that has been returned since the processor started "
    "running.",
    el_scope=_ENV,
)
INITIAL_LOAD_STRATEGY = PropertyDescriptor(
    "Initial Load Strategy",
    description="How to handle existing rows in the database table when the processor is "
    "started for the first time (or its state has been cleared).",
    default="Start at Beginning",
    aliases=("initial-load-strategy",),
    required=True,
    allowable_values=(
        AllowableValue(
            "Start at Beginning",
            "Start at Beginning",
            "Loads all existing rows from the database table.",
        ),
        AllowableValue(
            "Start at Current Maximum Values",
            "Start at Current Maximum Values",
            "Loads only the newly inserted or updated rows based on the maximum "
            "value(s) of the column(s) configured in the 'Maximum-value Columns' "
            "property.",
        ),
    ),
)
QUERY_TIMEOUT = PropertyDescriptor(
    "Max Wait Time",
    description="The maximum amount of time allowed for a running SQL select query, zero "
    "means there is no limit.",
    default="0 seconds",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
    el_scope=_ENV,
)
FETCH_SIZE = PropertyDescriptor(
    "Fetch Size",
    description="The number of result rows to be fetched from the result set at a time.",
    default="0",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_ENV,
)
AUTO_COMMIT = PropertyDescriptor(
    "Set Auto Commit",
    description="Allows enabling or disabling the auto commit functionality of the DB connection.",
    allowable_values=("true", "false"),
    el_scope=_ENV,
)
MAX_ROWS_PER_FLOW_FILE = PropertyDescriptor(
    "Max Rows Per Flow File",
    description="The maximum number of result rows that will be included in a single "
    "FlowFile. If the value specified is zero, then all rows are returned in a single FlowFile.",
    default="0",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_ENV,
    aliases=("qdbt-max-rows", "Max Rows Per FlowFile"),
)
OUTPUT_BATCH_SIZE = PropertyDescriptor(
    "Output Batch Size",
    description="The number of output FlowFiles to queue before committing the process "
    "session (flowcore commits them with the listing state in any case).",
    default="0",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_ENV,
    aliases=("qdbt-output-batch-size",),
)
MAX_FRAGMENTS = PropertyDescriptor(
    "Maximum Number of Fragments",
    description="The maximum number of fragments. If the value specified is zero, then all "
    "fragments are returned.",
    default="0",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_ENV,
    aliases=("qdbt-max-frags",),
)


def state_key(table: str, column: str) -> str:
    """NiFi's state key for a column's maximum: ``<table>@!@<column>``, lower case."""
    return f"{table.lower()}{NAMESPACE_DELIMITER}{column.lower()}"


def _columns(text: str | None) -> list[str]:
    return [c.strip() for c in (text or "").split(",") if c.strip()]


def _text(value: Any) -> str:
    """A maximum as NiFi keeps it: a timestamp as Java's ``Timestamp.toString`` writes it.

    NiFi's getMaxValueFromRow reads TIMESTAMP and TIMESTAMP_WITH_TIMEZONE alike with
    ``getTimestamp``: an instant, written in the JVM's zone with no offset. flowcore's zone is
    UTC, so a timestamptz maximum is its UTC time (``2026-01-01 06:00:00.0``), which
    :func:`bound_param` gives PostgreSQL as UTC whatever the session's time zone.
    """
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        fraction = f"{value.microsecond:06d}".rstrip("0") or "0"
        return f"{value:%Y-%m-%d %H:%M:%S}.{fraction}"
    return str(value)


#: A maximum in Java's Timestamp.toString form (no offset): :func:`_text`'s.
_JAVA_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?")


def bound_param(value: str, dialect: str) -> str:
    """A kept maximum as the parameter bounding its column on *dialect*.

    On PostgreSQL a timestamp in Java's form gets ``+00``: a timestamptz column takes it as
    the UTC time :func:`_text` wrote, not as the session's local time, and a timestamp
    column ignores the offset (PostgreSQL drops a zone given for ``timestamp without time
    zone``). State written before, in PostgreSQL's text with its offset
    (``2026-01-01 01:00:00-05:00``), is taken as it is: right in any session zone too.
    """
    if dialect == "postgresql" and _JAVA_TIMESTAMP.fullmatch(value):
        return value + "+00"
    return value
