"""NiFi's AbstractQueryDatabaseTable as a flowcore source: incremental reads, exactly once.

NiFi's QueryDatabaseTable selects the rows whose Maximum-value Columns exceed the maxima it
kept in state, then stores the new maxima. flowcore splits that in two so a crash neither
skips nor repeats a row:

* :meth:`list_work` (the driver) asks the database for the current maximum of the first
  Maximum-value Column above the committed one and returns one work item holding both
  bounds; the listing state (NiFi's keys, ``<table>@!@<column>`` in lower case) holds the new
  maxima and is committed in the same WAL transaction as the FlowFiles the item makes.
* :meth:`read_work` (a task) reads exactly the rows between the bounds (``col > lower AND col
  <= upper``), so a replayed item reads the same rows again.

Rows inserted later with a value at or below a committed maximum are not read (as in NiFi).
"""

from __future__ import annotations

import contextvars
import time
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from processors.sql import execute_base as base
from processors.sql import query_properties as qp
from processors.sql.execute_base import fetch_batches
from processors.sql.isolation import TRANS_ISOLATION_LEVEL, isolated, isolation_of
from processors.sql.pg_reads import Streamed as _Streamed
from processors.sql.pg_reads import chunked_rows as _chunked_rows
from processors.sql.pg_reads import is_psycopg as _is_psycopg
from processors.sql.pg_reads import reading as _reading

__all__ = [
    "BINARY_SAME_TYPES",
    "TRANS_ISOLATION_LEVEL",
    "AbstractQueryDatabaseTable",
    "ReadSettings",
]

RESULT_TABLENAME = "tablename"
RESULT_ROW_COUNT = "querydbtable.row.count"

REL_SUCCESS = Relationship("success", "Successfully created FlowFile from SQL query result set.")

#: PostgreSQL type OIDs whose binary results psycopg loads into the values their text gives
#: (bool, bytea, name, int8, int2, int4, text, oid, json, float8, inet, int4[], text[], bpchar,
#: varchar, date, time, timestamp, timestamptz, interval, timetz, numeric, uuid, jsonb;
#: tests/processors/sql/test_query_base.py compares both on a table of each). Not real: its
#: text is the shortest decimal (1.5e-07), its binary the float widened (1.500000053056283e-07);
#: nor enums, xml, money and other types psycopg has no binary loader for (bytes).
BINARY_SAME_TYPES = frozenset({
    16, 17, 19, 20, 21, 23, 25, 26, 114, 701, 869, 1007, 1009, 1042, 1043, 1082, 1083, 1114,
    1184, 1186, 1266, 1700, 2950, 3802,
})  # fmt: skip


#: Max Wait Time (whole seconds, 0: no limit) of the listing under way in this thread: its
#: queries (:meth:`AbstractQueryDatabaseTable._fetch_one`, GenerateTableFetch's too) are
#: cancelled past it. Set by :meth:`AbstractQueryDatabaseTable.list_work`.
_LISTING_TIMEOUT: contextvars.ContextVar[int] = contextvars.ContextVar(
    "flowcore_sql_listing_timeout", default=0
)


def _max_wait(context: ProcessContext) -> int:
    """Max Wait Time in whole seconds (environment scope; 0: no limit)."""
    return base.timeout_seconds(
        context.get_property(qp.QUERY_TIMEOUT).evaluate_attribute_expressions()
    )


@attrs.frozen
class ReadSettings:
    """A QueryDatabaseTable trigger's properties, evaluated once at listing, for its read.

    Attributes:
        table: Table Name.
        source: what the statements select from: the table, or ``(Custom Query) AS table``.
        columns: Columns to Return (``*`` when unset).
        max_columns: the Maximum-value Columns, in order.
        where: the Additional WHERE clause, if any.
        max_rows: Max Rows Per Flow File (0: one FlowFile).
        max_fragments: Maximum Number of Fragments (0: no limit).
        output_batch: Output Batch Size (0: unset).
        fetch: Fetch Size (0: the default).
        isolation: Transaction Isolation Level as SQLAlchemy names it (None: not set).
    """

    table: str
    source: str
    columns: str
    max_columns: tuple[str, ...] = attrs.field(converter=tuple)
    where: str | None
    max_rows: int
    max_fragments: int
    output_batch: int
    fetch: int
    isolation: str | None = None


