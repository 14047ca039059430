"""PutDatabaseRecord's statements: a table's columns read, record fields matched, rows bound.

:class:`StatementPlan` is one statement type for one record schema: the fields matched to the
table's columns (Translate Field Names), the keys chosen (Update Keys, Delete Keys, the
primary key), and the SQLAlchemy statement that writes a batch's rows. String and byte-array
values for binary columns become bytes as NiFi's do (Binary String Format). The processor
(:mod:`processors.sql.put_database_record`) runs the plans in the FlowFile's transaction.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
import functools
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from flowcore.errors import ProcessException
from flowcore.processor.context import ProcessContext
from flowcore.records.values import JAVA_SPACE
from processors.sql._column_insert import column_insert, usable
from processors.sql.put_record_properties import (
    BINARY_STRING_FORMAT_BASE64,
    BINARY_STRING_FORMAT_HEXADECIMAL,
    FAIL_UNMATCHED_COLUMN,
    FAIL_UNMATCHED_FIELD,
    PATTERN,
    REMOVE_ALL_SPECIAL_CHAR,
    REMOVE_SPACE,
    REMOVE_UNDERSCORE,
    REMOVE_UNDERSCORE_AND_SPACE,
    TRANSLATE_FIELD_NAMES,
    TRANSLATION_PATTERN,
    TRANSLATION_STRATEGY,
    UNMATCHED_COLUMN_BEHAVIOR,
    UNMATCHED_FIELD_BEHAVIOR,
    WARNING_UNMATCHED_COLUMN,
)

__all__ = [
    "SCHEMAS",
    "StatementPlan",
    "TableSchemas",
    "epoch_instant",
    "translate",
    "translator",
]


#: NiFi's ObjectLocalDateTimeFieldConverter bounds: an integer above the year 10,000 in
#: milliseconds is microseconds; a decimal's integral part above it in seconds is milliseconds.
YEAR_TEN_THOUSAND_MILLIS = 253_402_300_800_000
YEAR_TEN_THOUSAND_SECONDS = 253_402_300_800
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
#: The Arrow kind of doubles made decimals for a NUMERIC column: bound as ``numeric`` (the
#: column-wise INSERT's array type); the scale is the column's to apply, not this one's.
DECIMAL_OF_DOUBLES = pa.decimal128(38, 0)


def exact_decimals(values: list[Any]) -> list[Any]:
    """Doubles as the decimals NiFi binds for a NUMERIC column (``BigDecimal.valueOf``).

    Java's ``Double.toString`` and Python's ``repr`` are the shortest text that reads back
    as the same double (17 significant digits at most), so ``12345678901234.123456`` read
    as a double is bound as ``12345678901234.123``. A double bound as such would go
    through PostgreSQL's float8 -> numeric cast, which keeps 15 significant digits
    (``12345678901234.1``). NaN and infinities stay (numeric holds them).
    """
    return [None if v is None else decimal.Decimal(repr(v)) for v in values]


def epoch_instant(value: Any) -> dt.datetime | None:
    """The instant an epoch number (or its text) means for a timestamp, as NiFi reads it.

    An integer is milliseconds (microseconds above the year 10,000 in milliseconds); a
    decimal is seconds (milliseconds above the year 10,000 in seconds) with its fraction to
    the microsecond. None: *value* is no number (text the database parses itself).

    Raises:
        OverflowError: a number past the datetime range.
    """
    if isinstance(value, str):
        text = value.strip()
        try:
            number: float = float(text) if "." in text else int(text)
        except ValueError:
            return None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number = value
    else:
        return None
    if isinstance(number, float):
        integral = int(number)
        fraction = number - integral
        if integral > YEAR_TEN_THOUSAND_SECONDS:
            base = _EPOCH + dt.timedelta(milliseconds=integral)
            return base + dt.timedelta(microseconds=round(fraction * 1_000))
        base = _EPOCH + dt.timedelta(seconds=integral)
        return base + dt.timedelta(microseconds=round(fraction * 1_000_000))
    if number > YEAR_TEN_THOUSAND_MILLIS:
        return _EPOCH + dt.timedelta(microseconds=number)
    return _EPOCH + dt.timedelta(milliseconds=number)


#: NiFi's RemoveAllSpecialCharNormalizer: every character but ASCII letters and digits.
_SPECIAL = re.compile(r"[^a-zA-Z0-9]")
#: NiFi's NameNormalizers, by Column Name Translation Strategy (PATTERN: see translator()).
_NORMALIZERS: dict[str, Callable[[str], str]] = {
    REMOVE_UNDERSCORE: lambda name: name.replace("_", ""),
    REMOVE_SPACE: lambda name: name.replace(" ", ""),
    REMOVE_UNDERSCORE_AND_SPACE: lambda name: name.replace("_", "").replace(" ", ""),
    REMOVE_ALL_SPECIAL_CHAR: lambda name: _SPECIAL.sub("", name),
}


def _java_trim(text: str) -> str:
    """Java's ``String.trim``: characters up to U+0020 off both ends (not Unicode spaces)."""
    return text.strip(JAVA_SPACE)


