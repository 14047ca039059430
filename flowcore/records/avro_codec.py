r"""NiFi's AvroReader and AvroRecordSetWriter as codecs, on fastavro.

Reading: an Avro data file (``Obj\x01`` header) carries its schema ("Use Embedded Avro Schema");
with a schema given, a data file is read under it (Avro schema resolution) and content without
the header is read as bare datums one after another (NiFi's ``AvroReaderWithExplicitSchema``).
fastavro yields one record at a time, so memory stays bounded by the batch.

Writing: "Schema Write Strategy" ``avro-embedded`` writes a data file with the schema in its header
(NiFi's ``WriteAvroResultWithSchema``); any other strategy writes bare datums
(``WriteAvroResultWithExternalSchema``) and the schema travels elsewhere (the ``avro.schema``
attribute for ``full-schema-attribute``: the attributes returned carry it).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import IO, Any
from uuid import UUID

import attrs
import fastavro
import numpy as np
import pyarrow as pa

from flowcore.errors import ConfigurationError
from flowcore.records._avro_columns import ColumnPlan, block, column_plan, encode_rows
from flowcore.records._batches import Parsed, batches_of, record_error, write_all
from flowcore.records.avro_schema import schema_from_avro, schema_to_avro
from flowcore.records.options import nifi
from flowcore.records.schema import (
    ArrayType,
    ChoiceType,
    DataType,
    MapType,
    RecordSchema,
    RecordType,
    millis_type,
    to_millis,
)
from flowcore.records.values import TemporalFormats, batch_rows

__all__ = ["AvroReaderOptions", "AvroRecordWriter", "AvroWriterOptions", "read_avro", "write_avro"]

_MAGIC = b"Obj\x01"

#: NiFi's "Compression Format" values -> fastavro's codec names.
CODECS = {
    "NONE": "null",
    "DEFLATE": "deflate",
    "SNAPPY": "snappy",
    "BZIP2": "bzip2",
    "XZ": "xz",
    "ZSTANDARD": "zstandard",
    "LZO": None,  # fastavro has no LZO: refused with a message
}


@attrs.frozen
class AvroReaderOptions:
    """AvroReader's settings.

    Attributes:
        batch_size: records per Arrow batch (memory bound; not a NiFi property).
    """

    batch_size: int = 8192


def read_avro(
    stream: IO[bytes],
    options: AvroReaderOptions = AvroReaderOptions(),
    schema: RecordSchema | None = None,
    avro_schema: dict[str, Any] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Record batches of the Avro content of *stream*.

    Args:
        stream: an Avro data file, or bare datums when *avro_schema* is given.
        options: the reader's settings.
        schema: the NiFi schema of the batches (default: the Avro schema's).
        avro_schema: the reader's Avro schema ("Schema Text"); None reads the embedded one.

    Raises:
        RecordError: the content is not Avro of that schema (the records before it first).
    """
    head = stream.read(4)
    if head == _MAGIC:
        reader = fastavro.reader(_Prefixed(head, stream), reader_schema=avro_schema)
        writer_text = reader.metadata.get("avro.schema")
        written = avro_schema or (json.loads(writer_text) if writer_text else None)
        records: Iterator[Any] = iter(reader)
    elif avro_schema is None:
        msg = "the content is not an Avro data file (no 'Obj' header) and no schema was given"
        raise record_error(1, None, None, msg)
    else:
        written = avro_schema
        parsed = fastavro.parse_schema(avro_schema)
        records = _datums(_Prefixed(head, stream), parsed)
    nifi_schema = schema or schema_from_avro(written)
    return batches_of(_numbered(records), nifi_schema, TemporalFormats(), options.batch_size, 1)


