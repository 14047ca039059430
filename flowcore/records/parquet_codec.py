"""NiFi's ParquetReader and ParquetRecordSetWriter as codecs, on pyarrow.parquet.

Parquet is Arrow's own columnar form, so batches go through untouched: the reader yields the row
groups' batches (``batch_size`` rows at a time, one row group in memory), the writer appends
batches to row groups. The NiFi types ride in the Arrow schema pyarrow stores in the file, so a
file written here reads back with the same NiFi schema, and Spark reads it as any Parquet
dataset (``spark.read.parquet``; NiFi's TIME columns are Parquet TIME_MILLIS, which Spark
before 4.1 does not read: cast them to strings first when Spark is the reader).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO

import attrs
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from flowcore.errors import ConfigurationError
from flowcore.records._batches import record_error, write_all
from flowcore.records.options import nifi
from flowcore.records.schema import RecordSchema, cast_column, millis_type, to_millis

__all__ = [
    "ParquetReaderOptions",
    "ParquetRecordWriter",
    "ParquetWriterOptions",
    "read_parquet",
    "write_parquet",
]

#: NiFi's "Compression Type" values -> pyarrow's names.
COMPRESSIONS = {
    "UNCOMPRESSED": "none",
    "SNAPPY": "snappy",
    "GZIP": "gzip",
    "BROTLI": "brotli",
    "LZ4": "lz4",
    "ZSTD": "zstd",
    "LZO": None,
}


@attrs.frozen
class ParquetReaderOptions:
    """ParquetReader's settings.

    Attributes:
        batch_size: rows per Arrow batch (memory bound; not a NiFi property).
    """

    batch_size: int = 65536


def read_parquet(
    stream: IO[bytes],
    options: ParquetReaderOptions = ParquetReaderOptions(),
    schema: RecordSchema | None = None,
) -> Iterator[pa.RecordBatch]:
    """Record batches of the Parquet file in *stream*, cast to *schema* when given.

    The stream must be seekable (Parquet's footer is at its end); fields are taken by name.

    Raises:
        RecordError: the content is not Parquet, or a column does not cast to its field's type.
    """
    if not stream.seekable():
        msg = "Parquet content must be read from a seekable stream (its footer is at the end)"
        raise ConfigurationError(msg)
    try:
        parquet = pq.ParquetFile(stream)
    except (pa.ArrowInvalid, OSError) as exc:
        raise record_error(1, None, None, f"not a Parquet file: {exc}") from None
    return _batches(parquet, options, schema)


def _batches(
    parquet: pq.ParquetFile, options: ParquetReaderOptions, schema: RecordSchema | None
) -> Iterator[pa.RecordBatch]:
    target = schema.to_arrow() if schema is not None else None
    number = 0
    for batch in parquet.iter_batches(batch_size=options.batch_size):
        if target is not None:
            batch = _cast(batch, target, number)  # noqa: PLW2901
        number += batch.num_rows
        yield batch


def _cast(batch: pa.RecordBatch, target: pa.Schema, before: int) -> pa.RecordBatch:
    arrays = []
    for field in target:
        index = batch.schema.get_field_index(field.name)
        if index < 0:
            arrays.append(pa.nulls(batch.num_rows, field.type))
            continue
        try:
            arrays.append(cast_column(batch.column(index), field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            reason = f"the column does not convert to {field.type}: {exc}"
            raise record_error(before + 1, None, field.name, reason) from None
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _conformed(batch: pa.RecordBatch | pa.Table, schema: pa.Schema) -> pa.RecordBatch | pa.Table:
    """*batch*'s columns cast to *schema*, finer times truncated.

    NiFi writes a TIMESTAMP through Avro's timestamp-millis (``Timestamp.getTime()``), so a
    record's microseconds (a PostgreSQL ``timestamp(6)``, a ``SSSSSS`` Timestamp Format) are
    floored to the millisecond there too; any other cast that would lose data still fails.
    """
    picked = batch.select(schema.names)
    columns = [
        pc.cast(
            to_millis(picked.column(index)),
            options=pc.CastOptions(field.type, allow_time_truncate=True),
        )
        for index, field in enumerate(schema)
    ]
    return type(picked).from_arrays(columns, schema=schema)


@attrs.frozen
class ParquetWriterOptions:
    """ParquetRecordSetWriter's properties.

    Attributes:
        compression_type: "Compression Type": UNCOMPRESSED (NiFi's default), SNAPPY, GZIP,
            BROTLI, LZ4, ZSTD (LZO is refused).
        row_group_rows: rows per row group at most.
        row_group_bytes: Arrow bytes per row group at most (NiFi's "Row Group Size", 128 MB of
            Parquet, is in bytes; this bounds the writer's memory).
        enable_dictionary_encoding: "Enable Dictionary Encoding".
        writer_version: "Writer Version": PARQUET_1_0 or PARQUET_2_0.
    """

    compression_type: str = nifi("Compression Type", "UNCOMPRESSED")
    row_group_rows: int = 1 << 20
    row_group_bytes: int = 64 << 20
    enable_dictionary_encoding: bool = nifi("Enable Dictionary Encoding", True)
    writer_version: str = nifi("Writer Version", "PARQUET_1_0")

    def compression(self) -> str:
        """Pyarrow's name of the compression."""
        codec = COMPRESSIONS.get(self.compression_type, "?")
        if codec is None or codec == "?":
            msg = (
                f"Compression Type {self.compression_type!r} is not one of "
                "UNCOMPRESSED, SNAPPY, GZIP, BROTLI, LZ4, ZSTD"
            )
            raise ConfigurationError(msg)
        return codec


class ParquetRecordWriter:
    """Writes record batches into one Parquet file; call :meth:`finish` once."""

    def __init__(
        self,
        stream: IO[bytes],
        schema: RecordSchema,
        options: ParquetWriterOptions = ParquetWriterOptions(),
    ) -> None:
        # NiFi's writer goes through Avro's timestamp-millis: TIMESTAMP columns are millis
        arrow = schema.to_arrow()
        self._schema = pa.schema(
            [f.with_type(millis_type(f.type)) for f in arrow], metadata=arrow.metadata
        )
        self._options = options
        self._count = 0
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        self._writer = pq.ParquetWriter(
            stream,
            self._schema,
            compression=options.compression(),
            use_dictionary=options.enable_dictionary_encoding,
            data_page_version="2.0" if options.writer_version == "PARQUET_2_0" else "1.0",
        )

    @property
    def record_count(self) -> int:
        """Records written so far."""
        return self._count

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Append *batch* (cast to the writer's schema when its types differ).

        Batches are held until they fill a row group (``row_group_rows`` rows or
        ``row_group_bytes`` of Arrow data, whichever comes first), so small batches still make
        row groups of a useful size while memory stays bounded by one row group.
        """
        if not batch.schema.equals(self._schema, check_metadata=False):
            batch = _conformed(batch, self._schema)
        table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
        self._pending.append(table)
        self._pending_rows += table.num_rows
        self._pending_bytes += table.nbytes
        self._count += table.num_rows
        options = self._options
        if (
            self._pending_rows >= options.row_group_rows
            or self._pending_bytes >= options.row_group_bytes
        ):
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            table = pa.concat_tables(self._pending)
            self._writer.write_table(table, row_group_size=self._options.row_group_rows)
        self._pending, self._pending_rows, self._pending_bytes = [], 0, 0

    def finish(self) -> dict[str, str]:
        """Write the last row group and the footer; NiFi's attributes."""
        self._flush()
        self._writer.close()
        return {"record.count": str(self._count), "mime.type": "application/parquet"}


def write_parquet(
    batches: Iterable[pa.RecordBatch],
    stream: IO[bytes],
    options: ParquetWriterOptions = ParquetWriterOptions(),
    schema: RecordSchema | None = None,
) -> dict[str, str]:
    """Write *batches* to *stream* as one Parquet file; returns NiFi's attributes."""
    return write_all(batches, schema, lambda found: ParquetRecordWriter(stream, found, options))
