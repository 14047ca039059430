"""Tests for the record viewer's bounds applied: records checked before decoding, strings cut."""

from __future__ import annotations

import io

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flowcore.errors import RecordError
from flowcore.ui.decoded_size import TooBigToShowError
from flowcore.ui.record_bounds import FirstRecords, cut_strings, first_records, one_line

SCHEMA = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
ROOMY = {"max_decoded": 1 << 20, "max_values": 10_000}


def _avro(count: int, **options: object) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, SCHEMA, [{"s": f"row {n}"} for n in range(count)], **options)
    return out.getvalue()


def _parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, row_group_size=2)
    return out.getvalue()


def test_avro_past_the_count_shows_the_count_and_no_total() -> None:
    """Avro is read one record past the count: more records leave the total unknown."""
    more = first_records(_avro(5), "avro", whole=True, schema=None, count=3, **ROOMY)
    assert (more.batch.num_rows, more.total, more.damage) == (4, None, None)
    exact = first_records(_avro(3), "avro", whole=True, schema=None, count=3, **ROOMY)
    assert (exact.batch.num_rows, exact.total) == (3, 3)


def test_parquet_reads_the_count_and_takes_its_total_from_the_footer() -> None:
    """Parquet gives at most the count, and the total the footer states."""
    data = _parquet(pa.table({"n": list(range(7))}))
    first = first_records(data, "parquet", whole=True, schema=None, count=3, **ROOMY)
    assert (first.batch.num_rows, first.total, first.damage) == (3, 7, None)


def test_the_bounds_given_are_the_ones_checked() -> None:
    """The decoded-bytes and values bounds come from the caller and refuse before decoding."""
    data = _avro(50)
    with pytest.raises(TooBigToShowError, match="decode to more than 100 bytes"):
        first_records(
            data, "avro", whole=True, schema=None, count=50, max_decoded=100, max_values=10**6
        )
    with pytest.raises(TooBigToShowError, match="hold more than 10 values"):
        first_records(
            data, "avro", whole=True, schema=None, count=50, max_decoded=1 << 20, max_values=10
        )


def test_avro_breaking_off_shows_what_precedes_it_and_says_where() -> None:
    """A damaged later block: the records before it are shown, and one line says where it broke."""
    data = bytearray(_avro(4, sync_interval=1))
    data[-20:] = b"\xff" * 20  # the last block's bytes
    first = first_records(bytes(data), "avro", whole=True, schema=None, count=10, **ROOMY)
    assert first.batch is not None
    assert first.total is None
    assert first.damage.startswith(f"the Avro content breaks off after {first.batch.num_rows} ")
    assert "\n" not in first.damage
    with pytest.raises(RecordError):
        first_records(b"garbage", "avro", whole=True, schema=None, count=10, **ROOMY)


def test_a_cut_window_of_avro_is_no_damage() -> None:
    """The viewer's window ending inside a block shows what precedes it without a message."""
    data = _avro(4, sync_interval=1)
    first = first_records(data[:-17], "avro", whole=False, schema=None, count=10, **ROOMY)
    assert first == FirstRecords(first.batch)
    assert first.batch is not None
    assert first.batch.num_rows == 3  # each record is a block of its own: the last one is cut


def test_strings_are_cut_one_past_the_cell_however_nested() -> None:
    """Strings and binaries in lists, structs and maps are cut to cell + 1; short ones stay."""
    long = "y" * 50
    batch = pa.RecordBatch.from_pydict(
        {
            "s": pa.array([long, None, "short"]),
            "l": pa.array([[long], None, []], pa.list_(pa.string())),
            "t": pa.array([{"x": long.encode()}, None, {"x": b"z"}]),
            "m": pa.array([[(long, "v")], None, []], pa.map_(pa.string(), pa.string())),
        }
    )
    cut, was_cut = cut_strings(batch, 10)
    assert was_cut
    assert cut.schema == batch.schema
    assert cut.to_pylist() == [
        {"s": "y" * 11, "l": ["y" * 11], "t": {"x": b"y" * 11}, "m": [("y" * 11, "v")]},
        {"s": None, "l": None, "t": None, "m": None},
        {"s": "short", "l": [], "t": {"x": b"z"}, "m": []},
    ]
    same, was_cut = cut_strings(batch, 50)
    assert not was_cut
    assert same.equals(batch)


def test_one_line_joins_the_message_or_names_the_type() -> None:
    """A message's lines and runs of spaces become one line; an empty message gives the type."""
    assert one_line(ValueError("bad\n  block   at 3")) == "bad block at 3"
    assert one_line(KeyError()) == "KeyError"
