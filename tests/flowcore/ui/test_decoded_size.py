"""How big Avro blocks and Parquet row groups decode, told before they are decoded."""

from __future__ import annotations

import bz2
import io
import lzma
import zlib
from typing import Any

import fastavro
import lz4.block
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cramjam import snappy
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.ui.decoded_size import (
    TooBigToShowError,
    check_avro,
    check_avro_values,
    check_parquet,
    check_parquet_values,
    decoded_size,
)
from tests.flowcore.ui.avro_bytes import avro_long, null_bomb

try:
    from compression import zstd
except ImportError:  # before Python 3.14: fastavro's own fallback
    from backports import zstd


def _deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


COMPRESS = {
    "null": bytes,
    "deflate": _deflate,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "snappy": lambda data: bytes(snappy.compress_raw(data)) + b"\0\0\0\0",  # and its CRC
    "zstandard": zstd.compress,
    "lz4": lz4.block.compress,
}
SCHEMA = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}


@settings(max_examples=60, deadline=None)
@given(
    codec=st.sampled_from(sorted(COMPRESS)),
    payload=st.one_of(st.binary(max_size=3_000), st.integers(0, 300_000).map(lambda n: b"0" * n)),
    room=st.integers(0, 400_000),
)
def test_a_block_s_size_is_exact_within_room_and_past_it_beyond(
    codec: str, payload: bytes, room: int
) -> None:
    """Within *room* the decoded size is exact; past it the answer is past *room* too."""
    size = decoded_size(codec, COMPRESS[codec](payload), room)
    if len(payload) <= room:
        assert size == len(payload)
    else:
        assert size > room


def test_an_unknown_codec_counts_as_past_the_bound() -> None:
    """A codec the guard cannot measure is never decoded on trust."""
    assert decoded_size("brotli", b"anything", 10**9) > 10**9


def test_avro_blocks_are_summed_up_to_the_records_asked_for() -> None:
    """Blocks past the first *count* records are not counted; a cut-off block is left alone."""
    out = io.BytesIO()
    records = [{"s": f"{n % 10}" * 100_000} for n in range(6)]
    fastavro.writer(out, SCHEMA, records, codec="deflate", sync_interval=1)
    data = out.getvalue()
    check_avro(data, 2, 250_000)  # two blocks of 100 KB: within
    with pytest.raises(TooBigToShowError, match="decode to more than 250,000 bytes"):
        check_avro(data, 3, 250_000)
    check_avro(data[: len(data) // 2], 6, 250_000)  # the window ends inside the second block
    check_avro(b"\x02\x04", 6, 1)  # bare datums: not compressed, the window bounds them


def test_parquet_row_groups_are_summed_up_to_the_records_asked_for() -> None:
    """The footer's uncompressed sizes of the row groups holding the first records decide."""
    out = io.BytesIO()
    pq.write_table(pa.table({"s": ["0" * 10_000] * 4}), out, row_group_size=1)
    metadata = pq.read_metadata(pa.BufferReader(out.getvalue()))
    check_parquet(metadata, 2, 25_000)
    with pytest.raises(TooBigToShowError, match="viewer decodes up to 25,000"):
        check_parquet(metadata, 3, 25_000)


@pytest.mark.parametrize("codec", ["deflate", "bzip2", "xz"])
def test_blocks_past_one_step_are_counted_to_their_end(codec: str) -> None:
    """A block decoding to several megabytes (several steps) is counted exactly, and ends."""
    payload = b"0" * (4 << 20) + b"1"
    assert decoded_size(codec, COMPRESS[codec](payload), 64 << 20) == len(payload)
    assert decoded_size(codec, COMPRESS[codec](payload), 2 << 20) > 2 << 20


# --- values ------------------------------------------------------------------------------------

NODE = {
    "type": "record",
    "name": "node",
    "fields": [{"name": "v", "type": "int"}, {"name": "next", "type": ["null", "node"]}],
}
EVERY_TYPE = {
    "type": "record",
    "name": "every",
    "namespace": "t",
    "fields": [
        {"name": "n", "type": "null"},
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "raw", "type": "bytes"},
        {"name": "s", "type": "string"},
        {"name": "x", "type": {"type": "fixed", "name": "three", "size": 3}},
        {"name": "e", "type": {"type": "enum", "name": "abc", "symbols": ["a", "b", "c"]}},
        {"name": "nulls", "type": {"type": "array", "items": "null"}},
        {
            "name": "empties",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "pair",
                    "fields": [{"name": "p", "type": "null"}, {"name": "q", "type": "three"}],
                },
            },
        },
        {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "long"}}},
        {"name": "u", "type": ["null", "string", {"type": "array", "items": "pair"}]},
        {"name": "list", "type": ["null", NODE]},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}
