"""Tests for ParquetReader and ParquetRecordSetWriter."""

from __future__ import annotations

import io

import pyarrow.parquet as pq

from flowcore.controller_service import ServiceContext
from processors.record_services import JsonTreeReader, ParquetReader, ParquetRecordSetWriter


class _Forward(io.RawIOBase):
    """A stream that cannot seek, as a session's content stream."""

    def __init__(self, data: bytes) -> None:
        self._inner = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, buffer) -> int:
        data = self._inner.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def test_write_then_read_from_a_stream_that_cannot_seek() -> None:
    """The writer makes one Parquet file pyarrow reads; the reader copies to seek its footer."""
    json_reader = JsonTreeReader("j").enable(ServiceContext(JsonTreeReader("j")))
    (batch,) = json_reader.create_reader({}, io.BytesIO(b'[{"id":1,"s":"a"},{"id":2,"s":null}]'))
    definition = ParquetRecordSetWriter("w", compression_type="SNAPPY")
    out = io.BytesIO()
    writer = definition.enable(ServiceContext(definition)).create_writer(batch.schema, {}, out)
    writer.write(batch)
    assert writer.finish()["mime.type"] == "application/parquet"
    assert pq.read_table(io.BytesIO(out.getvalue())).column("id").to_pylist() == [1, 2]
    reader = ParquetReader("r").enable(ServiceContext(ParquetReader("r")))
    (back,) = reader.create_reader({}, _Forward(out.getvalue()))
    assert back.column("s").to_pylist() == ["a", None]
