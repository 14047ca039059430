"""PutDatabaseRecord's per-record statements: the SQL type, Use Record Path, Data Record Path.

NiFi's PutDatabaseRecord runs, besides one generated statement per FlowFile:

- Statement Type ``SQL`` (the ``statement.type`` attribute's only): each record's Field
  Containing SQL is a statement run as it is (several, split on unescaped ``;``, with Allow
  Multiple SQL Statements);
- ``Use Record Path``: each record's statement type is its Statement Type Record Path's value
  (INSERT, UPDATE, UPSERT, DELETE, or Debezium's ``c``/``r``, ``u``, ``d``);
- Data Record Path: the record (or records) that path selects is written, not the whole one;
- Pre- and Post-Processing SQL around the records.

All of them run in the FlowFile's one transaction (prepared, then committed, into PostgreSQL:
:mod:`processors.sql.prepared`), so a failure anywhere leaves nothing of the FlowFile.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from flowcore.errors import ProcessException
from flowcore.flowfile import FlowFile
from flowcore.processor.context import ProcessContext
from flowcore.record_path import RecordPath
from flowcore.record_path._values import FieldValue
from processors.sql import prepared
from processors.sql.execute_base import QueryTimedOut, query_timeout
from processors.sql.record_statements import StatementPlan
from processors.sql.statements import describe_error, is_retryable, split_statements

__all__ = [
    "DmlWriter",
    "execute_sql_field",
    "rebatch",
    "run_statements",
    "statement_type_of",
]

#: Statement Type Record Path values (upper case) and the statement type each means.
RECORD_PATH_TYPES = {
    "INSERT": "INSERT",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
    "UPSERT": "UPSERT",
    "C": "INSERT",
    "R": "INSERT",
    "U": "UPDATE",
    "D": "DELETE",
}


def run_statements(
    connection: Any,
    statements: Iterable[str],
    source: str | None = None,
    *,
    two_phase: str | None = None,
    timeout: int = 0,
) -> None:
    """Run each SQL statement as it is (no parameters: a ``%`` is the SQL's own).

    With *two_phase* (the place the statements come from: Pre-Processing SQL, a record's
    Field Containing SQL) the FlowFile's transaction is prepared after them, so a statement
    that ends it is refused before it runs, and the transaction is checked still open after
    each one (:func:`prepared.check_still_open`, no round trip). Each statement is cancelled
    past *timeout* seconds (Max Wait Time; 0: no limit).

    Raises:
        ProcessException: a statement of *source* (a property: Pre-Processing SQL) failed;
            NiFi's message names the property and the statement. Or, under two-phase commit,
            a statement ended the transaction. A lost connection is raised as the driver's
            error (the FlowFile goes to retry).
    """
    raw = connection.execution_options(no_parameters=True)
    for statement in statements:
        if two_phase is not None:
            prepared.refuse_transaction_end(statement, two_phase)
        try:
            with query_timeout(connection.connection, timeout, "statement"):
                raw.exec_driver_sql(statement)
        except Exception as error:
            if source is None or is_retryable(error) or isinstance(error, QueryTimedOut):
                raise
            cause = describe_error(error, "the database")
            msg = f"Failed to execute {source} Statement [{statement}]: {cause}"
            raise ProcessException(msg) from error
        if two_phase is not None:
            prepared.check_still_open(connection, statement, two_phase)


def execute_sql_field(
    connection: Any,
    batches: Iterable[pa.RecordBatch],
    field: str | None,
    multiple: bool,
    flowfile: FlowFile,
    *,
    two_phase: bool = False,
    timeout: int = 0,
) -> int:
    """Run each record's *field* as SQL (NiFi's ``executeSQL``); the number of records.

    With *two_phase* no statement may end the FlowFile's transaction (:func:`run_statements`);
    each is cancelled past *timeout* seconds (0: no limit).

    Raises:
        ProcessException: no Field Containing SQL, a schema without that field, or a record
            whose value is null or empty (NiFi's messages; the FlowFile goes to failure).
    """
    if not field:
        msg = (
            f"SQL specified as Statement Type but no Field Containing SQL was found, FlowFile "
            f"{flowfile}: set Field Containing SQL to the field that holds each record's SQL"
        )
        raise ProcessException(msg)
    count = 0
    for batch in batches:
        if field not in batch.schema.names:
            msg = (
                f"Record schema does not contain Field Containing SQL: {field}, FlowFile "
                f"{flowfile} (its fields: {', '.join(batch.schema.names)})"
            )
            raise ProcessException(msg)
        for value in batch.column(field).to_pylist():
            sql = None if value is None else str(value)
            if not sql:
                msg = (
                    f"Record had no (or null) value for Field Containing SQL: {field}, "
                    f"FlowFile {flowfile}"
                )
                raise ProcessException(msg)
            run_statements(
                connection,
                split_statements(sql) if multiple else [sql],
                two_phase=f"Field Containing SQL ({field})" if two_phase else None,
                timeout=timeout,
            )
            count += 1
    return count


def rebatch(batches: Iterable[pa.RecordBatch], size: int) -> Iterator[pa.RecordBatch]:
    """*batches* regrouped into batches of exactly *size* rows, in order.

    NiFi fills each JDBC batch across the records of a FlowFile, not per reader chunk, so its
    Maximum Batch Size batches (and its "Batches Executed" counter) are these: the last, or
    the last before a schema change, has fewer rows. At most *size* rows wait (0: *batches*
    as they are, streamed).
    """
    if size <= 0:
        yield from batches
        return
    pending: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        if pending and batch.schema != pending[0].schema:
            yield from _joined(pending)
            pending, count = [], 0
        start = 0
        while start < batch.num_rows:
            take = min(size - count, batch.num_rows - start)
            pending.append(batch.slice(start, take))
            count += take
            start += take
            if count == size:
                yield from _joined(pending)
                pending, count = [], 0
    if pending:
        yield from _joined(pending)


def _joined(parts: list[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """*parts* (one schema) as one batch."""
    if len(parts) == 1:
        yield parts[0]
    else:
        yield pa.Table.from_batches(parts).combine_chunks().to_batches()[0]


def statement_type_of(path: RecordPath, record: dict[str, Any]) -> str:
    """The statement type Statement Type Record Path gives *record* (NiFi's messages).

    Raises:
        ProcessException: no value, several distinct values, or one that is no type.
    """
    found = [v.value for v in path.evaluate(record)]
    values = list(dict.fromkeys(repr(v) for v in found))
    if not found:
        msg = f"Evaluated RecordPath {path.path} against Record but got no results"
        raise ProcessException(msg)
    if len(values) > 1:
        msg = (
            f"Evaluated RecordPath {path.path} against Record and received multiple distinct "
            f"results ({', '.join(values)})"
        )
        raise ProcessException(msg)
    text = "NULL" if found[0] is None else str(found[0]).upper()  # NiFi's String.valueOf
    if text not in RECORD_PATH_TYPES:
        msg = (
            f"Evaluated RecordPath {path.path} against Record to determine Statement Type but "
            f"found invalid value: {text} (expected INSERT, UPDATE, UPSERT, DELETE, or "
            "Debezium's c, r, u, d)"
        )
        raise ProcessException(msg)
    return RECORD_PATH_TYPES[text]


def _struct_type(schema: pa.Schema, selected: FieldValue) -> pa.StructType | None:
    """The Arrow struct type of the record *selected* (None: not found, infer it)."""
    chain = []
    node: FieldValue | None = selected
    while node is not None and node.parent is not None:
        chain.append(node)
        node = node.parent
    kind: pa.DataType | None = None
    for step in reversed(chain):
        name = step.field_name
        if kind is None:
            if name is None or name not in schema.names:
                return None
            kind = schema.field(name).type
        elif pa.types.is_struct(kind) and name is not None and kind.get_field_index(name) >= 0:
            kind = kind.field(name).type
        else:
            return None
        if step.index is not None and (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
            kind = kind.value_type
    return kind if kind is not None and pa.types.is_struct(kind) else None


class DmlWriter:
    """A FlowFile's generated statements: one :class:`StatementPlan` per type and schema.

    Without a Statement Type Record Path or Data Record Path a batch is one plan's; with
    them the records are taken one by one, and consecutive records of one statement type go
    together (the records' order is kept: an INSERT then an UPDATE of the same row work).
    """

    def __init__(  # noqa: PLR0917 (the trigger's pieces)
        self,
        context: ProcessContext,
        table: Any,
        statement_type: str,
        keys: dict[str, str | None],
        dialect: str,
        binary_format: str | None,
        type_path: RecordPath | None = None,
        data_path: RecordPath | None = None,
    ) -> None:
        self.context = context
        self.table = table
        self.statement_type = statement_type
        self.keys = keys  # "UPDATE" -> Update Keys, "DELETE" -> Delete Keys
        self.dialect = dialect
        self.binary_format = binary_format
        self.type_path = type_path
        self.data_path = data_path
        self.plans: dict[tuple[str, pa.Schema], StatementPlan] = {}

    def plan(self, statement_type: str, schema: pa.Schema) -> StatementPlan:
        """The plan of *statement_type* for records of *schema*, made once."""
        found = self.plans.get((statement_type, schema))
        if found is None:
            keys = self.keys.get("DELETE" if statement_type == "DELETE" else "UPDATE")
            found = self.plans[statement_type, schema] = StatementPlan.make(
                self.context,
                self.table,
                schema,
                statement_type,
                keys,
                self.dialect,
                self.binary_format,
            )
        return found

    def counters(self) -> dict[str, int]:
        """NiFi's counters for what was written, added when the FlowFile's rows are.

        "Batches Executed": each executed batch of at most Maximum Batch Size statements;
        "<type> updates performed": one per record.
        """
        counts: dict[str, int] = {}
        for (statement_type, _), plan in self.plans.items():
            if plan.batches:
                counts["Batches Executed"] = counts.get("Batches Executed", 0) + plan.batches
            if plan.rows:
                name = f"{statement_type} updates performed"
                counts[name] = counts.get(name, 0) + plan.rows
        return counts

    def write(self, connection: Any, batch: pa.RecordBatch, batch_size: int) -> int:
        """Write *batch*'s records; the number of rows written."""
        if self.type_path is None and self.data_path is None:
            return self.plan(self.statement_type, batch.schema).write(connection, batch, batch_size)
        count = 0
        for statement_type, part in self._runs(batch):
            count += self.plan(statement_type, part.schema).write(connection, part, batch_size)
        return count

    def _runs(self, batch: pa.RecordBatch) -> Iterator[tuple[str, pa.RecordBatch]]:
        """Consecutive records of one statement type and shape, as batches of those written.

        With Data Record Path a run also ends where the selected records' shape changes (their
        Arrow struct type, or, where the batch's schema does not give it, their field names):
        NiFi writes each data record with its own schema, so two shapes are never one batch.
        """
        records = batch.to_pylist()
        run_key: tuple[str, Any] | None = None
        run: list[Any] = []  # row indexes (no Data Record Path) or data records
        struct: pa.StructType | None = None
        for index, record in enumerate(records):
            kind = (
                statement_type_of(self.type_path, record)
                if self.type_path is not None
                else self.statement_type
            )
            if self.data_path is None:
                if run_key is not None and kind != run_key[0]:
                    yield run_key[0], self._batch(batch, run, struct)
                    run = []
                run_key = (kind, None)
                run.append(index)
                continue
            for selected in self._data(record):
                found = _struct_type(batch.schema, selected)
                shape = found if found is not None else tuple(selected.value)
                if run_key is not None and (kind, shape) != run_key:
                    yield run_key[0], self._batch(batch, run, struct)
                    run = []
                run_key, struct = (kind, shape), found
                run.append(selected.value)
        if run and run_key is not None:
            yield run_key[0], self._batch(batch, run, struct)

    def _data(self, record: dict[str, Any]) -> list[FieldValue]:
        """The records Data Record Path selects in *record* (NiFi's messages when none)."""
        assert self.data_path is not None
        selected = [v for v in self.data_path.evaluate(record) if v.value is not None]
        if not selected:
            msg = f"RecordPath {self.data_path.path} evaluated against Record yielded no results."
            raise ProcessException(msg)
        for value in selected:
            if not isinstance(value.value, dict):
                msg = (
                    f"RecordPath {self.data_path.path} evaluated against Record expected to "
                    f"return one or more Records but encountered field of type "
                    f"{value.type_name or type(value.value).__name__}"
                )
                raise ProcessException(msg)
        return selected

    def _batch(self, batch: pa.RecordBatch, run: list[Any], struct: pa.StructType | None) -> Any:
        if self.data_path is None:
            return batch.slice(run[0], len(run))  # consecutive rows
        if struct is not None:
            return pa.RecordBatch.from_pylist(run, schema=pa.schema(list(struct)))
        # One field-name set (the run's key): each column's type from all its values, not
        # the first row's alone.
        return pa.RecordBatch.from_struct_array(pa.array(run))
