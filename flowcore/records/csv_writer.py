"""NiFi's CSVRecordSetWriter as a codec: Arrow record batches to CSV, byte for byte as NiFi.

NiFi prints with Apache Commons CSV's ``CSVPrinter`` (``WriteCSVResult``); its quoting rules are
reproduced here: ``MINIMAL`` quotes a value that holds the delimiter, the quote or escape
character, a line break, starts with a character up to ``#`` or ends with one up to a space (and
an empty first value of a record); inside quotes the quote and escape characters are preceded by
the escape character (or the quote doubled without one). ``NONE`` escapes instead of quoting.
``NON_NUMERIC`` quotes all but the values of numeric fields. A null prints as the "Null
String" (unquoted) or nothing. Numbers print as Java prints them (``8.0``, ``1.0E10``); dates,
times and timestamps as epoch milliseconds unless a format is set.
"""

from __future__ import annotations

import codecs
import datetime as dt
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import IO, Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import ConfigurationError
from flowcore.records import formats
from flowcore.records._batches import write_all
from flowcore.records.csv_format import (
    QUOTE_ALL,
    QUOTE_ALL_NON_NULL,
    QUOTE_MINIMAL,
    QUOTE_NON_NUMERIC,
    QUOTE_NONE,
    CsvDialect,
    dialect_for,
)
from flowcore.records.options import nifi
from flowcore.records.schema import DataType, RecordSchema, arrow_type, to_millis
from flowcore.records.values import JAVA_SPACE, decoder, to_text

__all__ = ["CsvRecordWriter", "CsvWriterOptions", "write_csv"]

_NUMERIC = frozenset({"bigint", "byte", "decimal", "double", "float", "long", "int", "short"})


@attrs.frozen
class CsvWriterOptions:
    r"""CSVRecordSetWriter's properties (NiFi's display names in the field docs), NiFi's defaults.

    Attributes:
        csv_format: "CSV Format" (see :mod:`flowcore.records.csv_format`).
        value_separator: "Value Separator", Custom only.
        quote_character: "Quote Character", Custom only.
        escape_character: "Escape Character", Custom only.
        comment_marker: "Comment Marker", Custom only (NiFi's writer prints no comments).
        null_string: "Null String", Custom only.
        trim_fields: "Trim Fields", Custom only.
        quote_mode: "Quote Mode": ``ALL``, ``MINIMAL``, ``NON_NUMERIC``, ``NONE``, Custom only.
        record_separator: "Record Separator" (``\n`` as text), Custom only.
        include_header_line: "Include Header Line".
        include_trailing_delimiter: "Include Trailing Delimiter", Custom only.
        character_set: "Character Set".
        date_format / time_format / timestamp_format: "Date Format", "Time Format",
            "Timestamp Format" (None: epoch millis).
    """

    csv_format: str = nifi("CSV Format", "custom")
    value_separator: str = nifi("Value Separator", ",")
    quote_character: str = nifi("Quote Character", '"')
    escape_character: str | None = nifi("Escape Character", "\\")
    comment_marker: str | None = nifi("Comment Marker", None)
    null_string: str | None = nifi("Null String", None)
    trim_fields: bool = nifi("Trim Fields", True)
    quote_mode: str = nifi("Quote Mode", QUOTE_MINIMAL)
    record_separator: str = nifi("Record Separator", "\\n")
    include_header_line: bool = nifi("Include Header Line", True)
    include_trailing_delimiter: bool = nifi("Include Trailing Delimiter", False)
    character_set: str = nifi("Character Set", "UTF-8")
    date_format: str | None = nifi("Date Format", None)
    time_format: str | None = nifi("Time Format", None)
    timestamp_format: str | None = nifi("Timestamp Format", None)

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
            quote_mode=self.quote_mode,
            record_separator=self.record_separator,
            trailing_delimiter=self.include_trailing_delimiter,
        )


