r"""CSV rows split by ``pyarrow.csv`` where its split is exactly the ``csv`` module's.

The CSV reader's Python path splits rows with the ``csv`` module (after rewriting Commons CSV's
escapes), about 1.5 s per million rows; Arrow's parser does it in C++ at a tenth of that. Both
give every value as a string; the reader then cleans and converts the columns the same way
whichever split them, so the records are the same when the split is.

When the split is the same (tested with hypothesis in ``tests/flowcore/records``):

- the options: UTF-8 content, no "Comment Marker" (Commons CSV drops a comment line before
  splitting it, per physical line), no surrounding-space skipping (Tab-Delimited), ASCII
  separator, quote and escape characters that differ from each other and from line breaks;
- the content: every row as wide as the first (the Python path pads a short row and drops a
  longer one's extra values), no escape character right after a quote, nothing after a
  closing quote but a separator or a line end (Arrow appends it to the value; Commons CSV
  skips whitespace there and refuses anything else: :class:`._csv_quotes.QuoteWatch` checks
  the raw bytes before Arrow reads them), and nothing Arrow refuses (bad UTF-8, an empty
  content, a row longer than a block). Arrow raises on those, and the reader falls back:
  :class:`SplitFailed`; the bytes read so far are kept (:attr:`ArrowSplit.replay`) so the Python
  path can read the content again from its start.

Escapes: Arrow's escape takes the next character as it is; Commons CSV turns ``\n`` ``\r``
``\t`` ``\b`` ``\f`` into control characters and keeps the escape before any character that is
not a delimiter, quote or escape (MySQL's ``\N``). The bytes are rewritten as the Python path
rewrites its lines (the same rule), so Arrow's escape gives Commons CSV's values.
An escape before a carriage-return byte sends the content to the Python path: where Arrow's
blocks are cut around one, pyarrow joins the next row to it or drops a row.
"""

from __future__ import annotations

import codecs
import functools
import io
import re
import tempfile
from collections.abc import Iterator
from typing import IO

import pyarrow as pa
import pyarrow.csv as pacsv

from flowcore.records._csv_quotes import QuoteWatch
from flowcore.records.csv_format import CsvDialect

__all__ = [
    "ArrowColumns",
    "ArrowSplit",
    "Columns",
    "RowColumns",
    "SplitFailed",
    "joined",
    "usable",
]

#: Bytes Arrow parses at a time (a row longer than this makes Arrow refuse: then the Python path).
BLOCK_SIZE = 1 << 16
#: A content of at most this many bytes is parsed in one block (of the chunk's byte budget, if
#: smaller): each block costs Arrow a fixed ~0.05 ms, so a 1 MB FlowFile splits in 1.5 ms in
#: one block, 2.2 ms in 64 KiB ones. A larger content streams in :data:`BLOCK_SIZE` blocks:
#: Arrow's pool keeps more of bigger blocks' freed memory (a 50 MB content read in 1 MiB
#: blocks peaked 50-85 MB above the start, in 64 KiB ones 26 MB).
SMALL_CONTENT = 1 << 20
#: Bytes read from the content at a time (Arrow asks for a block; the rest waits here): the
#: quote check (:class:`._csv_quotes.QuoteWatch`) costs a few numpy calls per read, so a read
#: of 64 KiB paid them sixteen times as often.
READ_BYTES = 1 << 20
#: Columns typed as strings up front (a wider content falls back to the Python path).
MAX_COLUMNS = 1024
#: Bytes of the content kept in memory for a fallback before they spill to a temporary file.
SPOOL_BYTES = 4 << 20
#: Bytes of the content's end kept to tell whether it ends inside a quoted value (Arrow takes
#: a row longer than a block only as the last, so the end of an open one is within two).
TAIL_BYTES = 2 * BLOCK_SIZE

_STRINGS = pacsv.ConvertOptions(
    column_types={f"f{i}": pa.string() for i in range(MAX_COLUMNS)},
    strings_can_be_null=False,
    quoted_strings_can_be_null=False,
)
_UNCHECKED = pacsv.ConvertOptions(
    column_types=_STRINGS.column_types,
    strings_can_be_null=False,
    quoted_strings_can_be_null=False,
    check_utf8=False,
)
_CONTROL = {b"r": b"\r", b"n": b"\n", b"t": b"\t", b"b": b"\b", b"f": b"\f"}


class SplitFailed(Exception):
    """Arrow cannot split this content as the Python path would: read it that way instead."""


