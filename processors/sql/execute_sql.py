"""ExecuteSQL: a query's result sets as Avro data files (NiFi's ExecuteSQL)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from flowcore.errors import ProcessException
from flowcore.flowfile import FlowFile
from flowcore.processor.context import ProcessContext
from flowcore.properties import PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_NEGATIVE_INTEGER_VALIDATOR, POSITIVE_INTEGER_VALIDATOR
from processors.sql import execute_base as base
from processors.sql.avro_types import avro_schema, column_kinds, converters

__all__ = ["ExecuteSQL"]

NORMALIZE_NAMES = PropertyDescriptor(
    "Normalize Table/Column Names",
    description="Whether to change non-Avro-compatible characters in column names to Avro-"
    "compatible characters.",
    default="false",
    required=True,
    allowable_values=("true", "false"),
    aliases=("dbf-normalize", "Normalize Table and Column Names"),  # NiFi 2's JdbcProperties
)
USE_AVRO_LOGICAL_TYPES = PropertyDescriptor(
    "Use Avro Logical Types",
    description="Whether to use Avro Logical Types for DECIMAL/NUMBER, DATE, TIME and "
    "TIMESTAMP columns. If disabled, written as string.",
    default="false",
    required=True,
    allowable_values=("true", "false"),
    aliases=("dbf-user-logical-types",),
)
COMPRESSION_FORMAT = PropertyDescriptor(
    "Compression Format",
    description="Compression type to use when writing Avro files. Default is None.",
    default="NONE",
    required=True,
    allowable_values=("BZIP2", "DEFLATE", "NONE", "SNAPPY", "LZO"),
    aliases=("compression-format",),
)
DEFAULT_PRECISION = PropertyDescriptor(
    "Default Decimal Precision",
    description="When a DECIMAL/NUMBER value is written as a 'decimal' Avro logical type, a "
    "specific 'precision' denoting number of available digits is required.",
    default="10",
    required=True,
    validators=(POSITIVE_INTEGER_VALIDATOR,),
    aliases=("dbf-default-precision",),
)
DEFAULT_SCALE = PropertyDescriptor(
    "Default Decimal Scale",
    description="When a DECIMAL/NUMBER value is written as a 'decimal' Avro logical type, a "
    "specific 'scale' denoting number of available decimal digits is required.",
    default="0",
    required=True,
    validators=(NON_NEGATIVE_INTEGER_VALIDATOR,),
    aliases=("dbf-default-scale",),
)

_CODECS = {"NONE": "null", "DEFLATE": "deflate", "SNAPPY": "snappy", "BZIP2": "bzip2"}


class AvroResults(base.ResultWriter):
    """NiFi's DefaultAvroSqlWriter: one Avro data file per result set (or fragment)."""

    mime_type = "application/avro-binary"

    def __init__(
        self, *, logical: bool, normalize: bool, codec: str, precision: int, scale: int
    ) -> None:
        self.logical = logical
        self.normalize = normalize
        self.codec = codec
        self.precision = precision
        self.scale = scale

    def write(self, out: Any, description: Sequence[Any], rows: Iterator[list[tuple]]) -> int:
        """Write the rows as one Avro data file; the row count."""
        import fastavro  # noqa: PLC0415

        first = next(rows, [])
        kinds = column_kinds(description, first)
        schema = avro_schema(
            description,
            kinds,
            logical=self.logical,
            normalize=self.normalize,
            precision=self.precision,
            scale=self.scale,
        )
        names = [field["name"] for field in schema["fields"]]
        convert = converters(kinds, logical=self.logical)
        count = 0

        def records() -> Iterator[dict[str, Any]]:
            nonlocal count
            chunk: list[tuple] | None = first
            while chunk:
                for at, row in enumerate(chunk, count):
                    try:
                        yield {
                            name: (None if value is None else fn(value))
                            for name, value, fn in zip(names, row, convert, strict=True)
                        }
                    except (ValueError, TypeError, ArithmeticError) as error:
                        raise _unconvertible(names, kinds, row, convert, at) from error
                count += len(chunk)
                chunk = next(rows, None)

        fastavro.writer(out, fastavro.parse_schema(schema), records(), codec=self.codec)
        return count


def _unconvertible(
    names: Sequence[str],
    kinds: Sequence[str],
    row: Sequence[Any],
    convert: Sequence[Any],
    index: int,
) -> ProcessException:
    """The error naming the column and row whose value the Avro schema cannot hold."""
    for name, kind, value, fn in zip(names, kinds, row, convert, strict=True):
        try:
            if value is not None:
                fn(value)
        except (ValueError, TypeError, ArithmeticError) as error:
            shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
            msg = (
                f"cannot write the result as Avro: column {name!r} of row {index + 1} holds "
                f"{shown}, which cannot be written as the column's type {kind} "
                f"({type(error).__name__}: {error})"
            )
            return ProcessException(msg)
    msg = f"cannot write row {index + 1} of the result as Avro"
    return ProcessException(msg)


class ExecuteSQL(base.AbstractExecuteSQL):
    """Executes provided SQL select query; the results are written as Avro (NiFi's ExecuteSQL).

    The query comes from SQL Query, or from the content of the incoming FlowFile. Without an
    incoming connection it runs on its schedule (a RECEIVE per result FlowFile); with one, once
    per FlowFile (a FETCH). Streaming: rows go from the driver to the Avro file in fetches.
    """

    property_descriptors: ClassVar = (
        base.DBCP_SERVICE,
        base.SQL_PRE_QUERY,
        base.SQL_QUERY,
        base.SQL_POST_QUERY,
        base.QUERY_TIMEOUT,
        NORMALIZE_NAMES,
        USE_AVRO_LOGICAL_TYPES,
        COMPRESSION_FORMAT,
        DEFAULT_PRECISION,
        DEFAULT_SCALE,
        base.MAX_ROWS_PER_FLOW_FILE,
        base.OUTPUT_BATCH_SIZE,
        base.FETCH_SIZE,
        base.AUTO_COMMIT,
        base.CONTENT_OUTPUT_STRATEGY,
    )
    tags: ClassVar = ("sql", "select", "jdbc", "query", "database")

    def result_writer(
        self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile | None
    ) -> base.ResultWriter:
        """Avro per the processor's properties."""
        del session, flowfile
        codec = context.get_property(COMPRESSION_FORMAT).value or "NONE"
        if codec not in _CODECS:
            from flowcore.errors import ConfigurationError  # noqa: PLC0415

            msg = (
                f"ExecuteSQL: Compression Format {codec} is not available in flowcore (use "
                "NONE, DEFLATE, SNAPPY or BZIP2)"
            )
            raise ConfigurationError(msg)
        return AvroResults(
            logical=context.get_property(USE_AVRO_LOGICAL_TYPES).as_boolean(),
            normalize=context.get_property(NORMALIZE_NAMES).as_boolean(),
            codec=_CODECS[codec],
            precision=context.get_property(DEFAULT_PRECISION).as_integer() or 10,
            scale=context.get_property(DEFAULT_SCALE).as_integer() or 0,
        )
