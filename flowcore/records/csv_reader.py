"""NiFi's CSVReader as a codec: CSV content to bounded Arrow record batches.

Rows are split by Python's C ``csv`` reader (it has every option NiFi's CSVReader has: value
separator, quote and escape characters, no quote at all for MySQL; comment lines are dropped
before it), ``batch_size`` rows at a time; each batch's columns are converted to the schema's
types with Arrow's vectorised casts, so no per-value Python work is done for numbers, booleans
and strings. As NiFi's reader: values are trimmed ("Trim Fields"), one pair of surrounding
double quotes is removed, an empty value or the "Null String" is null, a row shorter than the
header leaves the rest null and a longer one drops the extra values.
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
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import ConfigurationError, RecordError
from flowcore.records import _csv_arrow, formats
from flowcore.records._batches import record_error
from flowcore.records.csv_format import QUOTE_MINIMAL, CsvDialect, dialect_for
from flowcore.records.inference import FieldTypeInference, infer_text_type
from flowcore.records.options import nifi
from flowcore.records.schema import (
    BOOLEAN,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    INTEGRAL,
    LONG,
    STRING,
    TIME,
    TIMESTAMP,
    ChoiceType,
    DataType,
    RecordField,
    RecordSchema,
    SimpleType,
    arrow_type,
)
from flowcore.records.values import FieldError, TemporalFormats, coerce

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
        yield from _read_python(split.replay(), options, dialect, known, progress)


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
    finally:
        text.detach()


def _row_chunks(rows: Iterator[list[str]], size: int) -> Iterator[_csv_arrow.RowColumns]:
    while chunk := list(itertools.islice(rows, size)):
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

    With no schema, NiFi's CSV inference over the first ``inference_sample`` rows.
    """
    head: list[_csv_arrow.Columns] = []
    first = next(chunks, None)
    if first is not None:
        head.append(first)
    header = header_of()
    if header is not None:
        header = [_clean(v, dialect, options) or "" for v in header]
        _check_duplicates(header, options)
    if schema is None:
        count = sum(c.num_rows for c in head)
        while head and count < options.inference_sample:
            chunk = next(chunks, None)
            if chunk is None:
                break
            head.append(chunk)
            count += chunk.num_rows
        sample = _csv_arrow.joined(head).head(options.inference_sample)
        if header is None:
            header = [f"field_{i}" for i in range(sample.width)]
        columns = _header_map(header)  # inference reads each name's last column
        schema = _infer_schema(columns, sample, dialect, options)
    progress.schema = schema
    positions = _positions(schema, header, options)
    convert = functools.partial(
        _convert,
        schema=schema,
        arrow=schema.to_arrow(),
        temporal=options.temporal,
        clean=functools.partial(_clean_column, dialect=dialect, options=options),
    )
    empty = True
    for chunk in _then(head, chunks):
        empty = False
        yield from _batch(chunk, positions, before=progress.given, convert=convert)
        progress.given += chunk.num_rows
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


def _infer_schema(
    columns: dict[str, int],
    head: list[list[str]] | _csv_arrow.Columns,
    dialect: CsvDialect,
    options: CsvReaderOptions,
) -> RecordSchema:
    """NiFi's ``CSVSchemaInference`` over the sample *head*, a column at a time.

    The same schema as :func:`~flowcore.records.inference.infer_text_schema` over the cleaned
    rows: a field's type depends only on which value types occur and in which order they
    first occur, so each column's types are found with Arrow's kernels and added once each.
    """
    sample = _csv_arrow.RowColumns(head) if isinstance(head, list) else head
    fields = []
    for name, index in columns.items():
        strings = _clean_column(sample.column(index), dialect, options)
        inference = FieldTypeInference()
        for dtype in _text_types(strings, options.temporal):
            inference.add(dtype)
        fields.append(RecordField(name, inference.to_type(), True))
    return RecordSchema(fields)


