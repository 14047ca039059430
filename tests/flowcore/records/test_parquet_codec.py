"""Tests for the ParquetReader and ParquetRecordSetWriter codecs."""

from __future__ import annotations

import datetime as dt
import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings

from flowcore.errors import ConfigurationError, RecordError
from flowcore.records import schema as s
from flowcore.records.parquet_codec import (
    ParquetReaderOptions,
    ParquetRecordWriter,
    ParquetWriterOptions,
    read_parquet,
    write_parquet,
)
from tests.flowcore.records._strategies import records, schemas


@settings(max_examples=25, deadline=None)
@given(schemas(depth=2).flatmap(lambda sc: records(sc).map(lambda r: (sc, r))))
def test_records_and_nifi_types_round_trip_through_parquet(
    case: tuple[s.RecordSchema, dict],
) -> None:
    """Values and the NiFi schema (metadata) come back from a Parquet file."""
    schema, record = case
    batch = pa.RecordBatch.from_pylist([record], schema.to_arrow())
    out = io.BytesIO()
    write_parquet([batch], out, ParquetWriterOptions(compression_type="SNAPPY"), schema)
    out.seek(0)
    (back,) = read_parquet(out)
    assert back.to_pylist() == batch.to_pylist()
    assert s.RecordSchema.from_arrow(back.schema) == schema


def test_metadata_only_types_survive_and_batches_are_bounded() -> None:
    """CHOICE/UUID keep their NiFi type through the file; batch_size bounds each batch."""
    schema = s.RecordSchema.of({"c": s.ChoiceType([s.INT, s.STRING]), "u": s.UUID})
    rows = [{"c": str(i), "u": "x"} for i in range(10)]
    out = io.BytesIO()
    attributes = write_parquet([pa.RecordBatch.from_pylist(rows, schema.to_arrow())], out)
    assert attributes == {"record.count": "10", "mime.type": "application/parquet"}
    out.seek(0)
    batches = list(read_parquet(out, ParquetReaderOptions(batch_size=4)))
    assert [b.num_rows for b in batches] == [4, 4, 2]
    assert s.RecordSchema.from_arrow(batches[0].schema) == schema
    out.seek(0)
    assert pq.read_table(out).num_rows == 10  # any Parquet reader (Spark, DuckDB) reads it


def test_a_given_schema_casts_and_fills_missing_columns() -> None:
    """Under a schema: columns by name, cast; absent ones null; a bad cast names the field."""
    table = pa.table({"a": ["1", "2"], "b": ["x", "y"]})
    out = io.BytesIO()
    pq.write_table(table, out)
    out.seek(0)
    schema = s.RecordSchema.of({"a": s.LONG, "z": s.STRING})
    (batch,) = read_parquet(out, schema=schema)
    assert batch.to_pylist() == [{"a": 1, "z": None}, {"a": 2, "z": None}]
    out.seek(0)
    with pytest.raises(RecordError, match="field 'b'"):
        list(read_parquet(out, schema=s.RecordSchema.of({"b": s.INT})))


def test_a_given_schema_reads_a_number_for_a_timestamp_as_epoch_millis() -> None:
    """A long column read under a schema's TIMESTAMP is epoch millis, as NiFi reads a Long."""
    out = io.BytesIO()
    pq.write_table(pa.table({"ts": pa.array([1700000000123], pa.int64())}), out)
    out.seek(0)
    (batch,) = read_parquet(out, schema=s.RecordSchema.of({"ts": s.TIMESTAMP}))
    assert batch.to_pylist() == [{"ts": dt.datetime(2023, 11, 14, 22, 13, 20, 123000)}]


def test_bad_parquet_is_named() -> None:
    """Content that is not Parquet, and an unknown compression."""
    with pytest.raises(RecordError, match="not a Parquet file"):
        read_parquet(io.BytesIO(b"not parquet at all"))
    with pytest.raises(ConfigurationError, match="Compression Type 'LZO'"):
        ParquetWriterOptions(compression_type="LZO").compression()


def test_small_batches_are_gathered_into_row_groups() -> None:
    """Many small batches make row groups of row_group_rows, not one row group each."""
    schema = s.RecordSchema.of({"a": s.INT})
    batches = [pa.RecordBatch.from_pylist([{"a": i}] * 10, schema.to_arrow()) for i in range(10)]
    out = io.BytesIO()
    write_parquet(batches, out, ParquetWriterOptions(row_group_rows=40), schema)
    out.seek(0)
    metadata = pq.ParquetFile(out).metadata
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)] == [40, 40, 20]