def _numbered(records: Iterator[Any]) -> Iterator[Parsed]:
    number = 0
    while True:
        try:
            record = next(records)
        except StopIteration:
            return
        except (ValueError, EOFError, TypeError, KeyError, IndexError) as exc:
            reason = str(exc) or type(exc).__name__
            if isinstance(exc, (EOFError, IndexError)):  # fastavro ran out of bytes mid-value
                reason = (
                    f"the content ends inside a record ({type(exc).__name__}"
                    f"{': ' + str(exc) if str(exc) else ''}): it is cut short, or has bytes "
                    "after its last record or block"
                )
            raise record_error(number + 1, None, None, f"not valid Avro: {reason}") from None
        number += 1
        yield number, None, _plain(record)


def _plain(value: Any) -> Any:
    """Fastavro's values as the readers' plain values (a UUID as its text, tz-aware as UTC).

    A timestamp is cut to the millisecond: NiFi's AvroTypeUtil.normalizeValue reads a
    ``timestamp-micros`` long as ``new Timestamp(MICROSECONDS.toMillis(value))``, so the
    microseconds an Avro file holds do not reach NiFi's records (docs/records.md). ``toMillis``
    divides toward zero: before 1970 the cut is upwards (-1500 us is -1 ms).
    """
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, dt.datetime) and value.microsecond % 1000:
        cut = value.replace(microsecond=value.microsecond - value.microsecond % 1000)
        utc = value if value.tzinfo is None else value.astimezone(dt.UTC).replace(tzinfo=None)
        return cut + _MILLI if utc < _EPOCH else cut
    return value


_EPOCH = dt.datetime(1970, 1, 1)
_MILLI = dt.timedelta(milliseconds=1)


def _datums(stream: IO[bytes], parsed: Any) -> Iterator[Any]:
    while stream.peek_eof() is False:  # type: ignore[attr-defined]
        yield fastavro.schemaless_reader(stream, parsed, None)


class _Prefixed:
    """A stream with bytes already read put back in front (the 4 magic bytes)."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head = head
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size is None or size < 0:
                data, self._head = self._head + self._stream.read(), b""
                return data
            data, self._head = self._head[:size], self._head[size:]
            if len(data) < size:
                data += self._stream.read(size - len(data))
            return data
        return self._stream.read(size)

    def peek_eof(self) -> bool:
        if self._head:
            return False
        byte = self._stream.read(1)
        if not byte:
            return True
        self._head = byte
        return False


# ---------------------------------------------------------------------------------------------
# writing

EMBEDDED = "avro-embedded"


@attrs.frozen
class AvroWriterOptions:
    """AvroRecordSetWriter's properties.

    Attributes:
        schema_write_strategy: "Schema Write Strategy": ``avro-embedded`` (Embed Avro Schema)
            writes a data file; ``no-schema``, ``schema-name``, ``full-schema-attribute``...
            write bare datums.
        compression_format: "Compression Format": NONE, DEFLATE, SNAPPY, BZIP2, XZ, ZSTANDARD
            (LZO is refused: fastavro has none).
        sync_interval: bytes per data file block (fastavro's; NiFi's Avro default is 16000).
    """

    schema_write_strategy: str = nifi("Schema Write Strategy", EMBEDDED)
    compression_format: str = nifi("Compression Format", "NONE")
    sync_interval: int = 16000

    def codec(self) -> str:
        """Fastavro's name of the compression."""
        if self.compression_format not in CODECS:
            msg = f"Compression Format {self.compression_format!r} is not one of {sorted(CODECS)!r}"
            raise ConfigurationError(msg)
        codec = CODECS[self.compression_format]
        if codec is None:
            msg = "Compression Format LZO is not supported here; choose SNAPPY or ZSTANDARD"
            raise ConfigurationError(msg)
        return codec


