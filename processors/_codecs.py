"""CompressContent's compression formats: each one's streaming encoder and decoder.

Every codec streams from a source (``read(n)``) to a ``write`` callback: it reads
:data:`~processors._packaging.CHUNK` bytes at a time and hands on at most :data:`OUT_CHUNK`
bytes of output at a time, so memory stays bounded whatever the content's size, and a small
input that decompresses to gigabytes (a compression bomb) is written out piece by piece, never
held. The libraries: the standard library's ``zlib``, ``bz2`` and ``lzma``; ``backports.zstd``
(the standard library's ``compression.zstd`` from Python 3.14), ``lz4``, ``brotli`` and cramjam's
Snappy (:mod:`processors._snappy`).

Each codec writes what NiFi's writes, read back by NiFi's decoder, and reads what NiFi's
encoder writes: gzip members and bzip2, xz and zstd streams and LZ4 frames may be concatenated
(NiFi's decoders read on; so do these), and a gzip header carries no time, so the same content
compresses to the same bytes every time (a replayed task writes what the first attempt wrote).
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import brotli
import lz4.frame

from flowcore.errors import FlowcoreError
from processors._expansion import EXPANSION_ALLOWANCE, MAX_EXPANSION
from processors._packaging import CHUNK
from processors._snappy import (
    SnappyFormatError,
    compress_framed,
    compress_hadoop,
    compress_snappy_java,
    decompress_framed,
    decompress_snappy_java,
)

try:  # the standard library's from Python 3.14
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the Python version
    from backports import zstd  # type: ignore[no-redef]

__all__ = ["CODECS", "OUT_CHUNK", "Codec", "CodecError", "ExpansionLimitError"]

OUT_CHUNK = 1 << 20  # bytes of output a decoder hands on at a time

Write = Callable[[bytes], object]

#: The errors a decoder's library raises for data that is not of its format.
_DATA_ERRORS: tuple[type[BaseException], ...] = (
    zlib.error,
    lzma.LZMAError,
    OSError,
    EOFError,
    ValueError,
    RuntimeError,  # lz4
    brotli.error,
    zstd.ZstdError,
)


class CodecError(ValueError):
    """The content cannot be compressed or decompressed in this format (the message says why)."""


class ExpansionLimitError(CodecError):
    """The content decompresses to more than it may (a compression bomb?)."""


@attrs.frozen
class Codec:
    """One Compression Format: its encoder, decoder, file extension and MIME type.

    Attributes:
        name: NiFi's value of Compression Format (``gzip``).
        extension: what Update Filename adds and removes (``.gz``).
        mime_type: the ``mime.type`` a compressed FlowFile gets.
        compress: ``compress(source, write, level)``.
        decompress: ``decompress(source, write)``, or None when NiFi cannot decompress it.
    """

    name: str
    extension: str
    mime_type: str
    compress: Callable[[Any, Write, int], None]
    decompress: Callable[[Any, Write], None] | None

    def run_compress(self, source: Any, write: Write, level: int) -> None:
        """Compress *source* to *write*; :class:`CodecError` when the library refuses."""
        try:
            self.compress(source, write, level)
        except FlowcoreError:
            raise  # the content repository's (damaged content ...): not the format's
        except _DATA_ERRORS as ex:
            msg = f"{self.name} compression failed: {ex}"
            raise CodecError(msg) from None

    def run_decompress(self, source: Any, write: Write, limit: int | None = None) -> None:
        """Decompress *source* to *write*; :class:`CodecError` when it is not in this format.

        With *limit*, at most that many bytes are written: :class:`ExpansionLimitError` past
        it, raised as the output crosses it, so a bomb stops after *limit* bytes.
        """
        if self.decompress is None:
            msg = f"data compressed with {self.name} cannot be decompressed"
            raise CodecError(msg)
        if limit is not None:
            write = _bounded(write, limit, self.name)
        try:
            self.decompress(source, write)
        except (FlowcoreError, ExpansionLimitError):
            raise
        except (*_DATA_ERRORS, SnappyFormatError) as ex:
            msg = f"the content is not valid {self.name} data: {ex}"
            raise CodecError(msg) from None


def _bounded(write: Write, limit: int, name: str) -> Write:
    """*write*, refusing to take more than *limit* bytes in all."""
    written = 0

    def bounded(data: bytes) -> object:
        nonlocal written
        written += len(data)
        if written > limit:
            msg = (
                f"the {name} data decompresses to more than {limit} bytes, the most its size "
                f"allows ({MAX_EXPANSION} times it plus {EXPANSION_ALLOWANCE} bytes): a "
                "compression bomb?"
            )
            raise ExpansionLimitError(msg)
        return write(data)

    return bounded


def _chunks(source: Any) -> Any:
    return iter(lambda: source.read(CHUNK), b"")


def _with(make: Callable[[int], Any]) -> Callable[[Any, Write, int], None]:
    """An encoder from a compressor factory (``compress``/``flush`` objects) taking the level."""

    def compress(source: Any, write: Write, level: int) -> None:
        compressor = make(level)
        for chunk in _chunks(source):
            if out := compressor.compress(chunk):
                write(out)
        write(compressor.flush())

    return compress


def _members(make: Callable[[], Any], *, concatenated: bool) -> Callable[[Any, Write], None]:
    """A decoder from a decompressor factory with ``decompress(data, max_length)`` and ``eof``.

    Members (gzip), streams (bzip2, xz, zstd) or frames (LZ4) follow one another when
    *concatenated*; otherwise whatever follows the first is ignored, as NiFi's ``deflate``
    decoder (``InflaterInputStream``) does. At least one complete member is required.
    """

    def decompress(source: Any, write: Write) -> None:
        decoder = make()
        fed = False  # the current decoder has been given input
        completed = 0
        pending = b""
        while True:
            if not pending:
                pending = source.read(CHUNK)
                if not pending:
                    break
            fed = True
            out = decoder.decompress(pending, OUT_CHUNK)
            # zlib keeps what it did not use in unconsumed_tail; the others keep it inside
            pending = getattr(decoder, "unconsumed_tail", b"")
            while True:
                if out:
                    write(out)
                if decoder.eof or getattr(decoder, "needs_input", True) or pending:
                    break
                out = decoder.decompress(b"", OUT_CHUNK)
            if decoder.eof:
                completed += 1
                if not concatenated:
                    return
                # at the end zlib may still show the rest as unconsumed_tail too: unused_data
                # alone is what follows the member
                pending = decoder.unused_data or b""
                decoder, fed = make(), False
        if completed == 0 or (fed and not decoder.eof):
            msg = "the content ends before the compressed data does"
            raise EOFError(msg)

    return decompress


def _brotli_decompress(source: Any, write: Write) -> None:
    decoder = brotli.Decompressor()
    for chunk in _chunks(source):
        write(decoder.process(chunk, output_buffer_limit=OUT_CHUNK))
        while not decoder.can_accept_more_data():
            write(decoder.process(b"", output_buffer_limit=OUT_CHUNK))
    # Output may still be held once all input is in (highly compressed data: can_accept says
    # yes while megabytes wait): drain it, or the content would be cut short.
    while not decoder.is_finished() and (
        out := decoder.process(b"", output_buffer_limit=OUT_CHUNK)
    ):
        write(out)
    if not decoder.is_finished():
        msg = "the content ends before the compressed data does"
        raise EOFError(msg)


class _Brotli:
    """brotli's Compressor under the ``compress``/``flush`` names."""

    def __init__(self, level: int) -> None:
        self._compressor = brotli.Compressor(quality=level)

    def compress(self, data: bytes) -> bytes:
        return self._compressor.process(data)

    def flush(self) -> bytes:
        return self._compressor.finish()