def translate(name: str, strategy: str = REMOVE_UNDERSCORE, pattern: str | None = None) -> str:
    """*name* as NiFi's ``TableSchema.normalizedName`` makes it: normalized, trimmed, upper.

    The strategy (Column Name Translation Strategy) removes underscores (NiFi's default),
    spaces, both, every character but letters and digits, or what *pattern* (Column Name
    Translation Pattern) matches; case is ignored whatever the strategy.
    """
    if strategy == PATTERN:
        normalized = re.sub(pattern, "", name) if pattern else name
    else:
        normalized = _NORMALIZERS[strategy](name)
    return _java_trim(normalized).upper()


def translator(context: ProcessContext) -> Callable[[str], str]:
    """How the processor's field and column names are compared (NiFi's normalizedName).

    Translate Field Names off: as they are; on: :func:`translate` by the Column Name
    Translation Strategy.
    """
    if not context.get_property(TRANSLATE_FIELD_NAMES).as_boolean():
        return lambda name: name
    strategy = context.get_property(TRANSLATION_STRATEGY).value or REMOVE_UNDERSCORE
    pattern = context.get_property(TRANSLATION_PATTERN).value if strategy == PATTERN else None
    return functools.partial(translate, strategy=strategy, pattern=pattern)


def _matcher(
    normal: Callable[[str], str], columns: list[str], table: str
) -> Callable[[str, str], str | None]:
    """How a field or key name finds its column: exact, then ignoring case, then normalized.

    NiFi keys its columns by normalized name, so of two columns that normalize alike
    (``user_id`` and ``userid``) the last would take every field of either name: here the
    column named exactly wins, then the one equal ignoring case, then the only one that
    normalizes alike; several alike is an error naming them (never the wrong column).
    """
    by_normal: dict[str, list[str]] = {}
    for column in columns:
        by_normal.setdefault(normal(column), []).append(column)
    exact = set(columns)

    def match(name: str, what: str) -> str | None:
        if name in exact:
            return name
        candidates = by_normal.get(normal(name), [])
        same_case = [c for c in candidates if c.lower() == name.lower()]
        for found in (same_case, candidates):
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                msg = (
                    f"{what} '{name}' matches the columns {found} of the {table} table alike "
                    "(Column Name Translation Strategy): name one of them exactly"
                )
                raise ProcessException(msg)
        return None

    return match