class CsvRecordWriter:
    """Writes record batches as NiFi's WriteCSVResult (the header first, once)."""

    def __init__(
        self,
        stream: IO[bytes],
        schema: RecordSchema,
        options: CsvWriterOptions = CsvWriterOptions(),
    ) -> None:
        self._stream = stream
        self._schema = schema
        self._options = options
        self._printer = CsvPrinter(options.dialect())
        self._count = 0
        self._header_written = False
        self._finished = False
        try:
            "".encode(options.character_set)
        except LookupError:
            msg = f"Character Set {options.character_set!r} is not a known encoding"
            raise ConfigurationError(msg) from None
        self._utf8 = codecs.lookup(options.character_set).name == "utf-8"
        self._temporal = {
            "date": options.date_format,
            "time": options.time_format,
            "timestamp": options.timestamp_format,
        }

    @property
    def record_count(self) -> int:
        """Records written so far."""
        return self._count

    def _header(self, out: list[str]) -> None:
        if self._options.include_header_line and not self._header_written:
            out.append(self._printer.record([(name, False) for name in self._schema.names]))
        self._header_written = True

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Write every record of *batch*.

        Each column is rendered to text, quoted or escaped and joined into records with Arrow's
        string kernels (:meth:`CsvPrinter.column`); a format whose escaping the kernels cannot
        say exactly (:meth:`CsvPrinter.vectorised`) prints record by record.
        """
        fields = self._schema.fields
        if not fields or not self._printer.vectorised:
            self._write_records(batch)
            return
        out: list[str] = []
        self._header(out)
        printer = self._printer
        cells = [
            printer.column(
                self._texts(_column(batch, f.name, f.type), f.type),
                numeric=f.type.name in _NUMERIC,
                new_record=index == 0,
            )
            for index, f in enumerate(fields)
        ]
        if printer.d.trailing_delimiter:
            cells.append(pa.array([""] * batch.num_rows, pa.string()))
        lines = pc.binary_join_element_wise(*cells, printer.d.delimiter)
        lines = pc.binary_join_element_wise(lines, printer.d.record_separator, "")
        head = "".join(out).encode(self._options.character_set)
        body = _string_bytes(lines)
        if self._utf8:
            self._stream.write(head + bytes(body) if head else body)
        else:
            text = bytes(body).decode("utf-8")
            self._stream.write(head + text.encode(self._options.character_set))
        self._count += batch.num_rows

    def _texts(self, array: pa.Array, dtype: DataType) -> pa.Array:
        """:meth:`_column` as an Arrow string array, by Arrow's kernels where they can."""
        kind = dtype.name
        if kind in ("byte", "short", "int", "long"):
            return pc.cast(array, pa.string())
        if kind == "boolean":
            return pc.if_else(array, "true", "false")
        if kind in ("string", "uuid", "char", "enum"):
            return array.cast(pa.string())
        if kind in ("float", "double"):
            return formats.java_number_column(array, single=kind == "float")
        return pa.array(self._column(array, dtype), pa.string())

    def _write_records(self, batch: pa.RecordBatch | pa.Table) -> None:
        """:meth:`write` record by record through :meth:`CsvPrinter.record`."""
        out: list[str] = []
        self._header(out)
        fields = self._schema.fields
        columns = [self._column(_column(batch, f.name, f.type), f.type) for f in fields]
        numeric = [f.type.name in _NUMERIC for f in fields]
        record = self._printer.record
        for index in range(batch.num_rows):
            out.append(
                record(
                    [(column[index], flag) for column, flag in zip(columns, numeric, strict=True)]
                )
            )
            self._count += 1
        self._stream.write("".join(out).encode(self._options.character_set))

    def _column(self, array: pa.Array, dtype: DataType) -> list[str | None]:
        """The text of every value of *array* as NiFi's ``Record.getAsString`` gives it."""
        kind = dtype.name
        if kind in ("byte", "short", "int", "long"):
            return pc.cast(array, pa.string()).to_pylist()
        if kind == "boolean":
            return pc.if_else(array, "true", "false").to_pylist()
        if kind in ("string", "uuid", "char", "enum"):
            return array.to_pylist()
        if kind == "double":
            return [None if v is None else _double_text(v) for v in array.to_pylist()]
        if kind == "float":
            return formats.java_float_texts(array)
        if kind in ("date", "time", "timestamp") and not self._temporal.get(kind):
            return _millis_text(array, kind)
        decode = decoder(dtype)
        return [None if v is None else self._text(decode(v), kind) for v in array.to_pylist()]

    def _text(self, value: Any, kind: str) -> str:
        if isinstance(value, float):
            return (
                formats.java_float_str(value) if kind == "float" else formats.java_double_str(value)
            )
        if isinstance(value, Decimal):
            return str(value) if kind != "bigint" else str(int(value))
        if isinstance(value, (dt.date, dt.time)):
            return _temporal(value, self._temporal.get(kind))
        if isinstance(value, list):
            return "[" + ", ".join("null" if v is None else to_text(v) for v in value) + "]"
        return to_text(value)

    def finish(self) -> dict[str, str]:
        """End the record set (the header is written even with no record); NiFi's attributes."""
        if not self._finished:
            self._finished = True
            out: list[str] = []
            self._header(out)
            self._stream.write("".join(out).encode(self._options.character_set))
        return {"record.count": str(self._count), "mime.type": "text/csv"}