def usable(dialect: CsvDialect, character_set: str) -> bool:
    """Whether Arrow's split of a content under *dialect* can be the Python path's."""
    try:
        utf8 = codecs.lookup(character_set).name == "utf-8"
    except LookupError:
        return False
    if not utf8 or dialect.comment is not None or dialect.ignore_surrounding_spaces:
        return False
    chars = [c for c in (dialect.delimiter, dialect.quote, dialect.escape) if c is not None]
    return all(len(c) == 1 and c.isascii() and c not in "\r\n" for c in chars) and len(
        set(chars)
    ) == len(chars)


class ArrowSplit:
    """One content's rows split by Arrow, ``batch_size`` rows at a time, as string columns.

    Args:
        stream: the content.
        dialect: its CSV format (:func:`usable` said yes).
        first_line_is_header: take the first row as the header (:attr:`header`).
        batch_size: rows per chunk at most (the Python path's batches, so both give the same
            batches while *batch_bytes* is not reached).
        batch_bytes: a chunk ends at the Arrow block that brings its values to this many
            bytes: the memory a chunk takes, whatever the rows' width (the kernels that clean
            and type a chunk cost about the same per call at 800 rows as at 50,000, so big
            chunks of narrow rows are cheap, and wide rows stay bounded).
    """

    def __init__(
        self,
        stream: IO[bytes],
        dialect: CsvDialect,
        *,
        first_line_is_header: bool,
        batch_size: int,
        batch_bytes: int = 1 << 62,
    ) -> None:
        self._source = _Source(stream, dialect)
        self._batch_size = batch_size
        self._batch_bytes = batch_bytes
        self._first_line_is_header = first_line_is_header
        self.header: list[str] | None = None

    def chunks(self) -> Iterator[list[pa.Array]]:
        """The rows' columns (after the header), *batch_size* rows or *batch_bytes* a chunk.

        Raises:
            SplitFailed: Arrow refused the content (the caller reads :attr:`replay` instead).
        """
        pending: list[pa.RecordBatch] = []
        count = size = 0
        failed = False
        try:
            for block in self._batches():
                batch = block
                if self._first_line_is_header and self.header is None:
                    self.header = [column[0].as_py() for column in batch.columns]
                    batch = batch.slice(1)
                while batch.num_rows:
                    take = min(batch.num_rows, self._batch_size - count)
                    piece = batch.slice(0, take)
                    pending.append(piece)
                    batch = batch.slice(take)
                    count += take
                    size += piece.nbytes
                    if count == self._batch_size or size >= self._batch_bytes:
                        yield _columns(pending)
                        pending, count, size = [], 0, 0
            if count:
                yield _columns(pending)
        except SplitFailed:
            failed = True
            raise
        finally:
            if not failed:  # read to the end, or left: no replay (a failure's needs the bytes)
                self._source.close()

    def _batches(self) -> Iterator[pa.RecordBatch]:
        dialect = self._source.dialect
        parse = pacsv.ParseOptions(
            delimiter=dialect.delimiter,
            quote_char=dialect.quote or False,
            escape_char=dialect.escape or False,
            double_quote=True,
            newlines_in_values=True,
            ignore_empty_lines=dialect.ignore_empty_lines,
        )
        try:
            if self._source.ends_within(SMALL_CONTENT):
                content = self._source.take_all()
                block = max(BLOCK_SIZE, min(SMALL_CONTENT, self._batch_bytes))
                source: object = pa.BufferReader(content)
                convert = _small_convert(content, dialect)
            else:
                block, source, convert = BLOCK_SIZE, pa.PythonFile(self._source, mode="r"), _STRINGS
            read = pacsv.ReadOptions(
                autogenerate_column_names=True, block_size=block, use_threads=False
            )
            reader = pacsv.open_csv(source, read, parse, convert)
        except (pa.ArrowException, UnicodeError, ValueError, SplitFailed) as exc:
            raise SplitFailed(str(exc)) from exc
        try:
            if any(t != pa.string() for t in reader.schema.types):
                msg = f"more than {MAX_COLUMNS} columns"
                raise SplitFailed(msg)
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                except (pa.ArrowException, UnicodeError, ValueError, SplitFailed) as exc:
                    raise SplitFailed(str(exc)) from exc
                if batch.num_rows and self._source.ended:  # Arrow's last batch is among these
                    self._check_end(batch)
                yield batch
        finally:
            reader.close()  # Arrow's read-ahead thread must not outlive the content stream

    def _check_end(self, batch: pa.RecordBatch) -> None:
        """Refuse a content that may end inside a quoted value (Arrow closes it silently).

        Commons CSV raises there; the Python path tells it from a whole value and gives NiFi's
        error. The content's end is checked against the last value of *batch*, which is the
        content's last value when *batch* is Arrow's last.

        Raises:
            SplitFailed: the content may end inside a quoted value.
        """
        last = batch.column(batch.num_columns - 1)[batch.num_rows - 1].as_py()
        if self._source.may_end_open(last or ""):
            msg = "the content may end inside a quoted value"
            raise SplitFailed(msg)

    def replay(self) -> IO[bytes]:
        """The whole content again from its start (the bytes Arrow read, then the rest)."""
        return self._source.replay()


