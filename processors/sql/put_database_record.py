"""PutDatabaseRecord: a FlowFile's records into a table, one database transaction per FlowFile.

NiFi's PutDatabaseRecord: the Record Reader's batches become INSERT, UPDATE, UPSERT, DELETE or
INSERT_IGNORE statements (or the ``statement.type`` attribute's), executed in batches of
Maximum Batch Size inside one transaction that commits when the whole FlowFile is written and
rolls back on any failure. The table's columns are read from the database (cached per table),
matched to the record's fields (Translate Field Names: case and underscores ignored), and
SQLAlchemy Core writes the rows (``insertmanyvalues`` for inserts). A constraint violation
names the table and the constraint; a lost connection goes to ``retry``.

Guarantees: into PostgreSQL with ``max_prepared_transactions > 0`` every statement type is
exactly-once: the task ends the FlowFile's transaction with PREPARE TRANSACTION and the driver
commits it (COMMIT PREPARED) only after the write-ahead log transaction that routes the FlowFile
(:mod:`processors.sql.prepared`), never giving up on it; a start-up rolls back what attempts
that never committed prepared. Elsewhere each FlowFile's rows are committed once per attempt
in the task; an attempt replayed after a crash writes them again, so INSERT is at-least-once,
while UPSERT (and UPDATE/DELETE by key) is idempotent (docs/sql.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import pyarrow as pa

from flowcore.errors import AfterCommitRetry, ProcessException
from flowcore.flowfile import FlowFile
from flowcore.process_context import ProcessContext
from flowcore.processor import Processor
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.record_io import RECORD_FAILURES, read_records
from flowcore.relationship import Relationship
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR, TIME_PERIOD_VALIDATOR
from processors.sql import prepared
from processors.sql._column_insert import column_insert, usable
from processors.sql.statements import describe_error, is_retryable

__all__ = ["PutDatabaseRecord"]

_FF = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES
PUT_DATABASE_RECORD_ERROR = "putdatabaserecord.error"
STATEMENT_TYPE_ATTRIBUTE = "statement.type"

REL_SUCCESS = Relationship("success", "Successfully created FlowFile from SQL query result set.")
REL_RETRY = Relationship(
    "retry",
    "A FlowFile is routed to this relationship if the database cannot be updated but "
    "attempting the operation again may succeed",
)
REL_FAILURE = Relationship(
    "failure",
    "A FlowFile is routed to this relationship if the database cannot be updated and "
    "retrying the operation will also fail, such as an invalid query or an integrity constraint "
    "violation",
)

USE_ATTR_TYPE = "Use statement.type Attribute"
STATEMENT_TYPES = ("UPDATE", "INSERT", "UPSERT", "INSERT_IGNORE", "DELETE")

RECORD_READER = PropertyDescriptor(
    "Record Reader",
    description="Specifies the Controller Service to use for parsing incoming data and "
    "determining the data's schema.",
    required=True,
    identifies_service="RecordReaderFactory",
    aliases=("put-db-record-record-reader",),
)
DB_TYPE = PropertyDescriptor(
    "Database Type",
    default="Generic",
    aliases=("db-type",),
    description="The type/flavor of database (flowcore takes the dialect from the pool).",
)
STATEMENT_TYPE = PropertyDescriptor(
    "Statement Type",
    description="Specifies the type of SQL Statement to generate.",
    required=True,
    allowable_values=(*STATEMENT_TYPES, AllowableValue(USE_ATTR_TYPE)),
    aliases=("put-db-record-statement-type",),
)
DBCP_SERVICE = PropertyDescriptor(
    "Database Connection Pooling Service",
    description="The Controller Service that is used to obtain a connection to the database "
    "for sending records.",
    required=True,
    identifies_service="DBCPService",
    aliases=("put-db-record-dcbp-service",),
)
CATALOG_NAME = PropertyDescriptor(
    "Catalog Name",
    el_scope=_FF,
    aliases=("put-db-record-catalog-name",),
    description="The name of the catalog that the statement should update.",
)
SCHEMA_NAME = PropertyDescriptor(
    "Schema Name",
    el_scope=_FF,
    aliases=("put-db-record-schema-name",),
    description="The name of the schema that the table belongs to.",
)
TABLE_NAME = PropertyDescriptor(
    "Table Name",
    required=True,
    el_scope=_FF,
    aliases=("put-db-record-table-name",),
    description="The name of the table that the statement should affect.",
)
TRANSLATE_FIELD_NAMES = PropertyDescriptor(
    "Translate Field Names",
    description="If true, the Processor will attempt to translate field names into the "
    "appropriate column names for the table specified (case and underscores ignored).",
    default="true",
    allowable_values=("true", "false"),
    aliases=("put-db-record-translate-field-names",),
)
IGNORE_UNMATCHED_FIELD = "Ignore Unmatched Fields"
FAIL_UNMATCHED_FIELD = "Fail on Unmatched Fields"
UNMATCHED_FIELD_BEHAVIOR = PropertyDescriptor(
    "Unmatched Field Behavior",
    description="If an incoming record has a field that does not map to any of the database "
    "table's columns, this property specifies how to handle the situation",
    default=IGNORE_UNMATCHED_FIELD,
    allowable_values=(IGNORE_UNMATCHED_FIELD, FAIL_UNMATCHED_FIELD),
    aliases=("put-db-record-unmatched-field-behavior",),
)
IGNORE_UNMATCHED_COLUMN = "Ignore Unmatched Columns"
WARNING_UNMATCHED_COLUMN = "Warn on Unmatched Columns"
FAIL_UNMATCHED_COLUMN = "Fail on Unmatched Columns"
UNMATCHED_COLUMN_BEHAVIOR = PropertyDescriptor(
    "Unmatched Column Behavior",
    description="If an incoming record does not have a field mapping for all of the database "
    "table's columns, this property specifies how to handle the situation",
    default=FAIL_UNMATCHED_COLUMN,
    allowable_values=(IGNORE_UNMATCHED_COLUMN, WARNING_UNMATCHED_COLUMN, FAIL_UNMATCHED_COLUMN),
    aliases=("put-db-record-unmatched-column-behavior",),
)
UPDATE_KEYS = PropertyDescriptor(
    "Update Keys",
    description="A comma-separated list of column names that uniquely identifies a row in the "
    "database for UPDATE, UPSERT and DELETE statements. If not set, the table's Primary Keys "
    "are used.",
    el_scope=_FF,
    aliases=("put-db-record-update-keys",),
)
QUOTE_IDENTIFIERS = PropertyDescriptor(
    "Quote Column Identifiers",
    default="false",
    allowable_values=("true", "false"),
    aliases=("put-db-record-quoted-identifiers",),
    description="Enabling this option will cause all column names to be quoted.",
)
QUOTE_TABLE_IDENTIFIER = PropertyDescriptor(
    "Quote Table Identifiers",
    default="false",
    allowable_values=("true", "false"),
    aliases=("put-db-record-quoted-table-identifiers",),
    description="Enabling this option will cause the table name to be quoted.",
)
QUERY_TIMEOUT = PropertyDescriptor(
    "Max Wait Time",
    description="The maximum amount of time allowed for a running SQL statement, zero means "
    "there is no limit.",
    default="0 seconds",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
    el_scope=_FF,
    aliases=("put-db-record-query-timeout",),
)
ROLLBACK_ON_FAILURE = PropertyDescriptor(
    "Rollback On Failure",
    description="Specify how to handle error. By default (false), if an error occurs while "
    "processing a FlowFile, the FlowFile will be routed to 'failure' or 'retry' relationship "
    "based on error type. If set to true, the FlowFile will be kept in the incoming queue "
    "(penalized) and the session rolled back.",
    default="false",
    required=True,
    allowable_values=("true", "false"),
    aliases=("rollback-on-failure",),
)
TABLE_SCHEMA_CACHE_SIZE = PropertyDescriptor(
    "Table Schema Cache Size",
    default="100",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    aliases=("table-schema-cache-size",),
    description="Specifies how many Table Schemas should be cached",
)
MAX_BATCH_SIZE = PropertyDescriptor(
    "Maximum Batch Size",
    description="Specifies maximum number of sql statements to be included in each batch sent "
    "to the database. Zero means the batch size is not limited.",
    default="1000",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_FF,
    aliases=("put-db-record-max-batch-size",),
)


def _translate(name: str) -> str:
    """NiFi's default translation: upper case without underscores (and spaces)."""
    return name.upper().replace("_", "").replace(" ", "")


