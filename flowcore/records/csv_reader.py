"""NiFi's CSVReader as a codec: CSV content to bounded Arrow record batches.

Rows are split by ``pyarrow.csv`` where its split is the ``csv`` module's (:mod:`._csv_arrow`;
batches of ``batch_bytes``), else by Python's C ``csv`` reader (it has every option NiFi's
CSVReader has: value separator, quote and escape characters, no quote at all for MySQL;
comment lines are dropped before it). Each batch's columns are cleaned and converted to the
schema's types with Arrow's kernels (:mod:`._csv_values`); with no schema, NiFi's inference
runs over a sample a column at a time (:mod:`._csv_inference`). As NiFi's reader: values are
trimmed ("Trim Fields"), one pair of surrounding double quotes is removed, an empty value or
the "Null String" is null, a row shorter than the header leaves the rest null and a longer one
drops the extra values.
"""

from __future__ import annotations

import codecs
import csv
import functools
import io
import itertools
import re
from collections.abc import Callable, Iterator
from typing import IO, Any

import attrs
import pyarrow as pa

from flowcore.errors import ConfigurationError, RecordError
from flowcore.records import _csv_arrow
from flowcore.records._batches import record_error
from flowcore.records._csv_inference import infer_schema
from flowcore.records._csv_quotes import Malformed, Unfinished, open_quote_message, reread
from flowcore.records._csv_values import BadValue, clean, clean_column, column
from flowcore.records.csv_format import QUOTE_MINIMAL, CsvDialect, dialect_for
from flowcore.records.options import nifi
from flowcore.records.schema import (
    RecordSchema,
)
from flowcore.records.values import TemporalFormats

__all__ = ["CsvReaderOptions", "read_csv"]

#: The longest value the csv module takes (its default, 128 KiB, is below what NiFi reads).
FIELD_SIZE_LIMIT = 1 << 26
#: Rows per batch the ``csv`` module's split gives at most: its rows are Python lists of
#: strings (about 60 bytes a value), so it holds far fewer than Arrow's compact columns.
PYTHON_BATCH_ROWS = 8192


@attrs.frozen
class CsvReaderOptions:
    r"""CSVReader's properties (NiFi's display names in the field docs), NiFi's defaults.

    Attributes:
        csv_format: "CSV Format": ``custom``, ``rfc-4180``, ``excel``, ``tdf``, ``mysql``,
            ``informix-unload``, ``informix-unload-csv`` (or their display names).
        value_separator: "Value Separator" (``\t`` for a tab), Custom only.
        quote_character: "Quote Character", Custom only.
        escape_character: "Escape Character", Custom only.
        comment_marker: "Comment Marker", Custom only.
        null_string: "Null String", Custom only.
        trim_fields: "Trim Fields", Custom only.
        first_line_is_header: "Treat First Line as Header".
        ignore_header_column_names: "Ignore CSV Header Column Names" (name columns by the
            schema, in order).
        character_set: "Character Set".
        allow_duplicate_header_names: "Allow Duplicate Header Names", Custom only (a repeated
            name shifts the values left, as NiFi's Commons CSV reader).
        trim_double_quote: "Trim Double Quote" (remove one pair of surrounding quotes).
        csv_parser: "CSV Parser": one parser reads them all; ``jackson-csv`` only changes where
            a repeated header name's values go (each column under its own name, the last wins).
        date_format / time_format / timestamp_format: "Date Format", "Time Format",
            "Timestamp Format" (Java patterns; None: NiFi's defaults).
        batch_size: rows per Arrow batch at most (not a NiFi property). Rows the ``csv``
            module splits (the Python path) come at most :data:`PYTHON_BATCH_ROWS` a batch.
        batch_bytes: bytes of values per batch at most where Arrow splits the rows (the
            memory bound; not a NiFi property): a batch ends at the Arrow block (64 KiB of
            content) that reaches it, so its rows depend on their width, not their number.
        inference_sample: rows schema inference reads (not a NiFi property).
    """

    csv_format: str = nifi("CSV Format", "custom")
    value_separator: str = nifi("Value Separator", ",")
    quote_character: str = nifi("Quote Character", '"')
    escape_character: str | None = nifi("Escape Character", "\\")
    comment_marker: str | None = nifi("Comment Marker", None)
    null_string: str | None = nifi("Null String", None)
    trim_fields: bool = nifi("Trim Fields", True)
    first_line_is_header: bool = nifi("Treat First Line as Header", False)
    ignore_header_column_names: bool = nifi("Ignore CSV Header Column Names", False)
    character_set: str = nifi("Character Set", "UTF-8")
    allow_duplicate_header_names: bool = nifi("Allow Duplicate Header Names", True)
    trim_double_quote: bool = nifi("Trim Double Quote", True)
    csv_parser: str = nifi("CSV Parser", "commons-csv")
    date_format: str | None = nifi("Date Format", None)
    time_format: str | None = nifi("Time Format", None)
    timestamp_format: str | None = nifi("Timestamp Format", None)
    batch_size: int = 1 << 16
    batch_bytes: int = 1 << 20
    inference_sample: int = 10_000

    def dialect(self) -> CsvDialect:
        """The Commons CSV format these options give."""
        return dialect_for(
            self.csv_format,
            value_separator=self.value_separator,
            quote_character=self.quote_character,
            escape_character=self.escape_character,
            comment_marker=self.comment_marker,
            null_string=self.null_string,
            trim_fields=self.trim_fields,
            quote_mode=QUOTE_MINIMAL,
        )

    @property
    def temporal(self) -> TemporalFormats:
        """The three formats as one value."""
        return TemporalFormats(self.date_format, self.time_format, self.timestamp_format)


