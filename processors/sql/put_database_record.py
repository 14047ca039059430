"""PutDatabaseRecord: a FlowFile's records into a table, one database transaction per FlowFile.

NiFi's PutDatabaseRecord: the Record Reader's batches become INSERT, UPDATE, UPSERT, DELETE or
INSERT_IGNORE statements (or the ``statement.type`` attribute's, or each record's Statement
Type Record Path's), executed in batches of Maximum Batch Size inside one transaction that
commits when the whole FlowFile is written and rolls back on any failure; the ``SQL`` type runs
each record's Field Containing SQL instead (:mod:`processors.sql.record_sql`). The table's
columns are read from the database (cached per table) and matched to the record's fields
(:mod:`processors.sql.record_statements`), and SQLAlchemy Core writes the rows. A constraint
violation names the table and the constraint; a lost connection goes to ``retry``.

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
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from flowcore.errors import AfterCommitRetry, ProcessException
from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.properties import PropertyDescriptor
from flowcore.record_path import compile_record_path
from flowcore.records.record_io import RECORD_FAILURES, read_records
from flowcore.session.process_session import ProcessSession
from processors.sql import prepared
from processors.sql.execute_base import QueryTimedOut, query_timeout, timeout_seconds
from processors.sql.put_record_properties import (
    ALLOW_MULTIPLE_STATEMENTS,
    ATTRIBUTE_TYPES,
    BINARY_STRING_FORMAT,
    DATA_RECORD_PATH,
    DBCP_SERVICE,
    DELETE_KEYS,
    FIELD_CONTAINING_SQL,
    MAX_BATCH_SIZE,
    POST_PROCESSING_SQL,
    PRE_PROCESSING_SQL,
    PROPERTIES,
    PUT_DATABASE_RECORD_ERROR,
    QUERY_TIMEOUT,
    QUOTE_TABLE_IDENTIFIER,
    RECORD_READER,
    REL_FAILURE,
    REL_RETRY,
    REL_SUCCESS,
    ROLLBACK_ON_FAILURE,
    SCHEMA_NAME,
    SQL_TYPE,
    STATEMENT_TYPE,
    STATEMENT_TYPE_ATTRIBUTE,
    STATEMENT_TYPE_RECORD_PATH,
    TABLE_NAME,
    TABLE_SCHEMA_CACHE_SIZE,
    UPDATE_KEYS,
    USE_ATTR_TYPE,
    USE_RECORD_PATH,
)
from processors.sql.record_sql import DmlWriter, execute_sql_field, rebatch, run_statements
from processors.sql.record_statements import SCHEMAS
from processors.sql.statements import describe_error, is_retryable, split_statements

__all__ = ["PutDatabaseRecord"]

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

    property_descriptors: ClassVar = PROPERTIES
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE, REL_RETRY)
    tags: ClassVar = ("sql", "record", "jdbc", "put", "database", "update", "insert", "delete")
    reads_attributes: ClassVar[Mapping[str, str]] = {
        STATEMENT_TYPE_ATTRIBUTE: "If 'Use statement.type Attribute' is selected for the "
        "Statement Type property, the value of this attribute will be used to determine the "
        "type of statement (INSERT, UPDATE, DELETE, SQL, etc.) to generate and execute.",
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
            said = flowfile.attributes.get(STATEMENT_TYPE_ATTRIBUTE)
            chosen = (said or "").upper()
            if chosen not in ATTRIBUTE_TYPES:
                msg = (
                    f"Statement Type is '{USE_ATTR_TYPE}' but the FlowFile's statement.type "
                    f"attribute is {said!r}, not one of {', '.join(ATTRIBUTE_TYPES)}"
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
        engine = pool.engine()
        prefix = prepared.gid_prefix(context.component)
        gid = prepared.new_gid(prefix) if prefix and self._two_phase(context, pool) else None
        batch_size = (
            context.get_property(MAX_BATCH_SIZE)
            .evaluate_attribute_expressions(flowfile)
            .as_integer()
            or 0
        )
        timeout = timeout_seconds(
            context.get_property(QUERY_TIMEOUT).evaluate_attribute_expressions(flowfile)
        )
        count = 0
        counters: dict[str, int] = {}  # NiFi's, adjusted once the FlowFile's rows are written
        with (
            engine.connect() as connection,
            connection.begin(),
            read_records(session, flowfile, reader) as records,
        ):
            if gid is not None:
                prepared.begin(connection)
            places: list[
                str
            ] = []  # where the FlowFile's own SQL comes from (named if PREPARE fails)

            def user_sql(descriptor: PropertyDescriptor) -> None:
                """Pre- or Post-Processing SQL, in the FlowFile's transaction."""
                text = self._sql(context, flowfile, descriptor)
                if text:
                    places.append(descriptor.name)
                two_phase = descriptor.name if gid is not None else None
                run_statements(
                    connection, text, descriptor.name, two_phase=two_phase, timeout=timeout
                )

            user_sql(PRE_PROCESSING_SQL)
            if statement_type == SQL_TYPE:  # each record's field is run
                count = execute_sql_field(
                    connection,
                    records,
                    context.get_property(FIELD_CONTAINING_SQL)
                    .evaluate_attribute_expressions(flowfile)
                    .value,
                    bool(context.get_property(ALLOW_MULTIPLE_STATEMENTS).as_boolean()),
                    flowfile,
                    two_phase=gid is not None,
                    timeout=timeout,
                )
                places.append(f"{FIELD_CONTAINING_SQL.name} (each record's SQL)")
            else:
                writer = self._writer(
                    context, flowfile, connection, pool.enabling(), statement_type, table_name
                )
                # NiFi's batches of Maximum Batch Size span the reader's chunks.
                for batch in rebatch(records, batch_size):  # Max Wait Time bounds each one's
                    with query_timeout(connection.connection, timeout, "statement"):
                        count += writer.write(connection, batch, batch_size)
                counters.update(writer.counters())
            user_sql(POST_PROCESSING_SQL)
            if gid is not None:  # committed after the FlowFile is (run_after_commit_actions)
                prepared.prepare(connection, gid, places)
        if gid is not None:
            session.after_commit({"op": "commit_prepared", "gid": gid})
        for name, delta in counters.items():
            session.adjust_counter(name, delta)
        return count

    @staticmethod
    def _sql(context: ProcessContext, flowfile: FlowFile, descriptor: Any) -> list[str]:
        """Pre- or Post-Processing SQL's statements (``;``-separated; backslash-``;`` literal)."""
        return split_statements(
            context.get_property(descriptor).evaluate_attribute_expressions(flowfile).value
        )

    @staticmethod
    def _writer(  # noqa: PLR0917 (the trigger's pieces)
        context: ProcessContext,
        flowfile: FlowFile,
        connection: Any,
        enabling: int,
        statement_type: str,
        table_name: str,
    ) -> DmlWriter:
        """The generated statements' writer: the table read, keys and record paths set.

        Raises:
            ProcessException: Table Name evaluates to nothing, or names no table.
        """
        if not table_name:
            msg = (
                f"Cannot process {flowfile} because Table Name is null or empty: set it (or "
                "the attribute its expression reads)"
            )
            raise ProcessException(msg)

        def value(descriptor: Any) -> str | None:
            return context.get_property(descriptor).evaluate_attribute_expressions(flowfile).value

        limit = context.get_property(TABLE_SCHEMA_CACHE_SIZE).as_integer() or 0
        table = SCHEMAS.get(
            connection,
            enabling,
            value(SCHEMA_NAME) or None,
            table_name,
            limit,
            quoted=bool(context.get_property(QUOTE_TABLE_IDENTIFIER).as_boolean()),
        )
        type_path = context.get_property(STATEMENT_TYPE_RECORD_PATH).value
        data_path = context.get_property(DATA_RECORD_PATH).value
        return DmlWriter(
            context,
            table,
            statement_type,
            {"UPDATE": value(UPDATE_KEYS), "DELETE": value(DELETE_KEYS)},
            connection.dialect.name,
            value(BINARY_STRING_FORMAT),
            compile_record_path(type_path)
            if statement_type == USE_RECORD_PATH and type_path
            else None,
            compile_record_path(data_path) if data_path else None,
        )

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

    @staticmethod
    def _driver_pool(context: ProcessContext) -> Any:
        """The connection pool, from the driver's context (or the harness's).

        Both contexts look the flow's services up (one without them raises
        ConfigurationError, which the after-commit actions keep pending).
        """
        return context.controller_service(context.get_property(DBCP_SERVICE).value or "")

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
        # A statement past Max Wait Time: NiFi's SQLTimeoutException is transient (retry).
        retry = (is_retryable(error) or isinstance(error, QueryTimedOut)) and not isinstance(
            error, RECORD_FAILURES
        )
        context.logger.error("Failed to put records for %s into %s: %s", flowfile, table, message)
        flowfile = session.put_attribute(flowfile, PUT_DATABASE_RECORD_ERROR, message)
        if retry:
            session.transfer(session.penalize(flowfile), REL_RETRY)
        else:
            session.transfer(session.penalize(flowfile), REL_FAILURE)
