r"""NiFi's JsonRecordSetWriter as a codec: Arrow record batches to JSON, byte for byte as NiFi.

NiFi writes with Jackson (``WriteJsonResult``): no spaces by default (``[{"a":1},{"a":2}]``),
``One Line Per Object`` puts each record on its own line with no array around them, and
"Pretty Print JSON" uses Jackson's default pretty printer (``[ {`` / two-space indents /
``"a" : 1`` / ``} ]``). Numbers are Java's: a double as ``Double.toString``, or its plain form
when "Allow Scientific Notation" is false (NiFi's default); dates, times and timestamps are
epoch milliseconds unless a format is set. JSON has no NaN or infinity: with scientific
notation NiFi writes them as Jackson does, the strings ``"NaN"``, ``"Infinity"`` and
``"-Infinity"``; without it (the default) ``new BigDecimal("NaN")`` throws and the FlowFile
fails, here a :class:`~flowcore.errors.RecordError` naming the record and field. Strings escape
as Jackson does (control characters as ``\uXXXX`` in upper case, non-ASCII kept).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import IO, Any

import attrs
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import RecordError
from flowcore.records import formats
from flowcore.records._batches import record_error, write_all
from flowcore.records.options import nifi
from flowcore.records.schema import (
    ArrayType,
    ChoiceType,
    DataType,
    MapType,
    RecordSchema,
    RecordType,
    arrow_type,
    to_millis,
)
from flowcore.records.values import choose_option, decoder

__all__ = ["JsonRecordWriter", "JsonWriterOptions", "write_json"]

OUTPUT_ARRAY = "output-array"
OUTPUT_ONELINE = "output-oneline"
NEVER_SUPPRESS = "never-suppress"
ALWAYS_SUPPRESS = "always-suppress"
SUPPRESS_MISSING = "suppress-missing"


@attrs.frozen
class JsonWriterOptions:
    """JsonRecordSetWriter's properties (NiFi's names and internal values), NiFi's defaults.

    Attributes:
        output_grouping: "Output Grouping": ``output-array`` (Array) or ``output-oneline``
            (One Line Per Object).
        pretty_print: "Pretty Print JSON".
        suppress_nulls: "Suppress Null Values": ``never-suppress``, ``always-suppress`` or
            ``suppress-missing`` (here a null counts as present: Arrow cannot tell a missing
            field from a null one, so it writes nulls as ``never-suppress`` does).
        allow_scientific_notation: "Allow Scientific Notation".
        date_format: "Date Format" (None: epoch millis).
        time_format: "Time Format" (None: millis of the day).
        timestamp_format: "Timestamp Format" (None: epoch millis).
        mime_type: the ``mime.type`` the writer reports.
        timestamp_representation: "Timestamp Representation": ``AUTO`` (the format when set,
            else epoch millis), ``FORMATTED_STRING``, ``EPOCH_MILLISECONDS``, ``EPOCH_SECONDS``
            (a decimal with millisecond precision).
        quote_non_finite: not a NiFi property. NaN and infinities as Jackson's strings even
            when "Allow Scientific Notation" is false, where NiFi fails the FlowFile: for the
            content viewer, which shows records as they are rather than refusing them.
    """

    output_grouping: str = nifi(
        "Output Grouping",
        OUTPUT_ARRAY,
        validator=attrs.validators.in_((OUTPUT_ARRAY, OUTPUT_ONELINE)),
    )
    pretty_print: bool = nifi("Pretty Print JSON", False)
    suppress_nulls: str = nifi(
        "Suppress Null Values",
        NEVER_SUPPRESS,
        validator=attrs.validators.in_((NEVER_SUPPRESS, ALWAYS_SUPPRESS, SUPPRESS_MISSING)),
    )
    allow_scientific_notation: bool = nifi("Allow Scientific Notation", False)
    date_format: str | None = nifi("Date Format", None)
    time_format: str | None = nifi("Time Format", None)
    timestamp_format: str | None = nifi("Timestamp Format", None)
    mime_type: str = "application/json"
    timestamp_representation: str = nifi(
        "Timestamp Representation",
        "AUTO",
        validator=attrs.validators.in_(
            ("AUTO", "FORMATTED_STRING", "EPOCH_MILLISECONDS", "EPOCH_SECONDS")
        ),
    )
    quote_non_finite: bool = False


class JsonRecordWriter:
    """Writes record batches to a binary stream as NiFi's WriteJsonResult does.

    Call :meth:`write` for each batch and :meth:`finish` once (it closes the array); the
    stream stays open (the caller owns it).
    """

    def __init__(
        self,
        stream: IO[bytes],
        schema: RecordSchema,
        options: JsonWriterOptions = JsonWriterOptions(),
    ) -> None:
        self._stream = stream
        self._schema = schema
        self._options = options
        self._count = 0
        self._finished = False
        self._printer = _Printer(options)
        if options.output_grouping == OUTPUT_ARRAY:
            self._stream.write(b"[")

    @property
    def record_count(self) -> int:
        """Records written so far."""
        return self._count

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Write every record of *batch* (its columns named as the schema's fields).

        Each column is rendered to JSON text at once (Arrow casts and string kernels for
        numbers, booleans, plain strings and epoch millis), each field's ``"key":value`` text is
        a string kernel's join, and so is each record's; the batch's bytes are the joined
        records' Arrow buffer, written as it is.

        Raises:
            RecordError: a NaN or infinity in a FLOAT or DOUBLE value with "Allow Scientific
                Notation" false, as NiFi fails (nothing of the batch is written).
        """
        rows = batch.num_rows
        if not rows:
            return
        printer = self._printer
        suppress = self._options.suppress_nulls == ALWAYS_SUPPRESS
        pretty = self._options.pretty_print
        opening, between, closing = ("{\n  ", ",\n  ", "\n}") if pretty else ("{", ",", "}")
        items = []
        for field in self._schema.fields:
            try:
                text = printer.column_array(_column(batch, field.name, field.type), field.type, 1)
            except _NotFinite as exc:
                name = ".".join((field.name, *exc.path))
                raise record_error(self._count + exc.row + 1, None, name, exc.reason()) from None
            if not suppress:
                text = pc.fill_null(text, "null")
            key = json_string(field.name) + printer.colon
            items.append(pc.binary_join_element_wise(key, text, ""))
        if not items:
            records = pa.array(["{ }" if pretty else "{}"] * rows, pa.string())
        else:
            if suppress:  # each present item followed by *between*, the last one taken off
                followed = [pc.binary_join_element_wise(item, between, "") for item in items]
                whole = pc.binary_join_element_wise(
                    *(pc.fill_null(item, "") for item in followed), ""
                )
                inner = pc.utf8_slice_codeunits(whole, 0, -len(between))
            else:
                inner = pc.binary_join_element_wise(*items, between)
            records = pc.binary_join_element_wise(opening, inner, closing, "")
            if suppress:
                records = pc.if_else(pc.equal(inner, ""), "{ }" if pretty else "{}", records)
        separator = printer.record_separator
        records = pc.binary_join_element_wise(separator, records, "")
        head = b""
        if not self._count:
            first = len(separator.encode())  # the first record of the set has none before it
            if self._options.output_grouping == OUTPUT_ARRAY and pretty:
                head = b" "
            self._stream.write(head)
            self._stream.write(_string_bytes(records)[first:])
        else:
            self._stream.write(_string_bytes(records))
        self._count += rows

    def finish(self) -> dict[str, str]:
        """End the record set; returns NiFi's attributes (``record.count``, ``mime.type``)."""
        if not self._finished:
            self._finished = True
            if self._options.output_grouping == OUTPUT_ARRAY:
                closing = " ]" if self._options.pretty_print else "]"
                self._stream.write(closing.encode())
        return {"record.count": str(self._count), "mime.type": self._options.mime_type}