def read_csv(
    stream: IO[bytes],
    options: CsvReaderOptions = CsvReaderOptions(),
    schema: RecordSchema | None = None,
) -> Iterator[pa.RecordBatch]:
    """Record batches of the CSV rows of *stream* under *schema*.

    With no schema, NiFi's CSV rules infer one from the first ``options.inference_sample``
    rows; the columns are then named by the header, or ``field_0``, ``field_1``... without one.

    Raises:
        RecordError: a value does not fit its field's type, the content is not in the
            character set, or the header repeats a name it may not.
    """
    dialect = options.dialect()
    try:
        codecs.lookup(options.character_set)
    except LookupError:
        msg = f"Character Set {options.character_set!r} is not a known encoding"
        raise ConfigurationError(msg) from None
    if csv.field_size_limit() < FIELD_SIZE_LIMIT:
        csv.field_size_limit(FIELD_SIZE_LIMIT)
    return _read(stream, options, dialect, schema)


def _read(
    stream: IO[bytes], options: CsvReaderOptions, dialect: CsvDialect, schema: RecordSchema | None
) -> Iterator[pa.RecordBatch]:
    """Arrow's split when it is the Python path's (:mod:`._csv_arrow`), else or on refusal that.

    Arrow may refuse late in the content: the Python path then reads it again from the start,
    under the schema already inferred, skipping the records already given.
    """
    if not _csv_arrow.usable(dialect, options.character_set):
        yield from _read_python(stream, options, dialect, schema, _Progress())
        return
    split = _csv_arrow.ArrowSplit(
        stream,
        dialect,
        first_line_is_header=options.first_line_is_header,
        batch_size=options.batch_size,
        batch_bytes=options.batch_bytes,
    )
    progress = _Progress()
    chunks = (_csv_arrow.ArrowColumns(columns) for columns in split.chunks())
    try:
        yield from _records(
            lambda: split.header, chunks, options, dialect, schema, progress=progress
        )
    except _csv_arrow.SplitFailed:
        known = progress.schema if progress.given else schema
        replay = split.replay()
        try:
            yield from _read_python(replay, options, dialect, known, progress)
        finally:
            replay.close()  # the kept bytes (the content stream itself is the caller's)


@attrs.define
class _Progress:
    """How far a read got: the schema once known, the records given (a fallback skips them)."""

    schema: RecordSchema | None = None
    given: int = 0


def _read_python(
    stream: IO[bytes],
    options: CsvReaderOptions,
    dialect: CsvDialect,
    schema: RecordSchema | None,
    progress: _Progress,
) -> Iterator[pa.RecordBatch]:
    """The rows split by the ``csv`` module, ``batch_size`` at a time."""
    text = io.TextIOWrapper(stream, encoding=_without_bom(options.character_set), newline="")
    rows = _rows(text, dialect)
    try:
        header = next(rows, None) if options.first_line_is_header else None
        skip = progress.given
        if skip:
            next(itertools.islice(rows, skip - 1, skip), None)
        chunks = _row_chunks(rows, min(options.batch_size, PYTHON_BATCH_ROWS))
        yield from _records(lambda: header, chunks, options, dialect, schema, progress=progress)
    except UnicodeDecodeError as exc:
        msg = f"the content is not {options.character_set} text ({exc.reason})"
        raise record_error(progress.given + 1, None, None, msg) from None
    except csv.Error as exc:
        raise record_error(progress.given + 1, None, None, f"not valid CSV: {exc}") from None
    except Malformed as exc:
        raise record_error(progress.given + 1, exc.line, None, f"not valid CSV: {exc}") from None
    finally:
        text.detach()


