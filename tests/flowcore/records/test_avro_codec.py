"""Tests for the AvroReader and AvroRecordSetWriter codecs."""

from __future__ import annotations

import datetime as dt
import io
import json

import fastavro
import pyarrow as pa
import pytest
from hypothesis import assume, given, settings

from flowcore.errors import ConfigurationError, RecordError
from flowcore.records import schema as s
from flowcore.records.avro_codec import AvroReaderOptions, AvroWriterOptions, read_avro, write_avro
from flowcore.records.avro_schema import schema_to_avro
from tests.flowcore.records._strategies import records, schemas


def _batch(schema: s.RecordSchema, rows: list[dict]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema.to_arrow())


@settings(max_examples=30, deadline=None)
@given(schemas(depth=2).flatmap(lambda sc: records(sc).map(lambda r: (sc, r))))
def test_records_round_trip_through_an_avro_data_file(case: tuple[s.RecordSchema, dict]) -> None:
    """Embedded schema: what the writer writes reads back to the same values (NiFi's Avro arrays
    hold no nulls, so records with a null element are left out)."""
    schema, record = case
    assume(not _null_in_array(record))
    out = io.BytesIO()
    write_avro(
        [_batch(schema, [record])], out, AvroWriterOptions(compression_format="DEFLATE"), schema
    )
    back = [
        row for b in read_avro(io.BytesIO(out.getvalue()), schema=schema) for row in b.to_pylist()
    ]
    assert back == _batch(schema, [record]).to_pylist()


def _null_in_array(value: object) -> bool:
    if isinstance(value, dict):
        return any(_null_in_array(v) for v in value.values())
    if isinstance(value, list):
        return any(v is None or _null_in_array(v) for v in value)
    return False


def test_a_null_array_element_is_a_record_error() -> None:
    """NiFi's Avro arrays hold no nulls: such a record is refused naming it."""
    schema = s.RecordSchema.of({"a": s.ArrayType(s.INT)})
    with pytest.raises(RecordError, match="record 1: does not fit the Avro schema"):
        write_avro([_batch(schema, [{"a": [1, None]}])], io.BytesIO(), schema=schema)


def test_bare_datums_carry_the_schema_in_the_attributes() -> None:
    """Any strategy but avro-embedded writes bare datums; avro.schema holds the schema text."""
    schema = s.RecordSchema(
        [s.RecordField("id", s.INT, nullable=False), s.RecordField("big", s.BIGINT)]
    )
    out = io.BytesIO()
    attributes = write_avro(
        [_batch(schema, [{"id": 1, "big": 12345678901234567890}, {"id": 2, "big": None}])],
        out,
        AvroWriterOptions(schema_write_strategy="full-schema-attribute"),
        schema,
    )
    assert not out.getvalue().startswith(b"Obj\x01")
    avro = json.loads(attributes["avro.schema"])
    assert avro == schema_to_avro(schema)
    assert attributes["record.count"] == "2"
    rows = [
        r for b in read_avro(io.BytesIO(out.getvalue()), avro_schema=avro) for r in b.to_pylist()
    ]
    assert rows == [{"id": 1, "big": "12345678901234567890"}, {"id": 2, "big": None}]


def test_files_written_elsewhere_read_with_their_schema_and_logical_types() -> None:
    """A fastavro-written data file: unions, enums and logical types as NiFi types."""
    avro = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}},
            {"name": "either", "type": ["null", "int", "string"]},
            {"name": "key", "type": {"type": "string", "logicalType": "uuid"}},
        ],
    }
    out = io.BytesIO()
    fastavro.writer(
        out,
        avro,
        [
            {"kind": "B", "either": "x", "key": "8bb20bf2-ec41-4b94-80a4-922f4dba009c"},
            {"kind": "A", "either": 3, "key": "8bb20bf2-ec41-4b94-80a4-922f4dba009c"},
        ],
    )
    (batch,) = read_avro(io.BytesIO(out.getvalue()), AvroReaderOptions(batch_size=10))
    nifi = s.RecordSchema.from_arrow(batch.schema)
    assert [f.type for f in nifi] == [
        s.EnumType(["A", "B"]),
        s.ChoiceType([s.INT, s.STRING]),
        s.UUID,
    ]
    assert batch.column("either").to_pylist() == ['"x"', "3"]


