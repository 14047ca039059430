"""Tests for processors/_text.py: text decoded, cut into lines and trimmed as NiFi does."""

from __future__ import annotations

import codecs
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from processors._text import (
    LineTooLongError,
    decode,
    encode,
    incremental_encoder,
    iter_lines,
    java_trim,
    line_body,
    line_capacity,
    split_lines,
)


def test_lines_keep_their_terminators() -> None:
    """'\\n', '\\r\\n' and a lone '\\r' end lines; the last line may have none."""
    assert split_lines("a\r\nb\rc\n\nd") == ["a\r\n", "b\r", "c\n", "\n", "d"]
    assert split_lines("") == []
    assert [line_body(x) for x in ("a\r\n", "b\r", "c")] == ["a", "b", "c"]


@given(text=st.text(alphabet="ab\r\né", max_size=60), chunk=st.integers(1, 7))
def test_streamed_lines_equal_split_lines(text: str, chunk: int) -> None:
    """Lines read in chunks (a '\\r\\n' cut between two) are the lines of the whole text."""
    lines = iter_lines(io.BytesIO(text.encode()), "utf-8", chunk_size=chunk)
    assert list(lines) == split_lines(text)


def test_a_line_over_the_limit_fails() -> None:
    """A line longer than the limit raises, naming its length."""
    with pytest.raises(LineTooLongError, match="a line of 6 characters"):
        list(iter_lines(io.BytesIO(b"ok\nabcde\n"), "utf-8", 4))


def test_line_capacity_grows_as_nifi_line_demarcator() -> None:
    """8,192 characters always; doubling while within the maximum."""
    assert line_capacity(1) == line_capacity(8192) == 8192
    assert line_capacity(5 * 1024) == 8192
    assert line_capacity(16 * 1024) == 16384
    assert line_capacity(1 << 20) == 1 << 20


def test_java_trim_removes_control_characters_and_spaces_only() -> None:
    """String.trim: characters up to U+0020, not Unicode spaces."""
    assert java_trim("\t\x00 x \r\n") == "x"
    assert java_trim("\u00a0x\u00a0") == "\u00a0x\u00a0"


def test_utf16_without_a_mark_is_big_endian_as_in_java() -> None:
    """Java's UTF-16 reads bytes without a byte-order mark as big-endian, and a mark as such."""
    assert decode("héllo\n".encode("utf-16-be"), "UTF-16") == "héllo\n"
    assert decode(codecs.BOM_UTF16_LE + "hé".encode("utf-16-le"), "UTF-16") == "hé"
    lines = iter_lines(io.BytesIO("a\nb\n".encode("utf-16-be")), "UTF-16", chunk_size=3)
    assert list(lines) == ["a\n", "b\n"]


def test_utf16_is_written_big_endian_after_a_mark_as_in_java() -> None:
    """``"hé".getBytes("UTF-16")`` is FE FF then big-endian; an empty string is no bytes."""
    assert encode("hé", "UTF-16") == codecs.BOM_UTF16_BE + "hé".encode("utf-16-be")
    assert encode("", "UTF-16") == b""
    encoder = incremental_encoder("UTF-16")
    pieces = [encoder.encode(""), encoder.encode("h"), encoder.encode("é", final=True)]
    assert b"".join(pieces) == encode("hé", "UTF-16")