def _row_chunks(rows: Iterator[list[str]], size: int) -> Iterator[_csv_arrow.RowColumns]:
    """*rows* in chunks of *size*; on a bad row, the rows before it, then its error.

    So the error's record number counts every record given before it (NiFi's readers return
    the records before a bad one).
    """
    while True:
        chunk: list[list[str]] = []
        try:
            chunk.extend(itertools.islice(rows, size))  # keeps the rows read before a failure
        except (csv.Error, UnicodeDecodeError, Malformed):
            if chunk:
                yield _csv_arrow.RowColumns(chunk)
            raise
        if not chunk:
            return
        yield _csv_arrow.RowColumns(chunk)


def _records(
    header_of: Callable[[], list[str] | None],
    chunks: Iterator[_csv_arrow.Columns],
    options: CsvReaderOptions,
    dialect: CsvDialect,
    schema: RecordSchema | None,
    *,
    progress: _Progress,
) -> Iterator[pa.RecordBatch]:
    """The records of *chunks* (the header's, once the first chunk is read) under *schema*.

    With no schema, NiFi's CSV inference over the first ``inference_sample`` rows; a row the
    ``csv`` module cannot give inside them ends the sample: the records before it come first,
    then its error (so the error counts them).
    """
    failed: Exception | None = None
    head: list[_csv_arrow.Columns] = []
    first = next(chunks, None)
    if first is not None:
        head.append(first)
    header = header_of()
    if header is not None:
        header = [
            clean(v, dialect, trim_double_quote=options.trim_double_quote) or "" for v in header
        ]
        _check_duplicates(header, options)
    if schema is None:
        count = sum(c.num_rows for c in head)
        while head and count < options.inference_sample:
            try:
                chunk = next(chunks, None)
            except (csv.Error, UnicodeDecodeError, Malformed) as exc:
                failed = exc
                break
            if chunk is None:
                break
            head.append(chunk)
            count += chunk.num_rows
        sample = _csv_arrow.joined(head).head(options.inference_sample)
        if header is None:
            header = [f"field_{i}" for i in range(sample.width)]
        columns = _header_map(header)  # inference reads each name's last column
        schema = infer_schema(
            columns,
            sample,
            dialect,
            trim_double_quote=options.trim_double_quote,
            temporal=options.temporal,
        )
    progress.schema = schema
    positions = _positions(schema, header, options)
    convert = functools.partial(
        _convert,
        schema=schema,
        arrow=schema.to_arrow(),
        temporal=options.temporal,
        clean=functools.partial(
            clean_column, dialect=dialect, trim_double_quote=options.trim_double_quote
        ),
    )
    empty = True
    for chunk in _then(head, chunks if failed is None else iter(())):
        empty = False
        yield from _batch(chunk, positions, before=progress.given, convert=convert)
        progress.given += chunk.num_rows
    if failed is not None:
        raise failed
    if empty and schema.fields:  # a header alone still names the fields (NiFi's reader knows them)
        yield pa.RecordBatch.from_pylist([], schema=schema.to_arrow())


def _then(
    head: list[_csv_arrow.Columns], rest: Iterator[_csv_arrow.Columns]
) -> Iterator[_csv_arrow.Columns]:
    """*head*'s chunks, then *rest*'s.

    *head* is emptied once read: the inference sample is not held for the whole content.
    """
    while head:
        yield head.pop(0)
    yield from rest


def _without_bom(encoding: str) -> str:
    """The codec that drops a leading UTF-8 byte order mark, as NiFi's BOMInputStream does."""
    return "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding


def _rows(text: IO[str], dialect: CsvDialect) -> Iterator[list[str]]:
    """The rows of *text*, split by the ``csv`` module as Commons CSV splits them.

    The module reads strictly: it refuses a character after a closing quote (its loose mode
    appends it to the value), and the refused record is read again under Commons CSV's rule
    (:func:`._csv_quotes.reread`: whitespace there dropped, anything else refused).
    """
    lines: Any = text
    if dialect.comment:
        marker = dialect.comment
        lines = (line for line in text if not line.startswith(marker))
    end = _End(dialect)
    if dialect.escape:
        lines = _commons_escapes(lines, dialect, end)
    record: list[str] = []  # the lines of the record being read
    kept = _kept(lines, record)
    reader = csv.reader(
        itertools.chain(kept, end),
        delimiter=dialect.delimiter,
        quotechar=dialect.quote or '"',
        quoting=csv.QUOTE_NONE if dialect.quote is None else csv.QUOTE_MINIMAL,
        escapechar=dialect.escape,
        doublequote=True,
        skipinitialspace=dialect.ignore_surrounding_spaces,
        strict=dialect.quote is not None,
    )
    reread_lines = 0  # lines read again past the one the module refused (it did not count them)
    while True:
        try:
            read = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            given = len(record)
            read = _reread(exc, record, kept, dialect, end, line_num=reader.line_num + reread_lines)
            reread_lines += len(record) - given
        record.clear()
        row = end.judge(read, reader.line_num + reread_lines) if end.reached else read
        if row is None:
            return
        if not row:
            if not dialect.ignore_empty_lines:
                yield [""]
            continue
        yield row