def write_json(
    batches: Iterable[pa.RecordBatch],
    stream: IO[bytes],
    options: JsonWriterOptions = JsonWriterOptions(),
    schema: RecordSchema | None = None,
) -> dict[str, str]:
    """Write *batches* to *stream* as one JSON record set; returns NiFi's attributes.

    *schema* defaults to the NiFi schema of the first batch's Arrow schema.
    """
    return write_all(batches, schema, lambda found: JsonRecordWriter(stream, found, options))


_ESCAPES = re.compile(r"\\\\|\\u00([0-9a-f]{2})")


def _upper_escape(match: re.Match[str]) -> str:
    return match.group(0) if match.group(1) is None else "\\u00" + match.group(1).upper()


def _fast_string(text: str) -> str:
    r""":func:`json_string` with orjson's C encoder.

    Its escapes are Jackson's but for the case of ``\u00XX`` hex digits, fixed when present.
    """
    try:
        out = orjson.dumps(text).decode()
    except TypeError:  # a lone surrogate: the standard library's encoder takes it
        return json_string(text)
    return _ESCAPES.sub(_upper_escape, out) if "\\u00" in out else out


def _plain(text: str) -> str:
    """``BigDecimal.toPlainString`` of Java's scientific text of a number."""
    return format(Decimal(text.replace("E", "e")), "f")


