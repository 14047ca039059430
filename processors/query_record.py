"""QueryRecord: SQL over a FlowFile's records, one relationship per query, run by DuckDB."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

import duckdb
import pyarrow as pa

from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.record_io import (
    INCLUDE_ZERO_RECORD_FLOWFILES,
    RECORD_FAILURES,
    RECORD_READER,
    RECORD_WRITER,
    read_records,
    services,
    write_records,
)
from flowcore.records.schema import RecordSchema
from flowcore.session.process_session import ProcessSession
from flowcore.validators import (
    NON_EMPTY_VALIDATOR,
    NON_NEGATIVE_INTEGER_VALIDATOR,
    ValidationResult,
)
from processors._calcite_duckdb import (
    DuckConnections,
    run_query,
    sql_batches,
    sql_schema,
)
from processors.record_services.schema_access import RecordReaderService, RecordWriterService

__all__ = ["QueryRecord"]

ROUTE_ATTRIBUTE = "QueryRecord.Route"
TABLE = "FLOWFILE"
#: Rows per batch DuckDB hands back to the writer (memory bound of the output side).
RESULT_BATCH_ROWS = 65536
#: Content bytes up to which a FlowFile's records are read once into a table all its queries
#: run over; a larger content is streamed to each query (memory: a batch).
TABLE_BYTES = 16 << 20


REL_ORIGINAL = Relationship(
    "original",
    "The original FlowFile is routed to this relationship",
)
REL_FAILURE = Relationship(
    "failure",
    "If a FlowFile fails processing for any reason (for example, the SQL statement contains "
    "columns not present in input data), the original FlowFile it will be routed to this "
    "relationship",
)
REL_DYNAMIC = Relationship(
    "<one per dynamic property>",
    "Each user-defined property defines a new Relationship for this Processor.",
)


class QueryRecord(Processor):
    """Evaluates SQL over a FlowFile's records (NiFi's QueryRecord), with DuckDB.

    Each dynamic property is a SQL ``SELECT`` over the table ``FLOWFILE`` (the FlowFile's
    records, streamed to DuckDB as an Arrow RecordBatchReader, so a filter or projection holds
    one batch at a time) and names a relationship; its result is written by the Record Writer
    into a new FlowFile (a child of the original: FORK) with ``record.count``, ``mime.type``,
    the writer's attributes and ``QueryRecord.Route``. The original goes to ``original``
    (its ``QueryRecord.Route`` ``original``). A
    query that fails (an unknown column, bad SQL, a record that does not parse) sends the
    original to ``failure`` and keeps none of the results. DuckDB's SQL differs from NiFi's
    Calcite in places: see docs/processors.md.
    """

    CACHE_SCHEMA = PropertyDescriptor(
        "Cache Schema",
        description="This property is no longer used. It remains solely for backward "
        "compatibility in order to avoid making existing Processors invalid upon upgrade.",
        default="true",
        allowable_values=("true", "false"),
        aliases=("cache-schema",),
    )
    DEFAULT_PRECISION = PropertyDescriptor(
        "Default Decimal Precision",
        description="When a DECIMAL/NUMBER value is written as a 'decimal' Avro logical type, a "
        "specific 'precision' denoting number of available digits is required. Generally, "
        "precision is defined by column data type definition or database engines default.",
        default="10",
        required=True,
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("dbf-default-precision",),
    )
    DEFAULT_SCALE = PropertyDescriptor(
        "Default Decimal Scale",
        description="When a DECIMAL/NUMBER value is written as a 'decimal' Avro logical type, a "
        "specific 'scale' denoting number of available decimal digits is required.",
        default="0",
        required=True,
        validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("dbf-default-scale",),
    )
    property_descriptors: ClassVar = (
        RECORD_READER,
        RECORD_WRITER,
        INCLUDE_ZERO_RECORD_FLOWFILES,
        CACHE_SCHEMA,
        DEFAULT_PRECISION,
        DEFAULT_SCALE,
    )
    relationships: ClassVar = (REL_ORIGINAL, REL_FAILURE)
    dynamic_relationship: ClassVar = REL_DYNAMIC
    supports_dynamic_properties: ClassVar = True
    tags: ClassVar = (
        "sql",
        "query",
        "calcite",
        "duckdb",
        "route",
        "record",
        "transform",
        "select",
        "update",
        "modify",
        "etl",
        "filter",
        "record",
        "csv",
        "json",
        "logs",
        "text",
        "avro",
        "aggregate",
    )
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "Sets the mime.type attribute to the MIME Type specified by the Record Writer",
        "record.count": "The number of records selected by the query",
        ROUTE_ATTRIBUTE: "The relation to which the FlowFile was routed",
    }

    def get_dynamic_property_descriptor(self, name: str) -> PropertyDescriptor:
        """A SQL SELECT over the table FLOWFILE; its name is a relationship."""
        return PropertyDescriptor(
            name,
            description="Each user-defined property specifies a SQL SELECT statement to run "
            "over the data, with the data that is selected being routed to the relationship "
            "whose name is the property name",
            required=False,
            el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
            validators=(NON_EMPTY_VALIDATOR,),
            dynamic=True,
        )

    def get_relationships(self) -> tuple[Relationship, ...]:
        """original, failure and one relationship per query."""
        queries = tuple(
            Relationship(n, f"The results of the query {n!r}") for n in self.dynamic_properties
        )
        return (REL_ORIGINAL, REL_FAILURE, *queries)

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """At least one query; each without Expression Language must parse as one statement."""
        del values
        queries = self.dynamic_properties
        if not queries:
            return [
                ValidationResult(
                    "User-Defined Properties",
                    None,
                    False,
                    "At least one user-defined property must be specified.",
                )
            ]
        problems = []
        for name, sql in queries.items():
            if "${" in sql or "#{" in sql:
                continue  # known only per FlowFile
            try:
                statements = duckdb.extract_statements(sql)
            except duckdb.Error as error:
                problems.append(ValidationResult(name, sql, False, f"not valid SQL: {error}"))
                continue
            if len(statements) != 1:
                problems.append(
                    ValidationResult(name, sql, False, "must be exactly one SELECT statement")
                )
        return problems

    def _duck(self) -> DuckConnections:
        """This processor's DuckDB connections (made at the first query, closed when stopped)."""
        return DuckConnections.of(self)

    def on_stopped(self, context: ProcessContext) -> None:
        """Close the DuckDB connection of every thread that ran a query."""
        del context
        connections = self.__dict__.get("_connections")
        if connections is not None:
            connections.close()

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the DuckDB connections (each copy opens its own)."""
        state = self.__dict__.copy()
        state.pop("_connections", None)
        return state

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Run every query over one FlowFile."""
        original = session.get()
        if original is None:
            return
        reader, writer = services(context, session)
        assert writer is not None
        include_zero = context.get_property(INCLUDE_ZERO_RECORD_FLOWFILES).as_boolean()
        created: list[tuple[FlowFile, str]] = []
        try:
            table = None
            if len(self.dynamic_properties) > 1 and original.size <= TABLE_BYTES:
                with read_records(session, original, reader) as records:
                    table = _batch_reader(records).read_all()
            for name in self.dynamic_properties:
                sql = (
                    context.get_property(name).evaluate_attribute_expressions(original).value or ""
                )
                if table is not None:
                    child, count = self._run(session, original, table, writer, name=name, sql=sql)
                else:
                    child, count = self._query(
                        session, original, reader, writer, name=name, sql=sql
                    )
                if count == 0 and not include_zero:
                    session.remove(child)
                    continue
                created.append((child, name))
        except (*RECORD_FAILURES, duckdb.Error) as error:
            context.logger.error(
                "Unable to query %s due to %s. Routing to failure", original, error
            )
            session.remove([child for child, _ in created])
            failed = session.put_attribute(original, ROUTE_ATTRIBUTE, REL_FAILURE.name)
            session.transfer(failed, REL_FAILURE)
            return
        for child, name in created:
            session.transfer(child, name)
        session.transfer(
            session.put_attribute(original, ROUTE_ATTRIBUTE, REL_ORIGINAL.name), REL_ORIGINAL
        )

    def _query(
        self,
        session: ProcessSession,
        original: FlowFile,
        reader: RecordReaderService,
        writer: RecordWriterService,
        *,
        name: str,
        sql: str,
    ) -> tuple[FlowFile, int]:
        """Run *sql* over *original*'s records into a new child; the child and its count.

        The records stream to DuckDB once. A query that scans FLOWFILE more than once (a
        subquery or self-join over it) cannot scan a stream twice: it runs again over the
        records held as a table (memory: the whole content's records).
        """
        try:
            with read_records(session, original, reader) as records:
                stream = _batch_reader(records)
                return self._run(session, original, stream, writer, name=name, sql=sql)
        except (duckdb.Error, OSError) as error:
            # DuckDB says so when it plans the query, or (UNION ALL) through pyarrow's OSError
            # only when the result is read and the second scan starts
            if "already been consumed" not in str(error):
                raise
        with read_records(session, original, reader) as records:
            table = _batch_reader(records).read_all()
        return self._run(session, original, table, writer, name=name, sql=sql)

    def _run(
        self,
        session: ProcessSession,
        original: FlowFile,
        records: pa.Table | pa.RecordBatchReader,
        writer: RecordWriterService,
        *,
        name: str,
        sql: str,
    ) -> tuple[FlowFile, int]:
        """Run *sql* over *records* (registered as FLOWFILE, not copied) into a new child."""
        child = session.create(original)
        connection = self._duck().get()
        try:
            connection.register(TABLE, records)
            try:
                with run_query(
                    connection,
                    sql,
                    [records.schema],
                    RESULT_BATCH_ROWS,
                    not_select=f"the query {name!r} is not a SELECT statement: {sql}",
                ) as (schema, batches):
                    child, written = write_records(
                        session, child, writer, schema, batches, attributes=original.attributes
                    )
            finally:
                # run_query closed the result, also after a failed write: DuckDB refuses to
                # unregister under an open one, and that error would hide the writer's
                connection.unregister(TABLE)
        except BaseException:
            session.remove(child)
            raise
        count = int(written.get("record.count", "0"))
        attributes = {**written, "record.count": str(count), ROUTE_ATTRIBUTE: name}
        return session.put_all_attributes(child, attributes), count


def _batch_reader(records: Iterator[pa.RecordBatch]) -> pa.RecordBatchReader:
    """The records as the SQL sees them (``sql_schema``), a RecordBatchReader.

    Its schema is the first batch's, or the reader's when there is none.
    """
    batches = iter(records)
    first = next(batches, None)
    if first is None:
        schema = getattr(records, "schema", None) or RecordSchema(())
        arrow = sql_schema(schema.to_arrow())
        return pa.RecordBatchReader.from_batches(arrow, iter(()))
    schema_ = sql_schema(first.schema)

    def chained() -> Iterator[pa.RecordBatch]:
        yield first
        yield from batches

    return pa.RecordBatchReader.from_batches(schema_, sql_batches(chained(), schema_))
