"""QueryDatabaseTable: new rows of a table as Avro FlowFiles, incrementally (NiFi's processor)."""

from __future__ import annotations

from typing import Any, ClassVar

from flowcore.processor.context import ProcessContext
from flowcore.session.process_session import ProcessSession
from processors.sql import execute_base as base
from processors.sql import query_base as q
from processors.sql import query_properties as qp
from processors.sql.execute_sql import (
    DEFAULT_PRECISION,
    DEFAULT_SCALE,
    NORMALIZE_NAMES,
    USE_AVRO_LOGICAL_TYPES,
    AvroResults,
)

__all__ = ["QueryDatabaseTable"]


class QueryDatabaseTable(q.AbstractQueryDatabaseTable):
    """Fetches the rows past the previously seen Maximum-value Columns, as Avro.

    NiFi's QueryDatabaseTable: generates a SQL select query, or uses a provided statement,
    and executes it to fetch all rows whose values in the Maximum-value Columns are larger
    than the previously-seen maxima. The maxima are source state (NiFi's keys,
    ``<table>@!@<column>``) committed with the FlowFiles: a crash neither loses nor repeats a
    row in the flow.
    """

    property_descriptors: ClassVar = (
        base.DBCP_SERVICE,
        qp.DB_TYPE,
        qp.TABLE_NAME,
        qp.COLUMN_NAMES,
        qp.WHERE_CLAUSE,
        qp.SQL_QUERY,
        qp.MAX_VALUE_COLUMN_NAMES,
        qp.INITIAL_LOAD_STRATEGY,
        qp.QUERY_TIMEOUT,
        qp.FETCH_SIZE,
        qp.AUTO_COMMIT,
        qp.MAX_ROWS_PER_FLOW_FILE,
        qp.OUTPUT_BATCH_SIZE,
        qp.MAX_FRAGMENTS,
        NORMALIZE_NAMES,
        q.TRANS_ISOLATION_LEVEL,
        USE_AVRO_LOGICAL_TYPES,
        DEFAULT_PRECISION,
        DEFAULT_SCALE,
    )
    tags: ClassVar = ("sql", "select", "jdbc", "query", "database")

    def result_writer(self, context: ProcessContext, session: ProcessSession) -> Any:
        """Avro, as ExecuteSQL writes it (no compression)."""
        del session
        return AvroResults(
            logical=context.get_property(USE_AVRO_LOGICAL_TYPES).as_boolean(),
            normalize=context.get_property(NORMALIZE_NAMES).as_boolean(),
            codec="null",
            precision=context.get_property(DEFAULT_PRECISION).as_integer() or 10,
            scale=context.get_property(DEFAULT_SCALE).as_integer() or 0,
        )