class _Schemas:
    """Reflected tables per enabling of a pool, bounded (NiFi's Table Schema Cache).

    NiFi builds the cache when the processor is scheduled, so a table altered while the flow
    was stopped is read again; here a pool's enabling (each run, each harness) starts afresh,
    also when the pool takes back an engine an earlier enabling left idle.
    """

    def __init__(self) -> None:
        self.tables: dict[tuple[int, str, str | None, str], Any] = {}
        self.lock = threading.Lock()

    def get(self, engine: Any, enabling: int, schema: str | None, table: str, limit: int) -> Any:
        import sqlalchemy as sa  # noqa: PLC0415

        key = (enabling, engine.url.render_as_string(hide_password=True), schema, table)
        with self.lock:
            found = self.tables.get(key)
        if found is not None:
            return found
        try:
            reflected = sa.Table(table, sa.MetaData(), schema=schema, autoload_with=engine)
        except sa.exc.NoSuchTableError:
            where = f"{schema}.{table}" if schema else table
            msg = f"table {where!r} does not exist"
            raise ProcessException(msg) from None
        with self.lock:
            if limit and len(self.tables) >= limit:
                self.tables.pop(next(iter(self.tables)))
            self.tables[key] = reflected
        return reflected


_SCHEMAS = _Schemas()

