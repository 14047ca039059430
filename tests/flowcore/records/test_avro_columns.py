"""Tests for the column-at-a-time Avro encoding of flat record batches."""

from __future__ import annotations

import io
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.records._avro_columns import block, column_plan, encode_rows
from flowcore.records.avro_codec import AvroRecordWriter, AvroWriterOptions, write_avro
from flowcore.records.avro_schema import schema_to_avro
from flowcore.records.schema import RecordSchema

#: (Arrow type, Avro primitive, values of it) for every kind the encoding takes.
_KINDS = [
    (pa.int8(), "int", st.integers(-(2**7), 2**7 - 1)),
    (pa.int32(), "int", st.integers(-(2**31), 2**31 - 1)),
    (pa.int64(), "long", st.integers(-(2**63), 2**63 - 1)),
    (pa.int16(), "long", st.integers(-(2**15), 2**15 - 1)),
    (pa.float64(), "double", st.floats(allow_nan=False)),
    (pa.float32(), "float", st.floats(width=32, allow_nan=False)),
    (pa.float32(), "double", st.floats(width=32)),
    (pa.bool_(), "boolean", st.booleans()),
    (pa.string(), "string", st.text()),
    (pa.large_string(), "string", st.text(max_size=5)),
]


@st.composite
def _flat_batches(draw: st.DrawFn) -> tuple[dict[str, Any], pa.RecordBatch]:
    kinds = draw(st.lists(st.sampled_from(range(len(_KINDS))), min_size=1, max_size=6))
    rows = draw(st.integers(0, 40))
    fields, columns = [], []
    for index, kind in enumerate(kinds):
        arrow_type, avro_type, values = _KINDS[kind]
        nullable = draw(st.booleans())
        cells = draw(st.lists(st.none() | values if nullable else values, min_size=rows))
        columns.append(pa.array(cells[:rows], arrow_type))
        null_first = draw(st.booleans())
        union = ["null", avro_type] if null_first else [avro_type, "null"]
        fields.append({"name": f"f{index}", "type": union if nullable else avro_type})
    batch = pa.record_batch(columns, names=[f["name"] for f in fields])
    return {"type": "record", "name": "r", "fields": fields}, batch


@settings(max_examples=80, deadline=None)
@given(_flat_batches())
def test_rows_encode_as_fastavro_writes_them(case: tuple[dict[str, Any], pa.RecordBatch]) -> None:
    """Each row's bytes are fastavro's for that record, and the lengths add up to them."""
    avro, batch = case
    plan = column_plan(avro, batch.schema)
    assert plan is not None
    encoded = encode_rows(batch, plan)
    assert encoded is not None
    data, lengths = encoded
    parsed = fastavro.parse_schema(avro)
    expected = []
    for row in batch.to_pylist():
        one = io.BytesIO()
        fastavro.schemaless_writer(one, parsed, row)
        expected.append(one.getvalue())
    assert data.tobytes() == b"".join(expected)
    assert lengths.tolist() == [len(e) for e in expected]


def test_a_slice_of_a_batch_encodes_its_own_rows() -> None:
    """A batch that is a slice (offsets into shared buffers) encodes only its rows."""
    avro = {"type": "record", "name": "r", "fields": [{"name": "s", "type": ["string", "null"]}]}
    batch = pa.record_batch([pa.array(["a", None, "ccc", "dd"])], names=["s"]).slice(1, 2)
    data, lengths = encode_rows(batch, column_plan(avro, batch.schema))  # type: ignore[arg-type,misc]
    parsed = fastavro.parse_schema(avro)
    expected = io.BytesIO()
    for row in batch.to_pylist():
        fastavro.schemaless_writer(expected, parsed, row)
    assert data.tobytes() == expected.getvalue()
    assert lengths.tolist() == [1, 5]


def test_what_is_not_flat_or_not_taken_as_it_is_has_no_plan() -> None:
    """Nested records, logical types, and a long column under an int are left to fastavro."""
    batch = pa.record_batch([pa.array([1], pa.int64())], names=["n"])
    for avro_type in ("int", {"type": "long", "logicalType": "timestamp-millis"}, ["null", "int"]):
        avro = {"type": "record", "name": "r", "fields": [{"name": "n", "type": avro_type}]}
        assert column_plan(avro, batch.schema) is None
    missing = {"type": "record", "name": "r", "fields": [{"name": "other", "type": "long"}]}
    assert column_plan(missing, batch.schema) is None


def test_a_null_the_avro_type_does_not_take_is_left_to_fastavro() -> None:
    """A null under a non-union type: no encoding, so fastavro raises its error."""
    avro = {"type": "record", "name": "r", "fields": [{"name": "n", "type": "long"}]}
    batch = pa.record_batch([pa.array([1, None], pa.int64())], names=["n"])
    assert encode_rows(batch, column_plan(avro, batch.schema)) is None  # type: ignore[arg-type]


def test_blocks_end_at_the_row_that_reaches_the_interval() -> None:
    """Blocks are cut as fastavro cuts them: a row that reaches the interval ends its block."""
    lengths = np.array([4, 4, 4, 4, 4], np.int64)
    assert block(lengths, 8) == [(0, 2, 8), (2, 4, 8), (4, 5, 4)]
    assert block(lengths, 100) == [(0, 5, 20)]
    assert block(np.array([], np.int64), 8) == []


@settings(max_examples=40, deadline=None)
@given(
    _flat_batches(), st.sampled_from(["NONE", "DEFLATE", "SNAPPY", "ZSTANDARD"]), st.integers(1, 64)
)
def test_data_files_read_back_to_the_batches_records(
    case: tuple[dict[str, Any], pa.RecordBatch], compression: str, interval: int
) -> None:
    """The writer's data file holds every record once, twice written, under each codec."""
    avro, batch = case
    out = io.BytesIO()
    options = AvroWriterOptions(compression_format=compression, sync_interval=interval)
    writer = AvroRecordWriter(out, RecordSchema.from_arrow(batch.schema), options, avro)
    writer.write(batch)
    writer.write(batch)
    writer.finish()
    back = list(fastavro.reader(io.BytesIO(out.getvalue())))
    assert repr(back) == repr(batch.to_pylist() * 2)  # repr: a NaN is equal to itself there
    assert writer.record_count == 2 * batch.num_rows


def test_a_flowcore_schema_writes_the_same_records_as_fastavro() -> None:
    """write_avro under a NiFi schema: the same bytes as fastavro's writer for bare datums."""
    batch = pa.record_batch(
        [pa.array([1, None, -5], pa.int64()), pa.array(["x", "ü", None]), pa.array([0.5, None, 2])],
        names=["id", "name", "amount"],
    )
    avro = schema_to_avro(RecordSchema.from_arrow(batch.schema))
    out = io.BytesIO()
    attributes = write_avro([batch], out, AvroWriterOptions(schema_write_strategy="no-schema"))
    expected = io.BytesIO()
    parsed = fastavro.parse_schema(avro)
    for row in batch.to_pylist():
        fastavro.schemaless_writer(expected, parsed, row)
    assert out.getvalue() == expected.getvalue()
    assert attributes["record.count"] == "3"
