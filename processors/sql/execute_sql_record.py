"""ExecuteSQLRecord: a query's result sets written by a Record Writer (NiFi's processor)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import pyarrow as pa

from flowcore.flowfile import FlowFile
from flowcore.processor.context import ProcessContext
from flowcore.properties import PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.session.streams import WriteStream
from processors.sql import execute_base as base
from processors.sql.arrow_rows import arrow_batches, empty_schema
from processors.sql.execute_sql import (
    DEFAULT_PRECISION,
    DEFAULT_SCALE,
    NORMALIZE_NAMES,
    USE_AVRO_LOGICAL_TYPES,
)

__all__ = ["ExecuteSQLRecord"]

RECORD_WRITER = PropertyDescriptor(
    "Record Writer",
    description="Specifies the Controller Service to use for writing results to a FlowFile. "
    "The Record Writer may use Inherit Schema to emulate the inferred schema behavior.",
    required=True,
    identifies_service="RecordSetWriterFactory",
    aliases=("esqlrecord-record-writer",),
)
NORMALIZE = PropertyDescriptor(
    NORMALIZE_NAMES.display_name,
    description=NORMALIZE_NAMES.description,
    default="false",
    required=True,
    allowable_values=("true", "false"),
    aliases=("esqlrecord-normalize",),
)


class RecordResults(base.ResultWriter):
    """NiFi's RecordSqlWriter: each fetch reaches the Record Writer as an Arrow batch."""

    def __init__(self, writer: Any, attributes: dict[str, str], normalize: bool) -> None:
        self.writer = writer
        self.seen = attributes
        self.normalize = normalize
        self.written: dict[str, str] = {}
        self.mime_type = "application/octet-stream"
        #: the schema of the result set last written, by its columns' names and type codes:
        #: the later FlowFiles of one result set (Max Rows Per Flow File) keep the first's
        self._schemas: tuple[tuple[Any, ...], pa.Schema] | None = None

    def write(self, out: Any, description: Sequence[Any], rows: Iterator[list[tuple]]) -> int:
        """Write the rows through the Record Writer; the row count."""
        columns = tuple((column[0], column[1]) for column in description)
        known = self._schemas[1] if self._schemas and self._schemas[0] == columns else None
        batches = arrow_batches(description, rows, normalize=self.normalize, schema=known)
        first = next(batches, None)
        if first is not None and known is None:
            self._schemas = (columns, first.schema)
        schema = (
            first.schema
            if first is not None
            else known or empty_schema(description, normalize=self.normalize)
        )
        record_writer = self.writer.create_writer(schema, self.seen, WriteStream(out))
        count = 0
        if first is not None:
            record_writer.write(first)
            count += first.num_rows
        for batch in batches:
            record_writer.write(batch)
            count += batch.num_rows
        self.written = dict(record_writer.finish())
        self.written["record.count"] = str(count)
        self.mime_type = self.written.get("mime.type", self.mime_type)
        return count

    def attributes(self) -> dict[str, str]:
        """The writer's attributes (``mime.type``, ``record.count``, schema ...)."""
        return dict(self.written) or {"mime.type": self.mime_type}


class ExecuteSQLRecord(base.AbstractExecuteSQL):
    """Executes provided SQL select query; results written with a Record Writer.

    NiFi's ExecuteSQLRecord: as ExecuteSQL, the FlowFile's format is the Record Writer's;
    the driver's rows reach the writer as Arrow record batches of Fetch Size rows (10,000 when
    0), so memory is bounded by a fetch whatever the result's size.
    """

    property_descriptors: ClassVar = (
        base.DBCP_SERVICE,
        base.SQL_PRE_QUERY,
        base.SQL_QUERY,
        base.SQL_POST_QUERY,
        base.QUERY_TIMEOUT,
        RECORD_WRITER,
        NORMALIZE,
        USE_AVRO_LOGICAL_TYPES,
        DEFAULT_PRECISION,
        DEFAULT_SCALE,
        base.MAX_ROWS_PER_FLOW_FILE,
        base.OUTPUT_BATCH_SIZE,
        base.FETCH_SIZE,
        base.AUTO_COMMIT,
        base.CONTENT_OUTPUT_STRATEGY,
    )
    tags: ClassVar = ("sql", "select", "jdbc", "query", "database", "record")

    def result_writer(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile | None
    ) -> base.ResultWriter:
        """The Record Writer the processor names."""
        writer = session.controller_service(context.get_property(RECORD_WRITER).value or "")
        attributes = dict(flowfile.attributes) if flowfile is not None else {}
        return RecordResults(writer, attributes, context.get_property(NORMALIZE).as_boolean())
