"""What the SQL processors share: JDBC-style parameters, statement splitting, query execution.

NiFi binds ``?`` placeholders from ``sql.args.N.type`` / ``sql.args.N.value`` attributes
(JDBC type codes, :data:`JDBC_TYPES`); Python drivers take their own paramstyle, so
:func:`to_paramstyle` rewrites the ``?`` outside quotes and comments. Database errors become
:class:`SQLFailure` with a message naming the database and the cause, never the password.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Mapping, Sequence
from typing import Any

from flowcore.errors import FlowcoreError, ProcessException
from flowcore.records.values import JAVA_INTEGER_TEXT
from processors.sql.arg_formats import binary_value, number_value, temporal_value

__all__ = [
    "JDBC_TYPES",
    "SQLFailure",
    "bind_value",
    "describe_error",
    "is_database_error",
    "is_retryable",
    "listing_fix",
    "split_statements",
    "sql_args",
    "to_paramstyle",
]

#: java.sql.Types codes NiFi's attributes carry, by value.
JDBC_TYPES = {
    -7: "BIT",
    -6: "TINYINT",
    -5: "BIGINT",
    -4: "LONGVARBINARY",
    -3: "VARBINARY",
    -2: "BINARY",
    -1: "LONGVARCHAR",
    1: "CHAR",
    2: "NUMERIC",
    3: "DECIMAL",
    4: "INTEGER",
    5: "SMALLINT",
    6: "FLOAT",
    7: "REAL",
    8: "DOUBLE",
    12: "VARCHAR",
    16: "BOOLEAN",
    91: "DATE",
    92: "TIME",
    93: "TIMESTAMP",
    -9: "NVARCHAR",
    -15: "NCHAR",
    -16: "LONGNVARCHAR",
    2004: "BLOB",
    2005: "CLOB",
}

_ARG = re.compile(r"^sql\.args\.(\d+)\.(?:type|value)$")


class SQLFailure(ProcessException):
    """A statement the database refused or could not run; the message names the cause."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


def is_retryable(error: BaseException) -> bool:
    """Whether a DB-API error is transient (connection lost, timeout): NiFi's ``retry``."""
    from sqlalchemy import exc  # noqa: PLC0415

    original = getattr(error, "orig", error)
    name = type(original).__name__
    if isinstance(error, exc.DisconnectionError | exc.TimeoutError):
        return True
    return name in ("OperationalError", "InterfaceError", "ConnectionTimeout", "QueryCanceled")


def bind_value(jdbc_type: int, text: str | None, fmt: str | None = None) -> Any:
    """The Python value for a ``sql.args.N.value`` of JDBC *jdbc_type* (NiFi's setParameter).

    *fmt* is ``sql.args.N.format``: a ``java.time`` pattern or formatter name for DATE, TIME
    and TIMESTAMP, ``ascii``/``hex``/``base64`` for BINARY, VARBINARY and LONGVARBINARY
    (:mod:`processors.sql.arg_formats`).

    Raises:
        ValueError: *text* does not parse as the type (in the format), naming why.
    """
    if text is None:
        return None
    name = JDBC_TYPES.get(jdbc_type, "VARCHAR")
    if name == "BIT":  # NiFi: "1", "t" or "T", or Boolean.parseBoolean
        return text in ("1", "t", "T") or text.lower() == "true"
    if name == "BOOLEAN":  # Boolean.parseBoolean: "true" in any case; anything else is false
        return text.lower() == "true"
    if name in _INTEGER_BITS:
        return _java_integer(text, _INTEGER_BITS[name])
    if name in ("FLOAT", "REAL", "DOUBLE", "NUMERIC", "DECIMAL"):
        return number_value(name, text)
    if name in ("DATE", "TIME", "TIMESTAMP"):
        return temporal_value(name, text, fmt or "")
    if name in ("BINARY", "VARBINARY", "LONGVARBINARY"):
        return binary_value(text, fmt or "")
    if name == "BLOB":
        return text.encode("latin-1")
    return text


#: Java's integer types by JDBC name: their width in bits (Byte/Short/Integer/Long.parseX).
_INTEGER_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}


def _java_integer(text: str, bits: int) -> int:
    """Java's ``Integer.parseInt`` and kin: digits after an optional sign, in the type's range."""
    if JAVA_INTEGER_TEXT.fullmatch(text) is None:
        msg = f"For input string: {text!r}"
        raise ValueError(msg)
    value = int(text)
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        msg = f"Value out of range of a {bits}-bit integer: {text!r}"
        raise ValueError(msg)
    return value


