r"""Text as NiFi's text processors see it: decoded with a Character Set, cut into lines.

ExtractText, ReplaceText, RouteOnContent and RouteText read content as Java reads it: bytes
decoded with the configured Character Set (malformed input becomes U+FFFD, as ``new String``
does), text encoded back with unmappable characters as ``?`` (``String.getBytes``). Lines are
those of NiFi's ``LineDemarcator``: each ends with ``\n``, ``\r\n`` or a lone ``\r``, which it
keeps; the last may have none.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from flowcore.errors import ProcessException

__all__ = [
    "READ_CHUNK",
    "LineTooLongError",
    "decode",
    "encode",
    "head_bytes",
    "incremental_encoder",
    "iter_lines",
    "java_trim",
    "line_body",
    "line_capacity",
    "split_lines",
]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
READ_CHUNK = 1 << 16  # bytes decoded at a time when streaming lines
_INITIAL_LINE_BUFFER = 8192  # characters: LineDemarcator's first buffer
#: Java's ``String.trim`` removes every character up to the space, and nothing else.
_JAVA_WHITESPACE = "".join(chr(code) for code in range(0x21))


class LineTooLongError(ProcessException):
    """A line is longer than the Maximum Buffer Size (NiFi's ``BufferOverflowException``)."""


def _is_utf16(charset: str) -> bool:
    """Whether *charset* is Java's ``UTF-16``: a byte-order mark, else big-endian.

    Python's ``utf-16`` reads bytes without a mark as the machine's order (little-endian
    here), or refuses them incrementally, and writes little-endian; Java does neither.
    """
    try:
        return codecs.lookup(charset).name == "utf-16"
    except LookupError:
        return False


def _decoding(charset: str, head: bytes | memoryview) -> str:
    """The Python codec that reads content starting with *head* as Java's *charset* does."""
    if _is_utf16(charset) and bytes(head[:2]) not in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return "utf-16-be"
    return charset


def decode(data: bytes | memoryview, charset: str) -> str:
    """*data* as text, malformed bytes as U+FFFD (Java's ``new String(bytes, charset)``)."""
    return codecs.decode(data, _decoding(charset, data), "replace")


def encode(text: str, charset: str) -> bytes:
    """*text* as bytes, unmappable characters as ``?`` (Java's ``String.getBytes(charset)``)."""
    if _is_utf16(charset):  # Java: a big-endian mark, then big-endian; nothing for ""
        return codecs.BOM_UTF16_BE + text.encode("utf-16-be", "replace") if text else b""
    return codecs.encode(text, charset, "replace")


class _JavaUtf16Encoder:
    """Java's ``UTF-16`` encoder as an incremental one: the mark before the first character."""

    def __init__(self) -> None:
        self._started = False

    def encode(self, text: str, final: bool = False) -> bytes:
        if not text:
            return b""
        data = text.encode("utf-16-be", "replace")
        if self._started:
            return data
        self._started = True
        return codecs.BOM_UTF16_BE + data


def incremental_encoder(charset: str) -> codecs.IncrementalEncoder | _JavaUtf16Encoder:
    """An encoder writing text in pieces as Java's *charset* writes it (see :func:`encode`)."""
    if _is_utf16(charset):
        return _JavaUtf16Encoder()
    return codecs.getincrementalencoder(charset)("replace")


def head_bytes(pieces: Iterable[bytes | memoryview], limit: int) -> bytes:
    """The first *limit* bytes of content given as pieces (a batch form's ``contents``)."""
    out = bytearray()
    for piece in pieces:
        if len(out) >= limit:
            break
        out += piece[: limit - len(out)]
    return bytes(out)


def split_lines(text: str) -> list[str]:
    r"""The lines of *text*, each with its terminator (``\n``, ``\r\n`` or ``\r``)."""
    return _LINE.findall(text)


def line_body(line: str) -> str:
    r"""*line* without its terminator."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


def java_trim(text: str) -> str:
    """*text* without leading and trailing characters up to the space (``String.trim``)."""
    return text.strip(_JAVA_WHITESPACE)


def line_capacity(max_buffer: int) -> int:
    """The longest line NiFi's ``LineDemarcator`` reads within a Maximum Buffer Size, in chars.

    Its buffer starts at 8,192 characters and grows (doubling, by at most 1 MiB at a time)
    only while the grown size stays within the maximum; a longer line overflows. So a line of
    up to 8,192 characters always passes, whatever the maximum.
    """
    capacity = _INITIAL_LINE_BUFFER
    while True:
        grown = min(capacity * 2, capacity + (1 << 20))
        if grown > max_buffer:
            return capacity
        capacity = grown


def iter_lines(
    stream: BinaryIO,
    charset: str,
    max_length: int | None = None,
    *,
    chunk_size: int = READ_CHUNK,
) -> Iterator[str]:
    r"""The lines of *stream* decoded with *charset*, each with its terminator, read in chunks.

    A ``\r`` at the end of a chunk waits for the next one, which may begin with its ``\n``.

    Args:
        stream: the content.
        charset: its Character Set.
        max_length: the longest line allowed, in characters (terminator included).
        chunk_size: bytes read and decoded at a time.

    Raises:
        LineTooLongError: a line is longer than *max_length*.
    """
    decoder = None
    pending = ""
    while True:
        chunk = stream.read(chunk_size)
        if decoder is None:  # the first chunk holds any byte-order mark
            decoder = codecs.getincrementaldecoder(_decoding(charset, chunk))("replace")
        text = pending + decoder.decode(chunk, final=not chunk)
        lines = split_lines(text)
        pending = ""
        if chunk and lines and (not lines[-1].endswith("\n")):
            pending = lines.pop()  # unfinished, or a '\r' whose '\n' may follow
        for line in lines:
            _check_length(line, max_length)
            yield line
        _check_length(pending, max_length)
        if not chunk:
            return


def _check_length(line: str, max_length: int | None) -> None:
    if max_length is not None and len(line) > max_length:
        msg = (
            f"a line of {len(line)} characters is longer than the {max_length} characters the "
            "Maximum Buffer Size allows; raise it to process this content line by line"
        )
        raise LineTooLongError(msg)