class TableSchemas:
    """Reflected tables per enabling of a pool, bounded (NiFi's Table Schema Cache).

    NiFi builds the cache when the processor is scheduled, so a table altered while the flow
    was stopped is read again; here a pool's enabling (each run, each harness) starts afresh,
    also when the pool takes back an engine an earlier enabling left idle.
    """

    def __init__(self) -> None:
        self.tables: dict[tuple[int, str, str | None, str, bool], Any] = {}
        self.lock = threading.Lock()

    def get(
        self,
        connection: Any,
        enabling: int,
        schema: str | None,
        table: str,
        limit: int,
        *,
        quoted: bool = False,
    ) -> Any:
        """*table* of *schema* as SQLAlchemy reflects it, read once per enabling of the pool.

        Read through the FlowFile's *connection*: a table its Pre-Processing SQL creates is
        seen (NiFi reads the table after that SQL too). Unless *quoted* (Quote Table
        Identifiers: the names are exact), a name not found as given is looked up as the
        database folds an unquoted one (``PERSONS`` is PostgreSQL's ``persons``, ``persons``
        Oracle's ``PERSONS``), as NiFi's SQL names it unquoted.

        Raises:
            ProcessException: no such table (either spelling).
        """
        key = (
            enabling,
            connection.engine.url.render_as_string(hide_password=True),
            schema,
            table,
            quoted,
        )
        with self.lock:
            found = self.tables.get(key)
        if found is not None:
            return found
        reflected = _reflect(connection, schema, table, quoted=quoted)
        with self.lock:
            if limit and len(self.tables) >= limit:
                self.tables.pop(next(iter(self.tables)))
            self.tables[key] = reflected
        return reflected


def _reflect(connection: Any, schema: str | None, table: str, *, quoted: bool) -> Any:
    """*table* reflected: *quoted*, as given; else as NiFi's unquoted SQL names it.

    SQLAlchemy takes an all-lower-case name as case-insensitive and each dialect folds it as
    its database folds unquoted names (PostgreSQL lower, Oracle upper). Where the database
    folds (PostgreSQL; Oracle and DB2, SQLAlchemy's ``requires_name_normalize``) the folded
    name comes first: with both ``"Persons"`` and ``persons`` in PostgreSQL, an unquoted
    ``Persons`` is ``persons``. Elsewhere (MySQL, SQLite, SQL Server do not fold) the name
    as given comes first. The other spelling is the fallback.
    """
    import sqlalchemy as sa  # noqa: PLC0415

    tries = [(schema, table)]
    if not quoted:
        folded = (schema.lower() if schema else schema, table.lower())
        dialect = connection.dialect
        folds = dialect.name == "postgresql" or getattr(dialect, "requires_name_normalize", False)
        if folded != tries[0]:
            tries.insert(0 if folds else 1, folded)
    for name_schema, name in tries:
        try:
            reflected = sa.Table(name, sa.MetaData(), schema=name_schema, autoload_with=connection)
        except sa.exc.NoSuchTableError:
            continue
        _json_nulls(reflected)
        return reflected
    where = f"{schema}.{table}" if schema else table
    hint = "" if quoted else " (nor in the database's case for unquoted names)"
    msg = (
        f"table {where!r} does not exist{hint}: ensure the Schema Name and Table Name match "
        "those in the database"
    )
    raise ProcessException(msg)


def _json_nulls(table: Any) -> None:
    """A null written into a JSON column of *table* is SQL NULL, as NiFi writes it.

    SQLAlchemy's JSON types write Python's None as the JSON value ``null`` unless the type
    is ``none_as_null``; each JSON column's reflected type is replaced by such a copy once,
    when the table is reflected (a new object: SQLAlchemy's dialect caches key on the type
    instance).
    """
    import sqlalchemy as sa  # noqa: PLC0415

    for column in table.columns:
        if isinstance(column.type, sa.JSON) and not column.type.none_as_null:
            kind = column.type.copy()
            kind.none_as_null = True
            column.type = kind


#: The process's reflected tables (all PutDatabaseRecords share it).
SCHEMAS = TableSchemas()