def write_csv(
    batches: Iterable[pa.RecordBatch],
    stream: IO[bytes],
    options: CsvWriterOptions = CsvWriterOptions(),
    schema: RecordSchema | None = None,
) -> dict[str, str]:
    """Write *batches* to *stream* as one CSV record set; returns NiFi's attributes."""
    return write_all(batches, schema, lambda found: CsvRecordWriter(stream, found, options))


def _double_text(value: float) -> str:
    """Java's Double.toString, with repr where the two agree (10^-3 to 10^7)."""
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7 or magnitude == 0:
        return repr(value)
    return formats.java_double_str(value)


def _millis_text(array: pa.Array, kind: str) -> list[str | None]:
    """Epoch millis (millis of the day for a time) of a temporal column, by Arrow casts."""
    if kind == "timestamp":
        return pc.cast(pc.cast(to_millis(array), pa.int64()), pa.string()).to_pylist()
    if kind == "date":
        days = pc.cast(pc.cast(array, pa.int32()), pa.int64())
        return pc.cast(pc.multiply(days, 86_400_000), pa.string()).to_pylist()
    return pc.cast(pc.cast(array, pa.int32()), pa.string()).to_pylist()


def _column(batch: pa.RecordBatch | pa.Table, name: str, dtype: DataType) -> pa.Array:
    """The column *name* of *batch* (all null when the batch has none)."""
    index = batch.schema.get_field_index(name)
    if index < 0:
        return pa.nulls(batch.num_rows, arrow_type(dtype))
    column = batch.column(index)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _string_bytes(strings: pa.Array) -> memoryview:
    """The UTF-8 bytes of every value of a string array with no nulls, one after another."""
    offsets = memoryview(strings.buffers()[1]).cast("i")
    start, stop = offsets[strings.offset], offsets[strings.offset + len(strings)]
    data = strings.buffers()[2]
    return memoryview(data)[start:stop] if data is not None else memoryview(b"")


def _temporal(value: dt.date | dt.time, pattern: str | None) -> str:
    if pattern:
        return formats.pattern(pattern).format(value)
    if isinstance(value, dt.datetime):
        delta = value - formats.EPOCH
    elif isinstance(value, dt.date):
        delta = dt.datetime(value.year, value.month, value.day) - formats.EPOCH
    else:
        return str(
            ((value.hour * 60 + value.minute) * 60 + value.second) * 1000
            + value.microsecond // 1000
        )
    return str(delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000)