def _string_bytes(strings: pa.Array) -> memoryview:
    """The UTF-8 bytes of every value of a string array with no nulls, one after another."""
    offsets = strings.buffers()[1]
    data = strings.buffers()[2]
    where = memoryview(offsets).cast("i")
    start, stop = where[strings.offset], where[strings.offset + len(strings)]
    return memoryview(data)[start:stop] if data is not None else memoryview(b"")


def _column(batch: pa.RecordBatch | pa.Table, name: str, dtype: DataType) -> pa.Array:
    """The column *name* of *batch* (all null when the batch has none)."""
    index = batch.schema.get_field_index(name)
    if index < 0:
        return pa.nulls(batch.num_rows, arrow_type(dtype))
    column = batch.column(index)
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def json_string(text: str) -> str:
    """*text* as Jackson writes a JSON string."""
    out = json.dumps(text, ensure_ascii=False)
    return _ESCAPES.sub(_upper_escape, out) if "\\u00" in out else out


class _Printer:
    """Jackson's output for one writer's settings: compact, or the default pretty printer."""

    def __init__(self, options: JsonWriterOptions) -> None:
        self.o = options
        self.pretty = options.pretty_print
        self.colon = " : " if self.pretty else ":"
        if options.output_grouping == OUTPUT_ARRAY:
            self.record_separator = ", " if self.pretty else ","
        else:
            self.record_separator = " " if self.pretty else "\n"
        self._date = formats.pattern(options.date_format) if options.date_format else None
        self._time = formats.pattern(options.time_format) if options.time_format else None
        self._stamp = (
            formats.pattern(options.timestamp_format) if options.timestamp_format else None
        )

    def column_array(self, array: pa.Array, dtype: DataType, level: int) -> pa.Array:
        """:meth:`column` as an Arrow string array, vectorised for the common types."""
        kind = dtype.name
        if kind in ("string", "uuid", "char", "enum"):
            strings = array.cast(pa.string())
            plain = pc.invert(pc.match_substring_regex(strings, r'["\\\x00-\x1f]'))
            quoted = pc.binary_join_element_wise('"', strings, '"', "")
            if pc.all(pc.fill_null(plain, True)).as_py():
                return quoted
            slow = pc.fill_null(pc.invert(plain), False)
            rest = [_fast_string(v) for v in strings.filter(slow).to_pylist()]
            return pc.replace_with_mask(quoted, slow, pa.array(rest, pa.string()))
        if kind in ("float", "double"):
            texts = formats.java_number_column(array, single=kind == "float")
            texts = self._non_finite_column(array, texts, kind)
            if self.o.allow_scientific_notation:
                return texts
            scientific = pc.fill_null(pc.match_substring(texts, "E"), False)
            if not pc.any(scientific).as_py():
                return texts
            plain = [_plain(t) if "E" in t else t for t in texts.filter(scientific).to_pylist()]
            return pc.replace_with_mask(texts, scientific, pa.array(plain, pa.string()))
        if kind in ("byte", "short", "int", "long"):
            return pc.cast(array, pa.string())
        if kind == "boolean":
            return pc.if_else(array, "true", "false")
        millis = self._epoch_millis_array(array, kind)
        if millis is not None:
            return millis
        return pa.array(self.column(array, dtype, level), pa.string())

    def column(self, array: pa.Array, dtype: DataType, level: int) -> list[str | None]:
        """The JSON text of every value of *array* (None for null), values at nesting *level*."""
        kind = dtype.name
        if kind in ("byte", "short", "int", "long"):
            return pc.cast(array, pa.string()).to_pylist()
        if kind == "boolean":
            return pc.if_else(array, "true", "false").to_pylist()
        if kind in ("string", "uuid", "char", "enum"):
            return [None if v is None else _fast_string(v) for v in array.to_pylist()]
        if kind in ("float", "double"):
            return self.column_array(array, dtype, level).to_pylist()
        millis = self._epoch_millis(array, kind)
        if millis is not None:
            return millis
        decode = decoder(dtype)
        out: list[str | None] = []
        for row, value in enumerate(array.to_pylist()):
            if value is None:
                out.append(None)
                continue
            parts: list[str] = []
            try:
                self.value(parts, decode(value), dtype, level)
            except _NotFinite as exc:
                exc.row = row
                raise
            out.append("".join(parts))
        return out

    def _non_finite_column(self, array: pa.Array, texts: pa.Array, kind: str) -> pa.Array:
        """*texts* (Java's text of a FLOAT or DOUBLE column) with NaN and infinities quoted.

        Java's text of them is Jackson's string (``NaN``, ``Infinity``, ``-Infinity``).
        Without scientific notation NiFi fails at the first: :class:`_NotFinite` says where.
        One ``is_finite`` kernel over the numbers when the column has none (the usual case).
        """
        finite = pc.is_finite(array.cast(pa.float32() if kind == "float" else pa.float64()))
        if pc.all(finite).as_py() is not False:  # all finite, or all null
            return texts
        special = pc.fill_null(pc.invert(finite), False)
        if not (self.o.allow_scientific_notation or self.o.quote_non_finite):
            row = pc.index(special, True).as_py()
            raise _NotFinite(array[row].as_py(), kind, row)
        return pc.if_else(special, pc.binary_join_element_wise('"', texts, '"', ""), texts)

    def _epoch_millis(self, array: pa.Array, kind: str) -> list[str | None] | None:
        """Epoch millis of a temporal column without a format (else None)."""
        millis = self._epoch_millis_array(array, kind)
        return None if millis is None else millis.to_pylist()

    def _epoch_millis_array(self, array: pa.Array, kind: str) -> pa.Array | None:
        """Epoch millis of a temporal column without a format, by Arrow casts (else None)."""
        if (
            kind == "timestamp"
            and self._stamp is None
            and self.o.timestamp_representation in ("AUTO", "EPOCH_MILLISECONDS")
        ):
            return pc.cast(pc.cast(to_millis(array), pa.int64()), pa.string())
        if kind == "date" and self._date is None:
            days = pc.cast(pc.cast(array, pa.int32()), pa.int64())
            return pc.cast(pc.multiply(days, 86_400_000), pa.string())
        if kind == "time" and self._time is None:
            return pc.cast(pc.cast(array, pa.int32()), pa.string())
        return None

    def _indent(self, level: int) -> str:
        return "\n" + "  " * level

    def record(self, out: list[str], row: dict[str, Any], schema: RecordSchema, level: int) -> None:
        """Append the JSON object of *row* (fields in *schema*'s order)."""
        out.append("{")
        entries = 0
        suppress = self.o.suppress_nulls == ALWAYS_SUPPRESS
        for field in schema.fields:
            value = row.get(field.name)
            if value is None and suppress:
                continue
            if entries:
                out.append(",")
            if self.pretty:
                out.append(self._indent(level + 1))
            out.append(json_string(field.name))
            out.append(self.colon)
            try:
                self.value(out, value, field.type, level + 1)
            except _NotFinite as exc:
                exc.path.insert(0, field.name)
                raise
            entries += 1
        if self.pretty:
            out.append(self._indent(level) if entries else " ")
        out.append("}")

    def value(self, out: list[str], value: Any, dtype: DataType | None, level: int) -> None:
        """Append *value* as NiFi writes a value of type *dtype*."""
        if value is None:
            out.append("null")
            return
        if isinstance(dtype, ChoiceType):
            dtype = choose_option(value, dtype)
        kind = dtype.name if dtype is not None else None
        if isinstance(dtype, RecordType) and isinstance(value, dict):
            self.record(out, value, dtype.schema, level)
        elif isinstance(dtype, MapType) and isinstance(value, dict):
            self._map(out, value, dtype.value, level)
        elif isinstance(dtype, ArrayType) and isinstance(value, list):
            self._array(out, value, dtype.element, level)
        elif isinstance(value, bool):
            out.append("true" if value else "false")
        elif isinstance(value, int):
            out.append(str(value))
        elif isinstance(value, float):
            single = kind == "float"
            if not math.isfinite(value):
                out.append(self._non_finite(value, single))
            elif self.o.allow_scientific_notation:
                out.append(
                    formats.java_float_str(value) if single else formats.java_double_str(value)
                )
            else:
                out.append(formats.java_plain_str(value, single=single))
        elif isinstance(value, Decimal):
            out.append(str(value) if self.o.allow_scientific_notation else format(value, "f"))
        elif isinstance(value, dt.datetime):
            self._timestamp(out, value)
        elif isinstance(value, dt.date):
            self._temporal(
                out, value, self._date, _millis(dt.datetime(value.year, value.month, value.day))
            )
        elif isinstance(value, dt.time):
            self._temporal(out, value, self._time, _time_millis(value))
        elif isinstance(value, bytes):
            self._array(out, [b - 256 if b > 127 else b for b in value], None, level)
        elif isinstance(value, dict):
            self._map(out, value, None, level)
        elif isinstance(value, list):
            self._array(out, value, None, level)
        else:
            out.append(json_string(str(value)))

    def _non_finite(self, value: float, single: bool) -> str:
        """NaN or an infinity as Jackson's string, or :class:`_NotFinite` as NiFi fails."""
        if not (self.o.allow_scientific_notation or self.o.quote_non_finite):
            raise _NotFinite(value, "float" if single else "double")
        return f'"{formats.java_float_str(value) if single else formats.java_double_str(value)}"'

    def _timestamp(self, out: list[str], value: dt.datetime) -> None:
        representation = self.o.timestamp_representation
        millis = _millis(value)
        if representation == "EPOCH_MILLISECONDS":
            out.append(str(millis))
        elif representation == "EPOCH_SECONDS":
            out.append(str(Decimal(millis).scaleb(-3)))
        elif representation == "FORMATTED_STRING":
            text = self._stamp.format(value) if self._stamp else str(millis)
            out.append(json_string(text))
        else:
            self._temporal(out, value, self._stamp, millis)

    def _temporal(
        self, out: list[str], value: Any, pattern: formats.DateTimePattern | None, millis: int
    ) -> None:
        if pattern is None:
            out.append(str(millis))
            return
        text = pattern.format(value)
        if re.fullmatch(r"-?\d+", text):  # NiFi: a format giving only digits writes the millis
            out.append(str(millis))
        else:
            out.append(json_string(text))

    def _map(
        self, out: list[str], value: dict[str, Any], dtype: DataType | None, level: int
    ) -> None:
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            if index:
                out.append(",")
            if self.pretty:
                out.append(self._indent(level + 1))
            out.append(json_string(str(key)))
            out.append(self.colon)
            try:
                self.value(out, item, dtype, level + 1)
            except _NotFinite as exc:  # NiFi names a map's value "field.key"
                exc.path.insert(0, str(key))
                raise
        if self.pretty:
            out.append(self._indent(level) if value else " ")
        out.append("}")

    def _array(self, out: list[str], values: list[Any], dtype: DataType | None, level: int) -> None:
        out.append("[")
        if self.pretty:
            out.append(" ")
        for index, item in enumerate(values):
            if index:
                out.append(", " if self.pretty else ",")
            self.value(out, item, dtype, level)
        if self.pretty and values:
            out.append(" ")
        out.append("]")


class _NotFinite(RecordError):
    """A NaN or infinity NiFi's writer fails on; the writer turns it into a record's error.

    ``row`` is the value's 0-based row in its column, ``path`` the names under the column's
    field (a nested record's fields, a map's keys), filled in as the error rises.
    """

    def __init__(self, value: float, kind: str, row: int = 0) -> None:
        self.value = value
        self.kind = kind
        self.row = row
        self.path: list[str] = []
        super().__init__(self.reason())

    def reason(self) -> str:
        """What is wrong and the fix, in one line."""
        text = formats.java_double_str(self.value)  # NaN, Infinity, -Infinity: Float's too
        return (
            f"the {self.kind} {text} is no JSON number: with Allow Scientific Notation false "
            "(the default) NiFi's JsonRecordSetWriter writes plain decimals and fails on NaN "
            f'and infinities; set it to true to write the string "{text}", or replace the '
            "value before writing (UpdateRecord)"
        )


def _millis(value: dt.datetime) -> int:
    delta = value.replace(tzinfo=None) - formats.EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def _time_millis(value: dt.time) -> int:
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