class AvroRecordWriter:
    """Writes record batches as Avro (a data file, or bare datums); call :meth:`finish` once."""

    def __init__(
        self,
        stream: IO[bytes],
        schema: RecordSchema,
        options: AvroWriterOptions = AvroWriterOptions(),
        avro_schema: dict[str, Any] | None = None,
    ) -> None:
        self._stream = stream
        self._schema = schema
        self._options = options
        self._avro = avro_schema or schema_to_avro(schema)
        self._parsed = fastavro.parse_schema(self._avro)
        self._count = 0
        self._writer: Any = None
        self._adapt = _needs_adapting(schema)
        self._plans: dict[pa.Schema, ColumnPlan | None] = {}
        # column-encoded rows of the open block (under the sync interval): how many, their bytes
        self._pending: list[bytes] = []
        self._pending_rows = 0
        self._pending_size = 0
        if options.schema_write_strategy == EMBEDDED:
            self._writer = fastavro.write.Writer(
                stream, self._parsed, codec=options.codec(), sync_interval=options.sync_interval
            )

    @property
    def record_count(self) -> int:
        """Records written so far."""
        return self._count

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Write every record of *batch*.

        A flat batch (simple fields) is encoded a column at a time
        (:mod:`flowcore.records._avro_columns`), several times faster than fastavro's record
        at a time, and its blocks compressed by fastavro's codec; the rest goes through
        fastavro record by record.
        """
        batch = _millis_timestamps(batch)
        if not self._adapt and self._write_columns(batch):
            return
        self._flush_pending()  # the open block of column-encoded rows goes first
        rows: Iterable[dict[str, Any]] = batch_rows(batch)
        if self._adapt:
            rows = (_to_avro_record(row, self._schema) for row in rows)
        for row in rows:
            try:
                if self._writer is not None:
                    self._writer.write(row)
                else:
                    fastavro.schemaless_writer(self._stream, self._parsed, row)
            except (ValueError, TypeError) as exc:
                raise record_error(
                    self._count + 1, None, None, f"does not fit the Avro schema: {exc}"
                ) from None
            self._count += 1

    def _write_columns(self, batch: pa.RecordBatch | pa.Table) -> bool:
        """Write *batch* encoded column by column; False when it cannot be (nothing written)."""
        if self._writer is not None and not hasattr(self._writer, "block_writer"):
            return False  # a fastavro without it: its writer writes every block
        if batch.schema not in self._plans:
            self._plans[batch.schema] = column_plan(self._avro, batch.schema)
        plan = self._plans[batch.schema]
        if plan is None or batch.num_rows == 0:
            return plan is not None
        if isinstance(batch, pa.Table):
            batch = batch.combine_chunks().to_batches()[0]
        encoded = encode_rows(batch, plan)
        if encoded is None:
            return False
        data, lengths = encoded
        if self._writer is None:
            self._stream.write(data.data)
        else:
            self._write_blocks(data, lengths)
        self._count += batch.num_rows
        return True

    def _write_blocks(self, data: np.ndarray, lengths: np.ndarray) -> None:
        """Add encoded rows to the open block, writing every block that reaches the interval.

        As fastavro's writer, a block ends at the first row that brings it to the sync
        interval, and the rows after it carry over to the next write (a batch of one row
        adds to the open block instead of ending one of its own).
        """
        self._writer.flush()  # the records fastavro holds go first, in their own block
        interval = self._options.sync_interval
        held = self._pending_size
        if held + len(data) < interval:  # the open block takes them all (a message's record)
            self._pending.append(data.tobytes())
            self._pending_rows += len(lengths)
            self._pending_size += len(data)
            return
        # the held rows count as one row of their size (row 0) ahead of the new ones
        at = 0
        for first, end, size in block(np.concatenate(([held], lengths)), interval):
            new = size - held if first == 0 else size
            chunk = data[at : at + new].tobytes()
            at += new
            if size < interval:  # the last, open block: held for the next write
                self._pending.append(chunk)
                self._pending_rows += end - first - (first == 0)
                self._pending_size += len(chunk)
                return
            rows = end - first + (self._pending_rows - 1 if first == 0 else 0)
            parts = self._pending if first == 0 else []
            self._end_block(rows, b"".join([*parts, chunk]))
            self._pending, self._pending_rows, self._pending_size = [], 0, 0

    def _end_block(self, rows: int, data: bytes) -> None:
        """Write one block: its count, its bytes as the codec writes them, the sync marker."""
        if not rows:
            return
        writer = self._writer
        self._stream.write(_long(rows))
        writer.block_writer(self._stream, data, writer.compression_level)
        self._stream.write(writer.sync_marker)

    def _flush_pending(self) -> None:
        """End the open block of column-encoded rows."""
        if self._pending_rows:
            self._end_block(self._pending_rows, b"".join(self._pending))
        self._pending, self._pending_rows, self._pending_size = [], 0, 0

    def finish(self) -> dict[str, str]:
        """Flush the data file; NiFi's attributes (``avro.schema`` unless embedded)."""
        self._flush_pending()
        if self._writer is not None:
            self._writer.flush()
        attributes = {"record.count": str(self._count), "mime.type": "application/avro-binary"}
        if self._options.schema_write_strategy != EMBEDDED:
            attributes["avro.schema"] = json.dumps(self._avro, separators=(",", ":"))
        return attributes