def _chunks(rows: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    if size <= 0:
        yield rows
        return
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


class StatementPlan:
    """The statement for one FlowFile: fields matched to columns, keys chosen."""

    def __init__(  # noqa: PLR0917
        self,
        table: Any,
        fields: dict[str, str],
        statement_type: str,
        keys: list[str],
        dialect: str,
        binary_format: str | None = None,
    ) -> None:
        import sqlalchemy as sa  # noqa: PLC0415 (an optional dependency, as the pool's)

        self.table = table
        self.fields = fields  # record field -> column name
        self.statement_type = statement_type
        self.keys = keys
        self.dialect = dialect
        self.binary_format = binary_format
        #: Batches executed and rows written (NiFi's "Batches Executed" and "<type> updates
        #: performed" counters).
        self.batches = 0
        self.rows = 0
        #: Columns of binary types: their strings and byte arrays become bytes (NiFi's).
        self.binary = {
            c
            for c in fields.values()
            if isinstance(table.columns[c].type, (sa.LargeBinary, sa.BINARY, sa.VARBINARY))
        }
        #: Columns of timestamp types: epoch numbers become instants (NiFi's).
        self.timestamps = {
            c for c in fields.values() if isinstance(table.columns[c].type, sa.DateTime)
        }
        #: Columns of exact numeric types (NUMERIC, DECIMAL): doubles go as decimals.
        self.decimals = {
            c
            for c in fields.values()
            if isinstance(table.columns[c].type, sa.Numeric)
            and not isinstance(table.columns[c].type, sa.Float)
        }
        self.statement = self._statement()

    @classmethod
    def make(  # noqa: PLR0917
        cls,
        context: ProcessContext,
        table: Any,
        schema: pa.Schema,
        statement_type: str,
        keys_text: str | None,
        dialect: str,
        binary_format: str | None = None,
    ) -> StatementPlan:
        """The plan for records of *schema* (the statement prepared once per schema).

        *keys_text* is Update Keys, or Delete Keys for DELETE; none: the primary key to
        UPDATE by, every field matched to DELETE by (NiFi's).

        Raises:
            ProcessException: a field no column takes (Fail on Unmatched Fields), a required
                column no field gives (Fail on Unmatched Columns), no key to UPDATE by.
        """
        columns = {c.name: c for c in table.columns}
        match = _matcher(translator(context), list(columns), table.name)
        fields: dict[str, str] = {}
        for name in schema.names:
            column = match(name, "field")
            if column is None:
                if context.get_property(UNMATCHED_FIELD_BEHAVIOR).value == FAIL_UNMATCHED_FIELD:
                    msg = f"Cannot map field '{name}' to any column in the database"
                    raise ProcessException(msg)
                continue
            fields[name] = column
        if not fields:
            msg = (
                f"None of the fields in the record map to the columns defined by the "
                f"{table.name} table"
            )
            raise ProcessException(msg)
        missing = [c for c in columns if c not in fields.values()]
        behavior = context.get_property(UNMATCHED_COLUMN_BEHAVIOR).value

        def required(name: str) -> bool:  # NOT NULL, no default, not generated
            column = columns[name]
            return (
                not column.nullable
                and column.default is None
                and column.server_default is None
                and column.autoincrement is not True
            )

        if statement_type == "DELETE":
            # NiFi's generateDelete checks the required columns only (a DELETE by key lacks
            # the others by design).
            missing = [c for c in missing if required(c)]
        if missing and statement_type in ("INSERT", "UPSERT", "INSERT_IGNORE", "DELETE"):
            text = f"Record does not have a value for the Required column(s) {missing}"
            if behavior == FAIL_UNMATCHED_COLUMN and any(required(c) for c in missing):
                raise ProcessException(text)
            if behavior == WARNING_UNMATCHED_COLUMN:
                context.logger.warning(text)
        if keys_text:
            what = "Delete Key" if statement_type == "DELETE" else "Update Key"
            keys = [match(k.strip(), what) or k.strip() for k in keys_text.split(",") if k.strip()]
        elif statement_type == "DELETE":
            keys = []  # every field the record gives, NULL matching NULL (NiFi's)
        else:
            keys = [c.name for c in table.primary_key.columns]
        if statement_type == "DELETE":
            keys = [k for k in keys if k in fields.values()]
            if keys_text and not keys:
                msg = (
                    f"None of the Delete Keys {keys_text!r} is a field of the record mapped to "
                    f"a column of the {table.name} table"
                )
                raise ProcessException(msg)
        elif statement_type in ("UPDATE", "UPSERT") and not keys:
            msg = f"Table '{table.name}' has no primary keys and no Update Keys were specified"
            raise ProcessException(msg)
        elif statement_type in ("UPDATE", "UPSERT"):
            for key in keys:
                if key not in fields.values():
                    msg = f"Update key '{key}' is not a field of the record"
                    raise ProcessException(msg)
        return cls(table, fields, statement_type, keys, dialect, binary_format)

    def write(self, connection: Any, batch: pa.RecordBatch, batch_size: int) -> int:
        """Run the statement for the batch's rows, *batch_size* at a time (0: all); the count.

        A PostgreSQL INSERT of scalar values goes column-wise (:mod:`._column_insert`: one
        statement per *batch_size* rows, the same effect); others are executemany of dicts.
        """
        columns, kinds = self.values(batch)
        if self.statement_type == "INSERT" and usable(connection.dialect, self.table, kinds):
            size = batch_size if batch_size > 0 else max(1, batch.num_rows)
            for start in range(0, batch.num_rows, size):
                part = {name: values[start : start + size] for name, values in columns.items()}
                column_insert(connection, self.table, part, kinds)
                self.batches += 1
            self.rows += batch.num_rows
            return batch.num_rows
        names = list(columns)
        rows = [dict(zip(names, row, strict=True)) for row in zip(*columns.values(), strict=True)]
        count = 0
        for chunk in _chunks(rows, batch_size):
            if chunk:
                self.execute(connection, chunk)
                self.batches += 1
            count += len(chunk)
        self.rows += count
        return count

    def values(self, batch: pa.RecordBatch) -> tuple[dict[str, list[Any]], dict[str, pa.DataType]]:
        """The batch's values per column written (one list per column), and their Arrow types.

        Values are converted for the column as NiFi's record conversion does (binary from text
        or byte arrays, timestamps from epoch numbers); two fields of one column ("NAME" and
        "name", an inferred schema of records spelling it differently) coalesce, and their
        type is null when they differ.

        Raises:
            ProcessException: a record gives two such fields different values (NiFi's
                statement would name the column twice, which the database refuses).
        """
        merged: dict[str, list[Any]] = {}
        kinds: dict[str, pa.DataType] = {}
        sources: dict[str, str] = {}  # column -> the field it was first taken from
        for field in batch.schema:
            column = self.fields.get(field.name)
            if column is None:
                continue
            values = batch.column(field.name).to_pylist()
            kind = field.type
            if column in self.binary:
                values, kind = self._bytes(field.name, column, kind, values), pa.binary()
            elif column in self.timestamps:
                values, kind = self._instants(field.name, column, kind, values)
            elif column in self.decimals and pa.types.is_floating(kind):
                values, kind = exact_decimals(values), DECIMAL_OF_DOUBLES
            if column in merged:
                pairs = list(zip(merged[column], values, strict=True))
                if any(a is not None and b is not None and a != b for a, b in pairs):
                    msg = (
                        f"fields '{sources[column]}' and '{field.name}' of one record both give "
                        f"column '{column}' of the {self.table.name} table a value, and they "
                        "differ (NiFi's statement names the column twice, which the database "
                        "refuses): give the record one of them"
                    )
                    raise ProcessException(msg)
                values = [a if a is not None else b for a, b in pairs]
                kind = kinds[column] if kinds[column] == kind else pa.null()
            sources.setdefault(column, field.name)
            merged[column] = values
            kinds[column] = kind
        return merged, kinds

    def _instants(
        self, field: str, column: str, kind: pa.DataType, values: list[Any]
    ) -> tuple[list[Any], pa.DataType]:
        """Epoch numbers (or their text) for timestamp *column* as instants (NiFi's reading).

        Text that is not a number stays text (the database parses it); so does a whole
        column of text where any value is not a number.
        """
        numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind)
        if not (numeric or pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            return values, kind
        try:
            instants = [None if v is None else epoch_instant(v) for v in values]
        except (OverflowError, ValueError) as error:
            msg = f"field '{field}' for timestamp column '{column}' is out of range: {error}"
            raise ProcessException(msg) from None
        if any(i is None and v is not None for i, v in zip(instants, values, strict=True)):
            return values, kind
        return instants, pa.timestamp("us", tz="UTC")

    def _statement(self) -> Any:
        import sqlalchemy as sa  # noqa: PLC0415

        table = self.table
        kind = self.statement_type
        if kind == "INSERT":
            return sa.insert(table)
        if kind in ("UPSERT", "INSERT_IGNORE"):
            return self._upsert(kind == "INSERT_IGNORE")
        keyed = sa.and_(sa.true(), *[table.c[k] == sa.bindparam(f"k_{k}") for k in self.keys])
        if kind == "UPDATE":
            values = {c: sa.bindparam(f"v_{c}") for c in self.fields.values() if c not in self.keys}
            return sa.update(table).where(keyed).values(values)
        # NiFi's null-safe match (NIFI-3742): a NULL field deletes the row whose column is NULL;
        # over the Delete Keys, or every field matched when none are set.
        everything = sa.and_(
            *[
                table.c[c].is_not_distinct_from(sa.bindparam(f"k_{c}"))
                if table.c[c].nullable
                else table.c[c] == sa.bindparam(f"k_{c}")
                for c in (self.keys or list(dict.fromkeys(self.fields.values())))
            ]
        )
        return sa.delete(table).where(everything)

    def _bytes(self, field: str, column: str, kind: pa.DataType, values: list[Any]) -> list[Any]:
        """*values* of *field* as bytes for binary *column* (NiFi's conversion to BLOB).

        Text is decoded by Binary String Format (UTF-8, Hexadecimal, Base64); an array of
        bytes (Arrow int8/uint8 lists: a record's ``Byte[]``) becomes its bytes; any other
        array (of ints, say) fails, as NiFi's ``Integer[]`` into a BLOB does.
        """
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            decode = {
                BINARY_STRING_FORMAT_HEXADECIMAL: bytes.fromhex,
                BINARY_STRING_FORMAT_BASE64: lambda text: base64.b64decode(text, validate=True),
            }.get(self.binary_format or "", lambda text: text.encode("utf-8"))
            try:
                return [None if v is None else decode(v) for v in values]
            except (ValueError, binascii.Error) as error:
                msg = (
                    f"field '{field}' for binary column '{column}' is not "
                    f"{self.binary_format} text: {error}; set Binary String Format to the "
                    "encoding the strings use"
                )
                raise ProcessException(msg) from None
        if pa.types.is_list(kind) or pa.types.is_large_list(kind):
            element = kind.value_type
            if not (pa.types.is_int8(element) or pa.types.is_uint8(element)):
                msg = (
                    f"Cannot convert field '{field}' (an array of {element}) to the binary "
                    f"column '{column}': only arrays of bytes (or strings, or binary values) "
                    "convert to BLOB/BINARY/VARBINARY/LONGVARBINARY"
                )
                raise ProcessException(msg)
            return [None if v is None else bytes(b & 0xFF for b in v) for v in values]
        return values

    def _upsert(self, ignore: bool) -> Any:
        if self.dialect in ("postgresql", "sqlite"):
            module = __import__(f"sqlalchemy.dialects.{self.dialect}", fromlist=["insert"])
            statement = module.insert(self.table)
            if ignore:
                return statement.on_conflict_do_nothing()
            updates = {c: statement.excluded[c] for c in self.fields.values() if c not in self.keys}
            if not updates:
                return statement.on_conflict_do_nothing(index_elements=self.keys)
            return statement.on_conflict_do_update(index_elements=self.keys, set_=updates)
        if self.dialect in ("mysql", "mariadb"):
            from sqlalchemy.dialects.mysql import insert  # noqa: PLC0415

            statement = insert(self.table)
            if ignore:
                return statement.prefix_with("IGNORE")
            return statement.on_duplicate_key_update(
                {c: statement.inserted[c] for c in self.fields.values() if c not in self.keys}
            )
        msg = f"{self.statement_type} is not supported for the {self.dialect} database"
        raise ProcessException(msg)

    def execute(self, connection: Any, rows: list[dict[str, Any]]) -> None:
        """Run the statement for *rows* (executemany)."""
        if not rows:
            return
        if self.statement_type in ("UPDATE", "DELETE"):
            bound = self.keys if self.keys else list(self.fields.values())
            rows = [
                {**{f"v_{c}": v for c, v in row.items()}, **{f"k_{k}": row.get(k) for k in bound}}
                for row in rows
            ]
        connection.execute(self.statement, rows)
