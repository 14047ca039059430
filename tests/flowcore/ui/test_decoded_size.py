"""How big Avro blocks and Parquet row groups decode, told before they are decoded."""

from __future__ import annotations

import bz2
import io
import lzma
import zlib

import fastavro
import lz4.block
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cramjam import snappy
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.ui.decoded_size import TooBigToShowError, check_avro, check_parquet, decoded_size

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
