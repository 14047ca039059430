"""QueryDatabaseTableRecord: new rows of a table through a Record Writer (NiFi's processor)."""

from __future__ import annotations

from typing import Any, ClassVar

from flowcore.processor.context import ProcessContext
from flowcore.properties import PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from processors.sql import execute_base as base
from processors.sql import query_base as q
from processors.sql import query_properties as qp
from processors.sql.execute_sql import DEFAULT_PRECISION, DEFAULT_SCALE, USE_AVRO_LOGICAL_TYPES
from processors.sql.execute_sql_record import RecordResults

__all__ = ["QueryDatabaseTableRecord"]

RECORD_WRITER = PropertyDescriptor(
    "Record Writer",
    description="Specifies the Controller Service to use for writing results to a FlowFile.",
    required=True,
    identifies_service="RecordSetWriterFactory",
    aliases=("qdbtr-record-writer",),
)
NORMALIZE = PropertyDescriptor(
    "Normalize Table/Column Names",
    description="Whether to change characters in column names when creating the output schema.",
    default="false",
    required=True,
    allowable_values=("true", "false"),
    aliases=("qdbtr-normalize",),
)


class QueryDatabaseTableRecord(q.AbstractQueryDatabaseTable):
    """QueryDatabaseTable with a Record Writer (NiFi's QueryDatabaseTableRecord).

    Rows reach the writer as Arrow record batches of Fetch Size rows (10,000 when 0); the
    writer sets ``record.count`` and ``mime.type``.
    """

    property_descriptors: ClassVar = (
        base.DBCP_SERVICE,
        qp.DB_TYPE,
        qp.TABLE_NAME,
        qp.COLUMN_NAMES,
        qp.WHERE_CLAUSE,
        qp.SQL_QUERY,
        RECORD_WRITER,
        qp.MAX_VALUE_COLUMN_NAMES,
        qp.INITIAL_LOAD_STRATEGY,
        qp.QUERY_TIMEOUT,
        qp.FETCH_SIZE,
        qp.AUTO_COMMIT,
        qp.MAX_ROWS_PER_FLOW_FILE,
        qp.OUTPUT_BATCH_SIZE,
        qp.MAX_FRAGMENTS,
        NORMALIZE,
        USE_AVRO_LOGICAL_TYPES,
        DEFAULT_PRECISION,
        DEFAULT_SCALE,
    )
    tags: ClassVar = ("sql", "select", "jdbc", "query", "database", "record")

    def result_writer(self, context: ProcessContext, session: ProcessSession) -> Any:
        """The Record Writer the processor names."""
        writer = session.controller_service(context.get_property(RECORD_WRITER).value or "")
        return RecordResults(writer, {}, context.get_property(NORMALIZE).as_boolean())
