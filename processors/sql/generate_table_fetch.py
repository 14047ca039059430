"""GenerateTableFetch: SQL SELECT statements fetching a table's new rows in pages.

NiFi's GenerateTableFetch, as a flowcore source: the listing (the driver) counts the rows past
the committed maxima and finds the new maxima; the item then becomes one FlowFile per
Partition Size rows, each holding a ``SELECT ... ORDER BY ... LIMIT n OFFSET m`` statement
(paged as NiFi's adapter for the Database Type pages), or per Partition Size values of the
Column for Value Partitioning, for ExecuteSQL downstream. The new maxima
(``<table>@!@<column>``) commit with those FlowFiles.
The properties' expressions are evaluated once, at listing, and carried in the item.

With an incoming connection (NiFi's optional input) it is a per-FlowFile processor instead
(``kind_with_input``): each FlowFile's attributes fill in the properties (a Table Name of
``${db.table.name}``, as NiFi's ListDatabaseTables writes it), the statements are its
children, it is removed (routed to ``failure`` when the database refuses the count), and the
table's maxima are state set in the FlowFile's session, so they commit with its children;
such a stage runs serially.
"""

from __future__ import annotations

import datetime
import decimal
import re
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from flowcore.errors import FlowcoreError, ProcessException
from flowcore.flowfile import FlowFile
from flowcore.processor.base import InputRequirement, ProcessorKind
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import WorkItem, WorkListing
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR
from processors.sql import execute_base as base
from processors.sql import query_base as q
from processors.sql import query_properties as qp

__all__ = ["FetchSettings", "GenerateTableFetch", "Page", "select_statement"]

_ENV = ExpressionLanguageScope.ENVIRONMENT
REL_SUCCESS = Relationship("success", "Successfully created FlowFile from SQL query result set.")
REL_FAILURE = Relationship(
    "failure",
    "This relationship is only used when SQL query execution (using an incoming "
    "FlowFile) failed. The incoming FlowFile will be penalized and routed to this relationship.",
)

PARTITION_SIZE = PropertyDescriptor(
    "Partition Size",
    description="The number of result rows to be fetched by each generated SQL statement. The "
    "total number of rows in the table divided by the partition size gives the number of SQL "
    "statements (i.e. FlowFiles) generated. A value of zero indicates that a single FlowFile "
    "is to be generated whose SQL statement will fetch all rows in the table.",
    default="10000",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_ENV,
    aliases=("gen-table-fetch-partition-size",),
)
COLUMN_FOR_VALUE_PARTITIONING = PropertyDescriptor(
    "Column for Value Partitioning",
    description="The name of an integer column whose values are used to partition the "
    "retrieved data into pages rather than a row count: each page selects a range of Partition "
    "Size values of the column. Useful when the column's values are dense and evenly "
    "distributed; with gaps, pages hold fewer rows (even none).",
    el_scope=_ENV,
    aliases=("gen-table-column-for-val-partitioning",),
)
CUSTOM_ORDERBY_COLUMN = PropertyDescriptor(
    "Custom ORDER BY Column",
    description="The name of a column to be used for ordering the results if Max-Value "
    "Columns are not provided and partitioning is enabled.",
    el_scope=_ENV,
    aliases=("gen-table-custom-orderby-column",),
)
OUTPUT_EMPTY_FLOWFILE_ON_ZERO_RESULTS = PropertyDescriptor(
    "Output Empty FlowFile on Zero Results",
    description="Depending on the specified properties, an execution of this processor may "
    "not result in any SQL statements generated. When this property is true, an empty "
    "FlowFile will be generated.",
    default="false",
    required=True,
    allowable_values=("true", "false"),
    aliases=("gen-table-output-flowfile-on-zero-results",),
)

#: The attribute an incoming FlowFile routed to failure carries (NiFi's).
SQL_ERROR = "generatetablefetch.sql.error"

_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _is_number(value: Any) -> bool:
    """Whether a column's value (as the driver returns it) is written as a bare number."""
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)


def _literal(value: str, number: bool | None, db_type: str = "Generic") -> str:
    """A maximum as a SQL literal: a numeric column's as it is, other values quoted.

    NiFi decides by the column's JDBC type; flowcore by the type of the maximum the database
    returned (*number*), or, when unknown, by the text's look. A maximum is the table's data:
    quotes are doubled, and for MySQL (whose strings take backslash escapes by default) each
    backslash is doubled too, so a value never ends the literal early.
    """
    if number if number is not None else _NUMBER.match(value):
        return value
    if db_type == "MySQL":
        value = value.replace("\\", "\\\\")
    return "'" + value.replace("'", "''") + "'"