#: The types :func:`infer_text_type` gives, by the codes :func:`_text_types` uses.
_TEXT_TYPES = (INT, LONG, FLOAT, DOUBLE, BOOLEAN, TIMESTAMP, DATE, TIME, STRING)
_NONE = len(_TEXT_TYPES)
_NUMBER = r"^-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)$"
_FLOAT_MAX = 3.4028234663852886e38
_FLOAT_MIN = 1.401298464324817e-45  # Java's Float.MIN_VALUE, as NiFi compares with it
#: What Python's ``str.strip()`` takes off ASCII text (the temporal test strips so).
_PY_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def _text_types(strings: pa.Array, temporal: TemporalFormats) -> list[DataType]:
    r"""The types :func:`infer_text_type` gives *strings*' values, each once, in first order.

    ASCII values are classified by Arrow's kernels (RE2's ``[0-9]`` is Python's ``\d`` on
    them); other values, and ASCII values that may be a date, time or timestamp, by
    :func:`infer_text_type` itself.
    """
    # CSVSchemaInference takes one more pair of quotes off than the reader does
    text = _unquoted(strings)
    codes = np.full(len(text), _NONE, dtype=np.int8)
    ascii_ = pc.fill_null(pc.and_(pc.string_is_ascii(text), pc.not_equal(text, "")), False)
    numeric = pc.and_(ascii_, pc.fill_null(pc.match_substring_regex(text, _NUMBER), False))
    point = pc.and_(numeric, pc.match_substring(text, "."))
    whole = pc.and_(numeric, pc.invert(point))
    try:
        floats = pc.cast(pc.if_else(point, text, None), pa.float64())
        ints = pc.cast(pc.if_else(whole, text, None), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # beyond a long: one by one
        return _types_one_by_one(text.to_pylist(), temporal)
    wide = pc.or_(pc.greater(floats, _FLOAT_MAX), pc.less(floats, _FLOAT_MIN))
    small = pc.and_(pc.greater_equal(ints, -(2**31)), pc.less(ints, 2**31))
    lower = pc.utf8_lower(text)
    boolean = pc.and_(ascii_, pc.or_(pc.equal(lower, "true"), pc.equal(lower, "false")))
    rest = pc.and_(ascii_, pc.invert(pc.or_(numeric, pc.fill_null(boolean, False))))
    for mask, code in (
        (pc.and_(whole, small), 0),
        (pc.and_(whole, pc.invert(small)), 1),
        (pc.and_(point, pc.invert(wide)), 2),
        (pc.and_(point, wide), 3),
        (boolean, 4),
        (rest, 8),
    ):
        codes[pc.fill_null(mask, False).to_numpy(zero_copy_only=False)] = code
    # one by one: non-ASCII values, and what may match a date/time/timestamp format
    slow = pc.and_(pc.is_valid(text), pc.invert(ascii_))
    slow = pc.and_(pc.not_equal(text, ""), slow)
    maybe = _maybe_temporal(text, temporal) if pc.any(rest).as_py() else None
    if maybe is not None and pc.any(pc.and_(rest, maybe)).as_py():
        maybe = pc.and_(rest, maybe)
        first = _first_temporal(text, temporal)
        if first is not None:  # what the first format Arrow parses exactly is that type
            parsed, code = first
            decided = pc.fill_null(pc.and_(maybe, pc.is_valid(parsed)), False)
            codes[decided.to_numpy(zero_copy_only=False)] = code
            maybe = pc.and_(maybe, pc.invert(decided))
        slow = pc.or_(slow, maybe)
    slow_rows = pc.indices_nonzero(pc.fill_null(slow, False)).to_numpy()
    if len(slow_rows):
        for row, value in zip(slow_rows, text.take(slow_rows).to_pylist(), strict=True):
            dtype = infer_text_type(value, temporal)
            codes[row] = _NONE if dtype is None else _TEXT_TYPES.index(dtype)
    found = pc.unique(pa.array(codes)).to_pylist()  # in order of first occurrence
    return [_TEXT_TYPES[code] for code in found if code != _NONE]


def _first_temporal(text: pa.Array, temporal: TemporalFormats) -> tuple[pa.Array, int] | None:
    """The values the first configured format (timestamp, date, time: NiFi's order) parses.

    :meth:`formats.DateTimePattern.parse_column` parses only what ``parse_datetime`` would
    (null: not known), and a text value that parses in the first format NiFi tries is of that
    format's type, so the values it parses need no test one by one.
    """
    for dtype, java in (
        (TIMESTAMP, temporal.timestamp),
        (DATE, temporal.date),
        (TIME, temporal.time),
    ):
        if java:
            parsed = formats.pattern(java).parse_column(text)
            return None if parsed is None else (parsed, _TEXT_TYPES.index(dtype))
    return None


def _maybe_temporal(text: pa.Array, temporal: TemporalFormats) -> pa.Array | None:
    """Which ASCII values may match a configured format (None: no format is configured).

    The formats' own regexes, run by RE2 over the stripped values: a value none matches is
    not temporal; one that matches is tested by :func:`infer_text_type`.
    """
    patterns = [p for p in (temporal.timestamp, temporal.date, temporal.time) if p]
    if not patterns:
        return None
    stripped = pc.utf8_trim(text, _PY_SPACE)
    maybe = None
    for java in patterns:
        regex = formats.pattern(java).regex.pattern
        try:
            found = pc.match_substring_regex(stripped, "(?i)^" + regex.replace(r"\Z", "$"))
        except pa.ArrowInvalid:  # not RE2 syntax: every value is tested one by one
            return pc.is_valid(text)
        maybe = found if maybe is None else pc.or_(maybe, found)
    return maybe


def _types_one_by_one(values: list[str | None], temporal: TemporalFormats) -> list[DataType]:
    seen: dict[DataType, None] = {}
    for value in values:
        dtype = infer_text_type(value, temporal)
        if dtype is not None:
            seen.setdefault(dtype)
    return list(seen)


def _without_bom(encoding: str) -> str:
    """The codec that drops a leading UTF-8 byte order mark, as NiFi's BOMInputStream does."""
    return "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding


def _rows(text: IO[str], dialect: CsvDialect) -> Iterator[list[str]]:
    lines: Any = text
    if dialect.comment:
        marker = dialect.comment
        lines = (line for line in text if not line.startswith(marker))
    if dialect.escape:
        lines = _commons_escapes(lines, dialect)
    reader = csv.reader(
        lines,
        delimiter=dialect.delimiter,
        quotechar=dialect.quote or '"',
        quoting=csv.QUOTE_NONE if dialect.quote is None else csv.QUOTE_MINIMAL,
        escapechar=dialect.escape,
        doublequote=True,
        skipinitialspace=dialect.ignore_surrounding_spaces,
        strict=False,
    )
    for row in reader:
        if not row:
            if not dialect.ignore_empty_lines:
                yield [""]
            continue
        yield row


_CONTROL = {"r": "\r", "n": "\n", "t": "\t", "b": "\b", "f": "\f"}


def _commons_escapes(lines: Any, dialect: CsvDialect) -> Iterator[str]:
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

    for line in lines:
        yield pattern.sub(rewrite, line) if escape in line else line


def _clean(value: str, dialect: CsvDialect, options: CsvReaderOptions) -> str | None:
    if dialect.trim or dialect.ignore_surrounding_spaces:
        value = value.strip(_TRIMMED)
    if dialect.null_string is not None and value == dialect.null_string:
        return None
    if options.trim_double_quote and len(value) > 1 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return value or None


def _clean_column(strings: pa.Array, dialect: CsvDialect, options: CsvReaderOptions) -> pa.Array:
    """:func:`_clean` for a whole column at once, with Arrow's string kernels."""
    if dialect.trim or dialect.ignore_surrounding_spaces:
        strings = pc.utf8_trim(strings, _TRIMMED)
    if dialect.null_string is not None:
        strings = pc.if_else(pc.equal(strings, dialect.null_string), None, strings)
    if options.trim_double_quote:
        # one pair, across lines too; a bare pair leaves "" (null), as NiFi's trim then isEmpty
        strings = _unquoted(strings)
    empty = pc.equal(strings, "")
    return pc.if_else(empty, None, strings) if pc.any(empty).as_py() else strings


def _unquoted(strings: pa.Array) -> pa.Array:
    """The values without one pair of surrounding double quotes (``^"(.*)"$``, vectorised).

    The mask first: a regex replacement over every value costs ten times the rare values
    that are quoted.
    """
    opens = pc.starts_with(strings, '"')
    if not pc.any(opens).as_py():
        return strings
    quoted = pc.and_(
        pc.and_(opens, pc.ends_with(strings, '"')), pc.greater_equal(pc.utf8_length(strings), 2)
    )
    return pc.if_else(quoted, pc.utf8_slice_codeunits(strings, 1, -1), strings)


#: What Commons CSV's trim takes off both ends: every character up to a space.
_TRIMMED = "".join(chr(c) for c in range(33))


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
    values, which schema-aware writers do not write.
    """
    if header is None or options.ignore_header_column_names:
        return list(range(len(schema.fields)))
    columns = _header_map(header)
    names = sorted(columns, key=columns.__getitem__)
    where = {name: position for position, name in enumerate(names)}
    positions: list[int | None] = []
    for field in schema.fields:
        index = where.get(field.name)
        if index is None:
            index = next((where[a] for a in field.aliases if a in where), None)
        positions.append(index)
    return positions


class _BadValue(Exception):
    def __init__(self, row: int, field: str, message: str) -> None:
        super().__init__(message)
        self.row = row
        self.field = field


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
    except _BadValue as bad:
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
        else:
            strings = clean(rows.column(position))
        arrays.append(_column(strings, field, temporal))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow)


_VECTOR_CASTS = frozenset({*INTEGRAL, "float", "double", "decimal"}) - {"bigint"}


def _column(strings: pa.Array, field: RecordField, temporal: TemporalFormats) -> pa.Array:
    dtype = field.type
    target = arrow_type(dtype)
    if not field.nullable and strings.null_count:
        row = strings.is_null().to_pylist().index(True)
        raise _BadValue(row, field.name, "the field is not nullable but has no value")
    if isinstance(dtype, SimpleType) and dtype.name in ("string", "uuid"):
        return strings
    if isinstance(dtype, SimpleType) and dtype.name == "char":
        return pc.utf8_slice_codeunits(strings, 0, 1)
    if dtype.name == "boolean":
        lower = pc.utf8_lower(strings)
        true = pc.equal(lower, "true")
        bad = pc.and_(pc.invert(pc.or_(true, pc.equal(lower, "false"))), pc.is_valid(strings))
        if pc.any(bad).as_py():
            _raise_first(strings.to_pylist(), dtype, field.name, temporal)
        return true
    if dtype.name in _VECTOR_CASTS:
        try:
            return pc.cast(strings, target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # Arrow's cast refused a value: convert one by one (NiFi is more lenient)
    if dtype.name in ("timestamp", "date"):
        return _temporal_column(strings, field, temporal, target)
    return pa.array(_coerce_all(strings.to_pylist(), dtype, field.name, temporal), target)


def _temporal_column(
    strings: pa.Array, field: RecordField, temporal: TemporalFormats, target: pa.DataType
) -> pa.Array:
    """A DATE or TIMESTAMP column, vectorised where that is exact, else value by value.

    Arrow parses the values it parses exactly as NiFi's rules would
    (:meth:`formats.DateTimePattern.parse_column`); the rest go through :func:`coerce`.
    """
    kind = field.type.name
    text = (
        (temporal.timestamp or formats.DEFAULT_TIMESTAMP)
        if kind == "timestamp"
        else (temporal.date or formats.DEFAULT_DATE)
    )
    parsed = formats.pattern(text).parse_column(strings)
    if parsed is None:
        return pa.array(_coerce_all(strings.to_pylist(), field.type, field.name, temporal), target)
    if kind == "date":
        parsed = pc.cast(pc.floor_temporal(parsed, unit="day"), pa.date32())
    missing = pc.and_(pc.is_null(parsed), pc.is_valid(strings))
    if not pc.any(missing).as_py():
        return parsed.cast(target)
    rows = pc.indices_nonzero(missing)
    try:
        rest = _coerce_all(strings.take(rows).to_pylist(), field.type, field.name, temporal)
    except _BadValue as bad:
        raise _BadValue(rows[bad.row].as_py(), bad.field, str(bad)) from None
    return pc.replace_with_mask(parsed.cast(target), missing, pa.array(rest, target))


def _coerce_all(
    values: list[str | None], dtype: DataType, name: str, temporal: TemporalFormats
) -> list[Any]:
    cache: dict[str, Any] = {}
    out = []
    for row, value in enumerate(values):
        if value is None:
            out.append(None)
            continue
        if value not in cache:
            try:
                cache[value] = _coerce_text(value, dtype, name, temporal)
            except FieldError as exc:
                raise _BadValue(row, name, str(exc)) from None
        out.append(cache[value])
    return out


def _coerce_text(value: str, dtype: DataType, name: str, temporal: TemporalFormats) -> Any:
    if isinstance(dtype, ChoiceType):
        typed = _typed_text(value, temporal)
        return coerce(typed, dtype, temporal, name)
    return coerce(value, dtype, temporal, name)


def _typed_text(value: str, temporal: TemporalFormats) -> Any:
    """A CSV value as the Python value of the type NiFi infers for it (for a CHOICE)."""
    inferred = infer_text_type(value, temporal)
    if inferred is None:
        return value
    if inferred.name in ("int", "long"):
        return int(value)
    if inferred.name in ("float", "double"):
        return float(value)
    if inferred.name == "boolean":
        return value.lower() == "true"
    return value


def _raise_first(
    values: list[str | None], dtype: DataType, name: str, temporal: TemporalFormats
) -> None:
    _coerce_all(values, dtype, name, temporal)