def _small_convert(content: bytes, dialect: CsvDialect) -> pacsv.ConvertOptions:
    """Arrow's conversion for a small content held whole: its UTF-8 checked here at once.

    Arrow checks each value's UTF-8 (a sixth of its parse of ASCII text); the content's is
    checked once instead, the same answer (values are cut at ASCII bytes, which no character's
    bytes hold). And when the first line has neither quote nor escape character, its
    separators tell the columns: naming only those costs Arrow less than
    :data:`MAX_COLUMNS` types (a fifth of its parse).

    Raises:
        SplitFailed: the content is not UTF-8 (the Python path names the error).
    """
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SplitFailed(str(exc)) from None
    ends = [at for at in (content.find(b"\n"), content.find(b"\r")) if at >= 0]
    line = content[: min(ends)] if ends else content
    special = {dialect.quote, dialect.escape} - {None}
    if not line or any(c.encode() in line for c in special):  # type: ignore[union-attr]
        return _UNCHECKED
    return _strings(line.count(dialect.delimiter.encode()) + 1)


@functools.lru_cache(maxsize=64)
def _strings(width: int) -> pacsv.ConvertOptions:
    """Every column of *width* a string, UTF-8 not checked (:func:`_small_convert` did)."""
    if width > MAX_COLUMNS:
        return _UNCHECKED
    return pacsv.ConvertOptions(
        column_types={f"f{i}": pa.string() for i in range(width)},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        check_utf8=False,
    )


def _columns(pieces: list[pa.RecordBatch]) -> list[pa.Array]:
    if len(pieces) == 1:
        return list(pieces[0].columns)
    return [pa.concat_arrays([p.column(i) for p in pieces]) for i in range(pieces[0].num_columns)]


class Columns:
    """A run of rows as raw (uncleaned) string columns; a short row's missing values null.

    Attributes:
        cleaned: columns already cleaned (by index), kept by schema inference so the
            reader's conversion of the same rows does not clean them again.
        parsed: (Java pattern, its ``parse_column`` of the cleaned column) by index, kept by
            schema inference so the conversion to that date or timestamp does not parse the
            same values again.
    """

    num_rows: int
    width: int
    cleaned: dict[int, pa.Array]
    parsed: dict[int, tuple[str, pa.Array]]

    def column(self, index: int) -> pa.Array:
        raise NotImplementedError

    def head(self, count: int) -> Columns:
        raise NotImplementedError


class RowColumns(Columns):
    """Rows the ``csv`` module split."""

    def __init__(self, rows: list[list[str]]) -> None:
        self.rows = rows
        self.num_rows = len(rows)
        self.cleaned = {}
        self.parsed = {}
        self.width = max((len(r) for r in rows), default=0)

    def column(self, index: int) -> pa.Array:
        try:
            values = [row[index] for row in self.rows]
        except IndexError:  # a short row: its missing values are null
            values = [row[index] if index < len(row) else None for row in self.rows]
        return pa.array(values, pa.string())

    def head(self, count: int) -> RowColumns:
        return self if count >= self.num_rows else RowColumns(self.rows[:count])


class ArrowColumns(Columns):
    """Rows Arrow split: every row as wide as the first."""

    def __init__(self, arrays: list[pa.Array]) -> None:
        self.arrays = arrays
        self.num_rows = len(arrays[0]) if arrays else 0
        self.cleaned = {}
        self.parsed = {}
        self.width = len(arrays)

    def column(self, index: int) -> pa.Array:
        if index < self.width:
            return self.arrays[index]
        return pa.nulls(self.num_rows, pa.string())

    def head(self, count: int) -> ArrowColumns:
        if count >= self.num_rows:
            return self
        return ArrowColumns([a.slice(0, count) for a in self.arrays])