def write_avro(
    batches: Iterable[pa.RecordBatch],
    stream: IO[bytes],
    options: AvroWriterOptions = AvroWriterOptions(),
    schema: RecordSchema | None = None,
    avro_schema: dict[str, Any] | None = None,
) -> dict[str, str]:
    """Write *batches* to *stream* as Avro; returns NiFi's attributes."""
    return write_all(
        batches, schema, lambda found: AvroRecordWriter(stream, found, options, avro_schema)
    )


def _millis_timestamps(batch: pa.RecordBatch | pa.Table) -> pa.RecordBatch | pa.Table:
    """*batch* with its timestamps floored to the millisecond, as NiFi writes them.

    NiFi's AvroTypeUtil writes ``Timestamp.getTime()``: epoch millis for ``timestamp-millis``
    and millis times 1000 for ``timestamp-micros``, so a record's microseconds are not written
    by either (docs/records.md).
    """
    if not any(millis_type(t) != t for t in batch.schema.types):
        return batch
    columns = [to_millis(column) for column in batch.columns]
    fields = [f.with_type(c.type) for f, c in zip(batch.schema, columns, strict=True)]
    return type(batch).from_arrays(columns, schema=pa.schema(fields, batch.schema.metadata))


def _long(value: int) -> bytes:
    """Avro's encoding of a non-negative long (a block's count or size)."""
    value <<= 1  # zigzag
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _needs_adapting(schema: RecordSchema) -> bool:
    return any(_adapt_type(f.type) for f in schema.fields)


def _adapt_type(dtype: DataType | None) -> bool:
    if dtype is None:
        return False
    if dtype.name == "bigint":
        return True
    if isinstance(dtype, ChoiceType):
        return True
    if isinstance(dtype, ArrayType):
        return _adapt_type(dtype.element)
    if isinstance(dtype, MapType):
        return _adapt_type(dtype.value)
    if isinstance(dtype, RecordType):
        return _needs_adapting(dtype.schema)
    return False


def _to_avro_record(row: dict[str, Any], schema: RecordSchema) -> dict[str, Any]:
    return {f.name: _to_avro(row.get(f.name), f.type) for f in schema.fields}


def _to_avro(value: Any, dtype: DataType | None) -> Any:
    """A value as the Avro type NiFi gives its NiFi type (BIGINT as a string)."""
    if value is None or dtype is None:
        return value
    if dtype.name == "bigint":
        return str(int(value)) if isinstance(value, (Decimal, int)) else str(value)
    if isinstance(dtype, ArrayType) and isinstance(value, list):
        return [_to_avro(v, dtype.element) for v in value]
    if isinstance(dtype, MapType) and isinstance(value, dict):
        return {k: _to_avro(v, dtype.value) for k, v in value.items()}
    if isinstance(dtype, RecordType) and isinstance(value, dict):
        return _to_avro_record(value, dtype.schema)
    return value