def _kept(lines: Iterator[str], record: list[str]) -> Iterator[str]:
    """*lines*, each kept in *record* too (emptied once its record is read)."""
    for line in lines:
        record.append(line)
        yield line


def _reread(
    exc: csv.Error,
    record: list[str],
    more: Iterator[str],
    dialect: CsvDialect,
    end: _End,
    *,
    line_num: int,
) -> list[str]:
    """The record the strict ``csv`` module refused, as Commons CSV reads it.

    Args:
        exc: the module's error.
        record: the record's lines the module read.
        more: the lines after them.
        dialect: the CSV format.
        end: the probe after the content's last line.
        line_num: the lines the module read (the probe too, once given) and those read again.

    Raises:
        csv.Error: *exc*, when it is not about a quoted value.
        AfterQuote: a closing quote is followed by a character Commons CSV refuses.
        Unfinished: the content ends inside a quoted value (or after an escape character).
    """
    message = str(exc)
    if message != "unexpected end of data" and "expected after" not in message:
        raise exc
    lines = list(record)
    last = line_num - end.reached  # the probe is not the content's
    try:
        return reread(lines, more, dialect, last - len(lines) + 1)
    except Unfinished:
        end.check_escape(last + len(record) - len(lines))
        raise


#: The probe's value (a private-use character: :class:`_End` never mistakes content for it).
_MARK = "\ue000"


class _End:
    """A probe line after the content's last, and what the row it ends was.

    The ``csv`` module gives a row that ends with an escape character as if it were whole;
    Commons CSV raises there. The module also keeps a record open past the end of its last line
    when an unquoted value there holds an escaped line break; Commons CSV ends it at the
    content's end. The probe, a separator and :data:`_MARK`, tells these apart: after a whole
    record it is a row of its own (``["", MARK]``); after an open unquoted value it is the
    row's next value. (Inside an open quoted value the strict module refuses the content's end:
    :func:`_reread`.)

    Attributes:
        reached: the module asked for a line past the last (and was given the probe).
        last_line: the content's last line, escapes rewritten (kept where there are escapes).
    """

    def __init__(self, dialect: CsvDialect) -> None:
        self.dialect = dialect
        self.reached = False
        self.last_line = ""

    def __iter__(self) -> _End:
        return self

    def __next__(self) -> str:
        if self.reached:
            raise StopIteration
        self.reached = True
        return self.dialect.delimiter + _MARK

    def judge(self, row: list[str], line_num: int) -> list[str] | None:
        """*row*, the one the probe ended, as Commons CSV reads it: None for the probe's own.

        Raises:
            Unfinished: Commons CSV raises on the content's end.
        """
        dialect = self.dialect
        line_num -= 1  # the probe's line
        self.check_escape(line_num)
        if row[-1] == _MARK:
            return None if row == ["", _MARK] else row[:-1]
        # the probe inside a value: only a quoted one holds it, and the strict module refuses it
        raise Unfinished(open_quote_message(line_num, dialect.quote or '"'), line_num)

    def check_escape(self, line_num: int) -> None:
        """Refuse a content that ends with an escape character (on line *line_num*).

        Raises:
            Unfinished: the last line ends with an escape character that escapes nothing.
        """
        dialect = self.dialect
        if _odd_escapes(self.last_line, dialect.escape):
            msg = (
                "EOF whilst processing escape sequence: the content ends with the escape "
                f"character {dialect.escape!r} on line {line_num}; the content is cut short, "
                "or the escape character should itself be escaped"
            )
            raise Unfinished(msg, line_num)


def _odd_escapes(text: str, escape: str | None) -> bool:
    """Whether *text* ends with an escape character that escapes nothing."""
    if not escape or not text.endswith(escape):
        return False
    return (len(text) - len(text.rstrip(escape))) % 2 == 1


_CONTROL = {"r": "\r", "n": "\n", "t": "\t", "b": "\b", "f": "\f"}