def test_bad_avro_and_bad_settings_are_named() -> None:
    """Content without the header and no schema, truncated datums, an unknown codec."""
    with pytest.raises(RecordError, match="not an Avro data file"):
        list(read_avro(io.BytesIO(b"hello")))
    with pytest.raises(RecordError, match="record 1"):
        list(
            read_avro(
                io.BytesIO(b"\x02"),
                avro_schema={
                    "type": "record",
                    "name": "r",
                    "fields": [{"name": "s", "type": "string"}],
                },
            )
        )
    with pytest.raises(ConfigurationError, match="LZO"):
        AvroWriterOptions(compression_format="LZO").codec()


def test_a_cut_or_overlong_avro_content_says_so_naming_the_record() -> None:
    """Bytes after a data file's last block, or a datum cut short, are a RecordError naming the
    record after the last good one and what happened (fastavro's EOFError has no message)."""
    avro = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]}
    data = io.BytesIO()
    fastavro.writer(data, avro, [{"a": 1}])
    for content, reader_schema in ((data.getvalue() + b"\x02", None), (b"\x02\x80", avro)):
        with pytest.raises(RecordError, match=r"^record 2: not valid Avro: the content ends"):
            list(read_avro(io.BytesIO(content), AvroReaderOptions(), None, reader_schema))


def _micros_schema() -> dict:
    return {
        "type": "record",
        "name": "r",
        "fields": [{"name": "t", "type": {"type": "long", "logicalType": "timestamp-micros"}}],
    }


@pytest.mark.parametrize("given", [False, True], ids=["inferred-millis", "given-micros"])
def test_the_writer_floors_microseconds_as_nifi_does(given: bool) -> None:
    """NiFi's AvroTypeUtil writes Timestamp.getTime(): an inferred schema's timestamp-millis
    gets epoch millis, a given timestamp-micros gets millis times 1000 (floored before 1970)."""
    schema = s.RecordSchema.of({"t": s.TIMESTAMP})
    rows = [
        {"t": dt.datetime(2024, 2, 6, 16, 51, 28, 351567)},
        {"t": dt.datetime(1969, 12, 31, 23, 59, 59, 998500)},
    ]
    out = io.BytesIO()
    write_avro(
        [_batch(schema, rows)], out, schema=schema, avro_schema=_micros_schema() if given else None
    )
    out.seek(0)
    raw = [r["t"] for r in fastavro.reader(out, return_named_type=False)]
    whole = [
        dt.datetime(2024, 2, 6, 16, 51, 28, 351000, dt.UTC),
        dt.datetime(1969, 12, 31, 23, 59, 59, 998000, dt.UTC),
    ]
    assert raw == whole
    written = json.loads(fastavro.reader(io.BytesIO(out.getvalue())).metadata["avro.schema"])
    logical = written["fields"][0]["type"]
    logical = logical if isinstance(logical, dict) else next(b for b in logical if b != "null")
    assert logical["logicalType"] == ("timestamp-micros" if given else "timestamp-millis")


def test_the_reader_cuts_timestamp_micros_as_nifi_does() -> None:
    """NiFi's AvroTypeUtil.normalizeValue reads a timestamp-micros long as MICROSECONDS.toMillis
    (toward zero): an Avro file's microseconds do not reach the record (a SSSSSS writer would
    print .351000)."""
    out = io.BytesIO()
    fastavro.writer(
        out, fastavro.parse_schema(_micros_schema()), [{"t": 1707238288351567}, {"t": -1500}]
    )
    batches = list(read_avro(io.BytesIO(out.getvalue())))
    assert batches[0].schema.field("t").type == pa.timestamp("us")
    assert [r["t"] for b in batches for r in b.to_pylist()] == [
        dt.datetime(2024, 2, 6, 16, 51, 28, 351000),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
    ]