def test_microsecond_timestamps_are_written_to_the_millisecond_as_nifi_does() -> None:
    """A timestamp[us] column (a PostgreSQL timestamp(6)) is truncated to NiFi's millis; a
    value that would not fit its column still fails."""
    import datetime as dt

    moment = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
    batch = pa.record_batch([pa.array([moment], pa.timestamp("us"))], names=["t"])
    out = io.BytesIO()
    writer = ParquetRecordWriter(out, s.RecordSchema.from_arrow(batch.schema))
    writer.write(batch)
    writer.finish()
    rows = pq.read_table(io.BytesIO(out.getvalue())).to_pylist()
    assert rows == [{"t": moment.replace(microsecond=123000)}]
    narrow = s.RecordSchema.from_arrow(pa.schema([("n", pa.int32())]))
    with pytest.raises(pa.ArrowInvalid):
        ParquetRecordWriter(io.BytesIO(), narrow).write(
            pa.record_batch([pa.array([2**40], pa.int64())], names=["n"])
        )


def _parquet(table: pa.Table) -> io.BytesIO:
    """*table* as a Parquet file written by pyarrow (not by our writer), rewound."""
    out = io.BytesIO()
    pq.write_table(table, out)
    out.seek(0)
    return out


def test_read_parquet_with_temporal_logical_types() -> None:
    """TestParquetReader.testReadParquetWithTemporalLogicalTypes: date, time-millis/micros and
    timestamp-millis/micros (and a nullable one) read as NiFi's DATE, TIME and TIMESTAMP."""
    n = 5
    day = dt.date(2024, 1, 15)
    moment = dt.datetime(2024, 1, 15, 10, 30, 45, 123000)
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int32()),
            "date_field": pa.array([day] * n, pa.date32()),
            "time_millis_field": pa.array([dt.time(10, 30, 45, 123000)] * n, pa.time32("ms")),
            "time_micros_field": pa.array([dt.time(10, 30, 45, 123456)] * n, pa.time64("us")),
            "timestamp_millis_field": pa.array([moment] * n, pa.timestamp("ms", "UTC")),
            "timestamp_micros_field": pa.array([moment] * n, pa.timestamp("us", "UTC")),
            "nullable_timestamp_field": pa.array([moment] * n, pa.timestamp("ms", "UTC")),
        }
    )
    (batch,) = read_parquet(_parquet(table))
    schema = s.RecordSchema.from_arrow(batch.schema)
    assert [f.type for f in schema.fields] == [
        s.INT,
        s.DATE,
        s.TIME,
        s.TIME,
        s.TIMESTAMP,
        s.TIMESTAMP,
        s.TIMESTAMP,
    ]
    rows = batch.to_pylist()
    assert [r["id"] for r in rows] == list(range(n))
    assert all(None not in r.values() for r in rows)
    assert rows[0]["date_field"] == day


def test_read_users() -> None:
    """TestParquetReader.testReadUsers: ten users (name, favorite number, favorite color, a
    null among them) read back in order."""
    users = [
        {"name": f"Bob{i}", "favorite_number": i, "favorite_color": None if i % 3 else "blue"}
        for i in range(10)
    ]
    table = pa.Table.from_pylist(
        users,
        pa.schema(
            [
                ("name", pa.string()),
                ("favorite_number", pa.int32()),
                ("favorite_color", pa.string()),
            ]
        ),
    )
    rows = [r for b in read_parquet(_parquet(table)) for r in b.to_pylist()]
    assert rows == users


def test_a_list_column_reads_as_an_array_of_its_elements() -> None:
    """TestParquetReader.testReaderWithAddListElementRecordsDisabled: a Parquet LIST reads as
    [blue, red, yellow] (NiFi's default wraps each in an {element} record only when asked)."""
    table = pa.Table.from_pylist(
        [{"name": "Bob", "favorite_number": 1, "favorite_colors": ["blue", "red", "yellow"]}]
    )
    (row,) = [r for b in read_parquet(_parquet(table)) for r in b.to_pylist()]
    assert row == {
        "name": "Bob",
        "favorite_number": 1,
        "favorite_colors": ["blue", "red", "yellow"],
    }


def test_a_timestamp_field_is_a_millisecond_column_floored_as_nifi_writes_it() -> None:
    """NiFi's Parquet writer goes through Avro's timestamp-millis: the record's microseconds
    (timestamp[us]) become a millisecond column, floored (1.5 ms before 1970 is -2 ms)."""
    import datetime as dt

    schema = s.RecordSchema.of({"t": s.TIMESTAMP})
    rows = [
        {"t": dt.datetime(2024, 2, 6, 16, 51, 28, 351567)},
        {"t": dt.datetime(1969, 12, 31, 23, 59, 59, 998500)},
    ]
    out = io.BytesIO()
    writer = ParquetRecordWriter(out, schema)
    writer.write(pa.RecordBatch.from_pylist(rows, schema.to_arrow()))
    writer.finish()
    table = pq.read_table(io.BytesIO(out.getvalue()))
    assert table.schema.field("t").type == pa.timestamp("ms")
    assert table.column("t").cast(pa.int64()).to_pylist() == [1707238288351, -2]