def _commons_escapes(lines: Any, dialect: CsvDialect, end: _End) -> Iterator[str]:
    r"""Lines rewritten so the csv module unescapes as Commons CSV does.

    An escaped delimiter,
    quote or escape is that character, ``\\n`` ``\\r`` ``\\t`` ``\\b`` ``\\f`` are control
    characters, and an escape before any other character stays (MySQL's ``\\N`` null).
    """
    escape = dialect.escape or ""
    meta = {dialect.delimiter, escape, dialect.quote or "", dialect.comment or ""} - {""}
    pattern = re.compile(re.escape(escape) + r"(.)", re.DOTALL)

    def rewrite(match: re.Match[str]) -> str:
        char = match.group(1)
        if char in meta or char in "\r\n":
            return match.group(0)
        if char in _CONTROL:
            return escape + _CONTROL[char]
        return escape + escape + char

    out = ""
    for line in lines:
        out = pattern.sub(rewrite, line) if escape in line else line
        yield out
    end.last_line = out  # as the csv module read it


def _check_duplicates(header: list[str], options: CsvReaderOptions) -> None:
    """Commons CSV's DISALLOW mode, for Allow Duplicate Header Names false.

    The property is Custom Format's (the predefined formats allow repeats); blank names count as
    one name, as Commons CSV counts them.
    """
    if options.allow_duplicate_header_names or options.ignore_header_column_names:
        return
    if options.csv_format not in ("custom", "Custom Format"):
        return
    seen: set[str] = set()
    for name in header:
        key = name if name.strip() else ""
        if key in seen:
            msg = (
                f'The header contains a duplicate name: "{name}" in [{", ".join(header)}]: '
                f"the header names the column {name!r} twice; set Allow Duplicate Header Names "
                "to true or rename the column"
            )
            raise RecordError(msg, record=0, line=1, field=name)
        seen.add(key)


def _header_map(header: list[str]) -> dict[str, int]:
    """Commons CSV's header map: each name to its last column, names in first-seen order."""
    where: dict[str, int] = {}
    for index, name in enumerate(header):
        where[name] = index
    return where


def _positions(
    schema: RecordSchema, header: list[str] | None, options: CsvReaderOptions
) -> list[int | None]:
    """For each schema field, the column that holds it (None: no column does).

    As NiFi's CSVRecordReader: the header map's names, ordered by their (last) column, take the
    columns one by one from the first. With a repeated name the values shift left and the last
    columns are dropped (``a,a,b`` over ``1,2,3`` is a=1, b=2): NiFi's "unknown_field_index_N"
    values, which schema-aware writers do not write. FastCSVRecordReader does the same;
    JacksonCSVRecordReader puts column i under header name i, so a repeated name holds its last
    column's value (``a,a,b`` is a=2, b=3).
    """
    if header is None or options.ignore_header_column_names:
        return list(range(len(schema.fields)))
    columns = _header_map(header)
    if options.csv_parser in ("jackson-csv", "Jackson CSV"):
        where = columns  # each name's last column
    else:
        names = sorted(columns, key=columns.__getitem__)
        where = {name: position for position, name in enumerate(names)}
    positions: list[int | None] = []
    for field in schema.fields:
        index = where.get(field.name)
        if index is None:
            index = next((where[a] for a in field.aliases if a in where), None)
        positions.append(index)
    return positions


def _batch(
    rows: _csv_arrow.Columns,
    positions: list[int | None],
    *,
    before: int,
    convert: Callable[[_csv_arrow.Columns, list[int | None]], pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """The batch of *rows*; when a value does not fit, the rows before it, then the error."""
    try:
        yield convert(rows, positions)
    except BadValue as bad:
        if bad.row:
            yield convert(rows.head(bad.row), positions)
        raise record_error(before + bad.row + 1, None, bad.field, str(bad)) from None


def _convert(
    rows: _csv_arrow.Columns,
    positions: list[int | None],
    *,
    schema: RecordSchema,
    arrow: pa.Schema,
    temporal: TemporalFormats,
    clean: Callable[[pa.Array], pa.Array],
) -> pa.RecordBatch:
    arrays = []
    for field, position in zip(schema.fields, positions, strict=True):
        if position is None:
            strings = pa.nulls(rows.num_rows, pa.string())
        elif (cleaned := rows.cleaned.get(position)) is not None:
            strings = cleaned  # the inference cleaned it (same dialect, same rows)
        else:
            strings = clean(rows.column(position))
        parsed = rows.parsed.get(position) if position is not None else None
        arrays.append(column(strings, field, temporal, parsed=parsed))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow)