class AbstractQueryDatabaseTable(SourceProcessor):
    """What QueryDatabaseTable and QueryDatabaseTableRecord share (the result writer differs)."""

    relationships: ClassVar = (REL_SUCCESS,)
    supports_dynamic_properties: ClassVar = True
    identifies_work: ClassVar = True

    def result_writer(self, context: ProcessContext, session: ProcessSession) -> Any:
        """The writer for this read's FlowFiles."""
        raise NotImplementedError

    def dynamic_descriptor(self, name: str) -> PropertyDescriptor:
        """``initial.maxvalue.<column>``: a column's maximum before any state exists."""
        return PropertyDescriptor(name, el_scope=ExpressionLanguageScope.ENVIRONMENT, dynamic=True)

    def custom_validate(self, values: Mapping[str, str | None]) -> list[Any]:
        """NiFi's check: Start at Current Maximum Values needs Maximum-value Columns."""
        from flowcore.validators import ValidationResult  # noqa: PLC0415

        strategy = values.get(qp.INITIAL_LOAD_STRATEGY.name) or qp.INITIAL_LOAD_STRATEGY.default
        if strategy == "Start at Current Maximum Values" and not values.get(
            qp.MAX_VALUE_COLUMN_NAMES.name
        ):
            return [
                ValidationResult(
                    qp.INITIAL_LOAD_STRATEGY.display_name,
                    "Start at Current Maximum Values",
                    False,
                    "'Start at Current Maximum Values' strategy can only be used "
                    "when 'Maximum-value Columns' property is also configured",
                )
            ]
        return []

    # --- statements ------------------------------------------------------------------------

    def _read_settings(self, context: ProcessContext) -> ReadSettings:
        """The properties a read needs, their expressions evaluated once for this trigger.

        The listing carries them in its item, so the read uses the values the maxima were
        found with: an expression such as ``${now()}`` is not evaluated a second time.
        """

        def value(descriptor: PropertyDescriptor) -> str | None:
            return context.get_property(descriptor).evaluate_attribute_expressions().value

        def number(descriptor: PropertyDescriptor) -> int:
            return int(value(descriptor) or 0)

        table = value(qp.TABLE_NAME) or ""
        custom = value(qp.SQL_QUERY)
        return ReadSettings(
            table=table,
            source=f"({custom}) AS {table}" if custom else table,
            columns=value(qp.COLUMN_NAMES) or "*",
            max_columns=qp._columns(value(qp.MAX_VALUE_COLUMN_NAMES)),
            where=value(qp.WHERE_CLAUSE),
            max_rows=number(qp.MAX_ROWS_PER_FLOW_FILE),
            max_fragments=number(qp.MAX_FRAGMENTS),
            output_batch=number(qp.OUTPUT_BATCH_SIZE),
            fetch=number(qp.FETCH_SIZE),
            isolation=isolation_of(self, context),
        )

    @staticmethod
    def _where(
        max_columns: list[str],
        lower: Mapping[str, str],
        upper: str | None,
        extra: str | None,
    ) -> tuple[str, list[str]]:
        """The WHERE clause bounding *max_columns* (parameters), then the *extra* clause."""
        clauses: list[str] = []
        params: list[str] = []
        for index, column in enumerate(max_columns):
            if column in lower:
                clauses.append(f"{column} {'>' if index == 0 else '>='} ?")
                params.append(lower[column])
        if upper is not None and max_columns:
            # NiFi's first read has no bound at all, so its rows with a NULL maximum are read.
            first = max_columns[0]
            bound = f"{first} <= ?" if first in lower else f"({first} <= ? OR {first} IS NULL)"
            clauses.append(bound)
            params.append(upper)
        if extra:
            clauses.append(f"({extra})")
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def _lower(
        self,
        context: ProcessContext,
        state: Mapping[str, str],
        table: str,
        max_columns: list[str],
        *,
        legacy_keys: bool = False,
        flowfile: Any = None,
    ) -> dict[str, str]:
        """Each Maximum-value Column's lower bound: its kept maximum, or its initial value.

        NiFi's back-compat: state written before the keys had the table prefix holds a
        maximum under the column's name alone. It stands in for ``initial.maxvalue.<column>``
        and, with *legacy_keys* (GenerateTableFetch) and a Table Name without Expression
        Language, for a missing ``<table>@!@<column>`` key. Initial values are evaluated
        against the incoming *flowfile*'s attributes, if any (GenerateTableFetch fed by a
        connection).
        """
        lower: dict[str, str] = {}
        dynamic = context.dynamic_properties
        raw_table = context.get_property(qp.TABLE_NAME).value or ""
        static_table = "${" not in raw_table
        for column in max_columns:
            key = qp.state_key(table, column)
            if key in state:
                lower[column] = state[key]
                continue
            name = next(
                (
                    k
                    for k in dynamic
                    if k.lower() == f"{qp.INITIAL_MAX_VALUE_PROP_START}{column}".lower()
                ),
                None,
            )
            if name and column.lower() in state:
                lower[column] = state[column.lower()]
                continue
            value = (
                context.get_property(name).evaluate_attribute_expressions(flowfile).value
                if name
                else None
            )
            if value:  # NiFi evaluates it (environment scope, e.g. ${created.on})
                lower[column] = value
            elif legacy_keys and static_table and state.get(column.lower()):
                lower[column] = state[column.lower()]
        return lower

    @staticmethod
    def _statement(pool: Any, sql: str, params: list[str]) -> tuple[str, Any]:
        """*sql* and *params* as the pool's driver takes them."""
        from processors.sql.statements import named_args, to_paramstyle  # noqa: PLC0415

        if not params:
            return sql, None
        dialect = pool.engine().dialect
        params = [qp.bound_param(p, dialect.name) for p in params]
        return to_paramstyle(sql, dialect.paramstyle), named_args(params, dialect.paramstyle)

    @classmethod
    def _execute(
        cls, pool: Any, cursor: Any, sql: str, params: list[str], *, binary: bool = False
    ) -> None:
        query, args = cls._statement(pool, sql, params)
        options = {"binary": True} if binary else {}
        if args is None:
            cursor.execute(query, **options)
        else:
            cursor.execute(query, args, **options)

    @classmethod
    def _open_rows(cls, pool: Any, cursor: Any, sql: str, params: list[str], fetch: int) -> Any:
        """The rows of *sql*, as an object with ``description`` and ``fetchmany``.

        With psycopg the query is first described (the same query with ``LIMIT 0``), and its
        rows come in PostgreSQL's binary format when every column's type is one psycopg loads
        into the same Python values either way (:data:`BINARY_SAME_TYPES`): binary results
        skip printing each value as text on the server and parsing it back in the driver (a
        fifth of a plain fetch). With libpq 17 or later they are streamed (:class:`_Streamed`).
        Other drivers execute on *cursor*, as before.
        """
        if not _is_psycopg(cursor):
            cls._execute(pool, cursor, sql, params)
            return cursor
        cls._execute(pool, cursor, f"{sql} LIMIT 0", params)
        described = cursor.description
        binary = _binary_same(described)
        if not _chunked_rows():
            cls._execute(pool, cursor, sql, params, binary=binary)
            if binary and not _binary_same(cursor.description):
                cls._execute(pool, cursor, sql, params)  # the table changed since LIMIT 0
            return cursor
        query, args = cls._statement(pool, sql, params)
        rows = _Streamed(cursor, query, args, described, binary=binary, size=fetch)
        if binary and not _binary_same(rows.description):
            rows.close()  # the table changed since LIMIT 0 (autocommit): as text then
            rows = _Streamed(cursor, query, args, described, binary=False, size=fetch)
        return rows

    # --- listing (the driver) --------------------------------------------------------------

    @classmethod
    def _fetch_one(
        cls,
        pool: Any,
        sql: str,
        params: list[str],
        *,
        autocommit: bool = False,
        isolation: str | None = None,
    ) -> Any:
        """The one row a listing query returns (maxima, a count), read on a raw connection.

        With *isolation* (Transaction Isolation Level) it is read in a transaction of it.
        """
        raw = pool.engine().raw_connection()
        try:
            with (
                isolated(pool, raw, isolation),
                _reading(raw, autocommit=autocommit and isolation is None),
                base.query_timeout(raw, _LISTING_TIMEOUT.get(), "listing query"),
            ):
                cursor = raw.cursor()
                cls._execute(pool, cursor, sql, params)
                row = cursor.fetchone()
        finally:
            raw.close()
        return row

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """The listing, or none while the database cannot answer (logged; NiFi yields)."""
        from flowcore.errors import ConfigurationError  # noqa: PLC0415
        from processors.sql.statements import describe_error, listing_fix  # noqa: PLC0415

        token = _LISTING_TIMEOUT.set(_max_wait(context))
        try:
            return self._list_work(context, state)
        except ConfigurationError:
            raise
        except Exception as error:  # the database's: unreachable, refused, no such table
            table = context.get_property(qp.TABLE_NAME).evaluate_attribute_expressions().value
            service = context.get_property(base.DBCP_SERVICE).value or ""
            context.logger.error(
                "Unable to list new rows of %s: %s; %s",
                table,
                describe_error(error, f"DBCPConnectionPool '{service}'"),
                listing_fix(error, service),
            )
            context.yield_()
            return WorkListing((), state)
        finally:
            _LISTING_TIMEOUT.reset(token)

    def _list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """One item reading the rows past the committed maxima, up to the current maximum."""
        settings = self._read_settings(context)
        table, source = settings.table, settings.source
        max_columns = list(settings.max_columns)
        if not max_columns:
            # No position to keep: the table is read once until the state is cleared.
            if state.get(f"{table.lower()}{qp.NAMESPACE_DELIMITER}") == "read":
                return WorkListing((), state)
            payload = {"lower": {}, "upper": None, "settings": settings}
            item = WorkItem(key=f"{table}@full", payload=payload)
            return WorkListing(
                (item,), {**state, f"{table.lower()}{qp.NAMESPACE_DELIMITER}": "read"}
            )
        pool = context.controller_service(context.get_property(base.DBCP_SERVICE).value or "")
        lower = self._lower(context, state, table, max_columns)
        where, params = self._where(max_columns, lower, None, settings.where)
        maxima = ", ".join(f"MAX({c})" for c in max_columns)
        autocommit = _autocommit(context)
        try:
            row = self._fetch_one(
                pool,
                f"SELECT {maxima} FROM {source}{where}",
                params,
                autocommit=autocommit,
                isolation=settings.isolation,
            )
        except base.QueryTimedOut:
            raise  # the table is locked or slow: asking it for its columns would wait again
        except Exception:
            self._check_columns(pool, source, max_columns, autocommit=autocommit)
            raise
        if row is None or row[0] is None:
            return WorkListing((), state)
        new_state = dict(state)
        for column, value in zip(max_columns, row, strict=True):
            if value is not None:
                new_state[qp.state_key(table, column)] = qp._text(value)
        first_time = qp.state_key(table, max_columns[0]) not in state and not lower
        if first_time and context.get_property(qp.INITIAL_LOAD_STRATEGY).value == (
            "Start at Current Maximum Values"
        ):
            return WorkListing((), new_state)
        upper = qp._text(row[0])
        maxima = {c: qp._text(v) for c, v in zip(max_columns, row, strict=True) if v is not None}
        key = f"{table}@{max_columns[0]}:{lower.get(max_columns[0], '')}..{upper}"
        payload = {"lower": lower, "upper": upper, "maxima": maxima, "settings": settings}
        return WorkListing((WorkItem(key=key, payload=payload),), new_state)

    @classmethod
    def _check_columns(
        cls, pool: Any, source: str, max_columns: list[str], *, autocommit: bool
    ) -> None:
        """After a failed listing: NiFi's error when a Maximum-value Column is not in *source*.

        Raises:
            ProcessException: a Maximum-value Column the table or query does not have.
        """
        from flowcore.errors import ProcessException  # noqa: PLC0415

        raw = pool.engine().raw_connection()
        try:
            with (
                _reading(raw, autocommit=autocommit),
                base.query_timeout(raw, _LISTING_TIMEOUT.get(), "listing query"),
            ):
                cursor = raw.cursor()
                cursor.execute(f"SELECT * FROM {source} WHERE 1 = 0")
                names = {str(c[0]).lower() for c in cursor.description or ()}
        except Exception:
            return  # the table itself is the problem: the listing's error says so
        finally:
            raw.close()
        for column in max_columns:
            if column.lower() not in names:
                msg = f"Column not found in the table/query specified: {column}"
                raise ProcessException(msg)

    def requeue_work(
        self,
        state: Mapping[str, str],
        items: Any,
        committed: Mapping[str, str],
    ) -> Mapping[str, str]:
        """A failed read leaves the maxima as committed: the rows are read again later."""
        del state, items
        return dict(committed)

    # --- reading (a task) ------------------------------------------------------------------

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """Read the item's rows into FlowFiles (fragments of Max Rows Per Flow File)."""
        settings = item.payload.get("settings") or self._read_settings(context)
        table, source = settings.table, settings.source
        max_columns = list(settings.max_columns)
        lower = dict(item.payload.get("lower") or {})
        upper = item.payload.get("upper")
        where, params = self._where(max_columns, lower, upper, settings.where)
        order = f" ORDER BY {', '.join(max_columns)}" if max_columns else ""
        sql = f"SELECT {settings.columns} FROM {source}{where}{order}"
        pool = session.controller_service(context.get_property(base.DBCP_SERVICE).value or "")
        max_rows = settings.max_rows
        batched = settings.output_batch > 0
        fetch = settings.fetch or base.DEFAULT_FETCH
        transit = pool.transit_uri()
        isolation = getattr(settings, "isolation", None)  # an item listed before it was kept
        raw = pool.engine().raw_connection()
        try:
            with (
                isolated(pool, raw, isolation),
                _reading(raw, autocommit=_autocommit(context) and isolation is None),
                base.query_timeout(raw, _max_wait(context)),
            ):
                started = time.monotonic()
                rows = self._run_query(pool, raw.cursor(), sql, params, max(1, fetch))
                try:
                    made = self._write_rows(
                        context,
                        session,
                        (item, table),
                        rows,
                        (max_rows, settings.max_fragments, fetch),
                    )
                finally:
                    if isinstance(rows, _Streamed):
                        rows.close()
        finally:
            raw.close()
        elapsed = int((time.monotonic() - started) * 1000)
        if not made:
            return
        if max_columns and upper is not None and not batched:
            # NiFi's maxvalue.<column>: each Maximum-value Column's maximum, not the first's only.
            # Not with Output Batch Size: NiFi releases batches before the maxima are known.
            maxima = dict(item.payload.get("maxima") or {max_columns[0]: upper})
            values = {f"maxvalue.{c.lower()}": v for c, v in maxima.items()}
            made = [session.put_all_attributes(f, values) for f in made]
        if max_rows > 0 and not batched:
            made = [session.put_attribute(f, "fragment.count", str(len(made))) for f in made]
        for flowfile in made:
            session.provenance.receive(flowfile, transit, duration_ms=elapsed)
            session.transfer(flowfile, REL_SUCCESS)
        context.logger.info(
            "%s created %d FlowFiles from %s", type(self).__name__, len(made), table
        )

    @classmethod
    def _run_query(cls, pool: Any, cursor: Any, sql: str, params: list[str], fetch: int) -> Any:
        """:meth:`_open_rows`, a database's refusal made one error naming the statement.

        Raises:
            ProcessException: the database refused *sql* (a column that does not exist, say):
                the item's session rolls back and the engine reads it again later, its rows
                not skipped (NiFi logs the same and yields).
        """
        from flowcore.errors import FlowcoreError, ProcessException  # noqa: PLC0415
        from processors.sql.statements import describe_error  # noqa: PLC0415

        try:
            return cls._open_rows(pool, cursor, sql, params, fetch)
        except (FlowcoreError, OSError):
            raise
        except Exception as error:
            msg = f"Unable to execute SQL select query {sql}: {describe_error(error, 'database')}"
            raise ProcessException(msg) from error

    def _write_rows(
        self,
        context: ProcessContext,
        session: ProcessSession,
        read: tuple[WorkItem, str],
        cursor: Any,
        limits: tuple[int, int, int],
    ) -> list[Any]:
        """The rows of *cursor* (:meth:`_open_rows`) as FlowFiles.

        *read* is the work item and its table name; *limits* are Max Rows Per Flow File,
        Maximum Number of Fragments and Fetch Size, their expressions evaluated.
        """
        item, table = read
        max_rows, max_fragments, fetch = limits
        fragment_id = str(uuid.uuid5(uuid.NAMESPACE_URL, item.key))
        made: list[Any] = []
        index = 0
        writer = self.result_writer(context, session)  # one for all: every fragment's schema
        while True:
            flowfile = session.create()
            counted: list[int] = []
            description = cursor.description
            rows = fetch_batches(cursor, max(1, fetch), max_rows)
            flowfile = session.write(
                flowfile,
                lambda out, r=rows, c=counted, d=description, w=writer: c.append(
                    w.write(out, d, r)
                ),
            )
            count = counted[0] if counted else 0
            if count == 0 and (index > 0 or not made):
                session.remove(flowfile)
                break
            attributes = {RESULT_TABLENAME: table, RESULT_ROW_COUNT: str(count)}
            attributes.update(writer.attributes())
            if max_rows > 0:
                attributes["fragment.identifier"] = fragment_id
                attributes["fragment.index"] = str(index)
            flowfile = session.put_all_attributes(flowfile, attributes)
            made.append(flowfile)
            index += 1
            if max_rows <= 0 or count < max_rows:
                break
            if max_fragments and index >= max_fragments:
                break
        return made


def _autocommit(context: ProcessContext) -> bool:
    """NiFi's Set Auto Commit: unset leaves the driver's default, which JDBC's is (true)."""
    return context.get_property(qp.AUTO_COMMIT).value != "false"


def _binary_same(description: Any) -> bool:
    return all(column[1] in BINARY_SAME_TYPES for column in description or ())