#: At most one TryLater warning (a bulletin) per component and process in this many seconds.
TRY_LATER_WARNING_SECONDS = 60.0
_try_later_warned: dict[str, float] = {}
_try_later_lock = threading.Lock()


def _warn_try_later(context: ProcessContext, error: BaseException, system: str) -> None:
    """Say (a warning bulletin, throttled) why FlowFiles wait queued, debug-log every time.

    FlowFiles that wait for the prepared-transaction slots or a lock can wait for ever (a
    stray holding the lock, a server whose max_prepared_transactions others use up): the
    operator must see it, without one bulletin per FlowFile.
    """
    now = time.monotonic()
    with _try_later_lock:
        last = _try_later_warned.get(context.component.id)
        due = last is None or now - last >= TRY_LATER_WARNING_SECONDS
        if due:
            _try_later_warned[context.component.id] = now
    if due:
        context.logger.warning(
            "FlowFiles wait queued and are taken again later: %s in %s (the prepared-"
            "transaction slots are taken, or a lock is held past %s; see docs/sql.md)",
            error, system, prepared.LOCK_TIMEOUT,
        )  # fmt: skip
    else:
        context.logger.debug("%s in %s; yielding", error, system)


class PutDatabaseRecord(Processor):
    """Writes a FlowFile's records to a database table (NiFi's PutDatabaseRecord).

    One transaction per FlowFile: every batch of the FlowFile commits together or none does.
    A FlowFile that fails goes to ``failure`` (bad data, a constraint violated, a missing
    table) or ``retry`` (connection lost, timeout) with ``putdatabaserecord.error``; with
    Rollback On Failure it stays queued, penalized, and the processor yields.
    """

    property_descriptors: ClassVar = (
        RECORD_READER,
        DB_TYPE,
        STATEMENT_TYPE,
        DBCP_SERVICE,
        CATALOG_NAME,
        SCHEMA_NAME,
        TABLE_NAME,
        TRANSLATE_FIELD_NAMES,
        UNMATCHED_FIELD_BEHAVIOR,
        UNMATCHED_COLUMN_BEHAVIOR,
        UPDATE_KEYS,
        QUOTE_IDENTIFIERS,
        QUOTE_TABLE_IDENTIFIER,
        QUERY_TIMEOUT,
        ROLLBACK_ON_FAILURE,
        TABLE_SCHEMA_CACHE_SIZE,
        MAX_BATCH_SIZE,
    )
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE, REL_RETRY)
    tags: ClassVar = ("sql", "record", "jdbc", "put", "database", "update", "insert", "delete")
    reads_attributes: ClassVar[Mapping[str, str]] = {
        STATEMENT_TYPE_ATTRIBUTE: "If 'Use statement.type Attribute' is selected for the "
        "Statement Type property, the value of this attribute will be used to determine the "
        "type of statement (INSERT, UPDATE, DELETE, UPSERT, INSERT_IGNORE) to generate and "
        "execute.",
    }
    writes_attributes: ClassVar[Mapping[str, str]] = {
        PUT_DATABASE_RECORD_ERROR: "If an error occurs during processing, the flow file will "
        "be routed to failure or retry, and this attribute will be populated with the cause "
        "of the error.",
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Write one FlowFile's records in one transaction."""
        flowfile = session.get()
        if flowfile is None:
            return
        if context.service_lookup is None:  # for the after-commit actions (the harness's)
            context.service_lookup = session.controller_service
        pool = session.controller_service(context.get_property(DBCP_SERVICE).value or "")
        reader = session.controller_service(context.get_property(RECORD_READER).value or "")
        table_name = (
            context.get_property(TABLE_NAME).evaluate_attribute_expressions(flowfile).value or ""
        )
        system = pool.transit_uri()
        try:
            count = self._put(context, session, flowfile, pool, reader, table_name)
        except Exception as error:  # routed as NiFi routes it
            if isinstance(error, prepared.TryLater) or (
                prepared.lock_timed_out(error) and self._two_phase(context, pool)
            ):
                # The database holds max_prepared_transactions (this stage run's FlowFiles
                # among them, until its commit), or a lock that a dead attempt's prepared
                # transaction may hold (rolled back after the commit): the FlowFile waits
                # queued for the next stage run.
                _warn_try_later(context, error, system)
                session.rollback()
                context.yield_()
                return
            self._route_error(context, session, flowfile, error, system, table_name)
            return
        session.provenance.send(flowfile, f"{system}", details=f"Put {count} records")
        session.adjust_counter("Records Written", count)
        session.transfer(flowfile, REL_SUCCESS)

    def _statement_type(self, context: ProcessContext, flowfile: FlowFile) -> str:
        chosen = context.get_property(STATEMENT_TYPE).value or ""
        if chosen == USE_ATTR_TYPE:
            chosen = (flowfile.attributes.get(STATEMENT_TYPE_ATTRIBUTE) or "").upper()
            if chosen not in STATEMENT_TYPES:
                msg = (
                    f"Statement Type is '{USE_ATTR_TYPE}' but the FlowFile's statement.type "
                    f"attribute is {flowfile.attributes.get(STATEMENT_TYPE_ATTRIBUTE)!r}, not "
                    f"one of {', '.join(STATEMENT_TYPES)}"
                )
                raise ProcessException(msg)
        return chosen

    def _put(  # noqa: PLR0917 (the trigger's pieces)
        self,
        context: ProcessContext,
        session: ProcessSession,
        flowfile: FlowFile,
        pool: Any,
        reader: Any,
        table_name: str,
    ) -> int:
        statement_type = self._statement_type(context, flowfile)
        schema_name = (
            context.get_property(SCHEMA_NAME).evaluate_attribute_expressions(flowfile).value or None
        )
        engine = pool.engine()
        prefix = prepared.gid_prefix(context.component)
        gid = prepared.new_gid(prefix) if prefix and self._two_phase(context, pool) else None
        limit = context.get_property(TABLE_SCHEMA_CACHE_SIZE).as_integer() or 0
        table = _SCHEMAS.get(engine, pool.enabling(), schema_name, table_name, limit)
        batch_size = (
            context.get_property(MAX_BATCH_SIZE)
            .evaluate_attribute_expressions(flowfile)
            .as_integer()
            or 0
        )
        keys_text = context.get_property(UPDATE_KEYS).evaluate_attribute_expressions(flowfile).value
        count = 0
        with (
            engine.connect() as connection,
            connection.begin(),
            read_records(session, flowfile, reader) as records,
        ):
            if gid is not None:
                prepared.begin(connection)
            plan: _Plan | None = None
            for batch in records:
                if plan is None:
                    plan = _Plan.make(
                        context,
                        table,
                        batch.schema,
                        statement_type,
                        keys_text,
                        engine.dialect.name,
                    )
                count += plan.write(connection, batch, batch_size)
            if gid is not None:  # committed after the FlowFile is (run_after_commit_actions)
                prepared.prepare(connection, gid)
        if gid is not None:
            session.after_commit({"op": "commit_prepared", "gid": gid})
        return count

    def run_after_commit_actions(
        self, context: ProcessContext, actions: Sequence[Mapping[str, Any]]
    ) -> None:
        """COMMIT PREPARED the FlowFiles' transactions, now that the FlowFiles are durable.

        Retried with a backoff when the connection is lost; then, and on any other error,
        left pending (raised as :class:`~flowcore.errors.AfterCommitRetry`): committed later,
        or at the next start. Never given up: the FlowFiles are committed, and a dropped
        action's transaction would be rolled back by a later sweep.
        """
        gids = [a["gid"] for a in actions if a.get("op") == "commit_prepared"]
        if gids:
            try:
                pool = self._driver_pool(context)
                engine = pool.engine()
            except Exception as error:  # a pool disabled or renamed in an edited flow
                msg = (
                    f"PutDatabaseRecord cannot reach its Database Connection Pooling Service "
                    f"to COMMIT PREPARED {len(gids)} transaction(s) ({error}); they stay "
                    "pending until it can"
                )
                raise AfterCommitRetry(msg, processor="PutDatabaseRecord") from error
            try:
                prepared.commit_prepared(engine, gids, pool.transit_uri())
            except AfterCommitRetry:
                raise
            except Exception as error:  # never given up: see prepared.commit_prepared
                msg = (
                    f"could not COMMIT PREPARED {len(gids)} transaction(s) in "
                    f"{pool.transit_uri()}: {type(error).__name__}: {error}; they stay pending"
                )
                raise AfterCommitRetry(msg, processor="PutDatabaseRecord") from error

    def settle_after_commit_actions(
        self, context: ProcessContext, pending: Sequence[Mapping[str, Any]]
    ) -> None:
        """Roll back this component's prepared transactions that no action names.

        At start-up and after each commit of its stage run: those of task attempts that
        never committed. Only gids of this repository and this component are looked at;
        those of committed FlowFiles (*pending*) are being committed.
        """
        prefix = prepared.gid_prefix(context.component)
        pool = self._driver_pool(context)
        engine = pool.engine()
        if prefix is None or not prepared.can_prepare(engine, pool.transit_uri()):
            return
        # One process per repository id and database sweeps (a second one refused).
        prepared.hold_repository_lock(engine, context.component.repository_id, pool.transit_uri())
        keep = [a["gid"] for a in pending if a.get("op") == "commit_prepared"]
        strays = prepared.roll_back_strays(engine, prefix, keep)
        # A copied or moved repository's former id: its pending commits go on (by gid), its
        # other prepared transactions may be the original directory's to commit: only told.
        prepared.tell_former_strays(
            engine, prepared.former_prefixes(context.component), keep, pool.transit_uri()
        )
        if strays:
            context.logger.info(
                "Rolled back %d prepared transaction(s) of uncommitted attempts in %s; their "
                "FlowFiles are written again",
                len(strays), pool.transit_uri(),
            )  # fmt: skip

    @staticmethod
    def _two_phase(context: ProcessContext, pool: Any) -> bool:
        """Whether this processor prepares its transactions in *pool*'s database."""
        return prepared.gid_prefix(context.component) is not None and prepared.can_prepare(
            pool.engine(), pool.transit_uri()
        )

    def _driver_pool(self, context: ProcessContext) -> Any:
        """The connection pool, reached from a driver-side context."""
        name = context.get_property(DBCP_SERVICE).value or ""
        if context.service_lookup is None:
            msg = f"PutDatabaseRecord cannot reach its Database Connection Pooling Service {name}"
            raise ProcessException(msg)
        return context.service_lookup(name)

    def _route_error(  # noqa: PLR0917
        self,
        context: ProcessContext,
        session: ProcessSession,
        flowfile: FlowFile,
        error: BaseException,
        system: str,
        table: str,
    ) -> None:
        message = describe_error(error, f"{system} table {table}")
        if context.get_property(ROLLBACK_ON_FAILURE).as_boolean():
            context.yield_()
            raise ProcessException(message) from None  # the session rolls back, penalized
        retry = is_retryable(error) and not isinstance(error, RECORD_FAILURES)
        context.logger.error("Failed to put records for %s into %s: %s", flowfile, table, message)
        flowfile = session.put_attribute(flowfile, PUT_DATABASE_RECORD_ERROR, message)
        if retry:
            session.transfer(session.penalize(flowfile), REL_RETRY)
        else:
            session.transfer(session.penalize(flowfile), REL_FAILURE)


def _chunks(rows: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    if size <= 0:
        yield rows
        return
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


class _Plan:
    """The statement for one FlowFile: fields matched to columns, keys chosen."""

    def __init__(
        self, table: Any, fields: dict[str, str], statement_type: str, keys: list[str], dialect: str
    ) -> None:
        self.table = table
        self.fields = fields  # record field -> column name
        self.statement_type = statement_type
        self.keys = keys
        self.dialect = dialect
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
    ) -> _Plan:
        translate = context.get_property(TRANSLATE_FIELD_NAMES).as_boolean()
        columns = {c.name: c for c in table.columns}
        lookup = {(_translate(n) if translate else n): n for n in columns}
        fields: dict[str, str] = {}
        for name in schema.names:
            column = lookup.get(_translate(name) if translate else name)
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
        if missing and statement_type in ("INSERT", "UPSERT", "INSERT_IGNORE"):
            text = f"Record does not have a value for the Required column(s) {missing}"
            if behavior == FAIL_UNMATCHED_COLUMN and any(
                not columns[c].nullable
                and columns[c].default is None
                and columns[c].server_default is None
                and columns[c].autoincrement is not True
                for c in missing
            ):
                raise ProcessException(text)
            if behavior == WARNING_UNMATCHED_COLUMN:
                context.logger.warning(text)
        if keys_text:
            keys = [
                lookup.get(_translate(k.strip()) if translate else k.strip(), k.strip())
                for k in keys_text.split(",")
                if k.strip()
            ]
        else:
            keys = [c.name for c in table.primary_key.columns]
        if (
            statement_type in ("UPDATE", "DELETE", "UPSERT")
            and not keys
            and statement_type != "DELETE"
        ):
            msg = f"Table '{table.name}' has no primary keys and no Update Keys were specified"
            raise ProcessException(msg)
        for key in keys:
            if key not in fields.values() and statement_type != "DELETE":
                msg = f"Update key '{key}' is not a field of the record"
                raise ProcessException(msg)
        return cls(table, fields, statement_type, keys, dialect)

    def write(self, connection: Any, batch: pa.RecordBatch, batch_size: int) -> int:
        """Run the statement for the batch's rows, *batch_size* at a time (0: all); the count.

        A PostgreSQL INSERT of scalar values goes column-wise (:mod:`._column_insert`: one
        statement per *batch_size* rows, the same effect); others are executemany of dicts.
        """
        kinds = self.kinds(batch)
        if self.statement_type == "INSERT" and usable(connection.dialect, self.table, kinds):
            columns = self.columns(batch)
            size = batch_size if batch_size > 0 else max(1, batch.num_rows)
            for start in range(0, batch.num_rows, size):
                part = {name: values[start : start + size] for name, values in columns.items()}
                column_insert(connection, self.table, part, kinds)
            return batch.num_rows
        count = 0
        for rows in _chunks(self.rows(batch), batch_size):
            self.execute(connection, rows)
            count += len(rows)
        return count

    def kinds(self, batch: pa.RecordBatch) -> dict[str, pa.DataType]:
        """Each column written and the Arrow type of its values (null: fields that differ)."""
        kinds: dict[str, pa.DataType] = {}
        for field in batch.schema:
            column = self.fields.get(field.name)
            if column is not None:  # two fields of other types for one column: no kind
                found = kinds.setdefault(column, field.type)
                kinds[column] = found if found == field.type else pa.null()
        return kinds

    def rows(self, batch: pa.RecordBatch) -> list[dict[str, Any]]:
        """The batch's rows as bind parameters (dicts of :meth:`columns`)."""
        merged = self.columns(batch)
        names = list(merged)
        return [dict(zip(names, row, strict=True)) for row in zip(*merged.values(), strict=True)]

    def columns(self, batch: pa.RecordBatch) -> dict[str, list[Any]]:
        """The batch's values per column written, column by column (one list per column)."""
        merged: dict[str, list[Any]] = {}
        for name in batch.schema.names:
            column = self.fields.get(name)
            if column is None:
                continue
            values = batch.column(name).to_pylist()
            if column in merged:  # two fields for one column ("NAME" and "name"): coalesce
                values = [
                    a if a is not None else b for a, b in zip(merged[column], values, strict=True)
                ]
            merged[column] = values
        return merged

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
        if self.keys:
            return sa.delete(table).where(keyed)
        # NiFi's null-safe match (NIFI-3742): a NULL field deletes the row whose column is NULL.
        everything = sa.and_(
            *[
                table.c[c].is_not_distinct_from(sa.bindparam(f"k_{c}"))
                if table.c[c].nullable
                else table.c[c] == sa.bindparam(f"k_{c}")
                for c in self.fields.values()
            ]
        )
        return sa.delete(table).where(everything)

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