def sql_args(attributes: Mapping[str, str]) -> list[Any]:
    """The parameters ``sql.args.1..N`` give, in order (NiFi's ``setParameters``).

    Raises:
        SQLFailure: an argument without its ``.type`` or with a value that does not parse.
    """
    indexed: dict[int, Any] = {}
    found = {int(m[1]) for m in map(_ARG.match, attributes) if m is not None}
    for index in sorted(found):
        # NiFi's setParameters: a type without a value binds NULL of that type.
        value = attributes.get(f"sql.args.{index}.value")
        type_text = attributes.get(f"sql.args.{index}.type")
        if type_text is None or not type_text.lstrip("-").isdigit():
            msg = f"Value of the sql.args.{index}.type attribute is not a valid JDBC type code"
            raise SQLFailure(msg)
        try:
            indexed[index] = bind_value(
                int(type_text), value, attributes.get(f"sql.args.{index}.format")
            )
        except (ValueError, OverflowError, decimal.InvalidOperation) as error:
            msg = (
                f"The value of the sql.args.{index}.value is '{value}', which cannot be "
                f"converted to {JDBC_TYPES.get(int(type_text), type_text)}: {error}"
            )
            raise SQLFailure(msg) from None
    return [indexed[i] for i in sorted(indexed)]


#: Quoted text, quoted names (a doubled quote inside either) and comments: not the code.
_QUOTED_OR_COMMENT = r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/"
_TOKENS = re.compile(_QUOTED_OR_COMMENT + r"|\?", re.S)


def to_paramstyle(sql: str, paramstyle: str) -> str:
    """*sql* with each JDBC ``?`` outside quotes and comments in the driver's *paramstyle*."""
    if paramstyle == "qmark":
        return sql
    counter = iter(range(1, 1_000_000))

    def place(match: re.Match[str]) -> str:
        token = match.group(0)
        if token != "?":
            return token.replace("%", "%%") if paramstyle in ("format", "pyformat") else token
        if paramstyle in ("format", "pyformat"):
            return "%s"
        if paramstyle == "numeric":
            return f":{next(counter)}"
        return f":p{next(counter)}"  # named

    text = _TOKENS.sub(place, sql)
    if paramstyle in ("format", "pyformat"):
        # a literal % outside quotes (modulo) must be doubled for format drivers
        text = re.sub(r"%(?!s|%)", "%%", text)
    return text


def named_args(args: Sequence[Any], paramstyle: str) -> Any:
    """*args* as the driver wants them (a dict for ``named``)."""
    if paramstyle == "named":
        return {f"p{i}": value for i, value in enumerate(args, 1)}
    return tuple(args)


def split_statements(text: str | None) -> list[str]:
    r"""NiFi's ``getQueries``: ``;``-separated statements, ``\\;`` an escaped semicolon."""
    if not text:
        return []
    parts = re.split(r"(?<!\\);", text)
    return [part.replace("\\;", ";").strip() for part in parts if part.strip()]


#: PEP 249's bases: every driver's errors but ``Error`` and ``Warning`` derive from one.
_DBAPI_BASES = frozenset({"DatabaseError", "InterfaceError"})


def is_database_error(error: BaseException) -> bool:
    """Whether *error* is the database's: a driver's DB-API error, or SQLAlchemy's wrapping.

    Anything else (a value the Avro or Record writer could not convert, a record that could not
    be read) is not, and its message must not name the database as the culprit.
    """
    for cls in type(error).__mro__:
        module = cls.__module__
        if module == "builtins":
            continue
        if cls.__name__ in _DBAPI_BASES or module.split(".")[0] == "sqlalchemy":
            return True
    return False


def describe_error(error: BaseException, system: str, password: str | None = None) -> str:
    """One line naming the culprit and the cause.

    A database's error is named after *system* (the database, its URL) with the driver's own
    first line; any other error keeps its own message, which names what failed (a column's
    value, a record), with its type when it is not one of flowcore's.
    """
    original = getattr(error, "orig", None) or error
    text = str(original).strip().splitlines()
    line = text[0] if text else type(original).__name__
    if password:
        line = line.replace(password, "********")
    if is_database_error(error):
        return f"{system}: {line}"
    if isinstance(original, FlowcoreError):
        return line
    return f"{type(original).__name__}: {line}"


def listing_fix(error: BaseException, service: str) -> str:
    """What to check for a listing *error*: the processor's properties or the pool's.

    SQLSTATE class 42 (no such table or column: 42P01, 42703) is the query's, so Table Name
    or Maximum-value Columns; anything else (a refused password, no such database, nothing
    listening, a bad URL option) is the connection's, set on the DBCPConnectionPool.
    """
    original = getattr(error, "orig", None) or error
    state = str(getattr(original, "sqlstate", None) or getattr(original, "pgcode", None) or "")
    if state.startswith("42"):
        return "check Table Name and Maximum-value Columns (it is retried after the Yield Duration)"
    return (
        f"check Database Connection URL, Database User and Password of DBCPConnectionPool "
        f"'{service}' and that the database runs (it is retried after the Yield Duration)"
    )