class _Lz4Frame:
    """An LZ4 frame as Commons Compress writes it: 4 MiB blocks and a content checksum."""

    def __init__(self, _level: int) -> None:
        self._compressor = lz4.frame.LZ4FrameCompressor(
            block_size=lz4.frame.BLOCKSIZE_MAX4MB, content_checksum=True
        )
        self._head: bytes | None = None

    def _begin(self) -> bytes:
        if self._head is None:
            self._head = self._compressor.begin()
            return self._head
        return b""

    def compress(self, data: bytes) -> bytes:
        return self._begin() + self._compressor.compress(data)

    def flush(self) -> bytes:
        return self._begin() + self._compressor.flush()


def _unframed(encode: Callable[[Any, Write], None]) -> Callable[[Any, Write, int], None]:
    """A Snappy encoder (no level) under the codecs' signature."""

    def compress(source: Any, write: Write, _level: int) -> None:
        encode(source, write)

    return compress


GZIP = "gzip"
DEFLATE = "deflate"
BZIP2 = "bzip2"
XZ_LZMA2 = "xz-lzma2"
LZMA = "lzma"
SNAPPY = "snappy"
SNAPPY_HADOOP = "snappy-hadoop"
SNAPPY_FRAMED = "snappy framed"
LZ4_FRAMED = "lz4-framed"
ZSTD = "zstd"
BROTLI = "brotli"

