"""Tests for the column-at-a-time Avro encoding of flat record batches."""

from __future__ import annotations

import io
import itertools
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.records import schema as s
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


_CODECS = ["NONE", "DEFLATE", "SNAPPY", "ZSTANDARD"]


def _ours_and_fastavros(
    batches: list[pa.RecordBatch], avro: dict[str, Any], compression: str, interval: int
) -> tuple[bytes, bytes]:
    """The data file our writer makes of *batches*, and fastavro's of their records."""
    out = io.BytesIO()
    options = AvroWriterOptions(compression_format=compression, sync_interval=interval)
    writer = AvroRecordWriter(out, RecordSchema.from_arrow(batches[0].schema), options, avro)
    for batch in batches:
        writer.write(batch)
    writer.finish()
    expected = io.BytesIO()
    theirs = fastavro.write.Writer(
        expected,
        fastavro.parse_schema(avro),
        codec=options.codec(),
        sync_interval=interval,
        sync_marker=writer._writer.sync_marker,  # the one random part of the file
    )
    for batch in batches:
        for row in batch.to_pylist():
            theirs.write(row)
    theirs.flush()
    return out.getvalue(), expected.getvalue()


@settings(max_examples=60, deadline=None)
@given(
    _flat_batches(),
    st.sampled_from(_CODECS),
    st.integers(1, 200),
    st.lists(st.integers(0, 40), max_size=8),
)
def test_a_batch_split_anyhow_writes_fastavros_bytes(
    case: tuple[dict[str, Any], pa.RecordBatch], compression: str, interval: int, cuts: list[int]
) -> None:
    """However the records come in batches, the file's blocks are fastavro's, byte for byte."""
    avro, batch = case
    bounds = sorted({0, batch.num_rows, *(c for c in cuts if c < batch.num_rows)})
    batches = [batch.slice(a, b - a) for a, b in itertools.pairwise(bounds)] or [batch]
    ours, theirs = _ours_and_fastavros(batches, avro, compression, interval)
    assert ours == theirs


def test_one_row_batches_share_blocks_under_every_codec() -> None:
    """A thousand one-row batches (a message each) make fastavro's few blocks, not a thousand."""
    one = pa.record_batch([pa.array([7], pa.int64()), pa.array(["hello world"])], names=["i", "s"])
    avro = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "i", "type": "long"}, {"name": "s", "type": "string"}],
    }
    for compression in _CODECS:
        ours, theirs = _ours_and_fastavros([one] * 1000, avro, compression, 16000)
        assert ours == theirs
        assert sum(1 for _ in fastavro.block_reader(io.BytesIO(ours))) == 1


def test_rows_held_in_a_block_go_before_a_batch_fastavro_writes() -> None:
    """A batch the columns cannot take ends the open block first: the records keep their order."""
    avro = {"type": "record", "name": "r", "fields": [{"name": "n", "type": ["null", "long"]}]}
    flat = pa.record_batch([pa.array([1, 2], pa.int64())], names=["n"])
    other = pa.record_batch([pa.array([3], pa.int8())], names=["n"])  # int8: not a long's column
    out = io.BytesIO()
    writer = AvroRecordWriter(out, RecordSchema.from_arrow(flat.schema), AvroWriterOptions(), avro)
    for batch in (flat, other, flat):
        writer.write(batch)
    writer.finish()
    back = [r["n"] for r in fastavro.reader(io.BytesIO(out.getvalue()))]
    assert back == [1, 2, 3, 1, 2]


def test_a_choice_column_goes_by_its_values_not_the_writer_schema() -> None:
    """A CHOICE column (JSON text in Arrow) under a string schema writes its values, not JSON."""
    choice = s.ChoiceType((s.type_from_json("int"), s.type_from_json("string")))
    field = RecordSchema([s.RecordField("c", choice, True)]).to_arrow().field(0)
    batch = pa.RecordBatch.from_arrays([pa.array(['"x"', '"y"'])], schema=pa.schema([field]))
    avro = {"type": "record", "name": "r", "fields": [{"name": "c", "type": ["null", "string"]}]}
    assert column_plan(avro, batch.schema) is None
    string = RecordSchema([s.RecordField("c", s.type_from_json("string"), True)])
    out = io.BytesIO()
    writer = AvroRecordWriter(out, string, AvroWriterOptions(), avro)
    writer.write(batch)
    writer.finish()
    assert list(fastavro.reader(io.BytesIO(out.getvalue()))) == [{"c": "x"}, {"c": "y"}]