_pairs = st.lists(st.fixed_dictionaries({"p": st.none(), "q": st.binary(min_size=3, max_size=3)}))


def _linked(values: list[int]) -> dict[str, Any] | None:
    head = None
    for value in reversed(values):
        head = {"v": value, "next": head}
    return head


_every = st.fixed_dictionaries(
    {
        "n": st.none(),
        "b": st.booleans(),
        "i": st.integers(-(2**31), 2**31 - 1),
        "f": st.floats(width=32, allow_nan=False),
        "d": st.floats(allow_nan=False),
        "raw": st.binary(max_size=20),
        "s": st.text(max_size=20),
        "x": st.binary(min_size=3, max_size=3),
        "e": st.sampled_from("abc"),
        "nulls": st.lists(st.none(), max_size=300),
        "empties": _pairs,
        "m": st.dictionaries(st.text(max_size=5), st.lists(st.integers(-(2**63), 2**63 - 1))),
        "u": st.one_of(st.none(), st.text(max_size=5), _pairs),
        "list": st.lists(st.integers(-5, 5), max_size=6).map(_linked),
        "ts": st.integers(0, 2**40),
    }
)


def _values(value: Any, schema: Any) -> int:
    """The values fastavro builds for *value*: one per field, array item and map entry."""
    if isinstance(value, dict) and isinstance(schema, dict) and schema.get("type") == "map":
        return sum(1 + _values(v, schema["values"]) for v in value.values())
    if isinstance(value, dict):
        return sum(1 + _values(v, None) for v in value.values())
    if isinstance(value, list):
        return sum(1 + _values(v, None) for v in value)
    return 0


@settings(max_examples=80, deadline=None)
@given(records=st.lists(_every, min_size=1, max_size=3), container=st.booleans())
def test_avro_values_are_counted_exactly_in_every_type(
    records: list[dict[str, Any]], container: bool
) -> None:
    """Every field, array item and map entry counts one, in containers and bare datums alike."""
    out = io.BytesIO()
    if container:
        fastavro.writer(out, EVERY_TYPE, records, sync_interval=64)
    else:
        parsed = fastavro.parse_schema(EVERY_TYPE)
        for record in records:
            fastavro.schemaless_writer(out, parsed, record)
    schema = None if container else EVERY_TYPE
    total = sum(_values(r, None) for r in records)  # a map counts its entries as a dict does
    check_avro_values(out.getvalue(), len(records), total, schema)
    with pytest.raises(TooBigToShowError, match=f"more than {total - 1:,} values"):
        check_avro_values(out.getvalue(), len(records), total - 1, schema)
    first = _values(records[0], None)
    check_avro_values(out.getvalue(), 1, first, schema)  # later records are not walked


@pytest.mark.parametrize("sized", [False, True], ids=["count", "count-and-size"])
def test_an_array_of_a_billion_nulls_is_refused_by_its_count(sized: bool) -> None:
    """Nulls cost no byte: a block's count is charged before its items, so 10^9 fail at once."""
    data = null_bomb(10**9, sized=sized)
    assert len(data) < 200
    check_avro(data, 1, 1 << 20)  # its bytes are few: the byte bound lets it through
    with pytest.raises(TooBigToShowError, match="hold more than 1,000,000 values"):
        check_avro_values(data, 1, 1_000_000)
    check_avro_values(null_bomb(999_999, sized=sized), 1, 1_000_000)  # and the field: 10^6


def test_damaged_or_cut_avro_is_left_to_fastavro() -> None:
    """A walk that runs off the end or meets a bad union branch stops without a verdict."""
    bare = avro_long(3) + b"ab"  # a string of 3 bytes holding 2
    check_avro_values(bare, 1, 0, {"type": "string"})
    check_avro_values(avro_long(7), 1, 0, ["null", "string"])
    check_avro_values(null_bomb(10**9)[:-30], 1, 1)  # cut inside its block


def test_parquet_lists_charge_their_values_and_flat_columns_none() -> None:
    """A list column's footer value count is charged whole; a flat one costs nothing."""
    nulls = pa.ListArray.from_arrays(pa.array([0, 2_000_000], pa.int32()), pa.nulls(2_000_000))
    out = io.BytesIO()
    pq.write_table(pa.table({"a": nulls}), out, compression="zstd")
    assert len(out.getvalue()) < 2_000
    metadata = pq.read_metadata(pa.BufferReader(out.getvalue()))
    with pytest.raises(TooBigToShowError, match="hold 2,000,000 list and map values"):
        check_parquet_values(metadata, 1_000, 1_000_000)
    check_parquet_values(metadata, 1_000, 2_000_000)
    flat = io.BytesIO()
    pq.write_table(pa.table({"n": pa.nulls(3_000_000, pa.int64())}), flat)
    check_parquet_values(pq.read_metadata(pa.BufferReader(flat.getvalue())), 1_000, 10)