class GenerateTableFetch(q.AbstractQueryDatabaseTable):
    """Generates SQL select queries that fetch "pages" of rows from a table (NiFi's processor).

    The partition size property, along with the table's row count, determine the size and
    number of pages and generated FlowFiles. With Maximum-value Columns only the rows past the
    previously seen maxima are fetched.
    """

    property_descriptors: ClassVar = (
        base.DBCP_SERVICE,
        qp.DB_TYPE,
        qp.TABLE_NAME,
        qp.COLUMN_NAMES,
        qp.MAX_VALUE_COLUMN_NAMES,
        qp.QUERY_TIMEOUT,
        PARTITION_SIZE,
        COLUMN_FOR_VALUE_PARTITIONING,
        qp.WHERE_CLAUSE,
        CUSTOM_ORDERBY_COLUMN,
        OUTPUT_EMPTY_FLOWFILE_ON_ZERO_RESULTS,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    input_requirement: ClassVar = InputRequirement.INPUT_ALLOWED
    kind_with_input: ClassVar = ProcessorKind.PER_FLOWFILE
    #: NiFi's trigger tests ``hasIncomingConnection()``: a self-loop feeds it (it waits there)
    fed_by_self_loops: ClassVar = True
    tags: ClassVar = ("sql", "select", "jdbc", "query", "database", "fetch", "generate")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "generatetablefetch.tableName": "The name of the database table to be queried.",
        "generatetablefetch.columnNames": "The comma-separated list of column names used in "
        "the query.",
        "generatetablefetch.whereClause": "Where clause used in the query to get the expected "
        "rows.",
        "generatetablefetch.maxColumnNames": "The comma-separated list of column names used to "
        "keep track of data that has been returned since the processor started running.",
        "generatetablefetch.limit": "The number of result rows to be fetched by the SQL statement.",
        "generatetablefetch.offset": "Offset to be used to retrieve the corresponding partition.",
        "fragment.identifier": "All FlowFiles generated from the same query result set will "
        "have the same value for the fragment.identifier attribute.",
        "fragment.count": "The number of SQL FlowFiles that were produced for same incoming "
        "FlowFile.",
        "fragment.index": "The position of this FlowFile in the list of outgoing FlowFiles.",
        SQL_ERROR: "If the processor has incoming connections, and processing an incoming "
        "FlowFile causes a SQL Exception, the FlowFile is routed to failure and this attribute "
        "is set to the exception message.",
    }

    def on_scheduled(self, context: ProcessContext) -> None:
        """NiFi's setup: a self-loop alone feeds it nothing but what fails, logged as an error."""
        if context.has_incoming_connection() and not context.has_non_loop_connection():
            context.logger.error(
                "The failure relationship can be used only if there is another incoming "
                "connection to this processor."
            )
        super().on_scheduled(context)

    def runs_serially(self) -> bool:
        """Fed by a connection, each FlowFile reads and writes the tables' maxima: one task.

        As a source its listing runs on the driver, which already sees committed state.
        """
        return self.kind is ProcessorKind.PER_FLOWFILE or super().runs_serially()

    def custom_validate(self, values: Mapping[str, str | None]) -> list:
        """NiFi's rule: a Column for Value Partitioning without Expression Language is one column.

        (Initial Load Strategy, the base's rule, is not a property of this processor.)
        """
        from flowcore.validators import ValidationResult  # noqa: PLC0415

        column = values.get(COLUMN_FOR_VALUE_PARTITIONING.name) or ""
        if "," in column and "${" not in column:
            return [
                ValidationResult(
                    COLUMN_FOR_VALUE_PARTITIONING.display_name,
                    column,
                    False,
                    f"{COLUMN_FOR_VALUE_PARTITIONING.display_name} requires a single column "
                    "name, but a comma was detected",
                )
            ]
        return []

    def _fetch_settings(
        self, context: ProcessContext, flowfile: FlowFile | None = None
    ) -> FetchSettings:
        """The properties, their expressions evaluated once for this trigger.

        Against the incoming *flowfile*'s attributes, if any. The listing carries them in its
        item, so the statements are built from the values the rows were counted with
        (``${now()}`` in a WHERE clause is not evaluated twice).

        Raises:
            ProcessException: Column for Value Partitioning names several columns.
        """

        def value(descriptor: PropertyDescriptor) -> str | None:
            return context.get_property(descriptor).evaluate_attribute_expressions(flowfile).value

        partition_column = (value(COLUMN_FOR_VALUE_PARTITIONING) or "").strip()
        if "," in partition_column:
            msg = (
                f"{COLUMN_FOR_VALUE_PARTITIONING.name} requires a single column name, but a "
                f"comma was detected: {partition_column!r}"
            )
            raise ProcessException(msg)
        return FetchSettings(
            table=value(qp.TABLE_NAME) or "",
            columns=value(qp.COLUMN_NAMES),
            max_columns=qp._columns(value(qp.MAX_VALUE_COLUMN_NAMES)),
            where=value(qp.WHERE_CLAUSE),
            order=value(CUSTOM_ORDERBY_COLUMN) or "",
            size=int(value(PARTITION_SIZE) or 0),
            partition_column=partition_column,
            db_type=context.get_property(qp.DB_TYPE).value or "Generic",
            empty=bool(context.get_property(OUTPUT_EMPTY_FLOWFILE_ON_ZERO_RESULTS).as_boolean()),
        )

    def _list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """Count the rows past the committed maxima; one item for the pages, new maxima."""
        settings = self._fetch_settings(context)
        pool = context.controller_service(context.get_property(base.DBCP_SERVICE).value or "")
        return self._listing(context, pool, state, settings)

    def _listing(
        self,
        context: ProcessContext,
        pool: Any,
        state: Mapping[str, str],
        settings: FetchSettings,
        flowfile: FlowFile | None = None,
    ) -> WorkListing:
        """The listing for *settings* from *pool*: a source's, or an incoming *flowfile*'s.

        A source outputs the empty FlowFile of Output Empty FlowFile on Zero Results once
        until rows come (a batch run would otherwise never end); each incoming FlowFile gets
        one, as NiFi's every trigger does.
        """
        table = settings.table
        max_columns = list(settings.max_columns)
        partition_column = settings.partition_column
        lower = self._lower(context, state, table, max_columns, legacy_keys=True, flowfile=flowfile)
        where, params = self._where(max_columns, lower, None, settings.where)
        selected = "".join(f", MAX({c})" for c in max_columns)
        if partition_column:
            selected += f", MAX({partition_column}), MIN({partition_column})"
        row = self._fetch_one(pool, f"SELECT COUNT(*){selected} FROM {table}{where}", params)
        count = int(row[0]) if row else 0
        new_state = dict(state)
        uppers: dict[str, str] = {}
        numeric: dict[str, bool] = {}
        zoned: list[str] = []  # timestamptz columns: their maxima are UTC times (qp._text)
        for column, value in zip(max_columns, row[1:] if row else (), strict=False):
            if value is not None:
                new_state[qp.state_key(table, column)] = qp._text(value)
                uppers[column] = qp._text(value)
                numeric[column] = _is_number(value)
                if isinstance(value, datetime.datetime) and value.tzinfo is not None:
                    zoned.append(column)
        for column in max_columns:
            if column not in uppers and column in lower:
                uppers[column] = lower[column]  # NiFi bounds by the kept maximum
        span = None
        if partition_column and row and row[-2] is not None:
            span = (int(row[-1]), int(row[-2]))  # NiFi's Long values: an integer column
        empty = settings.empty
        if count == 0 and not empty:
            return WorkListing((), state)
        if flowfile is None:
            if count == 0 and dict(state).get(f"{table.lower()}@!@__empty") == "done":
                return WorkListing((), state)
            if count == 0:
                new_state[f"{table.lower()}@!@__empty"] = "done"
            else:
                new_state.pop(f"{table.lower()}@!@__empty", None)
        upper = uppers.get(max_columns[0]) if max_columns else None
        key = f"{table}@pages:{lower}..{upper}:{count}:{span}"
        payload = {
            "lower": lower,
            "upper": upper,
            "uppers": uppers,
            "count": count,
            "span": span,
            "numeric": numeric,
            "zoned": zoned,
            "settings": settings,
        }
        return WorkListing((WorkItem(key=key, payload=payload),), new_state)

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """A source's listing and reading, or, with an incoming connection, one FlowFile's.

        NiFi's: with an incoming connection and nothing queued, nothing runs.
        """
        if not context.has_incoming_connection():
            super().on_trigger(context, session)
            return
        flowfile = session.get()
        if flowfile is None:
            return
        settings = self._fetch_settings(context, flowfile)  # a bad value rolls back, as NiFi
        state = session.get_state().values
        try:
            pool = session.controller_service(context.get_property(base.DBCP_SERVICE).value or "")
            listing = self._listing(context, pool, state, settings, flowfile)
        except FlowcoreError:
            raise
        except Exception as error:  # the database's: no such table, unreachable
            from processors.sql.statements import describe_error  # noqa: PLC0415

            message = describe_error(error, "database")
            context.logger.error(
                "Routing %s to failure since unable to execute SQL select query on %s: %s",
                flowfile,
                settings.table,
                message,
            )
            flowfile = session.put_attribute(flowfile, SQL_ERROR, message)
            session.transfer(flowfile, REL_FAILURE)
            return
        for item in listing.items:
            self._write_pages(context, session, item, flowfile)
        session.remove(flowfile)
        if dict(listing.state) != dict(state):
            session.set_state(listing.state)

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """One FlowFile per page, each holding its SELECT statement."""
        self._write_pages(context, session, item, None)

    def _write_pages(
        self,
        context: ProcessContext,
        session: ProcessSession,
        item: WorkItem,
        parent: FlowFile | None,
    ) -> None:
        """The item's pages, children of the incoming *parent* if there is one (FORK)."""
        settings = item.payload.get("settings") or self._fetch_settings(context)
        table = settings.table
        columns = settings.columns
        max_columns = list(settings.max_columns)
        partition_column = settings.partition_column
        size = settings.size
        lower = dict(item.payload.get("lower") or {})
        upper = item.payload.get("upper")
        uppers = dict(item.payload.get("uppers") or ({max_columns[0]: upper} if upper else {}))
        count = int(item.payload.get("count") or 0)
        span = item.payload.get("span")
        numeric = dict(item.payload.get("numeric") or {})
        zoned = set(item.payload.get("zoned") or ())

        def literal(column: str, value: str) -> str:
            if column in zoned:  # a UTC time, whatever the session's zone (qp.bound_param)
                value = qp.bound_param(value, "postgresql")
            return _literal(value, numeric.get(column), settings.db_type)

        # NiFi's order: the lower bounds, the Additional WHERE clause, then the upper bounds.
        clauses = [
            f"{c} {'>' if i == 0 else '>='} {literal(c, lower[c])}"
            for i, c in enumerate(max_columns)
            if c in lower
        ]
        extra = settings.where
        if extra:
            clauses.append(f"({extra})")
        clauses.extend(f"{c} <= {literal(c, uppers[c])}" for c in max_columns if c in uppers)
        order = ", ".join(max_columns) or settings.order
        if partition_column:
            # No span: the new rows' partitioning column is all NULL, no range to fetch.
            low, high = span if span else (0, 0)
            pages = 0 if not span else 1 if size == 0 else -(-(high - low + 1) // size)
        else:
            low = high = 0
            pages = 1 if size == 0 else -(-count // size)
        # Derived, so a replayed task makes the same (NiFi's is random): from the incoming
        # FlowFile too, as two FlowFiles naming one table and range are two fetches.
        seed = item.key if parent is None else f"{parent.attributes.get('uuid')}/{item.key}"
        fragment = str(uuid.uuid5(uuid.NAMESPACE_URL, seed))
        base_attributes = {
            "generatetablefetch.tableName": table,
            "generatetablefetch.columnNames": columns or "",
            "generatetablefetch.maxColumnNames": ", ".join(max_columns),
            "fragment.identifier": fragment,
            "fragment.count": str(pages),
        }
        if pages == 0 and not settings.empty:
            return  # rows whose partitioning column is NULL only: no range to fetch
        if pages == 0:
            # NiFi's Output Empty FlowFile on Zero Results: no statement, fragment.count 0.
            flowfile = session.create(parent)
            attributes = {
                **base_attributes,
                "generatetablefetch.whereClause": " AND ".join(clauses) or "1=1",
                "fragment.index": "0",
            }
            flowfile = session.put_all_attributes(
                flowfile, {k: v for k, v in attributes.items() if v != ""}
            )
            session.transfer(flowfile, REL_SUCCESS)
            return
        limit: int | None = size or None
        for page in range(pages):
            if page == pages - 1 and partition_column and (not clauses or extra):
                # NiFi bounds the last page by the column's maximum instead of a limit.
                clauses.append(f"{partition_column} <= {high}")
                limit = None
            where = " AND ".join(clauses) or "1=1"
            offset = page * size + low if size else None
            sql = select_statement(
                settings.db_type,
                Page(table, columns, where, order if size else "", limit, offset),
                partition_column,
            )
            flowfile = session.create(parent)
            flowfile = session.write(flowfile, sql.encode())
            attributes = {
                **base_attributes,
                "generatetablefetch.whereClause": where,
                "generatetablefetch.limit": str(limit) if limit else "",
                "generatetablefetch.offset": str(offset) if size else "",
                "fragment.index": str(page),
            }
            flowfile = session.put_all_attributes(
                flowfile, {k: v for k, v in attributes.items() if v != ""}
            )
            session.transfer(flowfile, REL_SUCCESS)


@attrs.frozen
class FetchSettings:
    """A GenerateTableFetch trigger's properties, evaluated once at listing, for its pages.

    Attributes:
        table: Table Name.
        columns: Columns to Return (None: all).
        max_columns: the Maximum-value Columns, in order.
        where: the Additional WHERE clause, if any.
        order: Custom ORDER BY Column (empty: none).
        size: Partition Size (0: one statement).
        partition_column: Column for Value Partitioning (empty: pages by row offset).
        db_type: Database Type, whose paging the statements use.
        empty: Output Empty FlowFile on Zero Results.
    """

    table: str
    columns: str | None
    max_columns: tuple[str, ...] = attrs.field(converter=tuple)
    where: str | None
    order: str
    size: int
    partition_column: str
    db_type: str
    empty: bool


@attrs.frozen
class Page:
    """One generated statement's parts, as NiFi's ``DatabaseAdapter.getSelectStatement`` takes them.

    Attributes:
        table: the table name.
        columns: Columns to Return (empty or ``*``: all).
        where: the WHERE clause (``1=1`` when nothing bounds it).
        order: the ORDER BY column(s), empty for none.
        limit: the page's rows (None: no limit).
        offset: the page's first row, or the partition column's first value (None: none).
    """

    table: str
    columns: str | None
    where: str
    order: str
    limit: int | None
    offset: int | None


def select_statement(db_type: str, page: Page, partition_column: str = "") -> str:
    """The SELECT NiFi's adapter for *db_type* writes for *page*.

    MS SQL 2012+ and Oracle 12+ page with ``OFFSET ... ROWS FETCH NEXT ... ROWS ONLY`` (MS
    SQL uses ``TOP`` for a limit without offset); Generic, MySQL, PostgreSQL and the other
    types with ``LIMIT``/``OFFSET``. With a Column for Value Partitioning a page is a range of
    that column's values (``col >= offset AND col < offset + limit``), unordered.
    """
    mssql = db_type == "MS SQL 2012+"
    oracle = db_type == "Oracle 12+"
    columns = "*" if not page.columns or page.columns.strip() == "*" else page.columns
    top = ""
    if mssql and page.limit is not None and page.offset is None and not partition_column:
        top = f"TOP {page.limit} "
    sql = f"SELECT {top}{columns} FROM {page.table}"
    if page.where:
        sql += f" WHERE {page.where}"
        if partition_column:
            start = page.offset if page.offset is not None else 0
            sql += f" AND {partition_column} >= {start}"
            if page.limit is not None:
                sql += f" AND {partition_column} < {start + page.limit}"
    if partition_column:
        return sql
    if page.order:
        sql += f" ORDER BY {page.order}"
    if mssql:
        if page.offset is not None and page.limit:
            if not page.order:
                msg = "Order by clause cannot be null or empty when using row paging"
                raise ProcessException(msg)
            sql += f" OFFSET {page.offset} ROWS FETCH NEXT {page.limit} ROWS ONLY"
    elif oracle:
        if page.offset:
            sql += f" OFFSET {page.offset} ROWS"
        if page.limit is not None:
            sql += f" FETCH NEXT {page.limit} ROWS ONLY"
    else:
        if page.limit is not None:
            sql += f" LIMIT {page.limit}"
        if page.offset:
            sql += f" OFFSET {page.offset}"
    return sql
