"""NiFi's AbstractExecuteSQL: run a query from a property or the content, results as FlowFiles.

ExecuteSQL writes each result set as Avro (:mod:`processors.sql.avro_types`), ExecuteSQLRecord
through a Record Writer; both share this trigger: pre-queries, the query with ``sql.args.N``
parameters, result sets cut by Max Rows Per Flow File into fragments, post-queries, NiFi's
attributes (``executesql.row.count``, ``executesql.query.duration`` ...) and provenance
(FETCH with an input, RECEIVE without), failure with ``executesql.error.message``.

Its kind depends on its place in a flow: fed by a connection it is a per-FlowFile processor;
without one a source whose every trigger runs SQL Query once (NiFi's scheduled ExecuteSQL).
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from flowcore.errors import ProcessException
from flowcore.flowfile import FlowFile
from flowcore.processor.base import InputRequirement, ProcessorKind
from flowcore.processor.context import ProcessContext
from flowcore.processor.kinds import SourceProcessor, WorkItem, WorkListing
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR, TIME_PERIOD_VALIDATOR
from processors.sql.statements import (
    named_args,
    split_statements,
    sql_args,
    to_paramstyle,
)

__all__ = [
    "DBCP_SERVICE",
    "AbstractExecuteSQL",
    "QueryTimedOut",
    "ResultWriter",
    "fetch_batches",
    "query_timeout",
    "set_auto_commit",
    "timeout_seconds",
]

_FF = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES

RESULT_ROW_COUNT = "executesql.row.count"
RESULT_QUERY_DURATION = "executesql.query.duration"
RESULT_QUERY_EXECUTION_TIME = "executesql.query.executiontime"
RESULT_QUERY_FETCH_TIME = "executesql.query.fetchtime"
RESULTSET_INDEX = "executesql.resultset.index"
RESULT_ERROR_MESSAGE = "executesql.error.message"
INPUT_FLOWFILE_UUID = "input.flowfile.uuid"

REL_SUCCESS = Relationship("success", "Successfully created FlowFile from SQL query result set.")
REL_FAILURE = Relationship(
    "failure",
    "SQL query execution failed. Incoming FlowFile will be penalized and routed to this "
    "relationship",
)

DBCP_SERVICE = PropertyDescriptor(
    "Database Connection Pooling Service",
    description="The Controller Service that is used to obtain connection to database",
    required=True,
    identifies_service="DBCPService",
)
SQL_PRE_QUERY = PropertyDescriptor(
    "SQL Pre-Query",
    description="A semicolon-delimited list of queries executed before the main SQL query is "
    "executed. Results/outputs from these queries will be suppressed if there are no errors.",
    el_scope=_FF,
    aliases=("sql-pre-query",),
)
SQL_QUERY = PropertyDescriptor(
    "SQL Query",
    description="The SQL query to execute. If this property is empty, the content of the "
    "incoming FlowFile is expected to contain a valid SQL query.",
    el_scope=_FF,
    aliases=("SQL select query",),
)
SQL_POST_QUERY = PropertyDescriptor(
    "SQL Post-Query",
    description="A semicolon-delimited list of queries executed after the main SQL query is "
    "executed.",
    el_scope=_FF,
    aliases=("sql-post-query",),
)
QUERY_TIMEOUT = PropertyDescriptor(
    "Max Wait Time",
    description="The maximum amount of time allowed for a running SQL select query, zero means "
    "there is no limit. Max time less than 1 second will be equal to zero.",
    default="0 seconds",
    required=True,
    validators=(TIME_PERIOD_VALIDATOR,),
    el_scope=_FF,
)
MAX_ROWS_PER_FLOW_FILE = PropertyDescriptor(
    "Max Rows Per Flow File",
    description="The maximum number of result rows that will be included in a single FlowFile. "
    "If the value specified is zero, then all rows are returned in a single FlowFile.",
    default="0",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_FF,
    aliases=("esql-max-rows", "Max Rows Per FlowFile"),
)
OUTPUT_BATCH_SIZE = PropertyDescriptor(
    "Output Batch Size",
    description="The number of output FlowFiles to queue before committing the process "
    "session. NOTE: The fragment.count attribute will not be set on FlowFiles when this "
    "property is set.",
    default="0",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_FF,
    aliases=("esql-output-batch-size",),
)
FETCH_SIZE = PropertyDescriptor(
    "Fetch Size",
    description="The number of result rows to be fetched from the result set at a time. If "
    "the value specified is zero, then the hint is ignored.",
    default="0",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    el_scope=_FF,
    aliases=("esql-fetch-size",),
)
AUTO_COMMIT = PropertyDescriptor(
    "Set Auto Commit",
    description="Enables or disables the auto commit functionality of the DB connection.",
    default="true",
    required=True,
    allowable_values=("true", "false"),
    aliases=("esql-auto-commit",),
)
CONTENT_OUTPUT_STRATEGY = PropertyDescriptor(
    "Content Output Strategy",
    description="Specifies the strategy for writing FlowFile content when processing input "
    "FlowFiles. The strategy applies when handling queries that do not produce results.",
    default="EMPTY",
    required=True,
    allowable_values=(
        AllowableValue(
            "EMPTY", "Empty", "Overwrite the input FlowFile content with an empty result set"
        ),
        AllowableValue("ORIGINAL", "Original", "Retain the input FlowFile content without changes"),
    ),
)

#: Rows fetched from the driver at a time when Fetch Size is 0.
DEFAULT_FETCH = 10_000
#: The key of the work item a trigger without input lists (the query, run once).
_QUERY_ITEM = "query"


class ResultWriter:
    """How one processor writes a result set (Avro, or a Record Writer)."""

    mime_type = "application/avro-binary"

    def write(self, out: Any, description: Sequence[Any], rows: Iterator[list[tuple]]) -> int:
        """Write the rows of *rows* (lists of tuples) to *out*; the row count."""
        raise NotImplementedError

    def attributes(self) -> dict[str, str]:
        """Attributes to add to the FlowFile just written."""
        return {"mime.type": self.mime_type}


def fetch_batches(cursor: Any, fetch: int, limit: int) -> Iterator[list[tuple]]:
    """Rows from *cursor* in lists of at most *fetch*, *limit* rows in all (0: no limit)."""
    taken = 0
    while limit <= 0 or taken < limit:
        size = fetch if limit <= 0 else min(fetch, limit - taken)
        rows = cursor.fetchmany(size)
        if not rows:
            return
        taken += len(rows)
        yield rows


class AbstractExecuteSQL(SourceProcessor):
    """The trigger ExecuteSQL and ExecuteSQLRecord share (NiFi's AbstractExecuteSQL).

    NiFi's processor takes input optionally: fed by a connection it runs once per incoming
    FlowFile (a per-FlowFile processor here, ``kind_with_input``); without one it runs on its
    schedule, each trigger running SQL Query and emitting the result FlowFiles with no parent.
    Here that is a source that never runs out (``unbounded``): a batch run runs the query
    once (``unbounded_source_batches`` times) and ends; a continuous run runs it once per Run
    Schedule period or cron time (every micro-batch at the default ``0 sec``, as NiFi's).
    """

    input_requirement: ClassVar = InputRequirement.INPUT_ALLOWED
    kind_with_input: ClassVar = ProcessorKind.PER_FLOWFILE
    #: NiFi's trigger runs the query when every incoming connection loops back to the
    #: processor (``hasNonLoopConnection()`` false): a source then.
    fed_by_self_loops: ClassVar = False
    unbounded: ClassVar = True
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    supports_dynamic_properties: ClassVar = True
    writes_attributes: ClassVar[Mapping[str, str]] = {
        RESULT_ROW_COUNT: "Contains the number of rows returned by the query.",
        RESULT_QUERY_DURATION: "Combined duration of the query execution time and fetch time "
        "in milliseconds.",
        RESULT_QUERY_EXECUTION_TIME: "Duration of the query execution time in milliseconds.",
        RESULT_QUERY_FETCH_TIME: "Duration of the result set fetch time in milliseconds.",
        RESULTSET_INDEX: "Assuming multiple result sets are returned, the zero based index of "
        "this result set.",
        RESULT_ERROR_MESSAGE: "If processing an incoming flow file causes an Exception, the "
        "Flow File is routed to failure and this attribute is set to the exception message.",
        "fragment.identifier": "If 'Max Rows Per Flow File' is set then all FlowFiles from the "
        "same query result set will have the same value for the fragment.identifier attribute.",
        "fragment.count": "If 'Max Rows Per Flow File' is set then this is the total number of "
        "FlowFiles produced by a single ResultSet.",
        "fragment.index": "If 'Max Rows Per Flow File' is set the position of this FlowFile in "
        "the list of outgoing FlowFiles that were all derived from the same result set FlowFile.",
        INPUT_FLOWFILE_UUID: "If the processor has an incoming connection, outgoing FlowFiles "
        "will have this attribute set to the value of the input FlowFile's UUID.",
    }

    def result_writer(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile | None
    ) -> ResultWriter:
        """The writer for this trigger's result sets."""
        raise NotImplementedError

    def dynamic_descriptor(self, name: str) -> PropertyDescriptor:
        """``sql.args.N.type`` / ``.value`` given as properties (NiFi's dynamic properties)."""
        return PropertyDescriptor(name, el_scope=_FF, dynamic=True)

    def validate_context(self, context: ProcessContext) -> None:
        """NiFi's @OnScheduled check: a query, or an incoming connection carrying one.

        Connections that all loop back to the processor carry none before it runs the query
        on its own (NiFi fails each trigger then): refused too, with the reason.
        """
        if not context.get_property(SQL_QUERY).is_set() and not context.has_non_loop_connection():
            msg = (
                "Either the Select Query must be specified or there must be an incoming "
                "connection providing flowfile(s) containing a SQL select query"
            )
            if context.has_incoming_connection():
                msg += " (its incoming connections all loop back to it: it runs on its own)"
            raise ProcessException(msg)

    def on_scheduled(self, context: ProcessContext) -> None:
        """Refuse a processor that has no query to run."""
        self.validate_context(context)

    def list_work(self, context: ProcessContext, state: Mapping[str, str]) -> WorkListing:
        """Without an incoming connection: one item per trigger, running the query once.

        Nothing is read on the driver and no state is kept: the query runs in the task that
        reads the item, and its FlowFiles commit with that item (a replayed attempt runs the
        query again and gets what the database holds then).
        """
        del context
        return WorkListing((WorkItem(_QUERY_ITEM),), state)

    def read_work(self, context: ProcessContext, session: ProcessSession, item: WorkItem) -> None:
        """Run the query with no input FlowFile (NiFi's trigger when ``fileToProcess`` is null)."""
        del item
        self._execute(context, session, None)

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Run the query once: for one incoming FlowFile, or as a source without input.

        NiFi's: with an incoming connection and nothing queued, nothing runs, unless every
        incoming connection loops back to the processor (then the query runs on its own).
        """
        if context.has_incoming_connection():
            flowfile = session.get()
            if flowfile is not None:
                self._execute(context, session, flowfile)
                return
            if context.has_non_loop_connection():
                return
        super().on_trigger(context, session)  # the source's listing and read, one session

    def _execute(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile | None
    ) -> None:
        """NiFi's trigger for *flowfile* (None: no input, the query from SQL Query)."""
        pool = session.controller_service(context.get_property(DBCP_SERVICE).value or "")
        props = {
            d: context.get_property(d).evaluate_attribute_expressions(flowfile or {})
            for d in (QUERY_TIMEOUT, MAX_ROWS_PER_FLOW_FILE, OUTPUT_BATCH_SIZE, FETCH_SIZE)
        }
        max_rows = props[MAX_ROWS_PER_FLOW_FILE].as_integer() or 0
        fetch = props[FETCH_SIZE].as_integer() or 0
        timeout_s = int(props[QUERY_TIMEOUT].as_time_period("s") or 0)
        pre = split_statements(
            context.get_property(SQL_PRE_QUERY).evaluate_attribute_expressions(flowfile or {}).value
        )
        post = split_statements(
            context.get_property(SQL_POST_QUERY)
            .evaluate_attribute_expressions(flowfile or {})
            .value
        )
        if context.get_property(SQL_QUERY).is_set():
            query = (
                context.get_property(SQL_QUERY).evaluate_attribute_expressions(flowfile or {}).value
                or ""
            )
        else:
            assert flowfile is not None
            query = session.read_bytes(flowfile).decode()
        attributes = dict(flowfile.attributes) if flowfile is not None else {}
        arguments = {**context.dynamic_properties, **attributes}
        auto_commit = context.get_property(AUTO_COMMIT).as_boolean()
        run = _Run(flowfile, props[OUTPUT_BATCH_SIZE].as_integer() or 0)
        failing_query = query
        try:
            args = sql_args(arguments)
            raw = pool.engine().raw_connection()
            try:
                restore = set_auto_commit(raw, auto_commit)
                try:
                    cursor = raw.cursor()
                    for statement in pre:
                        failing_query = statement
                        cursor.execute(statement)
                    failing_query = query
                    with query_timeout(raw, timeout_s):
                        self._run_query(
                            context, session, run, pool, cursor, query, args, max_rows, fetch
                        )
                    for statement in post:
                        failing_query = statement
                        cursor.execute(statement)
                    raw.commit()
                finally:
                    restore()
            finally:
                raw.close()
        except Exception as error:  # the database's, a parameter's: to failure as NiFi
            session.remove(run.pending)
            self._fail(context, session, run, failing_query, error, pool)
            return
        session.transfer(run.pending, REL_SUCCESS)
        self._finish(context, session, run)

    def _run_query(  # noqa: PLR0917 (the trigger's pieces, passed along)
        self,
        context: ProcessContext,
        session: ProcessSession,
        run: _Run,
        pool: Any,
        cursor: Any,
        query: str,
        args: list[Any],
        max_rows: int,
        fetch: int,
    ) -> None:
        writer = self.result_writer(context, session, run.flowfile)
        paramstyle = pool.engine().dialect.paramstyle
        context.logger.info("Executing query %s", query)
        started = time.monotonic()
        if args:
            cursor.execute(to_paramstyle(query, paramstyle), named_args(args, paramstyle))
        else:
            cursor.execute(query)
        execution_ms = int((time.monotonic() - started) * 1000)
        fragment_id = str(uuid.uuid4())
        batch = max(1, fetch or DEFAULT_FETCH)
        transit = pool.transit_uri()
        input_attributes = dict(run.flowfile.attributes) if run.flowfile is not None else None
        while True:
            if cursor.description is not None:
                fragment = 0
                first_of_set = len(run.pending)
                while True:
                    fetch_started = time.monotonic()
                    out = session.create(run.flowfile) if run.flowfile is not None else None
                    out = out if out is not None else session.create()
                    counted: list[int] = []
                    description = cursor.description
                    rows = fetch_batches(cursor, batch, max_rows)
                    try:
                        out = session.write(
                            out,
                            lambda stream, r=rows, c=counted, d=description: c.append(
                                writer.write(stream, d, r)
                            ),
                        )
                    except BaseException:  # NiFi removes the result FlowFile being written
                        session.remove(out)
                        raise
                    count = counted[0] if counted else 0
                    if max_rows > 0 and count == 0 and fragment > 0:
                        session.remove(out)
                        break
                    fetch_ms = int((time.monotonic() - fetch_started) * 1000)
                    added = dict(input_attributes or {})
                    added.update(
                        {
                            RESULT_ROW_COUNT: str(count),
                            RESULT_QUERY_DURATION: str(execution_ms + fetch_ms),
                            RESULT_QUERY_EXECUTION_TIME: str(execution_ms),
                            RESULT_QUERY_FETCH_TIME: str(fetch_ms),
                            RESULTSET_INDEX: str(run.result_sets),
                        }
                    )
                    if input_attributes is not None:
                        added[INPUT_FLOWFILE_UUID] = input_attributes["uuid"]
                    if max_rows > 0:
                        added["fragment.identifier"] = fragment_id
                        added["fragment.index"] = str(fragment)
                    added.update(writer.attributes())
                    for protected in ("uuid", "filename", "path"):
                        added.pop(protected, None)
                    out = session.put_all_attributes(out, added)
                    details = f"Retrieved {count} rows"
                    if context.has_incoming_connection():
                        session.provenance.fetch(
                            out, transit, details=details, duration_ms=execution_ms + fetch_ms
                        )
                    else:
                        session.provenance.receive(
                            out, transit, details=details, duration_ms=execution_ms + fetch_ms
                        )
                    context.logger.info(
                        "%s contains %d records; transferring to 'success'", out, count
                    )
                    run.pending.append(out)
                    if run.batch_size > 0 and len(run.pending) >= run.batch_size:
                        self._send_batch(session, run)
                    fragment += 1
                    if not (max_rows > 0 and count == max_rows):
                        break
                if run.batch_size == 0 and max_rows > 0:  # this result set's FlowFiles only
                    run.pending[first_of_set:] = [
                        session.put_attribute(f, "fragment.count", str(fragment))
                        for f in run.pending[first_of_set:]
                    ]
                run.result_sets += 1
            if not _next_set(cursor):
                break

    @staticmethod
    def _send_batch(session: ProcessSession, run: _Run) -> None:
        """NiFi's Output Batch Size: the full batch goes to success, the input is dropped.

        NiFi commits its session here (``commitAsync``) so downstream sees the batch early;
        flowcore's trigger commits once, but the transferred FlowFiles leave the session's
        memory (it spills them to the engine) and stay in success if a later fetch fails, and
        the input is dropped, as NiFi's: a failure then goes to a new FlowFile with the
        input's attributes.
        """
        session.transfer(run.pending, REL_SUCCESS)
        run.pending = []
        if run.flowfile is not None:
            run.retained = dict(run.flowfile.attributes)
            session.remove(run.flowfile)
            run.flowfile = None

    def _finish(self, context: ProcessContext, session: ProcessSession, run: _Run) -> None:
        flowfile = run.flowfile
        if flowfile is not None:
            if run.result_sets > 0:
                session.remove(flowfile)
                return
            if context.get_property(CONTENT_OUTPUT_STRATEGY).value == "ORIGINAL":
                session.transfer(flowfile, REL_SUCCESS)
                return
            session.transfer(self._empty(context, session, flowfile), REL_SUCCESS)
        elif run.result_sets == 0 and run.retained is None:
            session.transfer(self._empty(context, session, session.create()), REL_SUCCESS)

    def _empty(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile
    ) -> FlowFile:
        writer = self.result_writer(context, session, flowfile)
        flowfile = session.write(flowfile, lambda out: writer.write(out, (), iter(())))
        return session.put_all_attributes(
            flowfile, {RESULT_ROW_COUNT: "0", "mime.type": writer.mime_type}
        )

    def _fail(  # noqa: PLR0917
        self,
        context: ProcessContext,
        session: ProcessSession,
        run: _Run,
        query: str,
        error: BaseException,
        pool: Any,
    ) -> None:
        from processors.sql.statements import describe_error  # noqa: PLC0415

        message = describe_error(error, pool.transit_uri() if hasattr(pool, "_transit") else "SQL")
        failed = run.flowfile
        if failed is None and run.retained is not None:  # the input went with a batch
            failed = session.put_all_attributes(
                session.create(),
                {k: v for k, v in run.retained.items() if k not in ("uuid", "filename", "path")},
            )
        if failed is None:  # NiFi: nothing to route, the processor yields
            context.logger.error(
                "Unable to execute SQL select query [%s]. No FlowFile to route to failure: %s",
                query,
                message,
            )
            context.yield_()
            return
        if context.has_incoming_connection():
            context.logger.error(
                "Unable to execute SQL select query [%s] for %s routing to failure: %s",
                query,
                failed,
                message,
            )
            failed = session.penalize(failed)
        else:
            context.logger.error(
                "Unable to execute SQL select query [%s] routing to failure: %s", query, message
            )
            context.yield_()
        failed = session.put_attribute(failed, RESULT_ERROR_MESSAGE, message)
        session.transfer(failed, REL_FAILURE)


class _Run:
    """One trigger's state: the input (None once a batch took it), FlowFiles not yet sent."""

    def __init__(self, flowfile: FlowFile | None, batch_size: int) -> None:
        self.flowfile = flowfile
        self.batch_size = batch_size
        self.pending: list[FlowFile] = []
        self.retained: dict[str, str] | None = None
        self.result_sets = 0


def set_auto_commit(raw: Any, on: bool) -> Callable[[], None]:
    """Set Auto Commit on the driver's connection; the function that puts the pool's back.

    As NiFi, only when it differs from the connection's; a driver without the setting keeps
    its own (NiFi logs ``setAutoCommit not supported``). The pool's connections go back as
    SQLAlchemy keeps them (not autocommit), the transaction rolled back first.
    """
    driver = raw.driver_connection
    module = type(driver).__module__
    if module.startswith("psycopg"):
        getter: Callable[[], Any] = lambda: driver.autocommit  # noqa: E731
        setter: Callable[[Any], None] = lambda v: setattr(driver, "autocommit", v)  # noqa: E731
        wanted: Any = on
    elif module.startswith("sqlite3"):
        getter = lambda: driver.isolation_level  # noqa: E731
        setter = lambda v: setattr(driver, "isolation_level", v)  # noqa: E731
        wanted = None if on else ""
    elif callable(getattr(driver, "autocommit", None)) and hasattr(driver, "get_autocommit"):
        getter = driver.get_autocommit  # PyMySQL, mysqlclient
        setter = driver.autocommit
        wanted = on
    else:
        return lambda: None
    before = getter()
    if before == wanted:
        return lambda: None
    raw.rollback()  # a checkout's validation query may have opened a transaction
    setter(wanted)

    def restore() -> None:
        raw.rollback()
        setter(before)

    return restore


class QueryTimedOut(ProcessException):
    """A statement ran past Max Wait Time and was cancelled (NiFi's SQLTimeoutException)."""


@contextlib.contextmanager
def query_timeout(raw: Any, seconds: int, what: str = "query") -> Iterator[None]:
    """Max Wait Time: cancel the statement (and its fetches) after *seconds* (0: no limit).

    NiFi's ``Statement.setQueryTimeout``: here a timer cancels the statement through the
    driver (psycopg's ``cancel``, sqlite3's ``interrupt``); a driver without either runs
    unbounded. *raw* is a pooled DB-API connection or a SQLAlchemy connection's
    ``.connection`` (both give ``driver_connection``). The error then names the property.

    Raises:
        QueryTimedOut: the statement was cancelled past *seconds*; *what* names it.
    """
    driver = raw.driver_connection
    cancel = getattr(driver, "cancel_safe", None) or getattr(driver, "cancel", None)
    cancel = cancel or getattr(driver, "interrupt", None)
    if seconds <= 0 or cancel is None:
        yield
        return
    lock = threading.Lock()
    state = {"running": True, "fired": False}

    def fire() -> None:
        with lock:
            if state["running"]:
                state["fired"] = True
                cancel()

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except Exception as error:
        if state["fired"]:
            cause = str(getattr(error, "orig", error)).strip().splitlines()
            msg = (
                f"the {what} ran longer than Max Wait Time ({seconds} seconds) and was "
                f"cancelled ({cause[0] if cause else type(error).__name__}); "
                "raise Max Wait Time or set it to 0 seconds for no limit"
            )
            raise QueryTimedOut(msg) from error
        raise
    finally:
        with lock:
            state["running"] = False
        timer.cancel()


def timeout_seconds(value: Any) -> int:
    """Max Wait Time's evaluated *value* in whole seconds (less than one: no limit, NiFi's)."""
    return int(value.as_time_period("s") or 0)


def _next_set(cursor: Any) -> bool:
    nextset = getattr(cursor, "nextset", None)
    if nextset is None:
        return False
    try:
        return bool(nextset())
    except Exception:  # drivers without multiple result sets
        return False
