"""PutDatabaseRecord's INSERT into PostgreSQL column-wise: one statement per batch of rows.

An ``executemany`` of dicts costs a Python dict, a parameter conversion and a pipelined
statement per row (SQLAlchemy and psycopg spend ~25 us a row; the server far less). Here a
batch's rows go as one array per column::

    INSERT INTO t (a, b) SELECT u.c0, CAST(u.c1 AS date) FROM unnest(%s::int8[], %s::text[])
    AS u(c0, c1)

with the same effect as one INSERT per row with those values:

- Each array has the type a row's parameter would have (Arrow int -> ``int8``, float ->
  ``float8``, bool, decimal -> ``numeric``, date, time, timestamp, binary -> ``bytea``), so
  the INSERT coerces it to the column's type with the assignment cast a parameter gets (range
  and length checks, rounding to a scale, errors).
- Text is an untyped parameter row by row (read by the column type's input function): here it
  is cast to the column's type without its modifier (``character varying``, ``numeric``), the
  same input function, and the INSERT then applies the modifier as for a parameter
  (``value too long for type character varying(5)``, not a silent cut). The type is read as
  ``format_type(type, -1)``: ``bpchar`` and ``"bit"`` (no limit), where ``format_type(type,
  NULL)`` says ``character`` and ``bit``, which a CAST reads as char(1) and bit(1) and an
  explicit cast cuts silently; a domain's base type for the same reason (the INSERT checks
  the domain).
- Unsigned 64-bit integers go as ``numeric``: above 2^63 they do not fit ``int8``.
- Triggers, rules, defaults of the columns not given, constraints and their errors (the
  constraint's name, the failing key) are the INSERT's own.

Used only where it is that same statement: PostgreSQL through psycopg, INSERT, every value a
scalar Arrow type above, and no SQLAlchemy type of the columns processing its values (JSON,
enums of Python objects...); other cases keep the executemany. Not COPY: COPY skips rules and
refuses views.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

__all__ = ["array_type", "column_insert", "usable"]

#: Arrow type tests and the PostgreSQL array element type a row's parameter would have.
_ARRAY_TYPES: tuple[tuple[Any, str], ...] = (
    (pa.types.is_boolean, "bool"),
    (pa.types.is_integer, "int8"),
    (pa.types.is_floating, "float8"),
    (pa.types.is_decimal, "numeric"),
    (pa.types.is_date, "date"),
    (pa.types.is_time, "time"),
    (pa.types.is_binary, "bytea"),
    (pa.types.is_large_binary, "bytea"),
    (pa.types.is_string, "text"),
    (pa.types.is_large_string, "text"),
)


def array_type(kind: pa.DataType) -> str | None:
    """The element type of a column of Arrow type *kind*'s array (None: not a scalar kept)."""
    if pa.types.is_uint64(kind):
        return "numeric"  # 2^63 and above do not fit int8
    if pa.types.is_timestamp(kind):
        return "timestamptz" if kind.tz else "timestamp"
    return next((name for test, name in _ARRAY_TYPES if test(kind)), None)


def usable(dialect: Any, table: Any, kinds: Mapping[str, pa.DataType]) -> bool:
    """Whether *table*'s INSERT of columns of Arrow types *kinds* can go column-wise."""
    if dialect.name != "postgresql" or dialect.driver != "psycopg":
        return False  # psycopg (3) adapts a list to an array parameter, as the SQL needs
    return all(_plain(dialect, table.columns[c].type, kind) for c, kind in kinds.items())


def _plain(dialect: Any, sa_type: Any, kind: pa.DataType) -> bool:
    """Whether SQLAlchemy would pass a column's values to the driver as they are.

    A type with a bind expression or a value processor (JSON serializing, a TypeDecorator)
    keeps the executemany; Boolean's and Enum's processors only check (bools and text pass),
    a binary type's wraps bytes in the driver's Binary (bytea, as the array's elements).
    """
    import sqlalchemy as sa  # noqa: PLC0415 (an optional dependency, as the pool's)

    element = array_type(kind)
    if element is None or sa_type._has_bind_expression:
        return False
    if sa_type.dialect_impl(dialect).bind_processor(dialect) is None:
        return True
    if isinstance(sa_type, sa.Enum):
        return element == "text" and sa_type.enum_class is None
    if isinstance(sa_type, (sa.LargeBinary, sa.BINARY, sa.VARBINARY)):
        return element == "bytea"  # the driver's Binary wrapper: bytes go as bytea anyway
    return isinstance(sa_type, sa.Boolean) and element == "bool"


_UNLIMITED_TYPES = """
WITH RECURSIVE base (attname, typid) AS (
    SELECT a.attname, a.atttypid FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
    SELECT b.attname, t.typbasetype FROM base b JOIN pg_catalog.pg_type t ON t.oid = b.typid
    WHERE t.typtype = 'd'
)
SELECT b.attname, format_type(b.typid, -1) FROM base b
JOIN pg_catalog.pg_type t ON t.oid = b.typid WHERE t.typtype <> 'd'
"""


def _catalog_types(connection: Any, table: Any) -> dict[str, str]:
    """Each column's type with no length limit to cast text to, read once per table.

    An explicit cast cuts a value to a limit silently, where the INSERT's assignment (as a
    row's parameter) fails, so the cast must carry none: ``format_type(type, -1)``, not
    NULL, which reads ``character`` and ``bit`` (char(1) and bit(1) in a CAST) where -1
    reads ``bpchar`` and ``"bit"``; and a domain's base type, not the domain (a domain over
    varchar(3) carries its limit into a cast), the INSERT then checks the domain.
    """
    found = table.info.get("flowcore.unlimited_types")
    if found is None:
        name = connection.dialect.identifier_preparer.format_table(table)
        rows = connection.exec_driver_sql(_UNLIMITED_TYPES, (name,)).all()
        found = table.info["flowcore.unlimited_types"] = dict(rows)
    return found


def column_insert(
    connection: Any,
    table: Any,
    columns: Mapping[str, Sequence[Any]],
    kinds: Mapping[str, pa.DataType],
) -> None:
    """INSERT the rows whose values are *columns* (column name -> values, all one length)."""
    preparer = connection.dialect.identifier_preparer
    declared = _catalog_types(connection, table)
    names, selected, arrays = [], [], []
    for index, (column, kind) in enumerate(kinds.items()):
        element = array_type(kind)
        names.append(preparer.quote(column).replace("%", "%%"))
        arrays.append(f"%s::{element}[]")
        value = f"u.c{index}"
        target = declared.get(column)
        if element == "text" and target is not None and target != "text":
            value = f"CAST({value} AS {target.replace('%', '%%')})"
        selected.append(value)
    aliases = ", ".join(f"c{i}" for i in range(len(names)))
    sql = (
        f"INSERT INTO {preparer.format_table(table).replace('%', '%%')} ({', '.join(names)}) "
        f"SELECT {', '.join(selected)} FROM unnest({', '.join(arrays)}) AS u({aliases})"
    )
    connection.exec_driver_sql(sql, tuple(list(columns[c]) for c in kinds))