def joined(chunks: list[Columns]) -> Columns:
    if len(chunks) == 1:
        return chunks[0]
    if not chunks:
        return RowColumns([])
    if isinstance(chunks[0], RowColumns):
        return RowColumns([row for c in chunks for row in c.rows])  # type: ignore[attr-defined]
    width = chunks[0].width
    return ArrowColumns([pa.concat_arrays([c.column(i) for c in chunks]) for i in range(width)])


class _Source:
    """The content for Arrow: escapes rewritten, every byte read kept for a fallback."""

    closed = False

    def __init__(self, stream: IO[bytes], dialect: CsvDialect) -> None:
        self.dialect = dialect
        self._stream = stream
        self._spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115
        self._pending = b""
        self._at = 0  # where the unread pending bytes start (reads do not copy the rest)
        self._end = False
        self._escape = dialect.escape.encode() if dialect.escape else None
        self._quote = dialect.quote.encode() if dialect.quote else None
        self._last = b""
        self._tail: list[bytes] = []  # the last bytes Arrow was given, TAIL_BYTES or more
        self._tail_bytes = 0
        self._given = 0
        self._quotes = QuoteWatch(dialect) if dialect.quote is not None else None
        self.ended = False
        if self._escape is not None:
            meta = {dialect.delimiter, dialect.escape, dialect.quote or ""} - {""}
            self._meta = {c.encode() for c in meta} | {b"\r", b"\n"}
            self._pattern = re.compile(re.escape(self._escape) + rb"(.)", re.DOTALL)

    def readable(self) -> bool:
        return True

    def ends_within(self, size: int) -> bool:
        """Whether the content (rewritten) ends within *size* bytes (read ahead to tell)."""
        self._fill(size + 1, size + 1)
        return self._end and self._held() <= size

    def close(self) -> None:
        """Drop the bytes kept for a replay."""
        self._spool.close()

    def take_all(self) -> bytes:
        """The rest of the content (rewritten), once :meth:`ends_within` said it is read."""
        out = self._pending[self._at :] if self._at else self._pending
        self._pending, self._at = b"", 0
        return out

    def read(self, size: int = -1) -> bytes:
        want = size if size >= 0 else 1 << 62
        self._fill(want, size)
        if self._held() <= want:
            return self.take_all()
        out = self._pending[self._at : self._at + want]
        self._at += want
        return out

    def _held(self) -> int:
        return len(self._pending) - self._at

    def _fill(self, want: int, size: int) -> None:
        """Read until *want* bytes are pending or the content ends (*size* < 0: all of it)."""
        while self._held() < want and not self._end:
            data = self._stream.read(max(want - self._held(), READ_BYTES) if size >= 0 else -1)
            if not data:
                self._end = self.ended = True
                self._watch_quotes(None)
                break
            self._spool.write(data)
            if self._escape is not None and self._escape in data:
                data = self._completed(data)
                self._watch_quotes(data)
                self._refuse_after_quote(data)
                data = self._unescaped(data)
            else:
                self._watch_quotes(data)
            self._last = data[-1:]
            if self._at:
                self._pending, self._at = self._pending[self._at :], 0
            self._pending += data
            self._keep(data)

    def _keep(self, data: bytes) -> None:
        """Keep *data* as the newest of the tail (the oldest dropped past :data:`TAIL_BYTES`)."""
        self._tail.append(data)
        self._tail_bytes += len(data)
        self._given += len(data)
        while self._tail_bytes - len(self._tail[0]) >= TAIL_BYTES:
            self._tail_bytes -= len(self._tail.pop(0))

    def may_end_open(self, last: str) -> bool:
        """Whether the content (read to its end) may end inside a quoted value whose text is *last*.

        Arrow takes an open quoted value to the end as its last value, so the content then
        ends with a quote at a field's start and, after it, *last* in quoted form (a quote
        doubled, any character escaped) with no closing quote. No valid content's end reads
        that way but in contrived cases; a yes costs the Python path's reading, which decides.
        A value longer than the bytes kept says yes.
        """
        if self._quote is None:
            return False
        text = last.encode()
        if not self._tail or (text and not self._tail[-1].endswith(text[-1:])):
            return False  # the quoted form of *last* ends with its last byte
        tail = b"".join(self._tail)
        whole = self._given == len(tail)  # the tail is the whole content
        lowest = len(tail) - 2 * len(text) - 1  # each byte of *last* takes one or two
        if lowest < 0 and not whole:
            return True
        quoted = _QuotedForm(self._quote, self._escape)
        start = max(lowest, 0)
        while (at := tail.find(self._quote, start, len(tail) - len(text))) >= 0:
            if _field_start(tail, at, whole, self.dialect.delimiter.encode()) and (
                quoted.decode(tail[at + 1 :]) == text
            ):
                return True
            start = at + 1
        return False

    def _refuse_after_quote(self, data: bytes) -> None:
        """Refuse an escape right after a quote (the Python path then reads the content).

        After a closing quote the ``csv`` module takes an escape as a character, Arrow as an
        escape; the bytes do not tell an opening quote from a closing one, so both refuse.
        """
        if self._quote is None or self._escape is None:
            return
        if self._quote + self._escape in data or (
            self._last == self._quote and data.startswith(self._escape)
        ):
            msg = "an escape character follows a quote"
            raise SplitFailed(msg)

    def _watch_quotes(self, data: bytes | None) -> None:
        """Refuse content whose split may differ from Commons CSV's after a closing quote.

        Arrow appends what follows a closing quote to the value (``"a"x`` reads ``ax``, and
        whitespace there is kept); Commons CSV drops whitespace there and refuses anything
        else but a separator or a line end. The Python path reads such content as it does.

        Args:
            data: the content's next raw bytes; None at its end.

        Raises:
            SplitFailed: a quote may close a value and be followed by something else.
        """
        if self._quotes is None:
            return
        if self._quotes.finish() if data is None else self._quotes.suspect(data):
            msg = "a closing quote may be followed by a character other than a separator"
            raise SplitFailed(msg)

    def _completed(self, data: bytes) -> bytes:
        """*data* with its last escape character's escaped byte (read from the content)."""
        escape = self._escape or b""
        while (len(data) - len(data.rstrip(escape))) % 2:  # the last escape takes the next byte
            more = self._stream.read(1)
            if not more:  # the csv module reads an escape at the end as an escaped line break
                msg = "the content ends with an escape character"
                raise SplitFailed(msg)
            self._spool.write(more)
            data += more
        return data

    def _unescaped(self, data: bytes) -> bytes:
        """*data* with Commons CSV's escapes in Arrow's terms."""
        escape = self._escape or b""

        def rewrite(match: re.Match[bytes]) -> bytes:
            char = match.group(1)
            if char == b"\r":
                carriage.append(match.start())
            if char in self._meta:
                return match.group(0)
            if char in _CONTROL:
                return escape + _CONTROL[char]
            return escape + escape + char

        carriage: list[int] = []
        out = self._pattern.sub(rewrite, data)
        if carriage:  # Arrow's blocks cut around an escaped CR join or drop rows (pyarrow 26)
            msg = "an escape character precedes a carriage return"
            raise SplitFailed(msg)
        return out

    def replay(self) -> IO[bytes]:
        self._spool.seek(0)
        return io.BufferedReader(_Chain(self._spool, self._stream), buffer_size=1 << 16)


