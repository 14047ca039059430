"""GenerateTableFetch: SQL SELECT statements fetching a table's new rows in pages.

NiFi's GenerateTableFetch, as a flowcore source: the listing (the driver) counts the rows past
the committed maxima and finds the new maxima; the item then becomes one FlowFile per
Partition Size rows, each holding a ``SELECT ... ORDER BY ... LIMIT n OFFSET m`` statement for
ExecuteSQL downstream. The new maxima (``<table>@!@<column>``) commit with those FlowFiles.
Incoming FlowFiles (NiFi's optional input) are not taken: the properties say the table.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import ClassVar

from flowcore.process_context import ProcessContext
from flowcore.processor_kinds import WorkItem, WorkListing
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.relationship import Relationship
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR
from processors.sql import execute_base as base
from processors.sql import query_base as q

__all__ = ["GenerateTableFetch"]

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
    description="The name of an integer column whose values are used to partition the rows "
    "(not built in flowcore: LIMIT/OFFSET paging is used).",
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

_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _literal(value: str) -> str:
    """A maximum as a SQL literal: numbers as they are, other values quoted."""
    if _NUMBER.match(value):
        return value
    return "'" + value.replace("'", "''") + "'"


class GenerateTableFetch(q.AbstractQueryDatabaseTable):
    """Generates SQL select queries that fetch "pages" of rows from a table (NiFi's processor).

    The partition size property, along with the table's row count, determine the size and
    number of pages and generated FlowFiles. With Maximum-value Columns only the rows past the
    previously seen maxima are fetched.
    """

    property_descriptors: ClassVar = (
        base.DBCP_SERVICE,
        q.DB_TYPE,
        q.TABLE_NAME,
        q.COLUMN_NAMES,
        q.MAX_VALUE_COLUMN_NAMES,
        q.QUERY_TIMEOUT,
        PARTITION_SIZE,
        COLUMN_FOR_VALUE_PARTITIONING,
        q.WHERE_CLAUSE,
        CUSTOM_ORDERBY_COLUMN,
        OUTPUT_EMPTY_FLOWFILE_ON_ZERO_RESULTS,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
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
    }

    def custom_validate(self, values: Mapping[str, str | None]) -> list:
        """No cross-property rule beyond NiFi's (Initial Load Strategy is not a property)."""
        del values
        return []

    def _list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """Count the rows past the committed maxima; one item for the pages, new maxima."""
        table = context.get_property(q.TABLE_NAME).evaluate_attribute_expressions().value or ""
        max_columns = q._columns(
            context.get_property(q.MAX_VALUE_COLUMN_NAMES).evaluate_attribute_expressions().value
        )
        pool = context.controller_service(context.get_property(base.DBCP_SERVICE).value or "")
        lower = self._lower(context, state, table, max_columns)
        where, params = self._where(context, max_columns, lower, None)
        maxima = "".join(f", MAX({c})" for c in max_columns)
        row = self._fetch_one(pool, f"SELECT COUNT(*){maxima} FROM {table}{where}", params)
        count = int(row[0]) if row else 0
        new_state = dict(state)
        upper = None
        uppers: dict[str, str] = {}
        for column, value in zip(max_columns, row[1:] if row else (), strict=False):
            if value is not None:
                new_state[q.state_key(table, column)] = q._text(value)
                uppers[column] = q._text(value)
        if max_columns and row and row[1] is not None:
            upper = str(row[1])
        empty = context.get_property(OUTPUT_EMPTY_FLOWFILE_ON_ZERO_RESULTS).as_boolean()
        if count == 0 and not empty:
            return WorkListing((), state)
        if count == 0 and dict(state).get(f"{table.lower()}@!@__empty") == "done":
            return WorkListing((), state)
        if count == 0:
            new_state[f"{table.lower()}@!@__empty"] = "done"
        else:
            new_state.pop(f"{table.lower()}@!@__empty", None)
        key = f"{table}@pages:{lower}..{upper}:{count}"
        item = WorkItem(
            key=key, payload={"lower": lower, "upper": upper, "uppers": uppers, "count": count}
        )
        return WorkListing((item,), new_state)

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """One FlowFile per page, each holding its SELECT statement."""
        table = context.get_property(q.TABLE_NAME).evaluate_attribute_expressions().value or ""
        columns = context.get_property(q.COLUMN_NAMES).evaluate_attribute_expressions().value or "*"
        max_columns = q._columns(
            context.get_property(q.MAX_VALUE_COLUMN_NAMES).evaluate_attribute_expressions().value
        )
        lower = dict(item.payload.get("lower") or {})
        upper = item.payload.get("upper")
        uppers = dict(item.payload.get("uppers") or ({max_columns[0]: upper} if upper else {}))
        count = int(item.payload.get("count") or 0)
        # NiFi's order: the lower bounds, the Additional WHERE clause, then the upper bounds.
        clauses = [
            f"{c} {'>' if i == 0 else '>='} {_literal(lower[c])}"
            for i, c in enumerate(max_columns)
            if c in lower
        ]
        extra = context.get_property(q.WHERE_CLAUSE).evaluate_attribute_expressions().value
        if extra:
            clauses.append(f"({extra})")
        clauses.extend(f"{c} <= {_literal(uppers[c])}" for c in max_columns if c in uppers)
        where = " AND ".join(clauses) or "1=1"
        order = ", ".join(max_columns) or (
            context.get_property(CUSTOM_ORDERBY_COLUMN).evaluate_attribute_expressions().value or ""
        )
        size = (
            context.get_property(PARTITION_SIZE).evaluate_attribute_expressions().as_integer() or 0
        )
        pages = 1 if size == 0 else -(-count // size)
        fragment = str(uuid.uuid5(uuid.NAMESPACE_URL, item.key))
        base_attributes = {
            "generatetablefetch.tableName": table,
            "generatetablefetch.columnNames": columns if columns != "*" else "",
            "generatetablefetch.whereClause": where,
            "generatetablefetch.maxColumnNames": ", ".join(max_columns),
            "fragment.identifier": fragment,
            "fragment.count": str(pages),
        }
        if pages == 0:
            # NiFi's Output Empty FlowFile on Zero Results: no statement, fragment.count 0.
            flowfile = session.create()
            attributes = {**base_attributes, "fragment.index": "0"}
            flowfile = session.put_all_attributes(
                flowfile, {k: v for k, v in attributes.items() if v != ""}
            )
            session.transfer(flowfile, REL_SUCCESS)
            return
        for page in range(pages):
            sql = f"SELECT {columns} FROM {table} WHERE {where}"
            if size > 0:
                sql += f" ORDER BY {order}" if order else ""
                sql += f" LIMIT {size}"
                sql += f" OFFSET {page * size}" if page > 0 else ""
            flowfile = session.create()
            flowfile = session.write(flowfile, sql.encode())
            attributes = {
                **base_attributes,
                "generatetablefetch.limit": str(size) if size else "",
                "generatetablefetch.offset": str(page * size) if size else "",
                "fragment.index": str(page),
            }
            if max_columns and upper is not None:
                attributes[f"maxvalue.{max_columns[0].lower()}"] = upper
            flowfile = session.put_all_attributes(
                flowfile, {k: v for k, v in attributes.items() if v != ""}
            )
            session.transfer(flowfile, REL_SUCCESS)