#: NiFi's Compression Formats in its order, with the extension and MIME type it gives each.
CODECS: Mapping[str, Codec] = {
    codec.name: codec
    for codec in (
        Codec(
            GZIP,
            ".gz",
            "application/gzip",
            _with(lambda level: zlib.compressobj(level, zlib.DEFLATED, 31)),
            _members(lambda: zlib.decompressobj(31), concatenated=True),
        ),
        Codec(
            DEFLATE,
            ".zlib",
            "application/deflate",  # NiFi writes application/gzip here (a slip; see the docs)
            _with(lambda level: zlib.compressobj(level, zlib.DEFLATED, 15)),
            _members(lambda: zlib.decompressobj(15), concatenated=False),
        ),
        Codec(
            BZIP2,
            ".bz2",
            "application/x-bzip2",
            _with(lambda _level: bz2.BZ2Compressor(9)),  # NiFi ignores the level for bzip2
            _members(bz2.BZ2Decompressor, concatenated=True),
        ),
        Codec(
            XZ_LZMA2,
            ".xz",
            "application/x-xz",
            _with(lambda level: lzma.LZMACompressor(lzma.FORMAT_XZ, preset=level)),
            _members(lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ), concatenated=True),
        ),
        Codec(
            LZMA,
            ".lzma",
            "application/x-lzma",
            _with(lambda _level: lzma.LZMACompressor(lzma.FORMAT_ALONE)),
            _members(lambda: lzma.LZMADecompressor(lzma.FORMAT_ALONE), concatenated=False),
        ),
        Codec(
            SNAPPY,
            ".snappy",
            "application/x-snappy",
            _unframed(compress_snappy_java),
            decompress_snappy_java,
        ),
        Codec(
            SNAPPY_HADOOP,
            ".snappy",
            "application/x-snappy-hadoop",
            _unframed(compress_hadoop),
            None,
        ),
        Codec(
            SNAPPY_FRAMED,
            ".sz",
            "application/x-snappy-framed",
            _unframed(compress_framed),
            decompress_framed,
        ),
        Codec(
            LZ4_FRAMED,
            ".lz4",
            "application/x-lz4-framed",
            _with(_Lz4Frame),
            _members(lz4.frame.LZ4FrameDecompressor, concatenated=True),
        ),
        Codec(
            ZSTD,
            ".zst",
            "application/zstd",
            _with(lambda level: zstd.ZstdCompressor(level=level * 2)),  # NiFi doubles the level
            _members(zstd.ZstdDecompressor, concatenated=True),
        ),
        Codec(BROTLI, ".br", "application/x-brotli", _with(_Brotli), _brotli_decompress),
    )
}