def _field_start(data: bytes, at: int, whole: bool, delimiter: bytes) -> bool:
    """Whether *at* may start a field of *data* (after a separator, a line break, the start)."""
    if at == 0 or (at == 3 and data.startswith(codecs.BOM_UTF8)):
        return whole
    return data[at - 1 : at] in (delimiter, b"\n", b"\r")


class _QuotedForm:
    """The inside of a quoted value as Arrow reads it: a quote doubled, any byte escaped."""

    def __init__(self, quote: bytes, escape: bytes | None) -> None:
        q = re.escape(quote)
        if escape is None:
            self._whole = re.compile(rb"(?:[^" + q + rb"]|" + q + q + rb")*")
            self._pairs = re.compile(b"(" + q + b")" + q)
        else:
            e = re.escape(escape)
            self._whole = re.compile(rb"(?:[^" + q + e + rb"]|" + q + q + b"|" + e + rb"[\s\S])*")
            self._pairs = re.compile(b"(" + q + b")" + q + b"|" + e + rb"([\s\S])")

    def decode(self, raw: bytes) -> bytes | None:
        """The value *raw* holds, or None when a quote closes it (or an escape ends it)."""
        if self._whole.fullmatch(raw) is None:
            return None
        return self._pairs.sub(lambda m: m.group(1) or m.group(2), raw)


class _Chain(io.RawIOBase):
    """Two byte streams read one after the other."""

    def __init__(self, first: IO[bytes], second: IO[bytes]) -> None:
        self._streams = [first, second]
        self._first = first

    def close(self) -> None:
        """Close the first stream (the kept bytes); the second is the caller's."""
        self._first.close()
        super().close()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while self._streams:
            data = self._streams[0].read(len(buffer))
            if data:
                buffer[: len(data)] = data
                return len(data)
            self._streams.pop(0)
        return 0
