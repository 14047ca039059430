"""Tests for the byte streams over session content: the write-only stream, buffered and seekable
readers."""

from __future__ import annotations

import array
import io

import pyarrow as pa
import pyarrow.parquet as pq

from flowcore.session.streams import WriteStream, buffered, seekable


def test_a_write_stream_takes_bytes_buffers_and_text_and_tells_what_it_wrote() -> None:
    """Bytes, a buffer of wider items (its bytes) and UTF-8 text all reach the target, counted."""
    target = io.BytesIO()
    out = WriteStream(target)
    numbers = array.array("i", [1, 2])
    assert out.write(b"ab") == 2
    assert out.write(numbers) == numbers.itemsize * 2
    assert out.write("é") == 2
    assert out.write(memoryview(b"0123456789")[::3]) == 4  # not contiguous: copied
    assert target.getvalue() == b"ab" + numbers.tobytes() + "é".encode() + b"0369"
    assert out.tell() == len(target.getvalue())


def test_closing_a_write_stream_leaves_its_target_open() -> None:
    """A codec may close the stream it was given; the session's stream stays open to write on."""
    target = io.BytesIO()
    out = WriteStream(target)
    pq.write_table(pa.table({"n": [1, 2, 3]}), out)  # pyarrow's Parquet writer asks tell()
    out.close()
    assert out.closed
    assert not target.closed
    target.write(b"more")
    assert pq.read_table(io.BytesIO(target.getvalue()[:-4])).column("n").to_pylist() == [1, 2, 3]


def test_a_buffered_reader_reads_the_head_first() -> None:
    """Bytes put back are read before the rest of the stream."""
    assert buffered(io.BytesIO(b"rest"), head=b"he").read() == b"herest"


def test_a_stream_that_cannot_seek_is_copied_to_one_that_can() -> None:
    """A seekable stream is used as it is; another is copied, positioned at its start."""
    stream = io.BytesIO(b"data")
    assert seekable(stream) is stream
    copy = seekable(buffered(io.BytesIO(b"data")))
    assert copy.seekable()
    assert copy.read() == b"data"