class CsvPrinter:
    """Commons CSV's ``CSVPrinter.printRecord`` for one format.

    A record's text, with its record separator.
    """

    def __init__(self, dialect: CsvDialect) -> None:
        self.d = dialect
        self._escape = dialect.escape if dialect.escape else dialect.quote
        specials = {"\n", "\r", dialect.quote, self._escape, dialect.delimiter} - {None, ""}
        self._specials = re.compile("|".join(re.escape(c) for c in sorted(specials)))  # type: ignore[arg-type]

    @property
    def vectorised(self) -> bool:
        """Whether :meth:`column` gives :meth:`record`'s text for this format.

        Its replacements run one after another, so the characters they insert must not be
        ones a later replacement takes: the delimiter, quote and escape must be single,
        distinct characters, none a line break, ``n`` or ``r``.
        """
        d = self.d
        chars = [c for c in (d.delimiter, d.quote, d.escape) if c is not None]
        return all(len(c) == 1 and c not in "\r\nnr" for c in chars) and len(set(chars)) == len(
            chars
        )

    def column(self, texts: pa.Array, *, numeric: bool, new_record: bool) -> pa.Array:
        """:meth:`_value` of every text of a column at once (no nulls in the result).

        Args:
            texts: each value's text, null for a null value.
            numeric: the column is a number's (``NON_NUMERIC`` leaves it unquoted).
            new_record: the column is the record's first (an empty value is quoted).
        """
        d = self.d
        nulls = pc.is_null(texts)
        if d.trim:
            texts = pc.utf8_trim(texts, JAVA_SPACE)
        if d.quote and d.quote_mode != QUOTE_NONE:
            mode = d.quote_mode
            if mode in (QUOTE_ALL, QUOTE_ALL_NON_NULL) or (
                mode == QUOTE_NON_NUMERIC and not numeric
            ):
                quote: pa.Array | bool = True
            elif mode == QUOTE_NON_NUMERIC:
                quote = False
            else:
                quote = self._needs_quotes(texts, new_record)
            if quote is not False:
                quoted = self._quoted(texts)
                texts = quoted if quote is True else pc.if_else(quote, quoted, texts)
        elif d.escape:
            texts = self._escaped(texts)
        if d.null_string is None:
            null = ""
        elif d.quote_mode == QUOTE_ALL and d.quote:
            null = d.quote + d.null_string + d.quote
        else:
            null = d.null_string
        return pc.if_else(nulls, null, texts) if pc.any(nulls).as_py() else texts

    def _needs_quotes(self, texts: pa.Array, new_record: bool) -> pa.Array:
        """:meth:`_minimal_needs_quote` of every text."""
        first = pc.utf8_slice_codeunits(texts, 0, 1)
        last = pc.utf8_slice_codeunits(texts, -1, 1 << 30)
        needs = pc.or_(pc.less_equal(first, "#"), pc.less_equal(last, " "))
        specials = {"\n", "\r", self.d.quote, self._escape, self.d.delimiter} - {None, ""}
        for char in sorted(specials):  # type: ignore[type-var]
            needs = pc.or_(needs, pc.match_substring(texts, char))
        return pc.fill_null(pc.if_else(pc.equal(texts, ""), new_record, needs), False)

    def _quoted(self, texts: pa.Array) -> pa.Array:
        """The texts in quotes, the quote and escape characters escaped (:meth:`_with_quotes`)."""
        q = self.d.quote or '"'
        escape = self._escape or q
        if escape != q:
            texts = pc.replace_substring(texts, escape, escape + escape)
        texts = pc.replace_substring(texts, q, escape + q)
        return pc.binary_join_element_wise(q, texts, q, "")

    def _escaped(self, texts: pa.Array) -> pa.Array:
        """:meth:`_with_escapes` of every text (the escape first: later ones insert it)."""
        d = self.d
        escape = d.escape or ""
        texts = pc.replace_substring(texts, escape, escape + escape)
        texts = pc.replace_substring(texts, "\n", escape + "n")
        texts = pc.replace_substring(texts, "\r", escape + "r")
        for char in {d.delimiter, d.quote} - {None, "", escape}:
            texts = pc.replace_substring(texts, char, escape + char)  # type: ignore[arg-type]
        return texts

    def record(self, cells: Iterable[tuple[str | None, bool]]) -> str:
        """One record; each cell is its text (None for null) and whether it is a number."""
        parts = []
        for index, (text, numeric) in enumerate(cells):
            if index:
                parts.append(self.d.delimiter)
            parts.append(self._value(text, numeric, index == 0))
        if self.d.trailing_delimiter:
            parts.append(self.d.delimiter)
        parts.append(self.d.record_separator)
        return "".join(parts)

    def _value(self, text: str | None, numeric: bool, new_record: bool) -> str:
        d = self.d
        if text is None:
            if d.null_string is None:
                return ""
            if d.quote_mode == QUOTE_ALL and d.quote:
                return d.quote + d.null_string + d.quote
            return d.null_string
        if d.trim:
            text = _trim(text)
        if d.quote:
            return self._with_quotes(text, numeric, new_record)
        if d.escape:
            return self._with_escapes(text)
        return text

    def _with_quotes(self, text: str, numeric: bool, new_record: bool) -> str:
        d = self.d
        mode = d.quote_mode
        if mode in (QUOTE_ALL, QUOTE_ALL_NON_NULL):
            quote = True
        elif mode == QUOTE_NON_NUMERIC:
            quote = not numeric
        elif mode == QUOTE_NONE:
            return self._with_escapes(text)
        else:
            quote = self._minimal_needs_quote(text, new_record)
        if not quote:
            return text
        q = d.quote or '"'
        escape = self._escape or q
        if q in text or escape in text:
            text = "".join(escape + c if c in (q, escape) else c for c in text)
        return q + text + q

    def _minimal_needs_quote(self, text: str, new_record: bool) -> bool:
        if not text:
            return new_record
        if text[0] <= "#" or text[-1] <= " ":
            return True
        return self._specials.search(text) is not None

    def _with_escapes(self, text: str) -> str:
        escape = self.d.escape
        if not escape:
            return text
        out = []
        for c in text:
            if c == "\n":
                out.append(escape + "n")
            elif c == "\r":
                out.append(escape + "r")
            elif c in (escape, self.d.delimiter) or c == self.d.quote:
                out.append(escape + c)
            else:
                out.append(c)
        return "".join(out)


def _trim(text: str) -> str:
    """Commons CSV's trim: every character up to a space off both ends (Java's ``trim``)."""
    return text.strip(JAVA_SPACE)
